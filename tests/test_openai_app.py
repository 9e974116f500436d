"""servers/openai_app.py 在进程里（Starlette 的测试客户端，tests/serving.InProcess）：聊天窗口收到的回答——
annotations、截断、--demo 的来源链接、问题太长的错误码。要真进程、真客户端的在 tests/test_openai_server.py。"""
import json
import re

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
        page = requests.get(link, timeout=30)
        assert page.status_code == 200 and reply["search_results"][0]["title"] in page.text
        again = app.post("/chat/completions", asked("RAID5 至少几块盘")).json()
        assert requests.get(again["citations"][0], timeout=30).status_code == 200  # 前一个回答的链接也还在
        assert requests.get(link, timeout=30).status_code == 200
    finally:
        app.close()
    with pytest.raises(requests.ConnectionError):
        requests.get(link, timeout=30)  # 服务停了，演示服务也关了


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
        pointed = content[citation["start_index"]:citation["end_index"]]
        assert pointed.startswith(("[", "【")) or re.fullmatch(r"\d+\.", pointed)  # 回答里的标记，或来源列表的编号


# ---------- 对话：追问接着上文搜索，之前的几轮给回答的模型 ----------

def conversation(*turns):
    return {"model": "good", "messages": [{"role": role, "content": text} for role, text in turns]}


RAID = "RAID1 和 RAID5 有什么区别？"


def test_a_follow_up_searches_with_the_earlier_topic_and_says_so(backends, cache):
    backends.reset()
    app = InProcess(backends.env(cache))
    try:
        first = app.post("/chat/completions", conversation(("user", RAID))).json()
        previous = first["choices"][0]["message"]["content"]
        reply = app.post("/chat/completions", conversation(
            ("user", RAID), ("assistant", previous), ("user", "那 RAID6 呢？"))).json()
    finally:
        app.close()
    assert backends.metaso.queries == [RAID, f"{RAID} 那 RAID6 呢？"]
    assert reply["verification"]["query"] == f"{RAID} 那 RAID6 呢？"
    assert app.lines[-1].endswith(f"搜索：{RAID} 那 RAID6 呢？")
    # 之前的几轮给回答的模型：之前的回答只有回答本身，没有本服务加上的来源和结论
    sent = backends.model.requests[-1]["body"]["messages"]
    assert [message["role"] for message in sent] == ["system", "user", "assistant", "user"]
    assert sent[1]["content"] == RAID and "来源：" not in sent[2]["content"]
    assert sent[2]["content"] == previous[:previous.index("\n\n来源：")]
    assert sent[3]["content"].endswith("问题：那 RAID6 呢？")


def test_the_cache_keys_on_the_standalone_question(backends, cache):
    backends.reset()
    app = InProcess(backends.env(cache))
    try:
        for earlier in (RAID, RAID, "家用 NAS 怎么选"):
            assert app.post("/chat/completions", conversation(
                ("user", earlier), ("assistant", "……"), ("user", "那 RAID6 呢？"))).status_code == 200
    finally:
        app.close()
    # 同一段对话的同一个追问第二次不再搜索；换了上文，同样的一句追问是另一个问题
    assert backends.metaso.queries == [f"{RAID} 那 RAID6 呢？", "家用 NAS 怎么选 那 RAID6 呢？"]


TITLE_TASK = ("### Task:\nGenerate a concise title summarizing the chat history.\n"
              "### Output:\nJSON format: { \"title\": \"your concise title here\" }\n"
              "<chat_history>\nUSER: 家用 NAS 怎么选\nASSISTANT: ……\n</chat_history>")


@pytest.mark.parametrize("stream", [False, True])
def test_an_open_webui_background_task_asks_the_model_alone_and_costs_no_search(backends, cache, stream):
    backends.reset()
    app = InProcess(backends.env(cache))
    try:
        response = app.post("/chat/completions", {**conversation(("user", TITLE_TASK)), "stream": stream})
    finally:
        app.close()
    assert response.status_code == 200
    assert backends.metaso.requests == []
    assert backends.model.requests[-1]["body"]["messages"] == [{"role": "user", "content": TITLE_TASK}]
    if stream:
        content = "".join(event["choices"][0]["delta"].get("content") or "" for event in stream_events(response))
    else:
        body = response.json()
        content = body["choices"][0]["message"]["content"]
        assert "verification" not in body and "citations" not in body
    assert content and "来源：" not in content
    assert app.lines[-1].endswith("聊天程序的后台任务：只问模型，没有搜索")


def test_a_request_marked_with_the_x_task_header_is_a_background_task_too(backends, cache):
    backends.reset()
    app = InProcess(backends.env(cache))
    try:
        response = app.post("/chat/completions", conversation(("user", "给这段对话起个标题")),
                            headers={"X-Task": "title_generation"})
    finally:
        app.close()
    assert response.status_code == 200 and backends.metaso.requests == []
