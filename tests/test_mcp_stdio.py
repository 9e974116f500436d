"""--mcp 按协议回答格式不对的请求（客户端只认协议规定的错误，别的它会当作服务坏了）：每一行都有 JSON-RPC 规定的错误（-32700、-32600、-32602），
认得出 id 就带上、认不出是 null；标准错误上写一行中文（遮过密钥）；服务接着回答下一个请求。通知（没有 id）
格式不对也不回话；太长的行不整个读进内存；握手之前的请求说清楚要先 initialize。

read_line 是一行字节 → 交给 SDK 的消息或一个 Refusal，在本进程里测；同一张表再对真进程发一遍原始的字节。
整个服务经管道说字节的，在本进程里（tests/serving.McpInProcess）；内存、真的标准输入输出用真进程。"""
import io
import json
import os
import queue
import subprocess
import threading

import pytest
from mcp_types import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
)

from sourced_answers.core.settings import SERVE_DEFAULTS
from sourced_answers.servers.mcp_stdio import (
    MAX_LINE,
    Handshake,
    Refusal,
    TooLong,
    frame_of,
    in_chinese,
    next_line,
    read_line,
    refusal_note,
)
from tests import loopback
from tests.serving import KEYS, Backends, shows
from tests.support import CANARY_KEY, cli_command

NOT_JSON = "解析错误：这一行不是合法的 JSON"
SURROGATE = "解析错误：字符串里有单独的代理码位（例如 \\ud800）"
TOO_DEEP = "解析错误：JSON 嵌套太深（最多 200 层）"
NOT_UTF8 = "解析错误：这一行不是 UTF-8 编码的文字"
BATCH = "无效的请求：MCP 没有批量请求，一行只发一个 JSON 对象"
NOT_OBJECT = "无效的请求：一行应是一个 JSON 对象"
BAD_ID = "无效的请求：id 应是字符串或整数"
BAD_VERSION = '无效的请求：jsonrpc 应是 "2.0"'
NO_METHOD = "无效的请求：缺少 method"

# (收到的一行, 错误码, 回应里的 id, 中文说明)
MALFORMED = {
    "invalid-json": (b'{"jsonrpc": "2.0", "id": 1, "method": ', PARSE_ERROR, None, NOT_JSON),
    "trailing-garbage": (b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}}', PARSE_ERROR, None, NOT_JSON),
    "nan": (b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": NaN}}', PARSE_ERROR, None, NOT_JSON),
    "lone-surrogate": (b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "\\ud800"}}',
                       PARSE_ERROR, None, SURROGATE),
    "low-surrogate": (b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"a": "\\udc00x"}}',
                      PARSE_ERROR, None, SURROGATE),
    "deep-nesting": (b"[" * 100000 + b"]" * 100000, PARSE_ERROR, None, TOO_DEEP),
    "deep-params": (b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"a": ' + b"[" * 300 + b"]" * 300
                    + b"}}", PARSE_ERROR, None, TOO_DEEP),
    "not-utf8": (b'{"jsonrpc": "2.0", "id": 1, "method": "\xff"}', PARSE_ERROR, None, NOT_UTF8),
    "batch": (b'[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]', INVALID_REQUEST, None, BATCH),
    "empty-batch": (b"[]", INVALID_REQUEST, None, BATCH),
    "a-number": (b"42", INVALID_REQUEST, None, NOT_OBJECT),
    "a-string": (b'"ping"', INVALID_REQUEST, None, NOT_OBJECT),
    "id-object": (b'{"jsonrpc": "2.0", "id": {"n": 1}, "method": "ping"}', INVALID_REQUEST, None, BAD_ID),
    "id-float": (b'{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}', INVALID_REQUEST, None, BAD_ID),
    "id-true": (b'{"jsonrpc": "2.0", "id": true, "method": "ping"}', INVALID_REQUEST, None, BAD_ID),
    "id-null": (b'{"jsonrpc": "2.0", "id": null, "method": "ping"}', INVALID_REQUEST, None, BAD_ID),
    "no-jsonrpc": (b'{"id": 6, "method": "ping"}', INVALID_REQUEST, 6, BAD_VERSION),
    "jsonrpc-1.0": ('{"jsonrpc": "1.0", "id": "七", "method": "ping"}'.encode(), INVALID_REQUEST, "七", BAD_VERSION),
    "jsonrpc-number": (b'{"jsonrpc": 2.0, "id": 8, "method": "ping"}', INVALID_REQUEST, 8, BAD_VERSION),
    "no-method": ('{"jsonrpc": "2.0", "id": "九", "params": {}}'.encode(), INVALID_REQUEST, "九", NO_METHOD),
    "method-not-a-string": (b'{"jsonrpc": "2.0", "id": 10, "method": 1, "params": "bar"}', INVALID_REQUEST, 10,
                            "无效的请求：method 应是字符串"),
    "params-string": ('{"jsonrpc": "2.0", "id": "列表", "method": "tools/list", "params": "x"}'.encode(), INVALID_PARAMS,
                      "列表", "参数不对：params 应是对象"),
    "params-array": (b'{"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": ["verify_answer"]}',
                     INVALID_PARAMS, 11, "参数不对：params 应是对象"),
    "params-string-unknown-method": (b'{"jsonrpc": "2.0", "id": 12, "method": "foo/bar", "params": "x"}',
                                     INVALID_REQUEST, 12, "无效的请求：params 应是对象"),
}

