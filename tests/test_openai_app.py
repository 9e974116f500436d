"""servers/openai_app.py 在进程里（Starlette 的测试客户端，tests/serving.InProcess）：聊天窗口收到的回答——
annotations、截断、--demo 的来源链接、问题太长的错误码。要真进程、真客户端的在 tests/test_openai_server.py。"""
import json
import re
import threading

import pytest
import requests

from sourced_answers.core.questions import MAX_QUESTION
from sourced_answers.outputs.render import DEMO_SOURCES_SERVED
from tests.scripted_model import Hold
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


def test_an_answer_ending_in_whitespace_streams_the_same_text_as_the_whole_reply(backends, cache):
    """官方 openai 客户端，流式和不流式：所有 delta.content 接起来和 message.content 一字不差（回答末尾的空白两边都没有）。"""
    backends.reset()
    app = InProcess(backends.env(cache))
    try:
        client = app.openai_client()
        messages = [{"role": "user", "content": "家用 NAS 怎么选"}]
        whole = client.chat.completions.create(model="trailing-space", messages=messages)
        chunks = list(client.chat.completions.create(model="trailing-space", messages=messages, stream=True))
    finally:
        app.close()
    content = whole.choices[0].message.content
    streamed = "".join(chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices)
    assert streamed == content
    assert "[3]。\n\n来源：" in content  # 回答末尾的空白不在任何一边


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


# Open WebUI 0.12.4 的后台任务的样子（“### Task:” 开头，要的 JSON 格式，对话记录每条一行 “USER: …”“ASSISTANT: …”）
HISTORY = "<chat_history>\nUSER: 家用 NAS 怎么选？\nASSISTANT: 至少选两盘位 [1]。\n</chat_history>"
TITLE_TASK = ("### Task:\nGenerate a concise title summarizing the chat history.\n"
              "### Output:\nJSON format: { \"title\": \"your concise title here\" }\n" + HISTORY)
TAGS_TASK = ("### Task:\nGenerate 1-3 broad tags categorizing the main themes of the chat history.\n"
             "### Output:\nJSON format: { \"tags\": [\"tag1\", \"tag2\", \"tag3\"] }\n" + HISTORY)
FOLLOW_UPS_TASK = ("### Task:\nPredict 3-5 useful messages this user might naturally send next.\n"
                   "### Output:\nJSON format: { \"follow_ups\": [\"Suggested next message 1\"] }\n" + HISTORY)


def content_of(response, stream=False):
    if stream:
        return "".join(event["choices"][0]["delta"].get("content") or "" for event in stream_events(response))
    return response.json()["choices"][0]["message"]["content"]


def as_open_webui_reads(content, name):
    """Open WebUI 读后台任务的回答的办法：从第一个 { 到最后一个 } 当作 JSON，取出任务要的键。"""
    return json.loads(content[content.find("{"):content.rfind("}") + 1]).get(name)


@pytest.mark.parametrize("stream", [False, True])
def test_an_open_webui_background_task_asks_the_model_alone_and_costs_no_search(backends, cache, stream):
    backends.reset()
    app = InProcess(backends.env(cache))
    try:
        response = app.post("/chat/completions", {**conversation(("user", TAGS_TASK)), "stream": stream})
    finally:
        app.close()
    assert response.status_code == 200
    assert backends.metaso.requests == []
    assert backends.model.requests[-1]["body"]["messages"] == [{"role": "user", "content": TAGS_TASK}]
    if not stream:
        assert "verification" not in response.json() and "citations" not in response.json()
    content = content_of(response, stream)
    assert content and "来源：" not in content
    assert app.lines[-1].endswith("聊天程序的后台任务：只问模型，没有搜索")


@pytest.mark.parametrize("stream", [False, True])
def test_an_open_webui_title_is_the_first_question_and_costs_no_model_call(backends, cache, stream):
    backends.reset()
    app = InProcess(backends.env(cache))
    try:
        response = app.post("/chat/completions", {**conversation(("user", TITLE_TASK)), "stream": stream})
    finally:
        app.close()
    assert response.status_code == 200
    assert as_open_webui_reads(content_of(response, stream), "title") == "家用 NAS 怎么选"
    assert backends.model.requests == [] and backends.metaso.requests == []
    assert app.lines[-1].endswith("聊天程序的后台任务：起标题，用对话里的第一个问题做标题，没有问模型")


@pytest.mark.parametrize(("task", "name"), [(TAGS_TASK, "tags"), (FOLLOW_UPS_TASK, "follow_ups")])
def test_tags_and_follow_ups_reach_open_webui_as_the_model_wrote_them(backends, cache, task, name):
    backends.reset()
    app = InProcess(backends.env(cache))
    try:
        response = app.post("/chat/completions", {**conversation(("user", task)), "model": "answers-and-tasks",
                                                  "max_completion_tokens": 1000})
    finally:
        app.close()
    assert response.status_code == 200
    value = as_open_webui_reads(content_of(response), name)
    assert isinstance(value, list) and value and all(isinstance(item, str) for item in value)


# ---------- 回答优先：后台任务等正在做的回答（一个模型一次只回答一个时，先到的后台任务会让回答排在它后面） ----------

def asked_in_background(app, body):
    """在另一个线程里发一个请求；返回线程和放回应的列表。守护线程：测试没过时不拖住 pytest 退出。"""
    replies = []
    thread = threading.Thread(target=lambda: replies.append(app.post("/chat/completions", body)), daemon=True)
    thread.start()
    return thread, replies


