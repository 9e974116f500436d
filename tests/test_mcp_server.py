"""--mcp：标准输入输出上的 MCP 服务。用官方 MCP SDK 的客户端（mcp.Client）列出工具、调用两个工具；
结构化结果和命令行 --json / --verify --json 的记录一样。

工具、参数、结果、错误在本进程里测：官方客户端直接连服务对象（mcp.Client(服务)，SDK 给测试用的办法），不起进程；
一个模块一个会话（客户端在 anyio 的 BlockingPortal 里，测试同步地调用它）。标准输入输出本身（开头的乱行、关着的
标准输入、不再读的客户端、信号）起真的 python answer_with_sources.py --mcp 进程。"""
import json
import re
import signal
import subprocess
import sys
import time
from contextlib import contextmanager

import pytest
from anyio.from_thread import start_blocking_portal
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from sourced_answers.servers import mcp_server
from tests.scripted_model import Hold
from tests.serving import KEYS, Backends, join_paid_work, run_with_debug, shows, the_only_line
from tests.support import GOOD_ANSWER, HERE, NAS_RECORD_SOURCES, WRONG_NUMBER, cli_command, cli_env, run_cli


class Session:
    """一个 MCP 客户端会话：起服务进程、握手，之后 call(工具, 参数) 同步地调用。服务的标准错误写进 errlog。"""

    def __init__(self, env, errlog, command=(sys.executable, str(HERE / "answer_with_sources.py"), "--mcp")):
        self.errlog = errlog
        params = StdioServerParameters(command=command[0], args=list(command[1:]), env=env, cwd=str(HERE))
        self.handle = errlog.open("w", encoding="utf-8")
        self.portal_context = start_blocking_portal()
        self.portal = self.portal_context.__enter__()
        self.client_context = self.portal.wrap_async_context_manager(Client(stdio_client(params, errlog=self.handle)))
        self.client = self.client_context.__enter__()

    def tools(self):
        return {tool.name: tool for tool in self.portal.call(self.client.list_tools).tools}

    def call(self, name, arguments):
        return self.portal.call(self.client.call_tool, name, arguments)

    def stderr(self):
        self.handle.flush()
        return self.errlog.read_text(encoding="utf-8")

    def close(self):
        try:
            self.client_context.__exit__(None, None, None)
        finally:
            self.portal_context.__exit__(None, None, None)
            self.handle.close()


class InProcessSession:
    """服务在测试进程里：官方客户端直接连 mcp_server.build_server 建的服务对象（和 --mcp 起的是同一个）。"""

    def __init__(self, env):
        from sourced_answers.api.config import build_settings
        from sourced_answers.cli.parser import build_parser
        settings = build_settings(build_parser("answer-with-sources").parse_args(["--mcp"]), env, [])
        self.portal_context = start_blocking_portal()
        self.portal = self.portal_context.__enter__()
        self.client_context = self.portal.wrap_async_context_manager(Client(mcp_server.build_server(settings)))
        self.client = self.client_context.__enter__()

    tools = Session.tools
    call = Session.call

    def close(self):
        try:
            self.client_context.__exit__(None, None, None)
        finally:
            self.portal_context.__exit__(None, None, None)


@contextmanager
def in_process(backends, tmp_path, **extra):
    session = InProcessSession(backends.env(tmp_path / "cache", **extra))
    try:
        yield session
    finally:
        session.close()


@contextmanager
def session_with(backends, tmp_path, *command, **extra):
    session = Session(backends.env(tmp_path / "cache", **extra), tmp_path / "mcp-stderr.txt", *command)
    try:
        yield session
    finally:
        session.close()


@pytest.fixture(scope="module")
def module_session(backends, tmp_path_factory):
    with in_process(backends, tmp_path_factory.mktemp("mcp")) as session:
        yield session


@pytest.fixture
def mcp(module_session, backends, capfd):
    """模块的会话，后端刚重置过；测试结束时服务在标准错误上（在本进程里就是测试的标准错误）没有报错堆栈、没有密钥。"""
    backends.reset()
    yield module_session
    written = capfd.readouterr().err
    assert "Traceback" not in written and not shows(written, *KEYS)


def text_of(result):
    assert [item.type for item in result.content] == ["text"]
    return result.content[0].text


def cli(backends, *args):
    return run_cli(*args, env=cli_env(backends.metaso, backends.model, ANS_MODEL="good"))