# 格式不对的通知（有 method、没有 id）：(收到的一行, 标准错误上那一行说的问题)。JSON-RPC 从不回应通知
MALFORMED_NOTIFICATIONS = {
    "params-string": (b'{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": "x"}',
                      "参数不对：params 应是对象"),
    "params-array-unknown-method": (b'{"jsonrpc": "2.0", "method": "notifications/bogus", "params": [1]}',
                                    "无效的请求：params 应是对象"),
    "no-jsonrpc": (b'{"method": "notifications/initialized"}', BAD_VERSION),
    "jsonrpc-1.0": (b'{"jsonrpc": "1.0", "method": "notifications/progress", "params": {}}', BAD_VERSION),
}


# ---------- 一行 → 消息或错误（本进程） ----------

@pytest.mark.parametrize(("line", "code", "request_id", "message"), MALFORMED.values(), ids=MALFORMED.keys())
def test_a_malformed_line_gets_the_error_the_spec_names(line, code, request_id, message):
    assert read_line(line) == Refusal(code, message, request_id)


@pytest.mark.parametrize(("line", "problem"), MALFORMED_NOTIFICATIONS.values(), ids=MALFORMED_NOTIFICATIONS.keys())
def test_a_malformed_notification_is_not_answered_but_noted(line, problem):
    refused = read_line(line)
    assert isinstance(refused, Refusal) and refused.answered is False
    assert refusal_note(refused, line, []).startswith(f"丢掉了一个格式不对的通知（{problem}；通知不回话）：")


def test_an_object_that_is_no_request_at_all_is_still_answered_with_a_null_id():
    """没有 id、也没有字符串的 method：不是通知（JSON-RPC 规范自己的例子 {"method": 1} 就回 -32600 和 null）。"""
    assert read_line(b'{"jsonrpc": "2.0", "method": 1, "params": "bar"}') == Refusal(
        INVALID_REQUEST, "无效的请求：method 应是字符串")
    assert read_line(b'{"jsonrpc": "2.0", "params": {}}') == Refusal(INVALID_REQUEST, NO_METHOD)


def test_a_big_integer_or_empty_string_id_is_still_an_id():
    assert read_line(b'{"jsonrpc": "2.0", "id": 123456789012345678901234567890, "method": "ping", "params": 1}') \
        == Refusal(INVALID_PARAMS, "参数不对：params 应是对象", 123456789012345678901234567890)
    assert read_line(b'{"jsonrpc": "2.0", "id": "", "method": "ping", "params": 1}').request_id == ""


