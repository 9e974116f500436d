"""--mcp 的标准输入输出：一行一个 JSON-RPC 消息。要代替 SDK 的 stdio_server——它把看不懂的行悄悄丢掉（不合法的 JSON、
id 是对象、批量、params 不是对象、没有 jsonrpc……），既不回话也不说一声，客户端就一直等下去。

这里每一行先由 read_line 检查：合格的交给 SDK；不合格的按 JSON-RPC 回一个错误（-32700 解析错误、-32600 无效的请求、
-32602 参数不对；认得出 id 就带上，认不出是 null），标准错误上写一行，接着读下一行。客户端的回应（result、error）
格式不对时不回话（回应不能再回应），只写那一行。

写出去的每一帧（frame_of）是一行 JSON：编不成 UTF-8 的字（单独的代理码位）换成 U+FFFD，SDK 用英文说的两种错误
换成中文（in_chinese）。
"""
import json
from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass
from typing import Any

import pydantic_core
from mcp_types import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCMessage,
    jsonrpc_message_adapter,
)
from mcp_types.methods import SPEC_CLIENT_METHODS, SPEC_CLIENT_NOTIFICATION_METHODS
from pydantic import ValidationError

from sourced_answers.core.text import literal, masked_excerpt, without_surrogates

Log = Callable[[str], None]
RequestId = int | str

# 协议里客户端能发的方法：params 不是对象时，这些方法算“参数不对”（-32602），别的名字算“无效的请求”（-32600）
KNOWN_METHODS = SPEC_CLIENT_METHODS | SPEC_CLIENT_NOTIFICATION_METHODS
# SDK 自己回的错误里和请求不对有关的两种（英文）→ 中文；data（没有的方法名）照旧
SDK_MESSAGES = {(METHOD_NOT_FOUND, "Method not found"): "没有这个方法",
                (INVALID_PARAMS, "Invalid request parameters"): "参数不对"}
NOTE_EXCERPT = 100  # 标准错误上那一行引用收到的多少个字


@dataclass(frozen=True)
class Refusal:
    """一行不交给 SDK：回哪个错误。answered 为假的是格式不对的回应：不回话，只在标准错误上写一行。"""
    code: int
    message: str
    request_id: RequestId | None = None
    answered: bool = True

    def reply(self) -> JSONRPCError:
        return JSONRPCError(jsonrpc="2.0", id=self.request_id, error=ErrorData(code=self.code, message=self.message))


def read_line(line: bytes, known_methods: Container[str] = KNOWN_METHODS) -> JSONRPCMessage | Refusal:
    """一行输入 → 交给 SDK 的消息，或者一个 Refusal（回哪个错误）。"""
    try:
        # 和 SDK 同一个解析器：超过 200 层的嵌套、单独的代理码位（"\ud800"）、NaN 都是 ValueError，不会递归到崩溃
        value = pydantic_core.from_json(line.decode("utf-8"), allow_inf_nan=False)
    except UnicodeDecodeError:
        return Refusal(PARSE_ERROR, "解析错误：这一行不是 UTF-8 编码的文字")
    except ValueError as error:
        return Refusal(PARSE_ERROR, parse_problem(str(error)))
    if isinstance(value, list):
        return Refusal(INVALID_REQUEST, "无效的请求：MCP 没有批量请求，一行只发一个 JSON 对象")
    if not isinstance(value, dict):
        return Refusal(INVALID_REQUEST, "无效的请求：一行应是一个 JSON 对象")
    if "method" not in value and ("result" in value or "error" in value):
        return response_of(value)
    return request_of(value, known_methods)


def parse_problem(error: str) -> str:
    """pydantic-core 解析 JSON 时的报错（英文）→ 一句中文。"""
    if "recursion limit" in error:
        return "解析错误：JSON 嵌套太深（最多 200 层）"
    if "surrogate" in error or "hex escape" in error:
        return "解析错误：字符串里有单独的代理码位（例如 \\ud800）"
    return "解析错误：这一行不是合法的 JSON"


def is_request_id(value: Any) -> bool:
    """MCP 的 id 只能是字符串或整数（不能是 null；true 在 Python 里也是整数，要排除）。"""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def request_of(value: dict[str, Any], known_methods: Container[str]) -> JSONRPCMessage | Refusal:
    """请求或通知：先认 id（之后的错误都带上它），再看 jsonrpc、method、params。"""
    request_id = value.get("id")
    if "id" in value and not is_request_id(request_id):
        return Refusal(INVALID_REQUEST, "无效的请求：id 应是字符串或整数")
    if value.get("jsonrpc") != "2.0":
        return Refusal(INVALID_REQUEST, '无效的请求：jsonrpc 应是 "2.0"', request_id)
    method = value.get("method")
    if "method" not in value:
        return Refusal(INVALID_REQUEST, "无效的请求：缺少 method", request_id)
    if not isinstance(method, str):
        return Refusal(INVALID_REQUEST, "无效的请求：method 应是字符串", request_id)
    params = value.get("params")
    if params is not None and not isinstance(params, dict):  # null 和不给一样（SDK 也这样）
        if method in known_methods:
            return Refusal(INVALID_PARAMS, "参数不对：params 应是对象", request_id)
        return Refusal(INVALID_REQUEST, "无效的请求：params 应是对象", request_id)
    try:
        return jsonrpc_message_adapter.validate_python(value, by_name=False)
    except ValidationError:  # 上面的检查之后不该再有：万一有，也回一句话而不是不响
        return Refusal(INVALID_REQUEST, "无效的请求", request_id)


def response_of(value: dict[str, Any]) -> JSONRPCMessage | Refusal:
    """客户端的回应（回答服务发出的请求）：格式对的交给 SDK，不对的丢掉。"""
    try:
        return jsonrpc_message_adapter.validate_python(value, by_name=False)
    except ValidationError:
        return Refusal(INVALID_REQUEST, "丢掉了一个格式不对的回应（回应不再回话）", answered=False)


def refusal_note(refusal: Refusal, line: bytes, secrets: Sequence[str]) -> str:
    """标准错误上的一行：回了什么、收到的开头一段（先遮密钥再截短，写成一行）。"""
    received = masked_excerpt(line.rstrip(b"\r\n"), secrets, NOTE_EXCERPT + 1)
    received = literal(received[:NOTE_EXCERPT], None) + ("…" if len(received) > NOTE_EXCERPT else "")
    if not refusal.answered:
        return f"{refusal.message}：{received}"
    return f"拒绝了一个请求（{refusal.code} {refusal.message}）：{received}"


def in_chinese(message: JSONRPCMessage) -> JSONRPCMessage:
    """SDK 用英文说的“没有这个方法”“参数不对”换成中文（错误码、id、data 不变）。"""
    if not isinstance(message, JSONRPCError):
        return message
    chinese = SDK_MESSAGES.get((message.error.code, message.error.message))
    if chinese is None:
        return message
    return message.model_copy(update={"error": message.error.model_copy(update={"message": chinese})})


def frame_of(message: JSONRPCMessage) -> bytes:
    """一帧：一行 JSON（UTF-8）加换行。工具结果里单独的代理码位编不成 UTF-8：换成 U+FFFD，不让整个服务崩掉。"""
    try:
        text = message.model_dump_json(by_alias=True, exclude_unset=True)
    except pydantic_core.PydanticSerializationError:
        data = without_surrogates(message.model_dump(mode="json", by_alias=True, exclude_unset=True))
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.encode("utf-8") + b"\n"
