"""--serve 的门：每个请求在做任何事之前先过这里，服务放在笔记本上一直开着也安全。

  · 网页碰不到它：带着 Origin 头的请求（网页里的脚本发的）只接受 --allow-origin 写了的来源，别的 403；Host 头只接受
    它在听的地址、本机的名字（localhost、127.0.0.1、[::1]）和 --allow-origin 里的主机名（DNS 重绑定的网页发来的
    Host 是它自己的域名：421）；/v1/* 的请求体只收 application/json（415：浏览器不经预检就能发的 text/plain、
    表单都不收）。
    允许的来源得到对应的 CORS 头，预检（OPTIONS）回 204；
  · 服务的密钥：设置了 ANS_SERVER_KEY 时每个请求都要带 Authorization: Bearer 这个值（401）；
  · 慢的客户端占不住它：请求头要在 --read-timeout 秒内收完（BoundedH11，到时关掉连接），请求体也要在这么多秒内收完
    （408）、不超过 max_body（413）；
  · 客户端走了就不再为它付费：请求体收完之后一直看着连接，断开了就设上“走了”的标记（core.abandoning），排队的不再开始，
    在做的在下一步要付费之前停下；
  · 每个请求结束时在标准错误上写一行访问日志（遮过密钥的路径，一行）；没等回答完就断开的客户端记成 499，
    后面写明“客户端没等回答完就断开了”（回应开头的状态码它没收全）。
以上都在 Starlette 应用看到请求之前。回应都由 servers.replies 编码（先遮密钥）。
"""
import asyncio
import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from dataclasses import dataclass
from typing import Any

from sourced_answers.core.abandoning import watched
from sourced_answers.core.masking import mask, masked_json_bytes
from sourced_answers.core.strings import literal
from sourced_answers.servers.openai_protocol import RequestProblem, authorized, error_body

Log = Callable[[str], None]
Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})
WILDCARD_HOSTS = ("0.0.0.0", "::")  # 听所有地址时（这时一定有 ANS_SERVER_KEY）Host 头不限
BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
CORS_METHODS = "GET, POST, OPTIONS"
CORS_HEADERS = "authorization, content-type"
# 访问日志里没等回答完就断开的请求（nginx 的写法）和跟在后面的说明
CLIENT_LEFT = 499
LEFT_NOTE = "客户端没等回答完就断开了"
# 走得早、一步要付费的都还没做的：接口写下的那一句（“搜索：……”）没有发生，不写它，写这一句
LEFT_UNPAID_NOTE = "客户端没等回答完就断开了，什么也没有付费（没有搜索，没有请模型）"


@dataclass(frozen=True)
class Policy:
    """门的规矩（启动时建好一次）。origins：--allow-origin 的来源（浏览器写在 Origin 头里的样子）；
    hosts：接受的 Host 名字（空的表示都接受：听的是所有地址）。"""
    key: str
    origins: frozenset[str]
    hosts: frozenset[str]
    max_body: int
    read_timeout: float
    secrets: Sequence[str] = ()


def host_names(listen: str, origins: Sequence[str]) -> frozenset[str]:
    """Host 头可以是哪些名字：听的地址、本机的名字、允许的来源的主机名。听所有地址时不限（空集合）。"""
    if listen in WILDCARD_HOSTS:
        return frozenset()
    from_origins = {host_of(origin.split("://", 1)[1]) for origin in origins if "://" in origin}
    return frozenset({host_of(f"[{listen}]" if ":" in listen else listen)} | LOOPBACK_NAMES | from_origins)


def host_of(value: str) -> str:
    """Host 头 → 主机名（小写，去掉端口；IPv6 留着方括号）。"""
    value = value.strip().lower()
    if value.startswith("["):
        return value.split("]", 1)[0] + "]"
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


