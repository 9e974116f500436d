"""--serve 的门（servers/guard.py）：网页碰不到它、不认识的主机名和不是 JSON 的请求在做任何事之前就拒绝、
允许的来源有 CORS、慢的客户端和走了的客户端占不住它也花不了钱。在进程里测（Starlette 的测试客户端，见
tests/serving.InProcess）；要真连接、真超时的几个在 tests/test_openai_server.py 和本文件标了 slow 的测试里。"""
import json
import socket
import time

import pytest

from tests.scripted_model import Hold
from tests.serving import MODEL_KEY, SERVER_KEY, InProcess, ServerProcess, the_only_line
from tests.support import cli_env, run_cli

QUESTION = {"model": "good", "messages": [{"role": "user", "content": "家用 NAS 怎么选"}]}


@pytest.fixture
def cache(tmp_path):
    return tmp_path / "cache"


@pytest.fixture
def app(backends, cache):
    backends.reset()
    made = InProcess(backends.env(cache))
    yield made
    made.close()


def opened(backends, cache, *flags):
    backends.reset()
    return InProcess(backends.env(cache), *flags)


def metaso_calls(backends):
    return [path for _, path in backends.metaso.requests]


# ---------- 网页 ----------

def test_a_web_page_posting_text_plain_from_another_origin_is_refused_before_any_search(app, backends):
    """浏览器不经预检就能发的“简单请求”：Content-Type: text/plain，Origin 是别的网页。"""
    answered = app.client.post("/v1/chat/completions", content=json.dumps(QUESTION),
                               headers={"Content-Type": "text/plain", "Origin": "http://evil.example"})
    assert answered.status_code == 403 and answered.json()["error"]["code"] == "origin_not_allowed"
    assert "--allow-origin" in answered.json()["error"]["message"]
    assert metaso_calls(backends) == [] and backends.model.requests == []
    assert "access-control-allow-origin" not in answered.headers


