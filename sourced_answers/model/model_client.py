"""OpenAI 兼容的模型服务（Ollama、llama.cpp server 等）的客户端：chat、ModelError。

只用对话接口（地址由 endpoints.chat_url 得出，和预检用的是同一个前缀）。reasoning / reasoning_content 字段不会进入回答；
回答里的 <think>…</think> 由 thinking.py 去掉。
"""
import re
import time
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

from sourced_answers.checker import one_line
from sourced_answers.core.abandoning import ClientGone, stop_if_gone
from sourced_answers.core.errors import DeadlineExceeded, ModelError, ModelUnreachable, out_of_time
from sourced_answers.core.masking import mask
from sourced_answers.core.network import network_reason
from sourced_answers.core.retrying import Deadline, with_retries
from sourced_answers.core.settings import NO_KEY, ApiKey, ModelSettings
from sourced_answers.core.strings import excerpt, json_text, json_value, truncate
from sourced_answers.model.endpoints import chat_url
from sourced_answers.model.messages import ChatResult, Message

if TYPE_CHECKING:
    import requests

# 一个请求最多等多久（秒）：连上之后两次收到数据之间（总时限另有 --timeout）
REQUEST_TIMEOUT = 600


class Reply(NamedTuple):
    """从响应里读出的东西：回答、结束原因、生成的 token 数、服务报告的模型名。"""
    text: str
    finish_reason: str | None
    completion_tokens: int | None
    served_model: str | None


def model_error_message(body_text: str) -> str:
    """从模型服务的错误响应里取出说明：OpenAI 形式 {"error": {"message"}}、Ollama 形式 {"error": "…"} 或纯文本。"""
    try:
        data = json_value(body_text)
    except (ValueError, RecursionError):
        return excerpt(body_text, 200)
    if isinstance(data, dict):
        error = data.get("error", data)
        if isinstance(error, dict):
            error = error.get("message") or error.get("detail") or body_text
        return excerpt(json_text(error), 200)
    return excerpt(body_text, 200)


def key_error(status: int, message: str, url: str, key: ApiKey) -> ModelError:
    """401/403：密钥不对，或者服务要密钥而我们没给。"""
    if key.value:
        return ModelError(f"模型服务 {url} 拒绝了密钥（HTTP {status}：{message}）。请检查 {key.name}")
    return ModelError(f"模型服务 {url} 需要密钥（HTTP {status}：{message}）。请把它的 API Key 放进环境变量 "
                      f"{key.name}：export {key.name}=你的密钥")


def http_model_error(status: int, message: str, model: str, url: str, key: ApiKey = NO_KEY) -> ModelError:
    if status in (401, 403):
        return key_error(status, message, url, key)
    error = classify_http_error(status, message, model, url)
    error.transient = status == 429 or status >= 500
    return error


def classify_http_error(status: int, message: str, model: str, url: str) -> ModelError:
    if status == 404 and "not found" in message and "model" in message:
        return ModelError(f"模型服务里没有模型 {model}（{message}）。请先运行：ollama pull {model}"
                          f"，或用 --model / ANS_MODEL 换一个已经下载的模型")
    if status == 404:
        return ModelError(f"模型服务 {url} 返回 HTTP 404（{message}）。请检查 OLLAMA_URL 是否指向 OpenAI 兼容的服务")
    return ModelError(f"模型服务返回 HTTP {status}：{message}")


