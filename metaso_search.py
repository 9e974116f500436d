"""秘塔（Metaso）开放平台的最小客户端（教程里的名字）：search、read_page、Client、MetasoError。
客户端本身在 sourced_answers/search/metaso_client.py，这个文件是它的门。

单独运行：python metaso_search.py "问题"  —— 打印一次完整的原始搜索响应（密钥遮掉），接入真实接口前先看清字段。
密钥只从环境变量 METASO_API_KEY 读，永远不会出现在输出、日志或错误信息里。
"""
import sourced_answers  # 只导入标准库的 _signal、os：启动期间的 Ctrl-C 由它接住

if __name__ == "__main__":  # 最先做：在导入本项目别的模块之前
    sourced_answers.catch_signals_while_starting()

import os  # 在上面的信号处理之后
import sys

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