@pytest.mark.parametrize("kind", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; b=x", ""])
def test_a_body_that_is_not_json_is_415_before_any_search(app, backends, kind):
    headers = {"Content-Type": kind} if kind else {}
    answered = app.client.post("/v1/chat/completions", content=json.dumps(QUESTION).encode(), headers=headers)
    assert answered.status_code == 415 and answered.json()["error"]["code"] == "unsupported_media_type"
    assert metaso_calls(backends) == []


@pytest.mark.parametrize("origin", ["null", "http://localhost:3000", "https://chat.example.com"])
def test_any_origin_is_refused_unless_allowed(app, backends, origin):
    answered = app.post("/chat/completions", QUESTION, headers={"Origin": origin})
    assert answered.status_code == 403 and metaso_calls(backends) == []
    listed = app.client.get("/v1/models", headers={"Origin": origin})
    assert listed.status_code == 403


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8000", "192.168.1.5", "127.0.0.1.evil.example"])
def test_a_host_that_is_not_this_server_is_421_dns_rebinding_cannot_read_it(app, backends, host):
    answered = app.post("/chat/completions", QUESTION, headers={"Host": host})
    assert answered.status_code == 421 and answered.json()["error"]["code"] == "misdirected_request"
    assert metaso_calls(backends) == []


def test_a_request_without_a_host_is_400_missing_host_not_a_dns_rebinding_story(app, backends):
    """HTTP/1.0 可以不写 Host（测试客户端总会写上：这里直接把请求交给门）。"""
    sent = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.0", "method": "GET", "scheme": "http",
             "path": "/v1/models", "raw_path": b"/v1/models", "root_path": "", "query_string": b"", "headers": [],
             "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 80)}
    app.client.portal.call(app.app, scope, receive, send)
    assert sent[0]["status"] == 400
    error = json.loads(sent[1]["body"])["error"]
    assert error["code"] == "missing_host" and "没有 Host 头" in error["message"] and "域名" not in error["message"]
    assert metaso_calls(backends) == [] and backends.model.probes == []


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.1:8000", "localhost:8000", "LOCALHOST", "[::1]:8000"])
def test_loopback_names_are_accepted(app, host):
    assert app.client.get("/v1/models", headers={"Host": host}).status_code == 200


def test_a_program_without_an_origin_is_unaffected(app, backends):
    answered = app.post("/chat/completions", QUESTION)
    assert answered.status_code == 200 and "access-control-allow-origin" not in answered.headers


def test_an_allowed_origin_gets_a_preflight_and_cors_headers(backends, cache):
    """浏览器里的网页客户端先发预检（OPTIONS），再带着 Authorization、application/json 发真正的请求。"""
    app = opened(backends, cache, "--allow-origin", "http://localhost:3000/")
    try:
        preflight = app.client.options("/v1/chat/completions", headers={
            "Origin": "http://localhost:3000", "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization,content-type"})
        assert preflight.status_code == 204
        assert preflight.headers["access-control-allow-origin"] == "http://localhost:3000"
        assert "POST" in preflight.headers["access-control-allow-methods"]
        assert "content-type" in preflight.headers["access-control-allow-headers"]
        answered = app.post("/chat/completions", QUESTION, headers={"Origin": "http://localhost:3000"})
        assert answered.status_code == 200 and answered.headers["access-control-allow-origin"] == "http://localhost:3000"
        other = app.client.options("/v1/chat/completions", headers={"Origin": "http://evil.example",
                                                                     "Access-Control-Request-Method": "POST"})
        assert other.status_code == 403 and "access-control-allow-origin" not in other.headers
    finally:
        app.close()


def test_allowing_the_null_origin_without_a_server_key_stops_before_anything(fake_metaso, model_server):
    """Origin: null 是任何沙箱 iframe、data: 和 file: 打开的页面：不设 ANS_SERVER_KEY 就允许它，等于让每个网页
    都能搜索、花钱。用法错误（退出码 2），说出参数和要设的变量，不问模型服务、不搜索。"""
    done = run_cli("--serve", "127.0.0.1:0", "--allow-origin", "null",
                   env=cli_env(fake_metaso, model_server, ANS_MODEL="good"))
    line = the_only_line(done.stderr)
    assert done.returncode == 2 and "--allow-origin null" in line and "ANS_SERVER_KEY" in line
    assert fake_metaso.requests == [] and model_server.probes == []


def test_with_a_server_key_the_null_origin_gets_its_preflight_and_the_post_needs_the_key(backends, cache):
    """桌面聊天程序（Electron）发 Origin: null：预检不带 Authorization，照样回 204 和 CORS 头；之后真正的请求
    要带着 ANS_SERVER_KEY，没带的 401，什么也不搜。"""
    backends.reset()
    app = InProcess(backends.env(cache, ANS_SERVER_KEY=SERVER_KEY), "--allow-origin", "null")
    try:
        preflight = app.client.options("/v1/chat/completions", headers={
            "Origin": "null", "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization,content-type"})
        assert preflight.status_code == 204 and preflight.headers["access-control-allow-origin"] == "null"
        bare = app.post("/chat/completions", QUESTION, headers={"Origin": "null"})
        assert bare.status_code == 401 and metaso_calls(backends) == []
        keyed = app.post("/chat/completions", QUESTION,
                         headers={"Origin": "null", "Authorization": f"Bearer {SERVER_KEY}"})
        assert keyed.status_code == 200 and keyed.headers["access-control-allow-origin"] == "null"
    finally:
        app.close()


def test_the_host_of_an_allowed_origin_is_an_accepted_host_name(backends, cache):
    app = opened(backends, cache, "--allow-origin", "https://chat.example.com")
    try:
        assert app.client.get("/v1/models", headers={"Host": "chat.example.com"}).status_code == 200
    finally:
        app.close()


@pytest.mark.parametrize("value", ["localhost:3000", "http://", "ftp://x.example", "http://x.example/path", "*"])
def test_a_malformed_allowed_origin_is_a_usage_error(value):
    from sourced_answers.api.origins import origin_of
    from sourced_answers.core.errors import UsageError
    with pytest.raises(UsageError, match="--allow-origin"):
        origin_of(value)


# ---------- 密钥 ----------

def test_a_model_named_like_the_key_is_masked_in_the_non_streamed_reply(backends, cache):
    """请求的 model 写成了密钥（回答时原样写回 model 字段）：非流式的回答和流式的一样遮掉。"""
    app = opened(backends, cache)
    try:
        backends.model.served_as = MODEL_KEY
        answered = app.post("/chat/completions", dict(QUESTION, model=MODEL_KEY))
        assert MODEL_KEY not in answered.text and "mk-***" in answered.text
    finally:
        app.close()


# ---------- 慢的客户端（真的连接、真的超时） ----------

@pytest.fixture
def slow_server(backends, tmp_path):
    backends.reset()
    process = ServerProcess(backends.env(tmp_path / "cache"), "--read-timeout", "1", "--concurrency", "1")
    yield process
    process.stop()


def half_requests(port, count, body=False):
    sockets = []
    for _ in range(count):
        connection = socket.create_connection(("127.0.0.1", port), timeout=5)
        if body:
            connection.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                               b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"model\"")
        else:
            connection.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.")
        sockets.append(connection)
    return sockets