def test_a_well_formed_request_goes_to_the_sdk_as_it_is():
    line = '{"jsonrpc": "2.0", "id": "问", "method": "tools/call", "params": {"name": "verify_answer"}}\r\n'
    assert read_line(line.encode()) == JSONRPCRequest(jsonrpc="2.0", id="问", method="tools/call",
                                                      params={"name": "verify_answer"})


def test_a_surrogate_pair_escape_is_one_character_not_an_error():
    request = read_line(b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"a": "\\ud83d\\ude00"}}')
    assert isinstance(request, JSONRPCRequest) and request.params == {"a": "😀"}


def test_params_null_is_the_same_as_no_params():
    assert read_line(b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": null}') == JSONRPCRequest(
        jsonrpc="2.0", id=1, method="ping")


def test_a_notification_goes_to_the_sdk():
    assert read_line(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}') == JSONRPCNotification(
        jsonrpc="2.0", method="notifications/initialized")


def test_a_well_formed_response_goes_to_the_sdk():
    assert read_line(b'{"jsonrpc": "2.0", "id": 3, "result": {}}') == JSONRPCResponse(jsonrpc="2.0", id=3, result={})


def test_a_malformed_response_is_not_answered():
    refused = read_line('{"jsonrpc": "2.0", "id": {"n": 3}, "result": "好"}'.encode())
    assert isinstance(refused, Refusal) and refused.answered is False


def test_an_unknown_method_with_object_params_is_left_to_the_sdk():
    assert isinstance(read_line(b'{"jsonrpc": "2.0", "id": 1, "method": "foo/bar", "params": {}}'), JSONRPCRequest)


def test_the_refusal_reply_is_a_json_rpc_error():
    reply = Refusal(INVALID_REQUEST, BAD_ID).reply()
    assert json.loads(frame_of(reply)) == {"jsonrpc": "2.0", "id": None,
                                           "error": {"code": INVALID_REQUEST, "message": BAD_ID}}


# ---------- 一行的长度：和 --serve 的请求体同一个上限，读的时候从不多拿 ----------

class Counted(io.BufferedReader):
    """记下每次 readline 拿到的最多字节数：太长的行是不是一段一段读、丢掉的。"""
    largest = 0

    def readline(self, size=-1):
        line = super().readline(size)
        self.largest = max(self.largest, len(line))
        return line


def test_the_line_limit_is_the_serve_body_limit():
    assert MAX_LINE == SERVE_DEFAULTS.max_body == 16 * 1024 * 1024