def sent_to_model(backends):
    """模型服务收到的每个对话请求的最后一条消息。"""
    return [request["body"]["messages"][-1]["content"] for request in backends.model.requests]


@pytest.mark.parametrize("stream", [False, True])
def test_a_background_task_sent_during_an_answer_reaches_the_model_after_the_answer(backends, cache, stream):
    backends.reset()
    app = InProcess(backends.env(cache))
    backends.model.hold = hold = Hold()
    try:
        answering, answers = asked_in_background(app, {**asked("家用 NAS 怎么选"), "stream": stream})
        assert hold.arrived.wait(10)  # 回答正在请模型回答
        tagging, tags = asked_in_background(app, conversation(("user", TAGS_TASK)))
        assert app.tasks_waiting(1)  # 后台任务进了服务，在等
        assert TAGS_TASK not in sent_to_model(backends)
        hold.release()
        answering.join(60)
        tagging.join(60)
    finally:
        hold.release()
        app.close()
    assert answers[0].status_code == 200 and tags[0].status_code == 200
    assert sent_to_model(backends)[-1] == TAGS_TASK and len(sent_to_model(backends)) == 2
    [line] = [line for line in app.lines if "后台任务" in line]
    assert "等回答做完等了" in line and line.endswith("只问模型，没有搜索")


def test_a_background_task_waits_for_several_answers_in_progress(backends, cache):
    backends.reset()
    app = InProcess(backends.env(cache))
    backends.model.hold = hold = Hold()
    try:
        first, _ = asked_in_background(app, asked("家用 NAS 怎么选"))
        second, _ = asked_in_background(app, asked("RAID5 至少要几块盘"))
        assert hold.arrivals(2)  # 两个回答都在请模型回答
        tagging, tags = asked_in_background(app, conversation(("user", TAGS_TASK)))
        assert app.tasks_waiting(1)
        assert TAGS_TASK not in sent_to_model(backends)
        hold.release()
        for thread in (first, second, tagging):
            thread.join(60)
    finally:
        hold.release()
        app.close()
    assert tags[0].status_code == 200 and sent_to_model(backends)[-1] == TAGS_TASK


def test_a_title_task_during_an_answer_is_answered_at_once(backends, cache):
    backends.reset()
    app = InProcess(backends.env(cache))
    backends.model.hold = hold = Hold()
    try:
        answering, _ = asked_in_background(app, asked("家用 NAS 怎么选"))
        assert hold.arrived.wait(10)
        titling, titles = asked_in_background(app, conversation(("user", TITLE_TASK)))
        titling.join(10)
        answered_while_the_model_was_busy = bool(titles)
        hold.release()
        answering.join(60)
    finally:
        hold.release()
        app.close()
    assert answered_while_the_model_was_busy
    assert as_open_webui_reads(content_of(titles[0]), "title") == "家用 NAS 怎么选"


def test_a_background_task_that_waited_too_long_still_runs(backends, cache, monkeypatch):
    from sourced_answers.servers import background
    monkeypatch.setattr(background, "TASK_WAIT_SECONDS", 0.1)
    backends.reset()
    app = InProcess(backends.env(cache))
    backends.model.hold = hold = Hold()
    try:
        answering, _ = asked_in_background(app, asked("家用 NAS 怎么选"))
        assert hold.arrived.wait(10)
        tagging, tags = asked_in_background(app, conversation(("user", TAGS_TASK)))
        # 回答还在请模型回答（一直没有放行），后台任务等够了上限，照样去问模型
        assert hold.arrivals(2) and TAGS_TASK in sent_to_model(backends)
        hold.release()
        answering.join(60)
        tagging.join(60)
    finally:
        hold.release()
        app.close()
    assert tags[0].status_code == 200


def test_a_background_task_whose_client_left_while_waiting_costs_no_model_call(backends, cache):
    backends.reset()
    app = InProcess(backends.env(cache))
    backends.model.hold = hold = Hold()
    try:
        answering, _ = asked_in_background(app, asked("家用 NAS 怎么选"))
        assert hold.arrived.wait(10)
        probes = len(backends.model.probes)
        leaving = app.asked_then_left("/v1/chat/completions", conversation(("user", TAGS_TASK)))
        assert app.tasks_waiting(1)
        leaving.leave()
        leaving.done.result(60)  # 不等回答做完：客户端一走，它就不等了
        assert app.tasks_waiting(0)
        gave_up_while_the_answer_was_in_progress = answering.is_alive()
        hold.release()
        answering.join(60)
    finally:
        hold.release()
        app.close()
    assert gave_up_while_the_answer_was_in_progress
    assert TAGS_TASK not in sent_to_model(backends)
    assert len(backends.model.probes) == probes  # 连付费之前的检查也没有做
    left = [line for line in app.lines if "后台任务" in line]
    assert len(left) == 1 and " 499 " in left[0] and "客户端没等回答完就断开了" in left[0]


def test_a_request_marked_with_the_x_task_header_is_a_background_task_too(backends, cache):
    backends.reset()
    app = InProcess(backends.env(cache))
    try:
        response = app.post("/chat/completions", conversation(("user", "给这段对话起个标题")),
                            headers={"X-Task": "title_generation"})
    finally:
        app.close()
    assert response.status_code == 200 and backends.metaso.requests == []
