"""servers/openai_app.py 在进程里（Starlette 的测试客户端，tests/serving.InProcess）：聊天窗口收到的回答——
annotations、截断、--demo 的来源链接、问题太长的错误码。要真进程、真客户端的在 tests/test_openai_server.py。"""
import json

import pytest
import requests

from sourced_answers.core.questions import MAX_QUESTION
from sourced_answers.outputs.render import DEMO_SOURCES_SERVED
from tests.serving import InProcess


@pytest.fixture
def cache(tmp_path):
    return tmp_path / "cache"


def asked(question="家用 NAS 怎么选", **options):
    return {"model": options.pop("model", "good"), "messages": [{"role": "user", "content": question}], **options}


def stream_events(response):
    return [json.loads(line[6:]) for line in response.text.splitlines()
            if line.startswith("data: ") and line != "data: [DONE]"]


def test_demo_source_links_open_while_the_server_runs_and_say_they_are_fictional(backends, cache):
    backends.reset()
    app = InProcess(backends.env(cache), "--demo")
    try:
        reply = app.post("/chat/completions", asked()).json()
        assert DEMO_SOURCES_SERVED in reply["choices"][0]["message"]["content"]
        link = reply["citations"][0]
        page = requests.get(link, timeout=5)
        assert page.status_code == 200 and reply["search_results"][0]["title"] in page.text
        again = app.post("/chat/completions", asked("RAID5 至少几块盘")).json()
        assert requests.get(again["citations"][0], timeout=5).status_code == 200  # 前一个回答的链接也还在
        assert requests.get(link, timeout=5).status_code == 200
    finally:
        app.close()
    with pytest.raises(requests.ConnectionError):
        requests.get(link, timeout=5)  # 服务停了，演示服务也关了


def test_a_question_over_the_limit_is_400_with_its_own_code_before_any_search(backends, cache):
    backends.reset()
    app = InProcess(backends.env(cache))
    try:
        response = app.post("/chat/completions", asked("问" * (MAX_QUESTION + 1)))
    finally:
        app.close()
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "question_too_long"
    assert str(MAX_QUESTION) in response.json()["error"]["message"]
    assert backends.metaso.requests == []


def test_a_streamed_reply_ends_with_one_annotations_chunk_without_content(backends, cache):
    backends.reset()
    app = InProcess(backends.env(cache))
    try:
        events = stream_events(app.post("/chat/completions", asked(stream=True)))
        whole = app.post("/chat/completions", asked()).json()
    finally:
        app.close()
    last = events[-1]["choices"][0]
    assert set(last["delta"]) == {"annotations"} and last["finish_reason"] == "stop"
    assert last["delta"]["annotations"] == whole["choices"][0]["message"]["annotations"]
    content = "".join(event["choices"][0]["delta"].get("content") or "" for event in events)
    assert content == whole["choices"][0]["message"]["content"]
    for note in last["delta"]["annotations"]:
        citation = note["url_citation"]
        assert content[citation["start_index"]:citation["end_index"]].startswith(("[", "【"))