# ---------- 工具 ----------

def test_exactly_two_tools_with_sensible_argument_schemas(mcp):
    tools = mcp.tools()
    assert sorted(tools) == ["answer_question", "verify_answer"]
    asking = tools["answer_question"].input_schema
    assert asking["required"] == ["question"]
    assert sorted(asking["properties"]) == ["context", "question", "read", "size"]
    assert asking["properties"]["question"]["type"] == "string"
    assert {"type": "string"} in asking["properties"]["context"]["anyOf"]
    assert {"type": "integer"} in asking["properties"]["read"]["anyOf"]
    checking = tools["verify_answer"].input_schema
    assert sorted(checking["required"]) == ["answer", "sources"]
    assert checking["properties"]["sources"]["type"] == "array"
    assert checking["properties"]["sources"]["items"]["type"] == "object"
    assert "核对" in tools["answer_question"].description and "核对" in tools["verify_answer"].description


@pytest.mark.slow
def test_every_tool_its_argument_form_and_each_argument_have_a_chinese_title(mcp):
    """客户端把这些标题显示给人看：SDK 默认的是函数名（verify_toolArguments）和英文的字段名（Question、Read）。"""
    chinese = re.compile(r"[\u4e00-\u9fff]")
    for name, tool in mcp.tools().items():
        schema = tool.input_schema
        assert tool.title and chinese.search(tool.title), (name, tool.title)
        assert chinese.search(schema["title"]) and "Arguments" not in schema["title"], (name, schema["title"])
        assert all(chinese.search(field["title"]) for field in schema["properties"].values()), (name, schema)
    assert mcp.tools()["verify_answer"].input_schema["title"] == mcp_server.INPUT_TITLES["verify_answer"]


def test_answer_question_gives_the_json_record_as_structured_content(mcp, backends):
    result = mcp.call("answer_question", {"question": "家用 NAS 怎么选", "read": 2})
    assert result.is_error is False
    record = dict(result.structured_content)
    assert record.pop("search_query") == "家用 NAS 怎么选"  # 没有 context：搜的就是问题
    assert record == json.loads(cli(backends, "家用 NAS 怎么选", "--read", "2", "--json").stdout)
    assert result.structured_content["passed"] is True and result.structured_content["answer"] == GOOD_ANSWER


def test_answer_question_text_is_the_terminal_answer_with_markdown_sources_and_no_command_line_hints(mcp, backends):
    result = mcp.call("answer_question", {"question": "RAID5 至少几块盘"})
    shown = cli(backends, "RAID5 至少几块盘").stdout
    answer = shown[:shown.index("\n\n来源：")]
    assert text_of(result).startswith(answer + "\n\n来源：\n\n1. [")
    assert "RAID5 至少三块盘" in text_of(result) and "--" not in text_of(result)[len(answer):]


def test_read_and_size_choose_how_much_is_searched_and_read(mcp, backends):
    result = mcp.call("answer_question", {"question": "NAS 硬盘选 CMR 还是 SMR", "size": 2, "read": 0})
    record = {name: value for name, value in result.structured_content.items() if name != "search_query"}
    assert record == json.loads(cli(backends, "NAS 硬盘选 CMR 还是 SMR", "--size", "2", "--read", "0", "--json").stdout)
    assert len(record["sources"]) == 2 and not any(source["read"] for source in record["sources"])
    assert not any("/reader" in path for _, path in backends.metaso.requests)


def test_verify_answer_gives_the_verify_json_record(mcp, tmp_path):
    sources = [dict(source, link=f"https://example.com/nas/{n}") for n, source in enumerate(NAS_RECORD_SOURCES, 1)]
    result = mcp.call("verify_answer", {"answer": WRONG_NUMBER, "sources": sources})
    saved = tmp_path / "saved.json"
    saved.write_text(json.dumps({"answer": WRONG_NUMBER, "sources": sources}, ensure_ascii=False), encoding="utf-8")
    assert result.structured_content == json.loads(run_cli("--verify", str(saved), "--json", env=cli_env()).stdout)
    assert result.is_error is False and result.structured_content["passed"] is False
    assert "⚠ 引用核对没通过" in text_of(result) and "\n2. [RAID1 和 RAID5 的区别](https://example.com/nas/2)" in text_of(result)


# ---------- 参数不对：isError 和一句中文 ----------

