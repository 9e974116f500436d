"""--mcp 的标准输入输出：一行一个 JSON-RPC 消息。代替 SDK 的 stdio_server——它把看不懂的行悄悄丢掉（不合法的 JSON、
id 是对象、批量、params 不是对象、没有 jsonrpc……），既不回话也不说一声，客户端就一直等下去。

这里每一行先由 read_line 检查：合格的交给 SDK；不合格的按 JSON-RPC 回一个错误（-32700 解析错误、-32600 无效的请求、
-32602 参数不对；认得出 id 就带上，认不出是 null），标准错误上写一行，接着读下一行。客户端的回应（result、error）
和通知（有 method、没有 id）格式不对时不回话（JSON-RPC 不回应它们），只写那一行。一行最多 MAX_LINE 个字节（和
--serve 的请求体一样）：更长的行不整个读进内存：读到上限就知道了，剩下的一段一段读掉、丢掉，回 -32600。

往协议里写的只有 write_replies 一个任务：SDK 的回应和这里的错误走同一条流，一帧一行、写完就冲刷，帧不会交错；
编不成 UTF-8 的字（单独的代理码位）换成 U+FFFD 再写，SDK 用英文说的几种错误换成中文（握手之前的请求，SDK 回的和
参数不对一样：由 Handshake 认出来，说清楚要先发 initialize）。客户端不再读标准输出了（写的时候管道断了，或者
watch_reader 看见读的一端关了）：之后的回应丢掉，新的请求不交给 SDK，正在做的调用在下一步付费之前停下
（core.abandoning）。
服务期间文件描述符 0 指向 /dev/null、1 指向标准错误，协议用它们的副本：别处漏出来的 print、子进程的输出混不进协议。
"""
import os
import select
import sys
import threading
from collections.abc import Callable, Container, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, BinaryIO

import anyio
import pydantic_core
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage
from mcp_types import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    PROTOCOL_VERSION_META_KEY,
    ErrorData,
    JSONRPCError,
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    jsonrpc_message_adapter,
)
from mcp_types.methods import SPEC_CLIENT_METHODS, SPEC_CLIENT_NOTIFICATION_METHODS
from pydantic import ValidationError

from sourced_answers.core.abandoning import watched
from sourced_answers.core.masking import masked_excerpt, masked_json_bytes
from sourced_answers.core.settings import SERVE_DEFAULTS
from sourced_answers.core.strings import literal
from sourced_answers.servers.background import in_background

Log = Callable[[str], None]
RequestId = int | str

# 协议里客户端能发的方法：params 不是对象时，这些方法算“参数不对”（-32602），别的名字算“无效的请求”（-32600）
KNOWN_METHODS = SPEC_CLIENT_METHODS | SPEC_CLIENT_NOTIFICATION_METHODS
# SDK 自己回的错误里和请求不对有关的两种（英文）→ 中文；data（没有的方法名）照旧
SDK_MESSAGES = {(METHOD_NOT_FOUND, "Method not found"): "没有这个方法",
                (INVALID_PARAMS, "Invalid request parameters"): "参数不对"}
NOTE_EXCERPT = 100  # 标准错误上那一行引用收到的多少个字
# 一行（一个消息）最多多少字节：和 --serve 的请求体同一个上限
MAX_LINE = SERVE_DEFAULTS.max_body
READ_CHUNK = 64 * 1024  # 读一行时每次最多读多少
WATCH_MILLISECONDS = 250  # 看着客户端读不读标准输出的线程多久看一眼服务结束了没有


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
    """请求或通知。通知（有字符串的 method、没有 id）格式不对也不回话（JSON-RPC 从不回应通知），只写一行。"""
    checked = checked_request(value, known_methods)
    if isinstance(checked, Refusal) and "id" not in value and isinstance(value.get("method"), str):
        return replace(checked, message=f"丢掉了一个格式不对的通知（{checked.message}；通知不回话）", answered=False)
    return checked


def checked_request(value: dict[str, Any], known_methods: Container[str]) -> JSONRPCMessage | Refusal:
    """先认 id（之后的错误都带上它），再看 jsonrpc、method、params。"""
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


