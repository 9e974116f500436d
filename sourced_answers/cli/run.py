"""命令行的 main：参数 → 设置 → 做一件事（回答问题、--verify、--eval、--serve、--mcp），以及 run_question：
请 api/answering.py 回答一个问题（付费之前的检查 → 搜集资料 → 请模型回答 → 核对），把结果写成文字、JSON、审阅页。

answer_with_sources.py、answer-with-sources 命令和 python -m sourced_answers 都走到这里的 main。
每一步的细节在它那一层的子包里（docs/development.md 有一张图）。
"""
import argparse
import io
import os
import sys
from collections.abc import Callable, Mapping
from typing import IO, Any, TextIO

from sourced_answers.api.answering import answer
from sourced_answers.batch.evaluation import run_eval
from sourced_answers.batch.verification import verify
from sourced_answers.cli.config import build_settings
from sourced_answers.cli.launch import program_name
from sourced_answers.cli.local_model_command import install_bundled_model
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
from sourced_answers.core.secrets import secrets_to_mask
from sourced_answers.core.settings import Settings
from sourced_answers.core.text import literal
from sourced_answers.model import local_model
from sourced_answers.model.local_model import INSTALL_FLAG
from sourced_answers.model.local_serving import bundled_model
from sourced_answers.model.preflight import remote_notices
from sourced_answers.outputs.render import render_result
from sourced_answers.outputs.review_page import save_review_page

__all__ = ["main", "program", "run_question"]

Log = Callable[[str], None]


# ---------- 一次回答的经过 ----------

def run_question(settings: Settings, out: Output, log: Log) -> int:
    """回答一个问题（步骤在 api.answering.answer），把结果写成文字或 JSON、（--html）审阅页。"""
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
        out.flush()
        save_review_page(run.html, [record], run.secrets, log)
    return checked.exit_code


def program(settings: Settings, out: Output, log: Log, stdin: IO[bytes], progress: Any = None) -> int:
    """按设置做一件事：核对文件、比较模型，或者回答问题。progress：画进度条的地方（没有就不画）。"""
    run = settings.run
    for notice in remote_notices(None if run.verify else settings.model.url, settings.judge):
        log(notice)
    if run.serve:
        from sourced_answers.servers.openai_server import serve  # 只有起服务时才导入 Starlette、uvicorn
        return serve(settings, log)
    if run.mcp:
        from sourced_answers.servers.mcp_server import serve_mcp  # 只有起服务时才导入 MCP 的 SDK
        return serve_mcp(settings, log)
    if run.verify:
        return verify(settings, out, log, stdin, progress)
    if run.eval:
        return run_eval(settings, out, log, progress)
    return run_question(settings, out, log)


# ---------- 命令行入口 ----------

