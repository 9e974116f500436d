"""测试进程里的回环（tests/loopback.py）：本进程里的服务不占端口；开过真端口的服务关掉以后，那个端口还给系统。"""
import socket
from http.server import BaseHTTPRequestHandler

import pytest

from tests import loopback


class Quiet(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


@pytest.mark.parametrize("ephemeral", [(32768, 60999), (1024, 60999), (49152, 65535), (10000, 65535)])
def test_numbers_without_a_real_port_are_outside_the_ephemeral_range(ephemeral):
    first, last = loopback.pseudo_ports(ephemeral)
    assert 1024 <= first <= last <= 65535 and last - first + 1 == loopback.PSEUDO_COUNT
    assert last < ephemeral[0] or first > ephemeral[1]


def test_a_machine_whose_ephemeral_range_covers_almost_every_port_is_told_plainly():
    with pytest.raises(RuntimeError, match="ip_local_port_range"):
        loopback.pseudo_ports((1024, 65535))


def test_a_closed_in_process_service_without_a_real_port_stays_refused():
    server = loopback.LoopbackServer(("127.0.0.1", 0), Quiet)
    port = server.server_address[1]
    assert loopback.FIRST_PORT <= port <= loopback.LAST_PORT
    loopback.create_connection(("127.0.0.1", port), timeout=10).close()
    server.shutdown()
    server.server_close()
    with pytest.raises(ConnectionRefusedError):
        loopback.create_connection(("127.0.0.1", port), timeout=10)


@pytest.mark.slow
def test_the_real_port_of_a_closed_in_process_service_reaches_whoever_binds_it_next():
    """关掉的服务开过的真端口回到系统的临时端口里：之后别的服务（另一个 xdist 进程起的 llama.cpp）可能拿到
    同一个号码，本进程连它时要连上那个服务，而不是当作“本进程的回环上没有服务”拒绝（CI 上这样失败过一次）。"""
    server = loopback.LoopbackServer(("127.0.0.1", 0), Quiet)
    server.listen()
    port = server.server_address[1]
    assert not loopback.FIRST_PORT <= port <= loopback.LAST_PORT
    server.shutdown()
    server.server_close()
    other = socket.socket()
    try:
        other.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        other.bind(("127.0.0.1", port))
        other.listen()
        client = loopback.create_connection(("127.0.0.1", port), timeout=10)
        accepted, _ = other.accept()
        accepted.close()
        client.close()
    finally:
        other.close()
