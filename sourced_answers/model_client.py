"""OpenAI 兼容的模型服务（Ollama、llama.cpp server 等）的客户端：chat、ModelError、ThinkFilter。

只用 /v1/chat/completions。模型输出里的 <think>…</think> 和 reasoning / reasoning_content 字段
都不会进入回答。
"""
import json
import time
from dataclasses import dataclass

from metaso_search import short
from sourced_answers.retrying import Deadline, DeadlineExceeded, with_retries

DEFAULT_MAX_TOKENS = 1024


class ModelError(Exception):
    """模型服务出错或没有给出可用的回答（退出码 3）。partial 是出错前已经收到的回答。"""

    def __init__(self, message, partial="", transient=False):
        super().__init__(message)
        self.partial = partial
        self.transient = transient  # True：连不上、限流、服务器临时出错，可以重试


class ModelUnreachable(ModelError):
    """连不上模型服务：之后的请求也不会成功。"""


class ThinkFilter:
    """去掉 <think>…</think>。按片段喂入（流式输出），标签被切在两个片段之间也能处理。"""
    OPEN = "<think>"
    CLOSE = "</think>"

    def __init__(self):
        self.inside = False
        self.pending = ""

    def feed(self, chunk):
        text = self.pending + chunk
        self.pending = ""
        visible = []
        while text:
            tag = self.CLOSE if self.inside else self.OPEN
            position = text.find(tag)
            stray_close = -1 if self.inside else text.find(self.CLOSE)
            if stray_close >= 0 and (position < 0 or stray_close < position):
                # 有的模板把 <think> 放在提示里，输出里只剩 </think>：只去掉标签本身
                visible.append(text[:stray_close])
                text = text[stray_close + len(self.CLOSE):]
                continue
            if position >= 0:
                if not self.inside:
                    visible.append(text[:position])
                text = text[position + len(tag):]
                self.inside = not self.inside
                continue
            keep = partial_tag_length(text, (tag,) if self.inside else (self.OPEN, self.CLOSE))
            if not self.inside:
                visible.append(text[:len(text) - keep])
            self.pending = text[len(text) - keep:]
            break
        return "".join(visible)

    def finish(self):
        rest = "" if self.inside else self.pending
        self.pending = ""
        return rest


def without_thinking(text):
    """整段回答去掉 <think>…</think> 和首尾空白（和流式显示时用的是同一个过滤器）。"""
    think = ThinkFilter()
    return (think.feed(text) + think.finish()).strip()


def partial_tag_length(text, tags):
    """text 末尾有多长可能是某个标签的开头（要等下一个片段才知道）。"""
    longest = 0
    for tag in tags:
        for length in range(min(len(tag) - 1, len(text)), 0, -1):
            if text.endswith(tag[:length]):
                longest = max(longest, length)
                break
    return longest


@dataclass
class ChatResult:
    text: str
    finish_reason: str | None
    completion_tokens: int | None  # 服务报告的生成 token 数；没报告时为 None
    seconds: float  # 从发出请求到收完回答
    first_text_seconds: float | None = None  # 流式时，从发出请求到收到第一段回答
    pieces: int = 0  # 流式时收到的片段数（每段大约一个 token）

    @property
    def generated_tokens(self):
        return self.completion_tokens if self.completion_tokens else self.pieces or None

    @property
    def tokens_per_second(self):
        """生成速度：不算读提示词的时间（流式时从第一段回答算起）。"""
        tokens = self.generated_tokens
        started = self.first_text_seconds or 0.0
        if not tokens or self.seconds <= started:
            return None
        return tokens / (self.seconds - started)


def chat_url(base_url):
    base = base_url.rstrip("/")
    if base.endswith("/v1"):
        base = base[:-3]
    return f"{base}/v1/chat/completions"


def model_error_message(body_text):
    """从模型服务的错误响应里取出说明：OpenAI 形式 {"error": {"message"}}、Ollama 形式 {"error": "…"} 或纯文本。"""
    try:
        data = json.loads(body_text)
    except ValueError:
        return short(body_text, 200)
    if isinstance(data, dict):
        error = data.get("error", data)
        if isinstance(error, dict):
            error = error.get("message") or error.get("detail") or json.dumps(error, ensure_ascii=False)
        return short(str(error), 200)
    return short(body_text, 200)


def http_model_error(status, message, model, url):
    error = classify_http_error(status, message, model, url)
    error.transient = status == 429 or status >= 500
    return error


def classify_http_error(status, message, model, url):
    if status == 404 and "not found" in message and "model" in message:
        return ModelError(f"模型服务里没有模型 {model}（{message}）。请先运行：ollama pull {model}"
                          f"，或用 --model / ANS_MODEL 换一个已经下载的模型")
    if status == 404:
        return ModelError(f"模型服务 {url} 返回 HTTP 404（{message}）。请检查 OLLAMA_URL 是否指向 OpenAI 兼容的服务")
    return ModelError(f"模型服务返回 HTTP {status}：{message}")