@pytest.mark.parametrize(("tool", "arguments", "message"), [
    ("answer_question", {"question": "家用 NAS 怎么选", "read": 500}, "read 应是 0 到 100 之间的整数"),
    ("answer_question", {"question": "家用 NAS 怎么选", "read": 5, "size": 3}, "read（5）不能大于 size（3）"),
    ("answer_question", {"question": "家用 NAS 怎么选", "read": "两个"}, "answer_question 的参数不对：read 应是整数"),
    ("answer_question", {"question": "家用 NAS 怎么选", "size": True, "read": 1}, "answer_question 的参数不对：size 应是整数"),
    ("answer_question", {"question": "家用 NAS 怎么选", "read": "2"}, "answer_question 的参数不对：read 应是整数"),
    ("answer_question", {"question": "家用 NAS 怎么选", "size": 3.0}, "answer_question 的参数不对：size 应是整数"),
    ("answer_question", {"question": "？？！"}, "question 里没有文字"),
    ("answer_question", {"read": 2}, "answer_question 的参数不对：缺少 question"),
    ("verify_answer", {"answer": "RAID1 是镜像 [1]。", "sources": [{"title": "RAID1 和 RAID5 的区别"}]},
     "sources 的第 1 项缺少字符串字段 text"),
    ("verify_answer", {"answer": "RAID1 是镜像 [1]。"}, "verify_answer 的参数不对：缺少 sources"),
    ("verify_answer", {"answer": "RAID1 是镜像 [1]。", "sources": ["RAID1 是镜像"]},
     "verify_answer 的参数不对：sources 的第 1 项 应是 {title, link, text} 这样的对象"),
    ("search_web", {"question": "家用 NAS 怎么选"}, "没有工具 search_web：只有 answer_question、verify_answer"),
], ids=["read-out-of-range", "read-over-size", "read-not-a-number", "size-true", "read-digits-as-text", "size-float",
        "no-words", "no-question", "source-without-text",
        "no-sources", "source-not-an-object", "unknown-tool"])
def test_bad_arguments_are_tool_errors_with_a_chinese_message(mcp, backends, tool, arguments, message):
    result = mcp.call(tool, arguments)
    assert result.is_error is True
    assert message in text_of(result) and text_of(result).startswith("✗ ")
    assert "pydantic" not in text_of(result) and "Error executing" not in text_of(result)
    assert backends.metaso.requests == []


def test_an_out_of_range_size_is_refused_naming_the_argument_and_what_was_sent(mcp, backends):
    """工具参数和命令行的 --size 按同一份声明检查（core/settings.py），说明里是参数名和收到的值。"""
    result = mcp.call("answer_question", {"question": "家用 NAS 怎么选", "size": 0})
    assert result.is_error is True and "size 应是 1 到 100 之间的整数，收到 0" in text_of(result)
    assert backends.metaso.requests == []


def test_a_service_failure_is_a_tool_error_with_the_key_masked(mcp, backends):
    backends.metaso.fail_with("search", "echo")  # 秘塔的 500 错误页回显请求头（带着 METASO_API_KEY）
    result = mcp.call("answer_question", {"question": "NAS 远程访问安全吗"})
    assert result.is_error is True and "秘塔返回 HTTP 500" in text_of(result)
    assert "Bearer mk-***" in text_of(result) and not shows(text_of(result), *KEYS)


def test_a_key_the_model_echoes_is_masked_in_text_and_structured_content(tmp_path, capfd):
    backends = Backends()
    try:
        with in_process(backends, tmp_path, ANS_MODEL="echo-auth-hidden") as session:
            result = session.call("answer_question", {"question": "家用 NAS 怎么选"})
            assert "mk-***" in text_of(result) and "mk-***" in result.structured_content["answer"]
            assert not shows(text_of(result), *KEYS)
            assert not shows(json.dumps(result.structured_content, ensure_ascii=False), *KEYS)
            assert not shows(capfd.readouterr().err, *KEYS)
    finally:
        backends.close()