def chat(messages: list[Message], model: ModelSettings, deadline: Deadline | None = None, *, stream: bool = False,
         on_text: Callable[[str], None] | None = None, on_retry: Callable[[str], None] | None = None) -> ChatResult:
    """请 model 回答 messages：名字、服务的接口前缀（地址是 endpoints.chat_url(model.url)）、密钥、max_tokens 都在
    设置里。stream 为 True 时边收边调用 on_text(片段)；不流式时整个回答到了调用一次。

    发出请求这一步遇到暂时性的失败（连不上、429、5xx）最多试 3 次；回答开始之后不再重试。"""
    limit = deadline or Deadline()
    url, key = chat_url(model.url), model.key
    body: dict[str, Any] = {"model": model.name, "messages": messages, "temperature": 0, "stream": stream,
                            "max_tokens": model.max_tokens, "reasoning_effort": "none"}
    if stream:
        body["stream_options"] = {"include_usage": True}  # 让服务在流的最后报告 token 数
    started = time.monotonic()
    first: list[float] = []
    pieces = [0]

    def received(piece: str) -> None:
        if not first:
            first.append(time.monotonic() - started)
        pieces[0] += 1
        if on_text:
            on_text(piece)

    try:
        response = with_retries(lambda: start_chat(url, body, model.name, REQUEST_TIMEOUT, limit, key), limit,
                                on_retry)
    except DeadlineExceeded as error:
        raise out_of_time(ModelError(f"等模型服务时{error}")) from None
    if stream and "text/event-stream" in response.headers.get("Content-Type", ""):
        try:
            reply = read_stream(response, received)
        except ClientGone:
            response.close()  # 断开连接：模型服务（llama.cpp、Ollama）就不再生成，不再花 token
            raise
        except ModelError as error:
            left = limit.remaining()
            if left is not None and left <= 0:  # 读到一半是总时限先到了：说时限，不说“断开了”
                raise out_of_time(ModelError(f"等模型服务 {url} 时超过了总时限 {limit.seconds:g} 秒（--timeout）",
                                             error.partial)) from None
            raise
        # 服务把请求头回显进回答里时，密钥在这里就遮掉：不会进入核对、JSON、审阅页
        return ChatResult(mask(reply.text, key.masked), reply.finish_reason, reply.completion_tokens,
                          time.monotonic() - started, first[0] if first else None, pieces[0],
                          served_name(reply.served_model, key))
    reply = read_whole(response)
    if on_text:
        on_text(reply.text)
    return ChatResult(mask(reply.text, key.masked), reply.finish_reason, reply.completion_tokens,
                      time.monotonic() - started, served_model=served_name(reply.served_model, key))


# 看起来是本机文件路径的模型名：绝对路径、~、./ 或 ../ 开头、Windows 的盘符或网络路径
LOCAL_PATH = re.compile(r"(?:/|~|\.{1,2}[\\/]|[A-Za-z]:[\\/]|\\\\)")
MODEL_FILE_SUFFIXES = (".gguf", ".ggml", ".bin", ".safetensors", ".pt", ".pth")


def without_directories(name: str) -> str:
    """llama.cpp 不设别名时报告的是模型文件的路径（/home/u/.venv/…/SmolLM2-135M-Instruct.Q4_1.gguf）：只留文件名，
    本机的目录不进 --json、表格和说明。Qwen/Qwen2.5-7B-Instruct、hf.co/用户/仓库:Q4 这样的名字不是路径，原样保留。"""
    looks_local = LOCAL_PATH.match(name) or (name.lower().endswith(MODEL_FILE_SUFFIXES) and re.search(r"[\\/]", name))
    if not looks_local:
        return name
    return re.split(r"[\\/]", name.rstrip("/\\"))[-1] or name


def served_name(value: str | None, key: ApiKey) -> str | None:
    """服务报告的模型名：遮掉密钥、变成一行（换行、控制字符不能在说明里伪造出一行）、去掉本机的目录、截短
    （它会出现在表格和日志里）。不是字符串的（数字、对象）当作没有报告。"""
    if not isinstance(value, str):
        return None
    shown = without_directories(one_line(mask(value, key.masked)))
    name = truncate(shown, 200).replace("|", "｜")  # 竖线会把表格多分出一栏
    return name or None


def start_chat(url: str, body: dict[str, Any], model: str, timeout: float, deadline: Deadline,
               key: ApiKey = NO_KEY) -> "requests.Response":
    """发出请求，返回状态正常的响应；出错时抛 ModelError（暂时性的带 transient）。"""
    response = post_chat(url, body, timeout, deadline, key)
    if response.status_code == 400 and "does not support thinking" in response.text:
        # Ollama 对不会“思考”的模型可能拒绝 reasoning_effort：去掉这个字段再试一次
        del body["reasoning_effort"]
        response = post_chat(url, body, timeout, deadline, key)
    if response.status_code >= 400:
        raise http_model_error(response.status_code, model_error_message(response.text), model, url, key)
    return response


