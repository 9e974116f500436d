"""进程内的回环：测试进程里的 HTTP 服务（模拟秘塔、脚本模型服务、--demo 的演示服务）不开端口。

本进程里 requests（urllib3）连 127.0.0.1 上这些服务的地址时，不走网络：建一对本进程里的套接字
（socket.socketpair，不绑端口、不连接），一头交给服务的处理函数（和真的服务一样，每个连接一个线程），
另一头交给客户端。HTTP 的读写、流式、超时、断开连接和走真的端口时一模一样，只是不经过网络。

要让别的进程（子进程里的命令行、--serve 的服务进程）连上时，listen() 再在 127.0.0.1 上真的开一个端口：
之后地址是那个端口，本进程里的连接照样不走网络。conftest.py 的夹具在标了 slow 的测试里这样做。

端口：还没有真的端口的服务用系统的临时端口范围以外的号码（通常的 Linux 临时端口在 32768–60999，这些号码是
61000–65535，真的服务绝不会拿到它们；pseudo_ports）。连这些号码里没有服务的那些，和连一个没人听的端口一样被拒绝。
"""
import errno
import socket
import threading
from http.server import ThreadingHTTPServer
from typing import Any

import urllib3.util.connection
from urllib3.util.timeout import _DEFAULT_TIMEOUT

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost"})
PSEUDO_COUNT = 4536  # 还没有真端口的服务最多同时有这么多个号码


def pseudo_ports(ephemeral: tuple[int, int]) -> tuple[int, int]:
    """还没有真端口的服务用的号码：系统分给端口 0 的临时端口（ephemeral）以外的一段，真的服务绝不会拿到它们。
    通常的 Linux（32768–60999）是 61000–65535；临时端口一直分到 65535 的机器上用它下面的一段。"""
    low, high = ephemeral
    if high < 65536 - PSEUDO_COUNT:
        return 65536 - PSEUDO_COUNT, 65535
    if low - PSEUDO_COUNT >= 1024:
        return low - PSEUDO_COUNT, low - 1
    raise RuntimeError(f"这台机器的临时端口范围 {low}–{high} 几乎占满了所有端口，tests/loopback.py 找不到不会被真的服务"
                       "拿到的号码：请把 /proc/sys/net/ipv4/ip_local_port_range 改回 32768 60999 这样的范围")


def ephemeral_ports() -> tuple[int, int]:
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as handle:
            low, high = (int(part) for part in handle.read().split())
    except (OSError, ValueError):
        return 32768, 60999  # Linux 的默认值
    return low, high


FIRST_PORT, LAST_PORT = pseudo_ports(ephemeral_ports())  # 还没有真端口的服务的号码（见上面的说明）
POLL_SECONDS = 0.01  # listen() 之后真端口上的 serve_forever 多久看一次要不要停

_lock = threading.Lock()
# 端口 → 服务；没有真端口的号码在服务关掉以后是 None：再连就被拒绝，和没人听的端口一样
_servers: dict[int, "LoopbackServer | None"] = {}
_real_create_connection = urllib3.util.connection.create_connection
# 为真时，本进程的回环上没有登记的端口都当作没人在听（快的测试：不许连网络，也就不会有别的服务）
refuse_unknown_ports = False


def _register(server: "LoopbackServer", port: int | None = None) -> int:
    with _lock:
        if port is None:  # 先用从没用过的号码，都用过了再用服务已经关掉的
            numbers = range(FIRST_PORT, LAST_PORT + 1)
            unused = [number for number in numbers if number not in _servers][:1]
            port = unused[0] if unused else next(number for number in numbers if _servers[number] is None)
        _servers[port] = server
        return port


def _unregister(server: "LoopbackServer") -> None:
    """没有真端口的号码留着（None：再连就被拒绝）；真端口还给系统：之后别的进程起的服务可能拿到同一个号码，
    本进程连它时要走真的网络连上那个服务（CI 上另一个 xdist 进程起的 llama.cpp 拿到过这样的号码）。"""
    with _lock:
        for port in [port for port, registered in _servers.items() if registered is server]:
            if FIRST_PORT <= port <= LAST_PORT:
                _servers[port] = None
            else:
                del _servers[port]


