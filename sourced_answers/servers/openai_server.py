"""--serve [HOST:]PORT：起 OpenAI 兼容的服务（应用在 openai_app.py，服务器是 uvicorn）。

  · 监听之前做和回答问题时一样的付费之前的检查：配置对、模型服务在、模型都有——不对就退出码 2 / 3，不监听；
  · 默认只听 127.0.0.1；听别的地址（0.0.0.0、局域网地址）必须设置 ANS_SERVER_KEY，之后每个请求都要带
    Authorization: Bearer 这个值（不对是 401）。只听本机时设置了也一样要带；
  · 不回 CORS 头：浏览器里别的网页不能直接调用它；
  · 每个请求在标准错误上一行访问日志：方法、路径、状态码、毫秒；
  · Ctrl-C、SIGTERM、SIGHUP（终端关了；cli/launch.py 把它交给接 SIGTERM 的 uvicorn）：不再接新请求，最多等
    SHUTDOWN_SECONDS 秒让正在回答的说完，然后“已中断”、退出码 130。
"""
import asyncio
import json
import logging
import socket
import time
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any

from sourced_answers.core.errors import ExitCode, UsageError
from sourced_answers.core.network import os_error_text
from sourced_answers.core.settings import Settings
from sourced_answers.core.text import literal, mask
from sourced_answers.model.preflight import check_before_paying
from sourced_answers.servers.openai_protocol import RequestProblem, authorized, error_body

Log = Callable[[str], None]
SHUTDOWN_SECONDS = 3
Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class Door:
    """每个请求先过这里：没带对服务的密钥是 401；结束时在标准错误上写一行访问日志。"""

    def __init__(self, app: ASGIApp, key: str, log: Log, secrets: Sequence[str] = ()) -> None:
        self.app = app
        self.key = key
        self.log = log
        self.secrets = secrets

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.monotonic()
        status = [0]

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0] = int(message["status"])
            await send(message)

        try:
            headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in scope["headers"]}
            if not authorized(headers, self.key):
                await refuse(sending, RequestProblem(
                    401, "没有带对这个服务的密钥：请在请求头里写 Authorization: Bearer ANS_SERVER_KEY 的值",
                    "authentication_error", "invalid_api_key"))
                return
            try:
                await self.app(scope, receive, sending)
            except asyncio.CancelledError:
                # 服务要停了（Ctrl-C、SIGTERM、SIGHUP），等了 SHUTDOWN_SECONDS 秒这个请求还没回答完：还没开始回应的，
                # 先回一个 OpenAI 的错误对象（不然是 uvicorn 的英文纯文字 500），取消照样往上传
                if not status[0]:
                    await refuse(sending, RequestProblem(503, "服务正在停止，这个请求没有回答完：请稍后再问一次",
                                                         "server_error", "shutting_down"))
                raise
        finally:
            took = (time.monotonic() - started) * 1000
            # 路径先遮密钥再变成一行：literal 把夹在密钥中间的零宽字符写成 \u200b，那以后就认不出是密钥了
            path = mask(str(scope.get("path", "")), self.secrets)
            self.log(f"{literal(scope.get('method', ''), 20)} {literal(path, 200)} {status[0] or '-'} {took:.0f} ms")


async def refuse(send: Send, problem: RequestProblem) -> None:
    body = json.dumps(error_body(problem), ensure_ascii=False).encode()
    await send({"type": "http.response.start", "status": problem.status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def listening_socket(host: str, port: int) -> socket.socket:
    """先自己绑好端口（端口 0 时由系统挑一个空闲的），绑不上就是用法错误（退出码 2），还没有付任何费。
    写明 IPPROTO_TCP：asyncio 只给这样的套接字接进来的连接关掉 Nagle（TCP_NODELAY），和 uvicorn 自己绑端口时一样；
    不然 uvicorn 分两次写的响应头和响应体，在保持连接的客户端那里每个回答都要多等约 40 毫秒的延迟确认。"""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as error:
        sock.close()
        raise UsageError(f"--serve 监听不了 {literal(host)}:{port}：{os_error_text(error)}") from None
    except (OverflowError, UnicodeError):
        sock.close()
        raise UsageError(f"--serve 的地址 {literal(host)}:{port} 不能用") from None
    sock.listen(128)
    sock.setblocking(False)
    return sock


def serve(settings: Settings, log: Log) -> int:
    """起服务，一直到 Ctrl-C、SIGTERM 或 SIGHUP（那时由 launch 接住，退出码 130）。"""
    try:
        import starlette  # noqa: F401
        import uvicorn
    except ImportError:
        raise UsageError("没有安装 --serve 要的包：pip install '.[serve]'（Starlette 和 uvicorn）") from None
    from sourced_answers.servers.openai_app import Service, build_app
    options = settings.run.serve
    assert options is not None
    model = settings.model
    # 监听之前：模型服务在、模型都有（和回答问题时付费之前的检查是同一个）
    check_before_paying(model, [model.name], settings.judge, settings.run.deadline())
    sock = listening_socket(options.host, options.port)
    port = sock.getsockname()[1]
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access", "asyncio"):
        logging.getLogger(name).setLevel(logging.CRITICAL + 1)  # 英文的日志不混进来：访问日志由 Door 写
    app = Door(build_app(Service(settings, options, log)), options.key, log, settings.run.secrets)
    config = uvicorn.Config(app, log_config=None, access_log=False, lifespan="off", server_header=False,
                            timeout_graceful_shutdown=SHUTDOWN_SECONDS)
    host = f"[{options.host}]" if ":" in options.host else options.host
    log(f"OpenAI 兼容的服务在 http://{host}:{port}/v1（回答用的模型 {model.name}，同时回答 {options.concurrency} 个、"
        f"最多排队 {options.queue} 个{'，要带 ANS_SERVER_KEY' if options.key else ''}）；Ctrl-C 停止")
    uvicorn.Server(config).run(sockets=[sock])
    return ExitCode.PASSED