def post_chat(url: str, body: dict[str, Any], timeout: float, deadline: Deadline,
              key: ApiKey = NO_KEY) -> "requests.Response":
    import requests  # 只在真的发请求时才导入：--verify 用不到网络，省下启动时间
    stop_if_gone()  # 提问的客户端（--serve）已经走了：不再请模型回答
    limits = deadline.timeout(10, timeout)
    try:
        return requests.post(url, json=body, stream=body["stream"], timeout=limits, headers=key.headers())
    except requests.Timeout:
        if limits[1] < timeout:  # 是总时限先到了
            raise out_of_time(ModelError(f"等模型服务 {url} 时超过了总时限 {deadline.seconds:g} 秒（--timeout）")) \
                from None
        raise ModelError(f"模型服务 {url} 在 {timeout:g} 秒内没有回答") from None
    except (requests.exceptions.ChunkedEncodingError, requests.exceptions.ContentDecodingError):
        raise ModelError(f"模型服务 {url} 的回答中途断开了，回答不完整", transient=True) from None
    except (requests.exceptions.InvalidURL, requests.exceptions.MissingSchema, requests.exceptions.InvalidSchema,
            requests.exceptions.InvalidHeader):
        # 地址本身不对之类的客户端错误：再试也不会成功，立刻报告
        raise ModelError(f"模型服务地址 {url} 不能用：地址的格式不对，请检查 OLLAMA_URL") from None
    except requests.ConnectionError as error:
        reason = network_reason(error)
        if reason == "回答中途断开":
            raise ModelError(f"模型服务 {url} 没有回答完就断开了连接", transient=True) from None
        raise ModelUnreachable(f"连不上模型服务 {url}（{reason}）。请先启动它：ollama serve"
                               f"（或把 OLLAMA_URL 设成你的 OpenAI 兼容服务地址）", transient=True) from None
    except requests.RequestException as error:
        raise ModelError(f"请求模型服务 {url} 失败：{network_reason(error)}") from None


def message_text(content: object) -> str:
    """回答的 content：文字，或 OpenAI 的“内容片段”列表（[{"type": "text", "text": …}]，只取文字片段）。
    没有内容时是空字符串；别的样子（数字、对象）不是回答。"""
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, list):
        texts = []
        for part in content:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, dict) and part.get("type", "text") == "text" and isinstance(part.get("text"), str):
                texts.append(part["text"])
        return "".join(texts)
    raise ValueError("content 不是文字")


# 一次回答不可能生成这么多 token：超过的当作没报告
MAX_REPORTED_TOKENS = 10_000_000
# 从第一段回答到结束不到这么久（整个回答一段就发完了）时，量不出生成速度


def token_count(value: object) -> int | None:
    """服务报告的 token 数：只认合理范围里的非负整数（有的服务在这里放字符串、小数，或者大得离谱的数）。"""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_REPORTED_TOKENS:
        return value
    return None


def first_choice(data: object) -> dict[str, Any] | None:
    """{"choices": [第一个, …]} 里的第一个；样子不对时为 None。"""
    choices = data.get("choices") if isinstance(data, dict) else None
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        return choices[0]
    return None


def model_name(data: object) -> str | None:
    """响应（或流里的一段）里的 model 字段：服务说是哪个模型回答的。"""
    value = data.get("model") if isinstance(data, dict) else None
    return (value.strip() or None) if isinstance(value, str) else None


# 一次回答（非流式的整个响应，或者流式的全部事件）最多这么多字节：--max-tokens 的上限一百万个 token，中文转义成
# \uXXXX 也用不了一半；更多的是出了毛病的服务（一直发下去），读到就停，不让内存一直涨
MAX_REPLY_BYTES = 64 * 1024 * 1024
WHOLE_CHUNK = 64 * 1024


def reply_too_big() -> str:
    return (f"模型服务的回答超过了 {MAX_REPLY_BYTES / (1024 * 1024):g} MB 还没有结束，不像是一次回答"
            "（--max-tokens 最多一百万个 token 也用不了这么多），没有再读下去")


def read_whole(response: "requests.Response") -> Reply:
    import requests
    chunks: list[bytes] = []
    size = 0
    try:
        for chunk in response.iter_content(WHOLE_CHUNK):  # 先把回答读完：半路断开时在这里就知道
            size += len(chunk)
            if size > MAX_REPLY_BYTES:
                response.close()
                raise ModelError(reply_too_big())
            chunks.append(chunk)
    except requests.RequestException:
        raise ModelError("模型服务的回答中途断开了，回答不完整", transient=False) from None
    body = b"".join(chunks).decode("utf-8", errors="replace")
    try:
        data = json_value(body)
        choice = first_choice(data)
        message = choice.get("message") if choice else None
        if not isinstance(message, dict):
            raise ValueError("没有 message")
        text = message_text(message.get("content"))
    except (ValueError, RecursionError):
        raise ModelError(f"模型服务的回答格式不对：{excerpt(body, 200)}") from None
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    finish = choice.get("finish_reason") if choice else None
    return Reply(text, finish if isinstance(finish, str) else None, token_count(usage.get("completion_tokens")),
                 model_name(data))