def _refused(port: int) -> ConnectionRefusedError:
    return ConnectionRefusedError(errno.ECONNREFUSED, f"Connection refused（本进程的回环上 {port} 端口没有服务）")


def create_connection(address: tuple[str, int], timeout: Any = _DEFAULT_TIMEOUT,
                      source_address: Any = None, socket_options: Any = None) -> socket.socket:
    """urllib3 建连接的那一处：本进程的服务就地连上，别的照常走网络。"""
    host, port = address[0], int(address[1])
    if host in LOOPBACK_HOSTS:
        with _lock:
            server = _servers.get(port)
        if server is not None:
            return server.connect_in_process(timeout)
        if FIRST_PORT <= port <= LAST_PORT:
            raise _refused(port)
    if refuse_unknown_ports and host in LOOPBACK_HOSTS | {"::1"}:  # 本进程的服务只在 127.0.0.1 上
        raise _refused(port)
    return _real_create_connection(address, timeout, source_address, socket_options)


class LoopbackServer(ThreadingHTTPServer):
    """和 ThreadingHTTPServer 一样用（地址、处理函数、serve_forever、shutdown、server_close），只是不绑端口。"""

    def __init__(self, server_address: tuple[str, int], handler_class: Any, bind_and_activate: bool = True) -> None:
        super().__init__(server_address, handler_class, bind_and_activate=False)
        self.socket.close()  # TCPServer 建好的、还没绑的套接字：用不上（listen() 另建一个）
        self.stopped = threading.Event()
        self.listening = False
        self.server_address = (server_address[0], _register(self))

    def connect_in_process(self, timeout: Any) -> socket.socket:
        ours, theirs = socket.socketpair()
        if timeout is not _DEFAULT_TIMEOUT:
            ours.settimeout(timeout)
        self.process_request(theirs, ("127.0.0.1", 0))  # 和真的服务接到一个连接一样：一个线程处理它
        return ours

    def listen(self) -> None:
        """再在 127.0.0.1 上开一个真的端口（别的进程要连它时）；之后给出的地址是这个端口。"""
        with _lock:
            if self.listening or self.stopped.is_set():
                return
            self.listening = True
        self.socket = socket.socket(self.address_family, self.socket_type)
        self.server_address = (self.server_address[0], 0)
        self.server_bind()
        self.server_activate()
        _register(self, self.server_address[1])  # 之前给出的地址（没有真端口的号码）也照样连得上
        threading.Thread(target=ThreadingHTTPServer.serve_forever, args=(self, POLL_SECONDS), daemon=True).start()

    def serve_forever(self, poll_interval: float = 0.5) -> None:
        self.stopped.wait()  # 连接由 connect_in_process 交过来；这里只等着被关掉

    def shutdown(self) -> None:
        _unregister(self)
        with _lock:
            self.stopped.set()
            listening = self.listening
        if listening:
            super().shutdown()

    def server_close(self) -> None:
        _unregister(self)
        self.stopped.set()
        if self.listening:
            super().server_close()


def install() -> None:
    """测试进程里：urllib3 的连接经过这里，演示服务和脚本模型服务用不绑端口的服务（conftest.py 一开始调用）。"""
    from sourced_answers.search import demo_service
    from tests import scripted_model
    urllib3.util.connection.create_connection = create_connection
    demo_service.ThreadingHTTPServer = LoopbackServer  # type: ignore[misc]
    scripted_model.ThreadingHTTPServer = LoopbackServer  # type: ignore[misc]


def listen(*servers: Any) -> None:
    """这些服务（有 .server 的模拟秘塔、脚本模型服务，或 None）都在真的端口上听着。"""
    for server in servers:
        inner = getattr(server, "server", None)
        if isinstance(inner, LoopbackServer):
            inner.listen()