class Handshake:
    """客户端握手了没有（initialize 有了成功的回应）。SDK 对握手之前的请求回 -32602 "Invalid request parameters"，
    和参数不对时一字不差：这里记着握手之前交给 SDK 的请求（id → 方法），认出 SDK 因为没握手而回的错误，换成一句
    说清楚要先发 initialize 的 -32600。握手之后什么也不记。SDK 不要握手的两种情形也算握手了：客户端直接发了
    notifications/initialized，或者第一个请求带着 2026 年以后的协议的信封（params._meta 里的协议版本）。"""

    def __init__(self) -> None:
        self.done = False
        self.asked: dict[RequestId, str] = {}

    def sent(self, message: JSONRPCMessage) -> None:
        """读的任务交给 SDK 的每一个消息。"""
        if self.done:
            return
        if isinstance(message, JSONRPCNotification) and message.method == "notifications/initialized":
            self.finish()
        elif isinstance(message, JSONRPCRequest):
            meta = (message.params or {}).get("_meta")
            if message.method != "initialize" and isinstance(meta, dict) and PROTOCOL_VERSION_META_KEY in meta:
                self.finish()
            else:
                self.asked[message.id] = message.method

    def explained(self, message: JSONRPCMessage) -> JSONRPCMessage:
        """写出去之前的每一个消息：握手之前被 SDK 挡回来的请求换成 not_initialized 的说明，其余原样。"""
        if self.done or not isinstance(message, JSONRPCResponse | JSONRPCError):
            return message
        method = self.asked.pop(message.id, None) if message.id is not None else None
        if isinstance(message, JSONRPCResponse):
            if method == "initialize":
                self.finish()
            return message
        gated = (message.error.code, message.error.message) == (INVALID_PARAMS, "Invalid request parameters")
        if not gated or method in (None, "initialize", "ping"):
            return message
        return Refusal(INVALID_REQUEST, not_initialized(method), message.id).reply()

    def finish(self) -> None:
        self.done = True
        self.asked.clear()


def not_initialized(method: str) -> str:
    """握手之前的请求：SDK 回的是 -32602 "Invalid request parameters"（和参数不对一样），
    换成这一句：哪个请求、先做什么。"""
    return (f"无效的请求：还没有初始化就发来了 {literal(method, 40)}：先发 initialize 请求，收到回应之后再发别的请求"
            "（ping 除外）")


def in_chinese(message: JSONRPCMessage) -> JSONRPCMessage:
    """SDK 用英文说的“没有这个方法”“参数不对”换成中文（错误码、id、data 不变）。"""
    if not isinstance(message, JSONRPCError):
        return message
    chinese = SDK_MESSAGES.get((message.error.code, message.error.message))
    if chinese is None:
        return message
    return message.model_copy(update={"error": message.error.model_copy(update={"message": chinese})})


def frame_of(message: JSONRPCMessage, secrets: Sequence[str] = ()) -> bytes:
    """一帧：一行 JSON（UTF-8）加换行，先遮掉密钥再编码（core.masking：协议里的每一帧都经过它，工具结果、SDK 的错误
    都一样）。工具结果里单独的代理码位编不成 UTF-8：换成 U+FFFD，不让整个服务崩掉。"""
    data = message.model_dump(mode="json", by_alias=True, exclude_unset=True)
    return masked_json_bytes(data, secrets) + b"\n"


@contextmanager
def claimed_stdio() -> Iterator[tuple[BinaryIO, BinaryIO]]:
    """协议的两端：标准输入、输出的副本。服务期间 0 指向 /dev/null、1 指向标准错误，结束时还原。
    复制不了就直接用它们（别处的 print 就可能混进协议，但服务照样能用）。"""
    sys.stdout.flush()
    try:
        wire_in, wire_out = os.dup(0), os.dup(1)
    except OSError:
        wire_in = wire_out = -1
    if wire_out < 0:
        yield sys.stdin.buffer, sys.stdout.buffer
        return
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    try:
        # 副本不关：出了错提前结束时，读的线程可能还卡在 read 上，关掉的号码会被别的文件拿去
        yield os.fdopen(wire_in, "rb", closefd=False), os.fdopen(wire_out, "wb", closefd=False)
    finally:
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)


@dataclass(frozen=True)
class TooLong(Refusal):
    """太长、没有读完的一行：line 是读到的开头（标准错误上那一行引用它）。"""
    line: bytes = b""


def next_line(wire: BinaryIO, limit: int = MAX_LINE) -> bytes | TooLong:
    """下一行（带着换行；读完了是 b""），每次最多读 READ_CHUNK 个字节。一行超过 limit 个字节时不把它整个读进内存：
    读到 limit + 1 个字节还没有换行就知道太长了，手里的那些只留开头一段（标准错误上那一行引用它），剩下的一段一段
    读到换行为止、都丢掉，回一个 TooLong。"""
    pieces: list[bytes] = []
    size = 0
    while True:
        piece = wire.readline(min(READ_CHUNK, limit + 1 - size))
        pieces.append(piece)
        size += len(piece)
        if not piece or piece.endswith(b"\n"):
            return b"".join(pieces)
        if size > limit:
            break
    head = pieces[0]
    del pieces
    while (rest := wire.readline(READ_CHUNK)) and not rest.endswith(b"\n"):
        pass
    return TooLong(INVALID_REQUEST, f"无效的请求：一行超过了 {size_text(limit)}，没有读完就丢掉了（一行只放一个消息）",
                   line=head)


def size_text(size: int) -> str:
    """16777216 → "16 MB"；不是整 MB 的写字节数。"""
    megabytes, left = divmod(size, 1024 * 1024)
    return f"{megabytes} MB" if megabytes and not left else f"{size} 个字节"