@pytest.mark.slow
def test_the_session_works_after_the_server_got_garbage(backends, tmp_path):
    """客户端连上之前，服务的标准输入先收到几行乱七八糟的（cat 把它们放在客户端发的前面）：每行一个错误、
    一行说明，之后官方客户端照常握手、列出工具、调用工具。"""
    garbage = tmp_path / "garbage.jsonl"
    # 认得出的 id 用客户端自己不会用的字符串：错误回应带着它，不能被当成客户端那个请求的回应
    garbage.write_bytes(b"\n".join([
        b"hello", b'{"jsonrpc": "2.0", "id": "g1", "method": "tools/list", "params": "x"}',
        b'{"jsonrpc": "2.0", "id": {"n": 2}, "method": "tools/list"}', b'[{"jsonrpc": "2.0", "id": 3, "method": "ping"}]',
        b'{"jsonrpc": "2.0", "id": 4, "method": "ping", "params": {"a": "\\ud800"}}', b"[" * 100000,
        b'{"id": "g5", "method": "ping"}']) + b"\n")
    server = (sys.executable, str(HERE / "answer_with_sources.py"), "--mcp")
    with session_with(backends, tmp_path, ("sh", "-c", 'cat "$0" - | exec "$@"', str(garbage), *server)) as session:
        assert sorted(session.tools()) == ["answer_question", "verify_answer"]
        result = session.call("verify_answer", {"answer": GOOD_ANSWER, "sources": NAS_RECORD_SOURCES})
        assert result.is_error is False and result.structured_content["passed"] is True
        stderr = session.stderr()
    refused = [line for line in stderr.splitlines() if line.startswith("拒绝了一个请求")]
    assert [line.split("）：")[0] for line in refused] == [
        "拒绝了一个请求（-32700 解析错误：这一行不是合法的 JSON",
        "拒绝了一个请求（-32602 参数不对：params 应是对象",
        "拒绝了一个请求（-32600 无效的请求：id 应是字符串或整数",
        "拒绝了一个请求（-32600 无效的请求：MCP 没有批量请求，一行只发一个 JSON 对象",
        "拒绝了一个请求（-32700 解析错误：字符串里有单独的代理码位（例如 \\ud800）",
        "拒绝了一个请求（-32700 解析错误：JSON 嵌套太深（最多 200 层）",
        '拒绝了一个请求（-32600 无效的请求：jsonrpc 应是 "2.0"']
    assert "Traceback" not in stderr and not shows(stderr, *KEYS)


# ---------- 开始之前、结束 ----------

def test_a_missing_model_stops_before_serving_and_before_any_search(fake_metaso, model_server, monkeypatch):
    monkeypatch.setattr(mcp_server, "build_server", lambda settings: pytest.fail("不该开始服务"))
    done = run_cli("--mcp", env=cli_env(fake_metaso, model_server, ANS_MODEL="qwen2.5:72b"))
    assert done.returncode == 3 and "ollama pull qwen2.5:72b" in the_only_line(done.stderr)
    assert fake_metaso.requests == [] and done.stdout == ""


@pytest.mark.slow
def test_a_missing_model_in_a_real_process_is_one_line_and_no_traceback_even_with_debug(fake_metaso, model_server):
    done = run_with_debug("--mcp", env=cli_env(fake_metaso, model_server, ANS_MODEL="qwen2.5:72b"))
    assert done.returncode == 3 and "Traceback" not in done.stderr
    assert "ollama pull qwen2.5:72b" in the_only_line(done.stderr)
    assert fake_metaso.requests == [] and done.stdout == ""


@pytest.mark.parametrize(("flags", "message"), [
    (["--json"], "--mcp 的结果在每个请求的回应里：不要同时用 --json"),
    (["家用 NAS 怎么选"], "--mcp 起一个服务，问题由每个请求带来"),
    (["--verify", "saved.json"], "--mcp 起一个服务，问题由每个请求带来：不要同时给出问题、--verify"),
    (["--queue", "3"], "--concurrency 和 --queue 用于 --serve"),
])
def test_flags_that_make_no_sense_with_mcp_are_usage_errors(fake_metaso, model_server, monkeypatch, flags, message):
    monkeypatch.setattr(mcp_server, "build_server", lambda settings: pytest.fail("不该开始服务"))
    done = run_cli("--mcp", *flags, env=cli_env(fake_metaso, model_server, ANS_MODEL="good"))
    assert done.returncode == 2 and message in done.stderr
    assert fake_metaso.requests == [] and model_server.probes == []


