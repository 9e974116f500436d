"""--serve 自己绑的端口（openai_server.listening_socket）：接进来的连接关掉了 Nagle（TCP_NODELAY），和 uvicorn
自己绑端口时一样。

uvicorn 先写响应头、再写响应体。开着 Nagle 时，保持连接的客户端（官方 openai 客户端、聊天窗口）每个回答都要
等对方的延迟确认才收到响应体，Linux 上每个请求多约 40 毫秒（bench/benchmark_server.py 量出来的）。asyncio 只给
proto 是 IPPROTO_TCP 的套接字设 TCP_NODELAY，所以建套接字时要写明 IPPROTO_TCP。
"""
import asyncio
import os
import socket

import pytest

from sourced_answers.core.errors import UsageError
from sourced_answers.servers.openai_server import listening_socket
from tests.serving import the_only_line
from tests.support import cli_env, run_cli

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


# ---------- 绑不上端口：一句中文，说出地址、原因和 --serve 该怎么改（不是“系统错误 98”），退出码 2 ----------

def test_a_port_another_program_holds_names_the_port_and_the_flag():
    taken = socket.create_server(("127.0.0.1", 0))
    port = taken.getsockname()[1]
    try:
        with pytest.raises(UsageError) as refused:
            listening_socket("127.0.0.1", port)
    finally:
        taken.close()
    message = str(refused.value)
    assert f"127.0.0.1:{port}" in message and "占用" in message and "--serve" in message
    assert "系统错误" not in message


def test_a_port_taken_stops_the_command_with_exit_code_2_before_any_search(fake_metaso, model_server):
    taken = socket.create_server(("127.0.0.1", 0))
    port = taken.getsockname()[1]
    try:
        done = run_cli("--serve", f"127.0.0.1:{port}", env=cli_env(fake_metaso, model_server, ANS_MODEL="good"))
    finally:
        taken.close()
    line = the_only_line(done.stderr)
    assert done.returncode == 2 and str(port) in line and "占用" in line and "--serve" in line
    assert fake_metaso.requests == []


def test_an_address_that_is_not_this_machine_says_so():
    # 192.0.2.1 是文档专用的地址（TEST-NET-1），不会在本机网卡上：bind 在本机就失败，不发任何包
    with pytest.raises(UsageError) as refused:
        listening_socket("192.0.2.1", 8000)
    message = str(refused.value)
    assert "192.0.2.1:8000" in message and "不是这台机器的地址" in message and "--serve" in message


def test_a_low_port_without_the_right_says_why_and_what_to_write():
    message = bind_message_without_root("127.0.0.1", 1)
    assert "没有权限" in message and "1024" in message and "--serve 127.0.0.1:8000" in message


def bind_message_without_root(host, port):
    """绑端口时说的话，由一个普通用户来绑。以 root 运行时（1024 以下的端口 root 也绑得上）在分出去的子进程里先换成
    nobody 再绑：真的系统调用、真的 EACCES。"""
    if os.geteuid() != 0:
        with pytest.raises(UsageError) as refused:
            listening_socket(host, port)
        return str(refused.value)
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:  # 子进程：不回到 pytest，说完就退出
        said = "没有报错：绑上了"
        try:
            os.setgid(65534)
            os.setuid(65534)
            listening_socket(host, port)
        except UsageError as error:
            said = str(error)
        except BaseException as error:  # noqa: BLE001 —— 什么错都要交回父进程去判
            said = f"别的错误：{error!r}"
        os.write(write_end, said.encode())
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as reading:
        said = reading.read().decode()
    os.waitpid(child, 0)
    return said
