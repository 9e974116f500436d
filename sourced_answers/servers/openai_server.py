"""--serve [HOST:]PORT：起 OpenAI 兼容的服务（应用在 openai_app.py，服务器是 uvicorn）。

  · 监听之前做和回答问题时一样的付费之前的检查：配置对、模型服务在、模型都有——不对就退出码 2 / 3，不监听；
  · 默认只听 127.0.0.1；听别的地址（0.0.0.0、局域网地址）必须设置 ANS_SERVER_KEY，之后每个请求都要带
    Authorization: Bearer 这个值（不对是 401）。只听本机时设置了也一样要带；
  · 每个请求先过 guard.Door：网页来的（Origin）、别的主机名（Host）、不是 JSON 的、慢的客户端，做任何事之前就拒绝；
    客户端走了不再付费；每个请求在标准错误上一行访问日志：方法、路径、状态码、毫秒；
  · Ctrl-C、SIGTERM、SIGHUP（终端关了；cli/launch.py 把它交给接 SIGTERM 的 uvicorn）：不再接新请求，最多等
    SHUTDOWN_SECONDS 秒让正在回答的说完，然后“已中断”、退出码 130。
"""
import errno
import logging
import socket
from collections.abc import Callable

from sourced_answers.core.errors import ExitCode, UsageError
from sourced_answers.core.network import os_error_text
from sourced_answers.core.settings import Settings
from sourced_answers.core.strings import literal
from sourced_answers.model.preflight import check_before_paying
from sourced_answers.servers.guard import ASGIApp, Door, Policy, bounded_protocol, host_names

Log = Callable[[str], None]
SHUTDOWN_SECONDS = 3


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
        raise UsageError(bind_problem(host, port, error)) from None
    except (OverflowError, UnicodeError):
        sock.close()
        raise UsageError(f"--serve 的地址 {literal(host)}:{port} 不能用") from None
    sock.listen(128)
    sock.setblocking(False)
    return sock


def bind_problem(host: str, port: int, error: OSError) -> str:
    """绑不上端口时给人看的一句：是哪个地址、为什么、该怎么改 --serve（不写系统的错误号）。"""
    where = f"--serve 监听不了 {literal(host)}:{port}"
    if isinstance(error, socket.gaierror):
        return f"{where}：{literal(host)} 解析不出地址。--serve 的 HOST 要写这台机器上的地址（127.0.0.1、0.0.0.0、::1）"
    if error.errno == errno.EADDRINUSE:
        other = port + 1 if port < 65535 else port - 1
        return (f"{where}：端口 {port} 已经被别的程序占用了。换一个端口（例如 --serve {serve_value(host, other)}），"
                "或者先停掉占着它的程序")
    if error.errno in (errno.EACCES, errno.EPERM):
        why = "1024 以下的端口要管理员权限" if port < 1024 else "系统不让这个程序听这个端口"
        return f"{where}：没有权限，{why}。请换一个 1024 以上的端口（例如 --serve {serve_value(host, 8000)}）"
    if error.errno == errno.EADDRNOTAVAIL:
        return (f"{where}：{literal(host)} 不是这台机器的地址。--serve 的 HOST 要写本机网卡上的地址"
                "（127.0.0.1 只给本机用，0.0.0.0 听所有网卡）")
    return f"{where}：{os_error_text(error)}"


def serve_value(host: str, port: int) -> str:
    """建议的 --serve 值：地址照用户给的写（IPv6 加方括号）。"""
    return f"[{literal(host)}]:{port}" if ":" in host else f"{literal(host)}:{port}"


def asgi_app(settings: Settings, log: Log) -> tuple[ASGIApp, Callable[[], None]]:
    """整个服务的 ASGI 应用：门（guard.Door）加上 OpenAI 兼容的接口（openai_app），和服务停止时要调用的收尾
    （关掉 --demo 的演示服务）。测试在进程里直接用它。"""
    from sourced_answers.servers.openai_app import Service, build_app
    options = settings.run.serve
    assert options is not None
    policy = Policy(options.key, frozenset(options.allowed_origins), host_names(options.host, options.allowed_origins),
                    options.max_body, options.read_timeout, settings.run.secrets)
    service = Service(settings, options, log)
    return Door(build_app(service), policy, log), service.close


def serve(settings: Settings, log: Log) -> int:
    """起服务，一直到 Ctrl-C、SIGTERM 或 SIGHUP（那时由 launch 接住，退出码 130）。"""
    try:
        import starlette  # noqa: F401
        import uvicorn
    except ImportError:
        raise UsageError("没有安装 --serve 要的包：pip install '.[serve]'（Starlette 和 uvicorn）") from None
    options = settings.run.serve
    assert options is not None
    model = settings.model
    # 监听之前：模型服务在、模型都有（和回答问题时付费之前的检查是同一个）
    check_before_paying(model, [model.name], settings.judge, settings.run.deadline())
    app, close = asgi_app(settings, log)  # --docs：监听之前建好索引（文件夹不对就不起服务）
    try:
        sock = listening_socket(options.host, options.port)
    except BaseException:
        close()
        raise
    port = sock.getsockname()[1]
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access", "asyncio"):
        logging.getLogger(name).setLevel(logging.CRITICAL + 1)  # 英文的日志不混进来：访问日志由 Door 写
    # 同时开着的连接和在做的请求加起来最多这么多（再多的请求 uvicorn 回 503）：慢的客户端也只能占一份
    connections = (options.concurrency + options.queue) * 2 + 16
    config = uvicorn.Config(app, log_config=None, access_log=False, lifespan="off", server_header=False,
                            timeout_graceful_shutdown=SHUTDOWN_SECONDS, limit_concurrency=connections,
                            http=bounded_protocol(options.read_timeout, log))
    host = f"[{options.host}]" if ":" in options.host else options.host
    log(f"OpenAI 兼容的服务在 http://{host}:{port}/v1（回答用的模型 {model.name}，同时回答 {options.concurrency} 个、"
        f"最多排队 {options.queue} 个{'，要带 ANS_SERVER_KEY' if options.key else ''}）；Ctrl-C 停止")
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        close()
    return ExitCode.PASSED
