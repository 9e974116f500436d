"""每个入口共用的最外一层：answer-with-sources 命令、python answer_with_sources.py、python -m sourced_answers、
python -m sourced_answers.cluster、python -m sourced_answers.local_model 和 quickstart。

  · Ctrl-C 在任何时候（导入模块的那零点几秒也算）都是退出码 130 和一行“已中断”，没有报错堆栈；
    导入完之后收到的 SIGTERM 也一样（像 Ctrl-C 那样收尾）；
  · 程序自己的 bug（没想到的异常）：一段简短的中文说明和报告的办法，退出码 4（不是 1：1 的意思是“核对没通过”），
    加 --debug 才显示报错堆栈（像 httpie 那样）；
  · 结束时标准输出已经断了（接在 head 后面），不让解释器再打出一段英文的报错。
这个模块只导入标准库和 core.errors（它也只用标准库），所以它自己几乎不花时间导入（程序自己出错时，说明里的
那一句异常借 core.text.literal 变成一行，在函数里才导入）。
"""
import os
import signal
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import NoReturn

from sourced_answers.core.errors import ExitCode, exit_code_of

REPORT = ("这是程序自己的问题，不是你的输入有误。请把这段说明和运行的命令（去掉密钥）报告给维护者；"
          "加 --debug 可以看到报错堆栈")


def interrupted_at_startup(signum: int, frame: object) -> NoReturn:
    """还在导入模块时按下了 Ctrl-C。"""
    raise SystemExit(exit_code_of(KeyboardInterrupt(), print_error))


def guard_startup(module_name: str = "__main__") -> None:
    """在入口模块的最开头调用（只在它作为程序运行时生效）：从现在到 run() 之前按 Ctrl-C 也安静地结束。"""
    if module_name == "__main__":
        signal.signal(signal.SIGINT, interrupted_at_startup)


def program_name(argv0: str | None = None) -> str:
    """用法和提示里写的程序名：按这个进程是怎样启动的（sys.argv[0]）。认不出来时是装好的命令名。"""
    path = sys.argv[0] if argv0 is None else argv0
    name = os.path.basename(path)
    if name == "answer_with_sources.py":
        return "python answer_with_sources.py"
    if name == "__main__.py" and os.path.basename(os.path.dirname(path)) == "sourced_answers":
        return "python -m sourced_answers"  # 别的包的 __main__.py（python -m pytest 之类）不算
    return "answer-with-sources"


def print_error(text: str) -> None:
    """最后一道防线写的一行（已中断、程序自己的错误）：也遮掉环境里的每个密钥（异常的说明里可能夹着它）。
    遮挡的模块还没导入完（导入期间按了 Ctrl-C）时，这一行是固定的中文，没有要遮的。"""
    try:
        from sourced_answers.core.masking import mask
        from sourced_answers.core.secrets import secrets_to_mask
        text = mask(text, secrets_to_mask(os.environ))
    except Exception:  # noqa: BLE001  导入本身被打断了：照原样写那一句固定的说明
        pass
    try:
        sys.stderr.write(text + "\n")  # 不经过遮挡：上面已经遮过（遮挡的模块在导入期间还不能用）
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        pass  # 连标准错误都写不进去了：只能安静地结束


def masked_printer(secrets: Sequence[str]) -> Callable[[str], None]:
    """像 print_error 一样一行一行写到标准错误，但先经过和主程序同一道关（SafeWriter）：遮掉 secrets 里的每个密钥、
    去掉终端控制序列。给自己不建 SafeWriter 的入口（metaso_search.py）用：服务回显的别的密钥也不会显示出来。"""
    from sourced_answers.core.safe_output import SafeWriter  # 只在入口真的要写说明时才导入

    def say(text: str) -> None:
        writer = SafeWriter(sys.stderr, secrets, name="标准错误", quiet=True)
        writer.write(text + "\n")
        writer.finish()
    return say


def run(main: Callable[[], int], argv: Sequence[str] | None = None) -> NoReturn:
    """运行入口的 main()，把结果变成退出码（见模块说明）。argv 里有 --debug 时，内部错误显示报错堆栈。"""
    arguments = sys.argv[1:] if argv is None else argv
    signal.signal(signal.SIGINT, signal.default_int_handler)  # 导入完了：之后的 Ctrl-C 由 main 自己接住
    # SIGTERM（kill、timeout、systemd 停服务）和 Ctrl-C 一样：收尾（结果目录的清单、子进程、已经写好的）照做，130
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    tolerate_narrow_encodings()
    try:
        code = main()
    except KeyboardInterrupt as ending:  # main 之外按下的 Ctrl-C
        code = exit_code_of(ending, print_error)
    except Exception as error:  # noqa: BLE001  最后一道防线：程序的 bug 也不显示英文的报错堆栈
        print_error(f"✗ 程序内部出错（{type(error).__name__}: {reason_of(error)}）。{REPORT}")
        if "--debug" in arguments:
            print_error("".join(traceback.format_exception(error)))
        code = ExitCode.INTERNAL
    finish_stdout()
    sys.exit(code)


def reason_of(error: BaseException) -> str:
    """程序自己出错时说明里的那一句异常：和别的说明一样只占一行（异常里可能夹着用户给的路径、带着换行），截短。"""
    try:
        from sourced_answers.core.text import literal  # 到这里程序早已导入过它；导入本身出的错就退回 repr
    except Exception:  # noqa: BLE001  最后一道防线里不能再出错
        return repr(str(error))[:200]
    return literal(error, limit=200)


def tolerate_narrow_encodings() -> None:
    """终端不是 UTF-8（GBK、ASCII）时，写不出来的字（✓、⚠、别的语言）换成“?”，而不是让整次运行的输出失败。"""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="replace")  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            pass


def finish_stdout() -> None:
    """最后冲刷一次标准输出；已经断了就指向 /dev/null，免得解释器退出时再冲刷一次、打出一段英文的报错。"""
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except (OSError, ValueError):
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