@pytest.mark.slow
def test_stdin_closed_at_start_is_a_usage_error_before_serving(own_backends, tmp_path):
    done = subprocess.run(["sh", "-c", 'exec "$@" <&-', "sh", *cli_command("--mcp")], capture_output=True, text=True,
                          encoding="utf-8", env=own_backends.env(tmp_path / "cache"), timeout=60)
    assert done.returncode == 2 and "--mcp 的请求从标准输入来，可它是关着的" in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == "" and own_backends.model.probes == []


@pytest.fixture
def raw_server(own_backends, tmp_path):
    """raw_server()：不经客户端库、直接说 JSON-RPC 的服务进程（看它怎样结束），握手之后返回；测试结束时不管成败
    都结束它、关掉管道。"""
    started = []

    def starting():
        process = subprocess.Popen(cli_command("--mcp"), env=own_backends.env(tmp_path / "cache"),
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   encoding="utf-8")
        started.append(process)
        send(process, {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                       "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                  "clientInfo": {"name": "测试", "version": "1"}}})
        assert json.loads(process.stdout.readline())["result"]["serverInfo"]["name"] == "answer-with-sources"
        send(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        return process
    yield starting
    for process in started:
        if process.poll() is None:
            process.kill()
        process.wait(10)
        for pipe in (process.stdin, process.stdout, process.stderr):
            if not pipe.closed:
                pipe.close()


def send(process, message):
    process.stdin.write(json.dumps(message, ensure_ascii=False) + "\n")
    process.stdin.flush()


@pytest.fixture
def own_backends():
    made = Backends()
    yield made
    made.close()


def asking_while_the_search_is_held(own_backends, process):
    """调用 answer_question，等到它的搜索停在模拟秘塔里（own_backends.metaso.hold）：这次调用一时半会儿结束不了。"""
    own_backends.metaso.hold = hold = Hold()
    send(process, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                   "params": {"name": "answer_question", "arguments": {"question": "家用 NAS 怎么选"}}})
    assert hold.arrived.wait(30)
    return hold


@pytest.mark.slow
def test_closing_stdin_during_a_hanging_call_ends_the_server_at_once(own_backends, raw_server):
    """“马上”按事情的先后断言，不量秒数（机器忙的时候几秒说明不了什么）：服务结束时，它发出的搜索还停在模拟秘塔里
    ——它没有等这次调用。"""
    process = raw_server()
    hold = asking_while_the_search_is_held(own_backends, process)
    try:
        process.stdin.close()  # 客户端走了（Claude Desktop 退出时就是这样）
        assert process.wait(60) == 0
        assert own_backends.metaso.busy == 1 and not hold.released.is_set()  # 搜索还停着：服务没有等它
    finally:
        hold.release()
    assert "Traceback" not in process.stderr.read()


@pytest.mark.slow
def test_a_client_that_stops_reading_does_not_crash_the_server(raw_server):
    process = raw_server()
    process.stdout.close()  # 客户端不再读回应，标准输入却还开着
    for number in range(2, 5):
        send(process, {"jsonrpc": "2.0", "id": number, "method": "ping"})  # 回应写不出去：管道断了
    noticed = stderr_until(process, "MCP 客户端不再读标准输出了", 10)  # 服务发现了
    assert process.poll() is None  # 还在，等客户端关掉标准输入
    process.stdin.close()
    assert process.wait(10) == 0
    stderr = noticed + process.stderr.read()
    assert "MCP 客户端不再读标准输出了" in stderr and "Traceback" not in stderr


def stderr_until(process, text, seconds):
    """读服务的标准错误，直到读到有 text 的一行（最多 seconds 秒）；返回读到的这些。"""
    import select
    read, deadline = "", time.monotonic() + seconds
    while text not in read:
        left = deadline - time.monotonic()
        assert left > 0 and select.select([process.stderr], [], [], left)[0], read
        line = process.stderr.readline()
        assert line, read  # 服务结束了也没说
        read += line
    return read


@pytest.mark.slow
@pytest.mark.parametrize("sent", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=["SIGINT", "SIGTERM", "SIGHUP"])
def test_a_signal_ends_the_server_while_the_client_keeps_stdin_open(own_backends, raw_server, sent):
    """客户端开着标准输入、一个调用的搜索还停在模拟秘塔里时收到信号：服务马上结束（按先后断言：结束时搜索还停着）。"""
    process = raw_server()
    send(process, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert sorted(tool["name"] for tool in json.loads(process.stdout.readline())["result"]["tools"]) == [
        "answer_question", "verify_answer"]
    hold = asking_while_the_search_is_held(own_backends, process)
    try:
        process.send_signal(sent)
        assert process.wait(60) == 130
        assert own_backends.metaso.busy == 1 and not hold.released.is_set()  # 没有等停着的搜索
    finally:
        hold.release()
    stderr = process.stderr.read()
    assert stderr.rstrip().endswith("已中断") and "Traceback" not in stderr
    assert process.stdout.read() == ""  # 标准输出只有协议：没有多出来的文字


def test_answer_question_with_context_searches_a_follow_up_together_with_the_earlier_question(mcp, backends):
    result = mcp.call("answer_question", {"question": "那 RAID6 呢？", "context": "家用 NAS 怎么选\nRAID1 和 RAID5 有什么区别？"})
    assert result.is_error is False
    assert result.structured_content["search_query"] == "RAID1 和 RAID5 有什么区别？ 那 RAID6 呢？"
    assert backends.metaso.queries[-1] == "RAID1 和 RAID5 有什么区别？ 那 RAID6 呢？"
    assert text_of(result).startswith("搜索的问题（接上了 context）：RAID1 和 RAID5 有什么区别？ 那 RAID6 呢？")
    sent = backends.model.requests[-1]["body"]["messages"]
    assert [message["content"] for message in sent[1:3]] == ["家用 NAS 怎么选", "RAID1 和 RAID5 有什么区别？"]


# ---------- 客户端取消了调用、不再读回应：不再为它付费（整个服务在本进程里，经管道说字节） ----------

def cancel(server, request_id):
    """客户端取消 request_id 的调用（MCP 的 notifications/cancelled），再等服务读过它（ping 的回应在它之后）。"""
    server.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                 "params": {"requestId": request_id, "reason": "用户点了停止"}})
    server.ping(f"取消 {request_id} 之后")


def test_a_cancelled_call_stops_before_it_reads_pages_or_asks_the_model(mcp_wire, backends):
    """检查发现：notifications/cancelled 之后没有回应（这是对的），可搜索和请模型回答照样做了、付了费。
    取消时搜索已经发出去了（停在模拟秘塔里）：它放行之后，读网页、请模型回答都不再做，也没有回应。"""
    server = mcp_wire()
    backends.metaso.hold = hold = Hold()
    server.call(5, "answer_question", {"question": "家用 NAS 怎么选", "read": 3})
    assert hold.arrived.wait(30)
    cancel(server, 5)
    hold.release()
    join_paid_work()
    assert backends.metaso.requests == [("POST", "/api/v1/search")]
    assert backends.model.requests == []
    server.ping("做完之后")  # 取消了的调用没有回应：下一行就是这个 ping 的


def test_a_call_cancelled_while_the_model_answers_asks_no_judge(mcp_wire, backends):
    """取消时模型正在回答（停在脚本模型里）：它答完之后，评判模型一句也不问。"""
    server = mcp_wire("--judge", "judge-yes", "--judge-all")
    backends.model.hold = hold = Hold()
    server.call(6, "answer_question", {"question": "家用 NAS 怎么选"})
    assert hold.arrived.wait(30)
    cancel(server, 6)
    hold.release()
    join_paid_work()
    assert [request["body"]["model"] for request in backends.model.requests] == ["good"]
    server.ping("做完之后")


def test_a_client_that_stops_reading_pays_for_nothing_more(mcp_wire, backends):
    """检查发现：服务说了客户端不再读标准输出之后，又来的三个调用每个都付了一次搜索。客户端关掉读回应的那一端时，
    正在做的调用（搜索停在模拟秘塔里）不再读网页、不再请模型回答，之后来的调用不开始。"""
    server = mcp_wire()
    backends.metaso.hold = hold = Hold()
    server.call(7, "answer_question", {"question": "家用 NAS 怎么选", "read": 3})
    assert hold.arrived.wait(30)
    server.stop_reading()
    assert server.noted("MCP 客户端不再读标准输出了")  # 不用等写回应的时候才发现
    server.call(8, "answer_question", {"question": "RAID1 和 RAID5 有什么区别"})
    assert server.noted("没有开始 tools/call（id 8）")
    hold.release()
    server.close()
    join_paid_work()
    assert backends.metaso.requests == [("POST", "/api/v1/search")]
    assert backends.model.requests == []