def chat(messages, model, base_url, stream, on_text=None, max_tokens=DEFAULT_MAX_TOKENS, timeout=600,
         deadline=None, on_retry=None):
    """调用 OpenAI 兼容的 /v1/chat/completions。stream 为 True 时每收到一段就调用 on_text(片段)。

    发出请求这一步遇到暂时性的失败（连不上、429、5xx）最多试 3 次；回答开始之后不再重试。"""
    deadline = deadline or Deadline()
    url = chat_url(base_url)
    body = {"model": model, "messages": messages, "temperature": 0, "stream": stream,
            "max_tokens": max_tokens, "reasoning_effort": "none"}
    if stream:
        body["stream_options"] = {"include_usage": True}  # 让服务在流的最后报告 token 数
    started = time.monotonic()
    timing = {"first": None, "pieces": 0}

    def received(piece):
        if timing["first"] is None:
            timing["first"] = time.monotonic() - started
        timing["pieces"] += 1
        if on_text:
            on_text(piece)

    try:
        response = with_retries(lambda: start_chat(url, body, model, timeout, deadline), deadline, on_retry)
    except DeadlineExceeded as error:
        raise ModelError(f"等模型服务时{error}") from None
    if stream and "text/event-stream" in response.headers.get("Content-Type", ""):
        text, finish, tokens = read_stream(response, received)
        return ChatResult(text, finish, tokens, time.monotonic() - started, timing["first"], timing["pieces"])
    text, finish, tokens = read_whole(response)
    if on_text:
        on_text(text)
    return ChatResult(text, finish, tokens, time.monotonic() - started)


def start_chat(url, body, model, timeout, deadline):
    """发出请求，返回状态正常的响应；出错时抛 ModelError（暂时性的带 transient）。"""
    response = post_chat(url, body, timeout, deadline)
    if response.status_code == 400 and "does not support thinking" in response.text:
        # Ollama 对不会“思考”的模型可能拒绝 reasoning_effort：去掉这个字段再试一次
        del body["reasoning_effort"]
        response = post_chat(url, body, timeout, deadline)
    if response.status_code >= 400:
        raise http_model_error(response.status_code, model_error_message(response.text), model, url)
    return response


def post_chat(url, body, timeout, deadline):
    import requests  # 只在真的发请求时才导入：--verify 用不到网络，省下启动时间
    try:
        return requests.post(url, json=body, stream=body["stream"], timeout=deadline.timeout(10, timeout))
    except requests.ConnectionError:
        raise ModelUnreachable(f"连不上模型服务 {url}。请先启动它：ollama serve"
                               f"（或把 OLLAMA_URL 设成你的 OpenAI 兼容服务地址）", transient=True) from None
    except requests.Timeout:
        raise ModelError(f"模型服务 {url} 在 {timeout} 秒内没有回答") from None
    except requests.RequestException as error:
        # 地址本身不对之类的客户端错误：再试也不会成功，立刻报告
        raise ModelError(f"模型服务地址 {url} 不能用：{short(str(error), 160)}") from None
    except requests.RequestException as error:
        raise ModelError(f"请求模型服务 {url} 失败：{short(str(error), 200)}") from None


def read_whole(response):
    response.encoding = "utf-8"
    try:
        data = response.json()
        choice = data["choices"][0]
        text = choice["message"].get("content") or ""
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        raise ModelError(f"模型服务的回答格式不对：{short(response.text, 200)}") from None
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    return text, choice.get("finish_reason"), usage.get("completion_tokens")


def read_stream(response, on_text):
    """读 SSE 流。只取 delta.content；reasoning / reasoning_content 一概不要。"""
    import requests  # 只在真的发请求时才导入：--verify 用不到网络，省下启动时间
    pieces = []
    finish = None
    tokens = None
    done = False
    try:
        for raw in response.iter_lines():
            line = raw.decode("utf-8", errors="replace").strip()
            if not line.startswith("data:"):
                continue
            payload = line[5:].strip()
            if payload == "[DONE]":
                done = True
                break
            try:
                event = json.loads(payload)
            except ValueError:
                raise ModelError("模型服务的流式回答里有无法解析的数据", "".join(pieces)) from None
            if isinstance(event, dict) and event.get("error"):
                message = model_error_message(json.dumps(event, ensure_ascii=False))
                raise ModelError(f"模型服务在回答中途报错：{message}", "".join(pieces))
            choices = event.get("choices") if isinstance(event, dict) else None
            if isinstance(event, dict) and isinstance(event.get("usage"), dict):
                tokens = event["usage"].get("completion_tokens", tokens)
            if not choices:
                continue
            choice = choices[0] if isinstance(choices[0], dict) else {}
            delta = choice.get("delta") or {}
            piece = delta.get("content") if isinstance(delta, dict) else None
            if piece:
                pieces.append(piece)
                on_text(piece)
            if choice.get("finish_reason"):
                finish = choice["finish_reason"]
    except requests.RequestException:
        raise ModelError("模型服务的流式回答中途断开了，回答不完整", "".join(pieces)) from None
    if not done and finish is None:
        raise ModelError("模型服务的流式回答中途断开了，回答不完整", "".join(pieces))
    return "".join(pieces), finish, tokens