@dataclass
class Session:
    """一次服务里读、写两个任务共用的：写说明的地方、要遮的密钥、握手、客户端还读不读标准输出（unread 设上了就是不读了：
    它也是 core.abandoning 的一个“走了”的标记，正在做的调用在下一步付费之前停下）。"""
    log: Log
    secrets: Sequence[str]
    handshake: Handshake = field(default_factory=Handshake)
    unread: threading.Event = field(default_factory=threading.Event)

    def stopped_reading(self) -> None:
        """客户端不再读标准输出了（写的时候管道断了，或者 poll 报告读的一端关了）：说一次。"""
        if not self.unread.is_set():
            self.unread.set()
            self.log("MCP 客户端不再读标准输出了：之后的回应都丢掉，正在做的调用不再付费，新的请求不再开始；"
                     "等它关掉标准输入")


async def read_requests(wire: BinaryIO, requests: MemoryObjectSendStream[SessionMessage],
                        replies: MemoryObjectSendStream[SessionMessage], session: Session,
                        max_line: int = MAX_LINE) -> None:
    """一行一行读（在守护线程里读：卡在 read 上也不拖住退出），合格的交给 SDK，不合格的回错误、记一行。客户端不再读
    标准输出之后，请求不再交给 SDK（回答送不到，不为它付费）。
    标准输入关掉（客户端走了）时关掉这两条流：SDK 结束服务（取消还在做的调用），写完剩下的回应。"""
    async with requests, replies:
        while line := await in_background(next_line, wire, max_line):
            checked: JSONRPCMessage | Refusal
            if isinstance(line, TooLong):
                checked, received = line, line.line
            elif not line.strip():
                continue  # 空行不是请求
            else:
                checked, received = read_line(line), line
            if isinstance(checked, Refusal):
                session.log(refusal_note(checked, received, session.secrets))
                if checked.answered and not session.unread.is_set():
                    await replies.send(SessionMessage(checked.reply()))
            elif session.unread.is_set() and isinstance(checked, JSONRPCRequest):
                session.log(f"没有开始 {literal(checked.method, 40)}（id {literal(str(checked.id), 40)}）："
                            "客户端不再读标准输出了，回答送不到")
            else:
                session.handshake.sent(checked)
                await requests.send(SessionMessage(checked))


async def write_replies(replies: MemoryObjectReceiveStream[SessionMessage], wire: BinaryIO, session: Session) -> None:
    """唯一往协议里写的地方。客户端不再读了（管道断了）就说一声，之后的回应都丢掉，等它关掉标准输入。"""
    async with replies:
        async for reply in replies:
            if session.unread.is_set():
                continue
            message = in_chinese(session.handshake.explained(reply.message))
            try:
                await in_background(send_frame, wire, frame_of(message, session.secrets))
            except OSError:
                session.stopped_reading()


async def watch_reader(wire: BinaryIO, session: Session, ended: threading.Event) -> None:
    """不等写回应的时候才发现：协议的输出是管道或套接字时，读的一端一关，poll 就报 POLLERR 或 POLLHUP。"""
    if await in_background(reader_left, wire, ended):
        session.stopped_reading()


def reader_left(wire: BinaryIO, ended: threading.Event) -> bool:
    """等到 wire 读的一端关了（True），或者服务结束了（ended，False）。普通文件、终端、/dev/null 不报这些：等到结束。"""
    try:
        poller = select.poll()
        poller.register(wire.fileno(), 0)  # 不要任何事件：POLLERR、POLLHUP、POLLNVAL 总会报
    except (AttributeError, OSError, ValueError):  # 没有 poll（Windows）、不是文件描述符（测试的内存流）
        return False
    while not ended.is_set():
        for _, event in poller.poll(WATCH_MILLISECONDS):
            return not event & select.POLLNVAL
    return False


def send_frame(wire: BinaryIO, frame: bytes) -> None:
    wire.write(frame)
    wire.flush()


async def serve_stdio(server: Any, log: Log, secrets: Sequence[str]) -> None:
    """在标准输入输出上服务 server（SDK 的底层 Server），直到标准输入关掉。"""
    with claimed_stdio() as (wire_in, wire_out):
        await serve_wire(server, wire_in, wire_out, log, secrets)


async def serve_wire(server: Any, wire_in: BinaryIO, wire_out: BinaryIO, log: Log, secrets: Sequence[str],
                     max_line: int = MAX_LINE) -> None:
    """在一对字节流上服务 server（标准输入输出，或者测试的两根管道），直到读完 wire_in。"""
    requests, received = anyio.create_memory_object_stream[SessionMessage](0)
    replies, to_write = anyio.create_memory_object_stream[SessionMessage](0)
    session = Session(log, secrets)
    ended = threading.Event()
    # 客户端不再读了：SDK 正在做的每一个调用（它们的任务、守护线程都复制了这里的上下文）在下一步付费之前停下
    with watched(session.unread):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(write_replies, to_write, wire_out, session)
            tasks.start_soon(watch_reader, wire_out, session, ended)
            # 错误经由回应流的一个副本发出：和 SDK 的回应排在同一条队里，由同一个任务写
            tasks.start_soon(read_requests, wire_in, requests, replies.clone(), session, max_line)
            try:
                await server.run(received, replies, server.create_initialization_options())
            finally:
                ended.set()