def closed_within(connection, seconds):
    """连接在 seconds 秒内被服务关掉（收到回应后关掉，或者直接关掉）：返回收到的字节。"""
    connection.settimeout(seconds)
    received = b""
    limit = time.monotonic() + seconds
    try:
        while time.monotonic() < limit:
            chunk = connection.recv(4096)
            if not chunk:
                return received
            received += chunk
    except TimeoutError:
        return None
    except ConnectionResetError:
        return received
    return None


@pytest.mark.slow
@pytest.mark.parametrize("sent", [b"GARBAGE\r\n\r\n", b"GET /v1/models HTTP/1.1\r\n\r\n"],
                         ids=["garbage", "http11-without-host"])
def test_a_request_that_is_not_http_gets_a_chinese_400_and_a_chinese_line(slow_server, backends, sent):
    """h11 读不懂的请求到不了门：uvicorn 自己回 400。回应和标准错误上的那一行都是中文，没有 uvicorn 的英文。"""
    mark = slow_server.mark()
    with socket.create_connection(("127.0.0.1", slow_server.port), timeout=10) as connection:
        connection.sendall(sent)
        received = closed_within(connection, 5)
    assert received is not None and received.startswith(b"HTTP/1.1 400")
    error = json.loads(received.split(b"\r\n\r\n", 1)[1])["error"]
    assert error["code"] == "invalid_http" and "不是合法的 HTTP" in error["message"]
    line = slow_server.wait_for_line(lambda line: "不合法的 HTTP 请求" in line, 10, mark)
    assert line == "收到一个不合法的 HTTP 请求（请求行或请求头写得不对）：回了 400，关掉了连接"
    assert b"Invalid" not in received and "Invalid" not in slow_server.stderr
    assert metaso_calls(backends) == []


@pytest.mark.slow
def test_an_http_1_0_request_without_host_over_a_real_connection_is_400_missing_host(slow_server, backends):
    """HTTP/1.0 不要求 Host，h11 放它过去，门回 400、说缺 Host（不是 421 和一段 DNS rebinding 的解释）。"""
    with socket.create_connection(("127.0.0.1", slow_server.port), timeout=10) as connection:
        connection.sendall(b"GET /v1/models HTTP/1.0\r\n\r\n")
        received = closed_within(connection, 5)
    assert received is not None and received.startswith(b"HTTP/1.1 400")
    error = json.loads(received.split(b"\r\n\r\n", 1)[1])["error"]
    assert error["code"] == "missing_host" and "Host" in error["message"] and "域名" not in error["message"]
    assert metaso_calls(backends) == []


@pytest.mark.slow
def test_a_client_that_half_closes_after_its_request_counts_as_gone_and_pays_nothing(slow_server, backends):
    """发完整个请求就 shutdown(SHUT_WR)：uvicorn 收到 EOF 就关掉连接（H11Protocol.eof_received），和客户端整个走了
    分不出来。所以它算走了：不搜索、不请模型，访问日志不说搜索了什么，说什么也没有付费。"""
    body = json.dumps(QUESTION).encode()
    mark = slow_server.mark()
    with socket.create_connection(("127.0.0.1", slow_server.port), timeout=10) as connection:
        connection.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                           b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        connection.shutdown(socket.SHUT_WR)
        received = closed_within(connection, 10)
    assert received == b""
    [line] = slow_server.access_lines(mark, 1, 10)
    assert line.startswith("POST /v1/chat/completions 499 ") and "什么也没有付费" in line and "搜索：" not in line
    assert metaso_calls(backends) == [] and backends.model.requests == []


