"""秘塔（Metaso）开放平台的最小客户端（教程里的名字）：search、read_page、Client、MetasoError。
客户端本身在 sourced_answers/search/metaso_client.py，这个文件是它的门。

单独运行：python metaso_search.py "问题"  —— 打印一次完整的原始搜索响应（密钥遮掉），接入真实接口前先看清字段。
密钥只从环境变量 METASO_API_KEY 读，永远不会出现在输出、日志或错误信息里。
"""
import _signal  # signal 下面的 C 模块：解释器启动时就已经载入（见下面的说明）
import os


def interrupted_while_starting(signum: int, frame: object) -> None:
    """还在导入本项目的模块时收到 Ctrl-C、SIGTERM 或 SIGHUP：一行“已中断”，退出码 130，没有报错堆栈。
    只用解释器启动时就载入了的标准库（这时本项目的模块一个也还没有导入；import signal 还要现做几个枚举类，
    那零点几毫秒里按 Ctrl-C 又是报错堆栈，所以用它下面的 _signal）。导入完之后由 cli/launch.py 的 run 接手。"""
    try:
        os.write(2, "\n已中断\n".encode())
    finally:
        os._exit(130)


if __name__ == "__main__":  # 最先做：在导入本项目的任何模块之前
    _signal.signal(_signal.SIGINT, interrupted_while_starting)
    _signal.signal(_signal.SIGTERM, interrupted_while_starting)
    if hasattr(_signal, "SIGHUP") and _signal.getsignal(_signal.SIGHUP) != _signal.SIG_IGN:  # nohup、Windows 除外
        _signal.signal(_signal.SIGHUP, interrupted_while_starting)

import sys  # 在上面的信号处理之后

from sourced_answers.api.config import METASO_URL_SUFFIXES, normalize_url
from sourced_answers.cli.arguments import ChineseArgumentParser, ChineseHelpFormatter, add_standard_flags, in_range
from sourced_answers.cli.launch import masked_printer, run
from sourced_answers.core.environment import METASO_BASE
from sourced_answers.core.errors import ENDINGS, ExitCode, MetasoError, MissingKeyError, exit_code_of
from sourced_answers.core.masking import masked_json
from sourced_answers.core.safe_output import SafeWriter
from sourced_answers.core.secrets import secrets_to_mask
from sourced_answers.core.settings import SEARCH_DEFAULTS, SIZE_RANGE
from sourced_answers.search.metaso_client import (
    DEFAULT_BASE,
    Client,
    api_base,
    api_key,
    post,
    read_page,
    search,
    search_results,
)

__all__ = ["DEFAULT_BASE", "Client", "MetasoError", "MissingKeyError", "api_base", "api_key", "post",
           "read_page", "search", "search_results", "build_parser", "main"]


def build_parser() -> ChineseArgumentParser:
    parser = ChineseArgumentParser(prog="python metaso_search.py", formatter_class=ChineseHelpFormatter,
                                   add_help=False, description="打印秘塔搜索的完整原始响应（密钥不会显示）。")
    parser.add_argument("query", metavar="问题", help="搜索的问题")
    parser.add_argument("--size", type=in_range(*SIZE_RANGE), default=SEARCH_DEFAULTS.size, metavar="N",
                        help=f"结果条数，1–100（默认 {SEARCH_DEFAULTS.size}）")
    add_standard_flags(parser, debug=False)
    return parser


def main(argv: list[str] | None = None) -> int:
    secrets = secrets_to_mask(os.environ)
    say = masked_printer(secrets)  # 说明和重试提示也遮掉环境里的每个密钥（秘塔可能回显别的服务的密钥）
    try:
        args = build_parser().parse_args(argv)
        key = api_key(os.environ)
        # 和主程序一样检查 METASO_BASE（协议、主机名、端口，没有换行和控制字符），末尾多贴的 /search 去掉：
        # 地址不对时一个请求也不发
        base = normalize_url(api_base(os.environ), METASO_BASE.name, METASO_URL_SUFFIXES)
        response = search(args.query, size=args.size, key=key, base=base,
                          on_retry=say)
    except ENDINGS as ending:
        return exit_code_of(ending, say)
    output = SafeWriter(sys.stdout, secrets, terminal_safe=False)  # JSON 原样（控制字符已经转义），密钥遮掉
    output.write(masked_json(response, secrets, indent=2))
    output.finish()
    return ExitCode.PASSED


if __name__ == "__main__":
    run(main)