# 流式回答的一行（一个 SSE 事件）最多这么多字节：一个事件装得下整个回答（--max-tokens 的上限一百万个 token，
# JSON 把中文转义成 \\uXXXX 也不到这么多）；更长的一行（一直不换行的服务）是错误，读到这么多就停，不再往下读
MAX_EVENT_BYTES = 16 * 1024 * 1024
# 从流里一次读这么多字节：和 requests 的 iter_lines 一样小。没有分块编码（Connection: close）的流，urllib3 要等
# 攒够这么多字节才交出来，大了的话短短的回答要等到最后才显示
STREAM_CHUNK = 512


class LineTooLong(ValueError):
    """流式回答里的一行超过了上限（说明是中文的）。"""


def stream_lines(chunks: Iterable[bytes], limit: int) -> Iterator[bytes]:
    """把流切成行（\n、\r\n、\r 结束一行，和 SSE 的规矩一样），行尾不带换行符。用时和长度成正比：还没结束的一行
    攒成片段的列表，看到换行才拼起来（requests 的 iter_lines 每收到 512 个字节就把没结束的那一行整个重新拼一次，
    一行几 MB 要几分钟，几十 MB 就再也读不完）。一行超过 limit 个字节时抛 LineTooLong，不再往下读。"""
    parts: list[bytes] = []
    size = 0
    for chunk in chunks:
        if b"\n" not in chunk and b"\r" not in chunk:  # 一行的中间：攒着，不拼
            parts.append(chunk)
            size += len(chunk)
            if size > limit:
                raise too_long(limit)
            continue
        if parts:
            chunk = (parts[0] if len(parts) == 1 else b"".join(parts)) + chunk
            parts = []
        lines = chunk.splitlines()  # bytes 只认 \n、\r\n、\r
        size = 0
        if not chunk.endswith((b"\n", b"\r")):  # 最后一行还没结束
            parts = [lines.pop()]
            size = len(parts[0])
        if len(chunk) > limit and any(len(line) > limit for line in lines):
            raise too_long(limit)
        yield from lines
        if size > limit:
            raise too_long(limit)
    if parts:
        yield b"".join(parts)


def too_long(limit: int) -> LineTooLong:
    return LineTooLong(f"模型服务的流式回答里有一行超过了 {limit / (1024 * 1024):g} MB（一直没有换行），"
                       "不像是 OpenAI 兼容的流式回答")


def read_stream(response: "requests.Response", on_text: Callable[[str], None]) -> Reply:
    """读 SSE 流。只取 delta.content；reasoning / reasoning_content 一概不要。"""
    import requests  # 只在真的发请求时才导入：--verify 用不到网络，省下启动时间
    pieces: list[str] = []
    finish = None
    tokens = None
    served = None
    done = False
    size = 0
    try:
        for raw in stream_lines(response.iter_content(STREAM_CHUNK), MAX_EVENT_BYTES):
            stop_if_gone()
            size += len(raw)
            if size > MAX_REPLY_BYTES:
                response.close()  # 不再读下去
                raise ModelError(reply_too_big(), "".join(pieces))
            line = raw.decode("utf-8", errors="replace").strip()
            if not line.startswith("data:"):
                continue
            payload = line[5:].strip()
            if payload == "[DONE]":
                done = True
                break
            try:
                event = json_value(payload)
            except (ValueError, RecursionError):
                raise ModelError("模型服务的流式回答里有无法解析的数据", "".join(pieces)) from None
            if not isinstance(event, dict):
                continue
            served = served or model_name(event)
            if event.get("error"):
                message = model_error_message(payload)
                raise ModelError(f"模型服务在回答中途报错：{message}", "".join(pieces))
            if isinstance(event.get("usage"), dict):
                tokens = token_count(event["usage"].get("completion_tokens")) or tokens
            choice = first_choice(event)
            if choice is None:
                continue
            delta = choice.get("delta")
            try:
                piece = message_text(delta.get("content")) if isinstance(delta, dict) else ""
            except ValueError:
                raise ModelError("模型服务的流式回答里有不是文字的内容", "".join(pieces)) from None
            if piece:
                pieces.append(piece)
                on_text(piece)
            if isinstance(choice.get("finish_reason"), str) and choice["finish_reason"]:
                finish = choice["finish_reason"]
    except LineTooLong as error:
        response.close()  # 不再读下去
        raise ModelError(str(error), "".join(pieces)) from None
    except requests.RequestException as error:
        reason = network_reason(error)
        detail = "" if reason in ("回答中途断开", "网络出错") else f"（{reason}）"
        raise ModelError(f"模型服务的流式回答中途断开了，回答不完整{detail}", "".join(pieces)) from None
    if not done and finish is None:
        raise ModelError("模型服务的流式回答中途断开了，回答不完整", "".join(pieces))
    return Reply("".join(pieces), finish, tokens, served)