def test_a_line_over_the_limit_is_read_in_bounded_pieces_and_the_next_line_is_intact():
    """检查发现：一行 120 MB 的输入让进程长到 196 MB。太长的行读到上限就知道了，剩下的一段一段丢掉。"""
    wire = Counted(io.BytesIO(b"x" * 1_000_000 + b"\n" + b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n'))
    refused = next_line(wire, 1000)
    assert isinstance(refused, TooLong) and refused.reply().error == ErrorData(
        code=INVALID_REQUEST, message="无效的请求：一行超过了 1000 个字节，没有读完就丢掉了（一行只放一个消息）")
    assert refused.line.startswith(b"x" * 100)  # 标准错误上那一行引用的开头
    assert wire.largest <= 64 * 1024 + 1  # 没有一次拿着整行
    assert next_line(wire, 1000) == b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n'
    assert next_line(wire, 1000) == b""


def test_a_line_exactly_at_the_limit_is_read_and_the_message_names_the_limit_in_megabytes():
    assert next_line(io.BytesIO(b"y" * 1000 + b"\nz"), 1000) == b"y" * 1000 + b"\n"
    assert next_line(io.BytesIO(b"y" * 1000), 1000) == b"y" * 1000  # 最后一行没有换行
    too_long = next_line(io.BytesIO(b"y" * (MAX_LINE + 1)), MAX_LINE)
    assert isinstance(too_long, TooLong) and "一行超过了 16 MB" in too_long.message


# ---------- 握手之前的请求 ----------

INITIALIZE = JSONRPCRequest(jsonrpc="2.0", id=0, method="initialize", params={})
GATED = ErrorData(code=INVALID_PARAMS, message="Invalid request parameters", data="")  # SDK 挡回来时说的


def gated(request_id):
    return JSONRPCError(jsonrpc="2.0", id=request_id, error=GATED)


def test_a_request_the_sdk_refused_before_the_handshake_says_to_send_initialize_first():
    handshake = Handshake()
    handshake.sent(JSONRPCRequest(jsonrpc="2.0", id=1, method="tools/list"))
    assert handshake.explained(gated(1)) == JSONRPCError(
        jsonrpc="2.0", id=1, error=ErrorData(code=INVALID_REQUEST, message=(
            "无效的请求：还没有初始化就发来了 tools/list：先发 initialize 请求，收到回应之后再发别的请求（ping 除外）")))


def test_after_the_handshake_the_same_error_means_bad_parameters_again():
    handshake = Handshake()
    handshake.sent(INITIALIZE)
    handshake.explained(JSONRPCResponse(jsonrpc="2.0", id=0, result={"protocolVersion": "2025-06-18"}))
    handshake.sent(JSONRPCRequest(jsonrpc="2.0", id=1, method="tools/call", params={}))
    assert handshake.explained(gated(1)) == gated(1)


def test_a_refused_initialize_itself_is_a_parameter_problem_and_the_handshake_is_still_to_come():
    handshake = Handshake()
    handshake.sent(INITIALIZE)
    assert handshake.explained(gated(0)) == gated(0)
    handshake.sent(JSONRPCRequest(jsonrpc="2.0", id=1, method="tools/list"))
    assert handshake.explained(gated(1)).error.message.startswith("无效的请求：还没有初始化就发来了 tools/list：")


@pytest.mark.parametrize("first", [
    JSONRPCNotification(jsonrpc="2.0", method="notifications/initialized"),
    JSONRPCRequest(jsonrpc="2.0", id=9, method="tools/list",
                   params={"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}),
], ids=["bare-initialized", "modern-envelope"])
def test_when_the_sdk_needs_no_handshake_its_errors_are_left_alone(first):
    handshake = Handshake()
    handshake.sent(first)
    handshake.sent(JSONRPCRequest(jsonrpc="2.0", id=1, method="tools/call", params={}))
    assert handshake.explained(gated(1)) == gated(1)


# ---------- 标准错误上的一行、写出去的帧 ----------

def test_the_note_is_one_line_with_the_key_masked():
    line = ('{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": "' + CANARY_KEY + '\\n✓ 引用核对通过"}').encode()
    note = refusal_note(read_line(line), line, [CANARY_KEY])
    assert note.startswith("拒绝了一个请求（-32602 参数不对：params 应是对象）：")
    assert "mk-***" in note and not shows(note, CANARY_KEY) and "\n" not in note


def test_the_note_quotes_only_the_start_of_a_long_line():
    line = b"[" * 100000
    note = refusal_note(read_line(line), line, [])
    assert note.endswith("[" * 100 + "…") and len(note) < 200


def test_a_lone_surrogate_in_a_tool_result_is_written_as_a_replacement_character():
    result = {"content": [{"type": "text", "text": "RAID5 \ud800至少三块盘"}], "isError": False}
    frame = frame_of(JSONRPCResponse(jsonrpc="2.0", id=2, result=result))
    assert frame.endswith(b"\n") and frame.count(b"\n") == 1
    assert json.loads(frame.decode("utf-8"))["result"]["content"][0]["text"] == "RAID5 \ufffd至少三块盘"


def test_an_ordinary_frame_is_the_sdk_message_on_one_line():
    response = JSONRPCResponse(jsonrpc="2.0", id=2, result={"text": "第一行\n第二行"})
    frame = frame_of(response)
    assert frame.endswith(b"\n") and frame.count(b"\n") == 1
    assert json.loads(frame) == json.loads(response.model_dump_json(by_alias=True, exclude_unset=True))


def test_every_frame_is_masked_on_its_way_out():
    key = "sk-MODEL-CANARY-0123456789"
    response = JSONRPCResponse(jsonrpc="2.0", id=2, result={"text": "回显 " + "\u200b".join(key)})
    assert key not in frame_of(response, [key]).decode().replace("\\u200b", "") and b"mk-***" in frame_of(response, [key])


def test_the_sdk_english_errors_are_said_in_chinese():
    missing = JSONRPCError(jsonrpc="2.0", id=5, error=ErrorData(code=METHOD_NOT_FOUND, message="Method not found",
                                                                data="foo/bar"))
    assert in_chinese(missing).error == ErrorData(code=METHOD_NOT_FOUND, message="没有这个方法", data="foo/bar")
    other = JSONRPCError(jsonrpc="2.0", id=5, error=ErrorData(code=-32000, message="Connection closed"))
    assert in_chinese(other) == other


# ---------- 真进程：原始的字节 ----------

class Wire:
    """python answer_with_sources.py --mcp 的进程，直接说字节：send(一行)、reply()（下一行回应）、
    note()（标准错误上的下一行）。握手之后交给测试。等待的秒数是出错时的时限，不是在量快慢：忙的机器上也够。"""

    def __init__(self, env: dict[str, str]) -> None:
        self.process = subprocess.Popen(cli_command("--mcp"), env=env, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.replies: queue.Queue[bytes] = queue.Queue()
        self.notes: queue.Queue[bytes] = queue.Queue()
        self.readers = [threading.Thread(target=self._collect, args=(pipe, lines), daemon=True)
                        for pipe, lines in ((self.process.stdout, self.replies), (self.process.stderr, self.notes))]
        for reader in self.readers:
            reader.start()
        self.send(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                         "clientInfo": {"name": "测试", "version": "1"}}}).encode())
        assert self.reply(30)["result"]["serverInfo"]["name"] == "answer-with-sources"
        assert self.note().startswith("MCP 服务在标准输入输出上")
        self.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        self.pings = 0

    @staticmethod
    def _collect(pipe, lines):
        for line in pipe:
            lines.put(line)

    def send(self, line: bytes) -> None:
        self.process.stdin.write(line + b"\n")
        self.process.stdin.flush()

    def reply(self, seconds: float = 10) -> dict:
        try:
            return json.loads(self.replies.get(timeout=seconds).decode("utf-8"))
        except queue.Empty:
            pytest.fail(f"{seconds} 秒之内没有回应")

    def note(self, seconds: float = 10) -> str:
        try:
            return self.notes.get(timeout=seconds).decode("utf-8").rstrip("\n")
        except queue.Empty:
            pytest.fail(f"{seconds} 秒之内标准错误上没有新的一行")

    def still_serving(self) -> None:
        """接着发的 ping 有回答（回应按顺序写：在它之前的行都处理过了）。"""
        self.pings += 1
        self.send(json.dumps({"jsonrpc": "2.0", "id": f"ping-{self.pings}", "method": "ping"}).encode())
        assert self.reply() == {"jsonrpc": "2.0", "id": f"ping-{self.pings}", "result": {}}

    def close(self) -> int:
        """关掉标准输入（客户端走了）：返回退出码，之后 rest() 是标准错误上还没读的那些行。"""
        self.process.stdin.close()
        try:
            return self.process.wait(10)
        finally:
            if self.process.poll() is None:
                self.process.kill()
            for reader in self.readers:
                reader.join(10)

    def rest(self) -> str:
        return b"".join(self.notes.queue).decode("utf-8")


@pytest.fixture(scope="module")
def wire(tmp_path_factory):
    backends = Backends()
    loopback.listen(backends.metaso, backends.model)  # 子进程要连它们：真的端口
    made = Wire(backends.env(tmp_path_factory.mktemp("mcp-wire")))
    try:
        yield made
        assert made.close() == 0
        assert "Traceback" not in made.rest() and not shows(made.rest(), *KEYS)
    finally:
        if made.process.poll() is None:
            made.process.kill()
        backends.close()


@pytest.mark.slow
@pytest.mark.parametrize(("line", "code", "request_id", "message"), MALFORMED.values(), ids=MALFORMED.keys())
def test_the_server_answers_a_malformed_line_within_a_second_and_goes_on(wire, line, code, request_id, message):
    wire.send(line)
    assert wire.reply() == {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
    assert wire.note().startswith(f"拒绝了一个请求（{code} {message}）：")
    wire.still_serving()


@pytest.mark.slow
def test_tools_list_is_answered_after_garbage(wire):
    wire.send(b"\x00\x01 not json at all")
    assert wire.reply()["error"]["code"] == PARSE_ERROR
    wire.note()
    wire.send('{"jsonrpc": "2.0", "id": "工具", "method": "tools/list"}'.encode())
    reply = wire.reply()
    assert reply["id"] == "工具"
    assert sorted(tool["name"] for tool in reply["result"]["tools"]) == ["answer_question", "verify_answer"]


@pytest.mark.slow
def test_a_refused_line_with_a_key_is_logged_masked(wire):
    wire.send(('{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": "Bearer ' + CANARY_KEY + '"}').encode())
    assert wire.reply()["error"]["code"] == INVALID_PARAMS
    note = wire.note()
    assert "Bearer mk-***" in note and not shows(note, *KEYS)
    wire.still_serving()


@pytest.mark.slow
def test_an_unknown_method_is_method_not_found_in_chinese(wire):
    wire.send(b'{"jsonrpc": "2.0", "id": 13, "method": "foo/bar"}')
    assert wire.reply() == {"jsonrpc": "2.0", "id": 13,
                            "error": {"code": METHOD_NOT_FOUND, "message": "没有这个方法", "data": "foo/bar"}}
    wire.still_serving()


@pytest.mark.slow
def test_a_malformed_response_gets_no_reply_but_a_note(wire):
    wire.send('{"jsonrpc": "2.0", "id": {"n": 3}, "result": "好"}'.encode())
    assert wire.note().startswith("丢掉了一个格式不对的回应")
    wire.still_serving()  # 下一行回应就是 ping 的：没有多出一个错误


@pytest.mark.slow
def test_a_blank_line_is_skipped_silently(wire):
    wire.send(b"   \r")
    wire.still_serving()
    assert wire.notes.empty()


# ---------- 整个服务在本进程里：管道上的字节 ----------

def test_a_too_long_line_gets_an_error_naming_the_limit_and_the_next_line_is_answered(mcp_wire):
    server = mcp_wire(max_line=4096)
    server.send_large(b'{"jsonrpc": "2.0", "id": 7, "method": "ping", "params": {"x": "' + b"x" * 200_000 + b'"}}')
    assert server.reply() == {"jsonrpc": "2.0", "id": None, "error": {
        "code": INVALID_REQUEST, "message": "无效的请求：一行超过了 4096 个字节，没有读完就丢掉了（一行只放一个消息）"}}
    server.ping("之后")
    start = '{"jsonrpc": "2.0", "id": 7, "method": "ping", "params": {"x": "'
    notes = [line for line in server.lines if line.startswith("拒绝了一个请求")]
    assert len(notes) == 1 and notes[0].endswith("）：" + start + "x" * (100 - len(start)) + "…")  # 读到的开头 100 个字


def ping_of_length(request_id: str, size: int) -> bytes:
    """一个 ping，params 里垫上空格，一共正好 size 个字节（不算换行）。"""
    line = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "ping", "params": {"垫": ""}},
                      ensure_ascii=False).encode()
    return line[:-3] + b" " * (size - len(line)) + line[-3:]


def test_a_line_one_byte_over_the_limit_is_refused_and_one_at_the_limit_is_answered(mcp_wire):
    server = mcp_wire(max_line=4096)
    server.send(ping_of_length("正好", 4096))
    assert server.reply() == {"jsonrpc": "2.0", "id": "正好", "result": {}}
    server.send(ping_of_length("多一个字节", 4097))
    assert server.reply()["error"] == {
        "code": INVALID_REQUEST, "message": "无效的请求：一行超过了 4096 个字节，没有读完就丢掉了（一行只放一个消息）"}
    server.ping("之后")


@pytest.mark.parametrize(("line", "problem"), MALFORMED_NOTIFICATIONS.values(), ids=MALFORMED_NOTIFICATIONS.keys())
def test_a_malformed_notification_gets_no_reply(mcp_wire, line, problem):
    """检查发现：格式不对的通知得到了一个回应，可 JSON-RPC 从不回应通知。"""
    server = mcp_wire()
    server.send(line)
    server.ping("通知之后")  # 下一行回应就是 ping 的：通知没有回应
    assert server.lines[-1].startswith(f"丢掉了一个格式不对的通知（{problem}；通知不回话）：")


def test_a_request_before_initialize_is_told_to_initialize_first(mcp_wire):
    """检查发现：握手之前的调用得到的是 -32602 参数不对，没有别的说明。"""
    server = mcp_wire(handshake=False)
    server.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert server.reply() == {"jsonrpc": "2.0", "id": 1,
                              "error": {"code": INVALID_REQUEST, "message": (
                                  "无效的请求：还没有初始化就发来了 tools/list：先发 initialize 请求，"
                                  "收到回应之后再发别的请求（ping 除外）")}}
    server.call(2, "verify_answer", {"answer": "RAID1 是镜像 [1]。", "sources": []})
    assert server.reply()["error"]["message"].startswith("无效的请求：还没有初始化就发来了 tools/call：先发 initialize")
    server.ping("握手之前")  # ping 不用握手
    server.send({"jsonrpc": "2.0", "id": 3, "method": "initialize",
                 "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "测", "version": "1"}}})
    assert server.reply()["result"]["serverInfo"]["name"] == "answer-with-sources"
    server.send({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {}})  # 握手之后：真的是参数不对
    assert server.reply()["error"] == {"code": INVALID_PARAMS, "message": "参数不对", "data": ""}
    server.send({"jsonrpc": "2.0", "id": 5, "method": "tools/list"})
    assert len(server.reply()["result"]["tools"]) == 2


def peak_memory_kb(pid: int) -> int:
    """进程到现在为止用过的最多内存（Linux 的 VmHWM，KB）。"""
    with open(f"/proc/{pid}/status", encoding="utf-8") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="要读 /proc 的 VmHWM（Linux）")
def test_a_120_mb_line_does_not_grow_the_server_by_its_size(wire):
    """检查发现：一行 120 MB 的输入让进程长到 196 MB。上限是 16 MB：读到上限就回错误、把剩下的丢掉，
    进程多用的不到上限的两倍（读到的 16 MB 加上读的缓冲），远小于这一行本身。"""
    before = peak_memory_kb(wire.process.pid)
    wire.process.stdin.write(b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": "' + b"x" * (120 << 20) + b'"}}\n')
    wire.process.stdin.flush()
    assert wire.reply(60) == {"jsonrpc": "2.0", "id": None, "error": {
        "code": INVALID_REQUEST, "message": "无效的请求：一行超过了 16 MB，没有读完就丢掉了（一行只放一个消息）"}}
    assert wire.note().startswith("拒绝了一个请求（-32600 无效的请求：一行超过了 16 MB")
    wire.still_serving()
    grown_mb = (peak_memory_kb(wire.process.pid) - before) / 1024
    assert grown_mb < 32, f"读这一行时进程多用了 {grown_mb:.0f} MB"