@pytest.mark.slow
def test_two_hundred_half_sent_headers_are_all_closed_within_the_read_timeout(slow_server):
    sockets = half_requests(slow_server.port, 200)
    # 服务的时限是 1 秒（--read-timeout 1）；测试不看它关得多快（机器忙时会慢），只看服务自己关掉了每一个连接：
    # 客户端一直不关，没有这个时限的服务就永远不关。30 秒只是等“永远”的上限
    try:
        results = [closed_within(connection, 30) for connection in sockets]
    finally:
        for connection in sockets:
            connection.close()
    assert all(result is not None for result in results), "有的连接服务一直没有关"
    import requests
    assert requests.get(slow_server.base + "/models", timeout=10).status_code == 200  # 服务照样能回答


@pytest.mark.slow
def test_a_half_sent_body_gets_408_within_the_read_timeout(slow_server, backends):
    [connection] = half_requests(slow_server.port, 1, body=True)
    try:
        received = closed_within(connection, 30)  # 同上：看服务关不关，不看多快
    finally:
        connection.close()
    assert received is not None and received.startswith(b"HTTP/1.1 408")
    assert json.loads(received.split(b"\r\n\r\n", 1)[1])["error"]["code"] == "request_timeout"
    assert metaso_calls(backends) == []


# ---------- 走了的客户端（在进程里：客户端什么时候走、模型什么时候回答都由测试定） ----------

def searched(backends, question):
    return [path for path in metaso_calls(backends) if "search" in path], question


def asking(question, model="good"):
    return {"model": model, "messages": [{"role": "user", "content": question}]}


def test_a_queued_request_whose_client_left_costs_no_search(backends, cache):
    """--concurrency 1：第一个请求在等模型回答，第二个在排队，它的客户端这时走了。第一个答完之后，
    第二个不再开始：秘塔一次也没为它搜索。（在进程里：客户端什么时候走由测试定，模型什么时候回答也由测试定）"""
    import threading
    app = opened(backends, cache, "--concurrency", "1")
    backends.model.hold = hold = Hold()
    try:
        first = threading.Thread(target=lambda: app.post("/chat/completions", asking("家用 NAS 怎么选")))
        first.start()
        assert hold.arrived.wait(10)  # 第一个已经在请模型回答
        second = app.asked_then_left("/v1/chat/completions", asking("RAID5 要几块盘"))
        assert second.watched.wait(10)  # 第二个进了门，在排队
        second.leave()
        hold.release()
        first.join(60)
        second.done.result(60)
        mark = app.mark()
        searches = [path for path in metaso_calls(backends) if "search" in path]
        assert len(searches) == 1, searches  # 只有第一个问题的那一次
        lines = app.access_lines(0, 2)
        assert sorted(" 499 " in line and "客户端没等回答完就断开了" in line for line in lines) == [False, True], lines
        # 排着队就走了的那个什么也没有付费：访问日志不说它搜索了什么
        left = next(line for line in lines if " 499 " in line)
        assert "什么也没有付费" in left and "搜索：" not in left, left
        assert app.mark() == mark
    finally:
        hold.release()
        app.close()


def test_a_running_request_whose_client_left_asks_no_judge(backends, cache):
    """客户端在模型回答的时候走了：之后要付费的一步（评判模型）不再做。"""
    app = opened(backends, cache, "--judge", "judge-yes", "--judge-ask", "all")
    backends.model.hold = hold = Hold()
    try:
        leaving = app.asked_then_left("/v1/chat/completions", asking("家用 NAS 怎么选"))
        assert hold.arrived.wait(10)  # 模型正在回答
        leaving.leave()
        hold.release()
        leaving.done.result(60)
        # 访问日志在这个请求的处理结束时才写：模型回答之后本来要问评判模型。它写明客户端走了（不是 200）
        assert app.access_lines(0, 1)
        line = app.since(0)[-1]
        assert "POST /v1/chat/completions 499 " in line and "客户端没等回答完就断开了" in line, line
        assert "搜索：家用 NAS 怎么选" in line and "没有付费" not in line, line  # 已经搜索过、请过模型
        models = [request["body"]["model"] for request in backends.model.requests]
        assert models == ["good"], models
    finally:
        hold.release()
        app.close()