class Door:
    """每个请求先过这里（见模块说明），再交给应用。"""

    def __init__(self, app: ASGIApp, policy: Policy, log: Log) -> None:
        self.app = app
        self.policy = policy
        self.log = log

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.monotonic()
        status = [0]
        gone = threading.Event()  # 客户端断开了（answer 里的 watch 设上）
        paid = [False]  # 这个请求放行过一步要付费的（core.abandoning 记下）
        finished = [False]  # 回应的最后一块发出去了
        headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in scope["headers"]}
        origin = headers.get("origin")
        cors = self.cors_headers(origin)

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0] = int(message["status"])
                message = {**message, "headers": [*message.get("headers", []), *cors]}
            elif message["type"] == "http.response.body" and not message.get("more_body", False):
                finished[0] = not gone.is_set()  # 客户端已经走了的话，这最后一块没人收
            await send(message)

        try:
            problem = self.refused(scope, headers, origin)
            if problem is not None:
                await refuse(sending, problem, self.policy.secrets)
                return
            if scope["method"] == "OPTIONS":  # 允许的来源的预检：告诉浏览器可以发什么
                await sending({"type": "http.response.start", "status": 204, "headers": [
                    (b"access-control-allow-methods", CORS_METHODS.encode()),
                    (b"access-control-allow-headers", CORS_HEADERS.encode()),
                    (b"access-control-max-age", b"600")]})
                await sending({"type": "http.response.body", "body": b""})
                return
            await self.answer(scope, receive, sending, status, gone, paid)
        finally:
            took = (time.monotonic() - started) * 1000
            # 路径先遮密钥再变成一行：literal 把夹在密钥中间的零宽字符写成 \u200b，那以后就认不出是密钥了
            path = mask(str(scope.get("path", "")), self.policy.secrets)
            # 接口写下的一句（request.state.access_note：搜索的是什么、是不是后台任务），同样遮过密钥、不能分行
            note = mask(str((scope.get("state") or {}).get("access_note") or ""), self.policy.secrets)
            # 没等回答完就断开的客户端：和 nginx 一样记成 499（回应开头写的状态码它没收全），说明写在这一行里
            left = gone.is_set() and not finished[0]
            code = CLIENT_LEFT if left else (status[0] or "-")
            if left:
                note = f"{LEFT_NOTE} {note}".strip() if paid[0] else LEFT_UNPAID_NOTE
            self.log(f"{literal(scope.get('method', ''), 20)} {literal(path, 200)} {code} {took:.0f} ms"
                     + (f" {literal(note, 200)}" if note else ""))

    def cors_headers(self, origin: str | None) -> list[tuple[bytes, bytes]]:
        """允许的来源（--allow-origin）得到的 CORS 头；别的（包括不带 Origin 的）什么也不加。"""
        if origin is None or origin.strip().lower() not in self.policy.origins:
            return []
        return [(b"access-control-allow-origin", origin.strip().encode("latin-1")), (b"vary", b"Origin")]

    def refused(self, scope: Scope, headers: dict[str, str], origin: str | None) -> RequestProblem | None:
        """做任何事之前就不接的请求：别的网页（403）、没有 Host（400）、不认识的 Host（421）、没带对密钥（401）、
        不是 JSON（415）。"""
        if origin is not None and origin.strip().lower() not in self.policy.origins:
            return RequestProblem(403, f"不接受从网页 {literal(origin, 100)} 发来的请求：这个服务只给本机的程序用。"
                                       "要让自己运行的网页客户端用它，启动时加 --allow-origin 这个来源",
                                  "permission_error", "origin_not_allowed")
        hosts = self.policy.hosts
        if hosts and not headers.get("host", "").strip():  # HTTP/1.0 可以不写 Host：那就不知道它要连的是谁
            return RequestProblem(400, "请求没有 Host 头：请在请求头里写明连的是哪个地址（例如 Host: 127.0.0.1:8000）",
                                  "invalid_request_error", "missing_host")
        if hosts and host_of(headers.get("host", "")) not in hosts:
            return RequestProblem(421, f"请求写的主机名 {literal(headers.get('host', ''), 100)} 不是这个服务的地址"
                                       "（浏览器里的网页把自己的域名指向本机时就会这样）",
                                  "invalid_request_error", "misdirected_request")
        if scope["method"] == "OPTIONS":
            return None if origin is not None else RequestProblem(405, "没有这个接口", code="not_found")
        if not authorized(headers, self.policy.key):
            return RequestProblem(401, "没有带对这个服务的密钥：请在请求头里写 Authorization: Bearer "
                                       "ANS_SERVER_KEY 的值", "authentication_error", "invalid_api_key")
        media = headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if scope["method"] in BODY_METHODS and media != "application/json" and not media.endswith("+json"):
            return RequestProblem(415, "请求体要是 JSON：请求头写 Content-Type: application/json",
                                  "invalid_request_error", "unsupported_media_type")
        return None

    async def answer(self, scope: Scope, receive: Receive, send: Send, status: list[int],
                     gone: threading.Event, paid: list[bool]) -> None:
        """先在时限内把请求体收完（408、413），再交给应用；之后一直看着连接，客户端断开就设上 gone（“走了”的标记）。
        客户端只关了自己发送的一半（shutdown(SHUT_WR)）也算走了：uvicorn 的 H11Protocol.eof_received 不留着半开的连接，
        收到 EOF 就关掉它，应用收到的是 http.disconnect；从连接上也分不出对方是只关了一半还是整个走了。
        paid：应用放行过一步要付费的（访问日志据此说走了的客户端花没花钱）。"""
        body = b""
        if scope["method"] in BODY_METHODS:
            read = await read_body(receive, self.policy.max_body, self.policy.read_timeout)
            if isinstance(read, RequestProblem):
                await refuse(send, read, self.policy.secrets)
                return
            body = read
        replayed = [False]

        async def replay() -> Message:
            if not replayed[0]:
                replayed[0] = True
                return {"type": "http.request", "body": body, "more_body": False}
            message = await receive()
            if message["type"] == "http.disconnect":
                gone.set()
            return message

        async def watch() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            gone.set()

        watcher = asyncio.create_task(watch())
        try:
            with watched(gone) as marks:  # 应用在守护线程里做的每一步都看得见它（背景线程复制了这个上下文）
                try:
                    await self.app(scope, replay, send)
                finally:
                    paid[0] = marks.paid
        except asyncio.CancelledError:
            # 服务要停了（Ctrl-C、SIGTERM、SIGHUP），等了几秒这个请求还没回答完：还没开始回应的，先回一个
            # OpenAI 的错误对象（不然是 uvicorn 的英文纯文字 500），取消照样往上传
            if not status[0]:
                await refuse(send, RequestProblem(503, "服务正在停止，这个请求没有回答完：请稍后再问一次",
                                                  "server_error", "shutting_down"), self.policy.secrets)
            raise
        finally:
            watcher.cancel()


