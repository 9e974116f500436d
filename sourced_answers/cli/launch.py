"""每个入口共用的最外一层：answer-with-sources 命令、python answer_with_sources.py、python -m sourced_answers、
python -m sourced_answers.cluster、python -m sourced_answers.local_model、quickstart、metaso_search.py、fake_metaso.py。

  · Ctrl-C、SIGTERM（kill、timeout、systemd 停服务）、SIGHUP（终端关了、ssh 断了）在任何时候都是退出码 130 和一行
    “已中断”，没有报错堆栈。导入模块的那零点几秒由每个入口最先调用的 sourced_answers.catch_signals_while_starting
    接住（它只用标准库；那时还没有导入本项目别的模块，连这个模块也没有）；run() 接手之后，它们变成
    KeyboardInterrupt，收尾照做（结果目录的清单、子进程、已经写好的结果），SIGHUP 走和 SIGTERM 完全一样的路
    （--serve、--mcp 里也是）；main 做完、收尾期间再收到一个，马上安静地结束。启动时就被忽略的 SIGHUP（nohup）照旧忽略；
  · 程序自己的 bug（没想到的异常）：一段简短的中文说明和报告的办法，退出码 4（不是 1：1 的意思是“核对没通过”），
    加 --debug 才显示报错堆栈（像 httpie 那样）；
  · 结束时标准输出已经断了（接在 head 后面），不让解释器再打出一段英文的报错。
这个模块只导入标准库和 core.errors（它也只用标准库），所以它自己几乎不花时间导入（程序自己出错时，说明里的
那一句异常借 core.strings.literal 变成一行，在函数里才导入）。
"""
import atexit
import os
import signal
import sys
import traceback
from collections.abc import Callable, Sequence
from types import FrameType
from typing import NoReturn

from sourced_answers.core.errors import ExitCode, exit_code_of
from sourced_answers.core.interrupts import interrupt, quiet_unraisable, stop_if_interrupted

REPORT = ("这是程序自己的问题，不是你的输入有误。请把这段说明和运行的命令（去掉密钥）报告给维护者；"
          "加 --debug 可以看到报错堆栈")


# SIGHUP：Windows 没有它；启动时就被忽略（nohup）时照旧忽略
HANGUP = getattr(signal, "SIGHUP", None)


def take_over_signals() -> None:
    """导入完了，由 main 接住信号：Ctrl-C 和 SIGTERM 变成 KeyboardInterrupt（收尾照做，130），SIGHUP 交给此刻接
    SIGTERM 的那一个（见 hangup_as_sigterm）。"""
    signal.signal(signal.SIGINT, interrupt)
    signal.signal(signal.SIGTERM, interrupt)
    sys.unraisablehook = quiet_unraisable  # 落在 __del__ 里被吞掉的 KeyboardInterrupt：记下了，不打印英文堆栈
    if HANGUP is not None and signal.getsignal(HANGUP) != signal.SIG_IGN:
        signal.signal(HANGUP, hangup_as_sigterm)
    # 最先登记的最后运行：别的 atexit（Dask 关它的线程和事件循环）做完以后才忽略
    atexit.register(ignore_signals_while_exiting)


def hangup_as_sigterm(signum: int, frame: FrameType | None) -> None:
    """SIGHUP 走 SIGTERM 的路：交给此刻接 SIGTERM 的那一个——平时是 KeyboardInterrupt，--serve 时是 uvicorn
    （不再接新请求，等正在回答的说完），--mcp 时是马上结束，连 Dask 调度器的那一下是先记下来、连好再算。"""
    handler = signal.getsignal(signal.SIGTERM)
    if not callable(handler):
        raise KeyboardInterrupt
    handler(signal.SIGTERM, frame)


def end_at_once(signum: int, frame: FrameType | None) -> None:
    """main 已经结束（做完、出错或者被打断），正在说明、冲刷输出时又收到一个信号：不再收尾，马上安静地结束。"""
    try:
        os.write(2, "\n已中断\n".encode())
    finally:
        os._exit(ExitCode.INTERRUPTED)


def end_at_once_on_signals() -> None:
    for number in (signal.SIGINT, signal.SIGTERM, HANGUP):
        if number is not None and signal.getsignal(number) != signal.SIG_IGN:
            signal.signal(number, end_at_once)


def ignore_signals_while_exiting() -> None:
    """最后一个 atexit 之后，解释器拆模块时把信号处理换回系统默认：那时再来一个 SIGHUP、SIGTERM（终端关掉时常常
    连着来两个），进程就被它结束，退出码是 -1、-15 而不是已经定好的那一个。退出码已经定了，剩下的只是拆：忽略它们。"""
    for number in (signal.SIGINT, signal.SIGTERM, HANGUP):
        if number is not None:
            signal.signal(number, signal.SIG_IGN)


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
    try:
        take_over_signals()  # 入口最先装上的处理到这里为止：之后的信号由 main 自己接住
        tolerate_narrow_encodings()
        code = main()
        if code != ExitCode.INTERRUPTED:  # 130：main 已经接住了 Ctrl-C、说过“已中断”，不再说一遍
            stop_if_interrupted()  # 按过 Ctrl-C，它的 KeyboardInterrupt 却被哪个 __del__ 吞掉了：照样是“已中断”、130
    except KeyboardInterrupt as ending:  # main 之外收到的信号
        end_at_once_on_signals()
        code = exit_code_of(ending, print_error)
    except Exception as error:  # noqa: BLE001  最后一道防线：程序的 bug 也不显示英文的报错堆栈
        end_at_once_on_signals()
        print_error(f"✗ 程序内部出错（{type(error).__name__}: {reason_of(error)}）。{REPORT}")
        if "--debug" in arguments:
            print_error("".join(traceback.format_exception(error)))
        code = ExitCode.INTERNAL
    end_at_once_on_signals()
    finish_stdout()
    sys.exit(code)


def reason_of(error: BaseException) -> str:
    """程序自己出错时说明里的那一句异常：和别的说明一样只占一行（异常里可能夹着用户给的路径、带着换行），截短。"""
    try:
        from sourced_answers.core.strings import literal  # 到这里程序早已导入过它；导入本身出的错就退回 repr
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
