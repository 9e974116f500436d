"""--mcp 按协议回答格式不对的请求（issue 37）：每一行都有 JSON-RPC 规定的错误（-32700、-32600、-32602），
认得出 id 就带上、认不出是 null；标准错误上写一行中文（遮过密钥）。

read_line 是一行字节 → 交给 SDK 的消息或一个 Refusal，在本进程里测。"""
import json

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

from sourced_answers.servers.mcp_stdio import Refusal, frame_of, in_chinese, read_line, refusal_note
from tests.serving import shows
from tests.support import CANARY_KEY

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
    "notification-params-string": (b'{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": "x"}',
                                   INVALID_PARAMS, None, "参数不对：params 应是对象"),
}


# ---------- 一行 → 消息或错误（本进程） ----------

@pytest.mark.parametrize(("line", "code", "request_id", "message"), MALFORMED.values(), ids=MALFORMED.keys())
def test_a_malformed_line_gets_the_error_the_spec_names(line, code, request_id, message):
    assert read_line(line) == Refusal(code, message, request_id)


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


def test_an_ordinary_frame_is_the_sdk_encoding_on_one_line():
    response = JSONRPCResponse(jsonrpc="2.0", id=2, result={"text": "第一行\n第二行"})
    assert frame_of(response) == response.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"


def test_the_sdk_english_errors_are_said_in_chinese():
    missing = JSONRPCError(jsonrpc="2.0", id=5, error=ErrorData(code=METHOD_NOT_FOUND, message="Method not found",
                                                                data="foo/bar"))
    assert in_chinese(missing).error == ErrorData(code=METHOD_NOT_FOUND, message="没有这个方法", data="foo/bar")
    other = JSONRPCError(jsonrpc="2.0", id=5, error=ErrorData(code=-32000, message="Connection closed"))
    assert in_chinese(other) == other
