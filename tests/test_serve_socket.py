"""--serve 自己绑的端口（openai_server.listening_socket）：接进来的连接关掉了 Nagle（TCP_NODELAY），和 uvicorn
自己绑端口时一样。

uvicorn 先写响应头、再写响应体。开着 Nagle 时，保持连接的客户端（官方 openai 客户端、聊天窗口）每个回答都要
等对方的延迟确认才收到响应体，Linux 上每个请求多约 40 毫秒（bench/benchmark_server.py 量出来的）。asyncio 只给
proto 是 IPPROTO_TCP 的套接字设 TCP_NODELAY，所以建套接字时要写明 IPPROTO_TCP。
"""
import asyncio
import socket

import pytest

from sourced_answers.core.errors import UsageError
from sourced_answers.servers.openai_server import listening_socket

pytestmark = pytest.mark.slow  # 绑真的端口、连进去


async def nodelay_of_an_accepted_connection(host):
    """在 listening_socket 上起 asyncio 的服务（uvicorn 也是这样：loop.create_server(sock=…)），连进去，
    看服务这一端的连接有没有设 TCP_NODELAY。"""
    sock = listening_socket(host, 0)
    accepted = asyncio.get_running_loop().create_future()

    def connected(reader, writer):
        accepted.set_result(writer.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
        writer.close()

    server = await asyncio.start_server(connected, sock=sock)
    _, writer = await asyncio.open_connection(host, sock.getsockname()[1])
    try:
        return await asyncio.wait_for(accepted, 10)
    finally:
        writer.close()
        server.close()
        await server.wait_closed()


@pytest.mark.parametrize("host", ["127.0.0.1", "::1"])
def test_answers_are_not_held_back_by_nagle(host):
    if host == "::1" and not socket.has_ipv6:
        pytest.skip("这台机器没有 IPv6")
    try:
        nodelay = asyncio.run(nodelay_of_an_accepted_connection(host))
    except (OSError, UsageError) as error:  # 有 IPv6 支持、却没有配 ::1 的容器
        pytest.skip(f"连不上 {host}：{error}")
    assert nodelay != 0