async def read_body(receive: Receive, limit: int, seconds: float) -> bytes | RequestProblem:
    """在 seconds 秒内收完请求体、不超过 limit 个字节。超时是 408，太大是 413；客户端在发完之前走了也是 408。"""
    chunks: list[bytes] = []
    size = 0
    deadline = time.monotonic() + seconds
    while True:
        left = deadline - time.monotonic()
        try:
            message = await asyncio.wait_for(receive(), max(left, 0.001))
        except TimeoutError:
            return RequestProblem(408, f"请求体 {seconds:g} 秒内没有发完（--read-timeout）", code="request_timeout")
        if message["type"] == "http.disconnect":
            return RequestProblem(408, "请求体没有发完客户端就断开了", code="request_timeout")
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return RequestProblem(413, f"请求体太大（超过 {limit} 个字节）", code="request_too_large")
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


async def refuse(send: Send, problem: RequestProblem, secrets: Sequence[str]) -> None:
    """回一个 OpenAI 的错误对象（遮过密钥）。请求体没收完的（408、413）之后关掉连接：剩下的字节不再读。"""
    body = masked_json_bytes(error_body(problem), secrets)
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if problem.status in (408, 413):
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": problem.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


# 请求行、请求头不是合法的 HTTP（h11 读不懂：乱码、HTTP/1.1 没有 Host、请求头太大）时回的错误和写的那一行
INVALID_HTTP = RequestProblem(400, "请求不是合法的 HTTP（请求行或请求头写得不对）：这个连接已经关掉",
                              code="invalid_http")
INVALID_HTTP_LINE = "收到一个不合法的 HTTP 请求（请求行或请求头写得不对）：回了 400，关掉了连接"


def bounded_protocol(read_timeout: float, log: Log) -> type:
    """uvicorn 的 h11 连接，加上两件事。

      · 请求头要在 read_timeout 秒内收完：连上之后、每个回答发完之后开始计时，请求头收完就停；到时还没收完（只发了
        半个请求头，或者连上了什么也不发）就关掉连接。uvicorn 自己只在两个请求之间计时（keep-alive），第一个请求的
        请求头发得再慢也一直等着；
      · 读不懂的请求（h11 的 RemoteProtocolError）：uvicorn 回英文的纯文字 “Invalid HTTP request received.”、
        在它的日志（我们关掉了）里写一行英文。这里换成中文的 OpenAI 错误对象，经 log 写一行中文。这样的请求到不了门，
        门的访问日志里没有它。"""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class BoundedH11(H11Protocol):
        timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            super().connection_made(transport)  # type: ignore[arg-type]
            self.arm()

        def arm(self) -> None:
            self.disarm()
            self.timer = self.loop.call_later(read_timeout, self.too_slow)

        def disarm(self) -> None:
            if self.timer is not None:
                self.timer.cancel()
                self.timer = None

        def data_received(self, data: bytes) -> None:
            before = self.cycle
            super().data_received(data)
            if self.cycle is not None and self.cycle is not before:
                self.disarm()  # 一个请求的请求头收完了：请求体由门（read_body）计时

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self.arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self.disarm()
            super().connection_lost(exc)

        def send_400_response(self, msg: str) -> None:
            log(INVALID_HTTP_LINE)
            body = masked_json_bytes(error_body(INVALID_HTTP), ())
            headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                       (b"connection", b"close")]
            try:
                for event in (h11.Response(status_code=400, headers=headers, reason=b"Bad Request"),
                              h11.Data(data=body), h11.EndOfMessage()):
                    self.transport.write(self.conn.send(event))
            except h11.LocalProtocolError:
                pass  # 一个回答已经发了一半：回不了 400，只能关掉连接
            self.transport.close()

        def too_slow(self) -> None:
            self.timer = None
            if (self.cycle is None or self.cycle.response_complete) and not self.transport.is_closing():
                self.transport.close()

    return BoundedH11