def main(argv: list[str] | None = None, out: TextIO | None = None, err: TextIO | None = None,
         environ: Mapping[str, str] | None = None, stdin: IO[bytes] | None = None, prog: str | None = None) -> int:
    """命令行入口：只有这里读环境变量、决定打印什么、退出码是多少。

    environ 默认是 os.environ；prog 是用法和提示里的程序名（默认按怎样启动的来猜，见 launch.program_name）。"""
    environ = os.environ if environ is None else environ
    # 遮哪些密钥只由 secrets_to_mask 决定：环境里本程序认得的每一个，从第一行输出起，每种输出都一样
    secrets = secrets_to_mask(environ)
    errors = SafeWriter(err or sys.stderr, secrets, name="标准错误", quiet=True)
    raw_out = out or sys.stdout  # 启动时标准输出就被关掉了：sys.stdout 是 None，第一次写就安静地结束

    def log(message: str) -> None:
        # 一条说明是完整的一行、整条遮过密钥：末尾不会是半个密钥，马上全部写出（flush 会留着末尾像密钥开头的
        # 几个字，例如 ANS_API_KEY 是 sk-… 时“… 21 ms”的 s——--serve 的访问日志就要等到下一个请求才写完）
        errors.write(message + "\n")
        errors.finish()

    output: SafeWriter = SafeWriter(raw_out, secrets)
    try:
        parser = build_parser(prog or program_name())
        parser.output = output
        args = parser.parse_args(argv)
        if args.install_local_model:  # 只装自带的模型：不要配置，也不付费
            return install_from_main_command(args, log)
        settings = build_settings(args, environ, stream_numbers(stdin, raw_out, err))
        run = settings.run
        # JSON 输出保持和收到的内容一致（控制字符由 json.dumps 转义），只遮密钥
        output = SafeWriter(raw_out, secrets, terminal_safe=not run.json)
        # 进度条画在标准错误上：只看它是不是终端（标准输出接到文件、用 --json 都照样画），-q 不画
        # tqdm 直接写原来的标准错误：它要用回车把进度条画在同一行（SafeWriter 会去掉回车），里面也没有密钥
        progress = (err or sys.stderr) if errors.isatty() and not run.quiet else None
        if raw_out is None and not (run.html or run.summary):
            # 启动时标准输出就是关着的（>&-），也没有要写的文件：结果没有地方去，付费、干活之前就结束（和输出被关掉
            # 一样是 130）
            log("标准输出是关着的，结果没有地方打印：什么也没做就结束了（没有搜索，也没有请模型）")
            return ExitCode.INTERRUPTED
        if raw_out is None:  # 结果写到用户指定的文件（审阅页、汇总）：标准输出上的那一份没人看，丢掉，别的照做
            output = SafeWriter(io.StringIO(), secrets)
        with bundled_model(settings, log) as settings:  # --local-model：在本机启动自带的模型（付费之前）
            try:
                return program(settings, output, log, stdin or input_bytes(), progress)
            except ModelUnreachable as error:
                raise offer_local_model(error, settings) from None
    except ENDINGS as ending:
        if isinstance(ending, KeyboardInterrupt):
            finish(output)  # 已经写出的那部分先冲刷出去，再说“已中断”
        return exit_code_of(ending, log)
    finally:
        finish(output)
        errors.finish()


def offer_local_model(error: ModelUnreachable, settings: Settings) -> ModelUnreachable:
    """连不上回答用的模型服务（没有模型服务）：说明后面再给一个办法——自带的小模型（--local-model），
    还没装时带上在这种装法里能用的安装命令。已经在用 --local-model、连不上的是别处的评判模型时不说。"""
    model = settings.model
    if model.local or not model.url or model.url not in str(error):
        return error
    install = "" if local_model.server_installed() else f"（先装一次：{local_model.install_hint(settings.run.prog)}）"
    return ModelUnreachable(f"{error}。没有模型服务也能试：加 --local-model，用自带的 llama.cpp + SmolLM2-135M"
                            f"（很小、只会英文，用来看核对怎样拦下不合格的回答）{install}",
                            partial=error.partial, transient=error.transient)


def install_from_main_command(args: argparse.Namespace, log: Log) -> int:
    """--install-local-model：装好自带的模型就结束（和 python -m sourced_answers.local_model install 同一段代码）。"""
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


def stream_numbers(*streams: object) -> list[int]:
    """这次运行的标准输入、输出、错误的文件描述符（测试里传进来的是内存里的流，没有描述符，就不算）；
    没传进来的用进程自己的 0、1、2。要写的文件不能是它们。"""
    numbers = []
    for default, stream in enumerate(streams):
        if stream is None:
            numbers.append(default)
            continue
        try:
            numbers.append(stream.fileno())  # type: ignore[attr-defined]
        except (AttributeError, OSError, ValueError):
            continue
    return numbers


def input_bytes() -> IO[bytes]:
    """标准输入（启动时被关掉了就当作空的）。读的是它自己的一份（os.dup），不是 sys.stdin.buffer：--verify - --jobs N
    由一个守护线程读标准输入，Ctrl-C、SIGTERM、SIGHUP 时它正卡在 read 上、拿着那个读缓冲的锁；解释器退出时要关掉
    sys.stdin，拿不到锁就是“Fatal Python error”和退出码 -6，不是 130。自己的这一份解释器退出时不去碰它。"""
    if sys.stdin is None:
        return io.BytesIO()
    try:
        return os.fdopen(os.dup(sys.stdin.fileno()), "rb")
    except (OSError, ValueError, AttributeError):  # 0 号描述符不能用（被关掉了、不是真的文件）：还用 sys.stdin
        return sys.stdin.buffer

