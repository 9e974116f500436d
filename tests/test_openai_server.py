"""--serve：OpenAI 兼容的服务。聊天窗口用官方的 openai 客户端问这个服务，后面是模拟秘塔和脚本模型服务。

协议、错误、流式、密钥、访问日志都在本进程里测：整个应用（门加接口）经 Starlette 的测试客户端请求（tests/serving.InProcess），
官方客户端的请求也经它交给应用，不起进程、不开端口；一个模块一个应用（测试之间只重置模拟秘塔和脚本模型服务）。
真的服务进程（python answer_with_sources.py --serve）只留给要它的几件事：信号、真的连接（原样的请求行、走掉的客户端）、
监听时说的话，以及官方客户端走真的网络。每个测试结束时看一遍服务新写的行：没有报错堆栈，没有密钥。
"""
import errno
import json
import re
import signal
import socket
import threading
import time

import openai
import pytest
import requests

from answer_with_sources import answer_question
from sourced_answers.outputs.render import AGENT, CHAT
from sourced_answers.servers import openai_server
from tests.scripted_model import SCRIPTS
from tests.serving import (
    ACCESS,
    KEYS,
    SERVER_KEY,
    Backends,
    InProcess,
    ServerProcess,
    run_with_debug,
    shows,
    the_only_line,
)
from tests.support import CANARY_KEY, NAS_RECORD_SOURCES, WRONG_NUMBER, cli_env, run_cli

QUESTION = "家用 NAS 怎么选"
NAS_TITLES = ["家用 NAS 选购要点", "RAID1 和 RAID5 的区别", "NAS 远程访问安全", "NAS 硬盘怎么选：CMR 与 SMR",
              "家庭数据的 3-2-1 备份原则"]


@pytest.fixture(scope="module")
def server(backends, tmp_path_factory):
    """模块共用的服务：整个应用在本进程里。"""
    app = InProcess(backends.env(tmp_path_factory.mktemp("server-cache")))
    yield app
    app.close()


@pytest.fixture
def served(server, backends):
    """模块的服务，后端刚重置过；测试结束时它新写的行里没有堆栈、没有密钥。"""
    backends.reset()
    mark = server.mark()
    yield server
    written = "\n".join(server.since(mark))
    assert "Traceback" not in written and not shows(written, *KEYS)


def client_for(process, key="no-key-needed"):
    """官方的 openai 客户端：本进程里的应用经测试客户端，真的服务进程走网络。"""
    if isinstance(process, InProcess):
        return process.openai_client(key)
    return openai.OpenAI(base_url=process.base, api_key=key, max_retries=0, timeout=60)


@pytest.fixture
def own_app(own_backends, tmp_path):
    """own_app(参数…)：本进程里一个自己的应用（后端是 own_backends）；测试结束时关掉。"""
    made = []

    def making(*flags):
        made.append(InProcess(own_backends.env(tmp_path / "cache"), *flags))
        return made[-1]
    yield making
    for app in made:
        app.close()


@pytest.fixture
def client(served):
    return client_for(served)


def ask(client, question=QUESTION, **options):
    return client.chat.completions.create(model=options.pop("model", "good"),
                                          messages=[{"role": "user", "content": question}], **options)


def terminal(backends, question=QUESTION, model="good", *flags):
    """同一个问题在终端上（命令行，同一个模拟秘塔和模型服务）的输出。"""
    return run_cli(question, *flags, env=cli_env(backends.metaso, backends.model, ANS_MODEL=model))


def error_of(raised):
    """openai 客户端抛出的错误 → 服务回的错误对象（{"message", "type", "code"}）。"""
    body = raised.value.body
    assert isinstance(body, dict) and set(body) >= {"message", "type", "code"}, body
    assert "Traceback" not in json.dumps(body) and not shows(json.dumps(body, ensure_ascii=False), *KEYS)
    return body


# ---------- 回答：和终端上看到的一样，外加 Perplexity 式的附件 ----------

def marks_of(content, annotations):
    """每条 annotation 指着的文字和它的编号、链接：(content[start:end], url)。"""
    return [(content[a["url_citation"]["start_index"]:a["url_citation"]["end_index"]], a["url_citation"]["url"])
            for a in annotations]


def test_answer_content_is_the_terminal_answer_with_sources_as_markdown_links_and_the_verdict(client, backends):
    response = ask(client)
    content = response.choices[0].message.content
    shown = terminal(backends).stdout
    answer = shown[:shown.index("\n\n来源：")]
    assert content.startswith(answer + "\n\n来源：\n\n")
    origin = backends.metaso.origin
    assert f"\n1. [家用 NAS 选购要点]({origin}/page/1)\n" in content
    assert f"\n5. [家庭数据的 3\\-2\\-1 备份原则]({origin}/page/5)（未被引用）\n" in content \
        or f"\n5. [家庭数据的 3-2-1 备份原则]({origin}/page/5)（未被引用）\n" in content
    assert content.rstrip().endswith("✓ 引用核对通过")
    assert "--json" not in content and "--fix" not in content


def test_annotations_point_exactly_at_every_citation_mark_in_the_content(client, backends):
    message = ask(client).choices[0].message
    content, annotations = message.content, [a.model_dump() for a in message.annotations]  # 官方客户端认得的字段
    origin = backends.metaso.origin
    pointed = marks_of(content, annotations)
    # 回答里的 [n]，和来源列表每一项的编号 n.（有序列表：Open WebUI 不把它换成来源的标题）
    assert all(text in (f"[{url.rsplit('/', 1)[1]}]", f"{url.rsplit('/', 1)[1]}.") and url.startswith(origin)
               for text, url in pointed)
    in_answer = [a for a in annotations if a["url_citation"]["start_index"] < content.index("\n\n来源：")]
    assert len(in_answer) == content[:content.index("\n\n来源：")].count("[")  # 回答里的每个 [n] 一条
    # 按编号排：按到达的先后给来源编号的窗口（Open WebUI）把 [n] 对到第 n 条来源
    urls = list(dict.fromkeys(url for _, url in pointed))
    assert urls == [f"{origin}/page/{n}" for n in range(1, 6)]
    assert {a["url_citation"]["title"] for a in annotations} == set(NAS_TITLES)


def test_citations_search_results_and_verification_sit_beside_the_answer(client, backends):
    extra = ask(client).model_extra
    record = json.loads(terminal(backends, QUESTION, "good", "--json").stdout)
    assert extra["citations"] == [f"{backends.metaso.origin}/page/{n}" for n in range(1, 6)]
    assert [(item["title"], item["url"]) for item in extra["search_results"]] == list(zip(NAS_TITLES, extra["citations"], strict=True))
    assert extra["search_results"][0]["date"] == record["sources"][0]["date"]
    assert extra["verification"] == {**{name: record[name] for name in ("passed", "problems", "claims", "unused")},
                                     "truncated": False, "query": QUESTION}
    assert extra["verification"]["passed"] is True and extra["verification"]["unused"] == [4, 5]


def test_the_request_model_picks_the_local_model_and_its_verdict(client, backends):
    response = ask(client, model="wrong-source")
    assert response.model == "wrong-source"
    assert backends.model.requests[-1]["body"]["model"] == "wrong-source"
    assert response.model_extra["verification"]["passed"] is False
    content = response.choices[0].message.content
    shown = terminal(backends, QUESTION, "wrong-source").stdout
    assert shown.index("⚠ 引用核对没通过") and content.index("⚠ 引用核对没通过")
    assert content.startswith(shown[:shown.index("\n\n来源：")])
    # 终端上的结论最后提示可以 --fix；聊天窗口里没有命令行的参数，其余一样（每个问题一项）
    assert "可以加 --fix" in shown and "--fix" not in content
    problems = response.model_extra["verification"]["problems"]
    assert problems and content.count("\n- 第 ") == len(problems)


def test_an_answer_cut_off_at_max_tokens_says_so_in_finish_reason_content_and_verification(client):
    for stream in (False, True):
        chunks = [ask(client, model="cut-short", max_tokens=77, stream=True)] if stream else []
        if stream:
            chunks = list(chunks[0])
            finish, extra = chunks[-1].choices[0].finish_reason, chunks[-1].model_extra
            content = "".join(chunk.choices[0].delta.content or "" for chunk in chunks)
        else:
            response = ask(client, model="cut-short", max_tokens=77)
            finish, extra = response.choices[0].finish_reason, response.model_extra
            content = response.choices[0].message.content
        assert finish == "length"
        assert extra["verification"]["truncated"] is True
        assert "⚠ 回答到了长度上限（max_tokens 77）被截断了：最后一段没有写完" in content


def test_streamed_deltas_add_up_to_the_whole_reply_and_the_last_chunk_carries_annotations_and_attachments(
        client, backends):
    whole = ask(client).choices[0].message
    chunks = list(ask(client, stream=True))
    text = "".join(chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices)
    assert text == whole.content
    assert len(chunks) > 5  # 边生成边发：回答是一段一段来的，不是最后一整块
    last = chunks[-1]
    assert last.choices[0].finish_reason == "stop"
    assert last.choices[0].delta.content is None  # 只有 annotations 的一块不带 content（Cherry Studio 会跳过空的）
    assert last.choices[0].delta.model_extra["annotations"] == [a.model_dump() for a in whole.annotations]
    assert last.model_extra["citations"] == [f"{backends.metaso.origin}/page/{n}" for n in range(1, 6)]
    assert [item["title"] for item in last.model_extra["search_results"]] == NAS_TITLES
    assert last.model_extra["verification"]["passed"] is True
    assert all("verification" not in chunk.model_extra for chunk in chunks[:-1])


def test_a_stream_is_server_sent_events_ending_with_done(served):
    with served.client.stream("POST", "/v1/chat/completions", timeout=60,
                              json={"model": "good", "stream": True, "messages": [{"role": "user", "content": QUESTION}]}) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        events = [line for line in r.iter_lines() if line]
    assert all(line.startswith("data: ") for line in events)
    assert events[-1] == "data: [DONE]"
    assert json.loads(events[-2][6:])["choices"][0]["finish_reason"] == "stop"
    assert [json.loads(line[6:])["object"] for line in events[:-1]] == ["chat.completion.chunk"] * (len(events) - 1)


def test_models_lists_what_the_model_server_has_and_excerpts(client):
    names = [model.id for model in client.models.list()]
    assert sorted(names) == sorted([*SCRIPTS, "excerpts"])


def test_the_excerpts_model_answers_with_the_sources_own_sentences(client, backends):
    """聊天程序里选 excerpts：不请模型写，从资料里摘出最相关的几句原话，说清楚是摘录，核对照常。"""
    before = len(backends.model.requests)
    reply = client.chat.completions.create(model="excerpts", messages=[{"role": "user", "content": "家用 NAS 怎么选"}])
    content = reply.choices[0].message.content
    assert "摘录" in content and "至少选两盘位" in content and "✓ 引用核对通过" in content
    assert len(backends.model.requests) == before  # 没有请模型


def test_verify_returns_the_verify_json_record(served, tmp_path):
    saved = {"answer": WRONG_NUMBER, "sources": NAS_RECORD_SOURCES[:2]}
    (tmp_path / "saved.json").write_text(json.dumps(saved, ensure_ascii=False), encoding="utf-8")
    expected = json.loads(run_cli("--verify", str(tmp_path / "saved.json"), "--json", env=cli_env()).stdout)
    reply = served.post("/verify", saved)
    assert reply.status_code == 200
    assert reply.json() == expected
    assert reply.json()["passed"] is False and "说的是“三块”" in json.dumps(reply.json()["problems"], ensure_ascii=False)


def test_verify_with_lone_surrogate_escapes_gives_the_python_api_record(served):
    """请求体里的 "\\ud800" 转义和 Python API 交进来的单独代理码位是同一个结果：都换成 U+FFFD，回应编得出来。"""
    from answer_with_sources import verify_answer
    answer, sources = "RAID1 用两块盘\ud800互为镜像 [1]。", [{"title": "RAID\udfff", "text": "RAID1 用两块盘互为镜像。"}]
    reply = served.client.post("/v1/verify", content=json.dumps({"answer": answer, "sources": sources}).encode(),
                               headers={"Content-Type": "application/json"})
    assert reply.status_code == 200
    assert reply.json() == verify_answer(answer, sources).record and "\ufffd" in reply.json()["answer"]


# ---------- 出错：OpenAI 的错误对象、合适的状态码、中文说明 ----------

def test_a_body_that_is_not_json_is_400(served):
    reply = served.client.post("/v1/chat/completions", content=b'{"messages": [',
                               headers={"Content-Type": "application/json"})
    assert reply.status_code == 400
    assert reply.json()["error"]["type"] == "invalid_request_error"
    assert "请求体不是合法的 JSON" in reply.json()["error"]["message"]


@pytest.mark.parametrize("body", [b'{"messages": [], "max_tokens": NaN}', b'{"max_tokens": Infinity}',
                                  b'{"temperature": 1e400}'])
def test_nan_and_infinity_in_a_body_are_not_json(served, body):
    reply = served.client.post("/v1/chat/completions", content=body, headers={"Content-Type": "application/json"})
    assert reply.status_code == 400 and reply.json()["error"]["code"] == "invalid_json"
    assert "请求体不是合法的 JSON" in reply.json()["error"]["message"]


@pytest.mark.parametrize("body, said", [
    (b"", "第 1 列这里应该是一个值"),
    (b'{\n  "model": "good",\n  "messages": [,]\n}', "第 3 行第 16 列这里应该是一个值"),
    (b'{"messages": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "嵌套太深"),
    (b'{"max_tokens": ' + b"9" * 5000 + b"}", "里面有太长的数字"),
    (b"\xef\xbb\xbf{}", "第 1 列开头有 BOM（字节顺序标记）"),
])
def test_why_a_body_is_not_json_is_said_in_chinese(served, body, said):
    """以前说明里是 Python 的英文：maximum recursion depth exceeded while decoding a JSON array、
    Exceeds the limit (4300 digits) for integer string conversion、Expecting value: line 1 column 1 (char 0)。"""
    reply = served.client.post("/v1/chat/completions", content=body, headers={"Content-Type": "application/json"})
    message = reply.json()["error"]["message"]
    assert reply.status_code == 400 and message == f"请求体不是合法的 JSON：{said}"


def test_no_user_message_is_400(client, backends):
    with pytest.raises(openai.BadRequestError) as raised:
        client.chat.completions.create(model="good", messages=[{"role": "system", "content": "你是 NAS 专家"}])
    assert raised.value.status_code == 400
    assert "messages 里没有 user 消息" in error_of(raised)["message"]
    assert backends.metaso.requests == []


@pytest.mark.parametrize("tokens", [0, 1_000_001])
def test_max_tokens_out_of_range_is_400(client, backends, tokens):
    with pytest.raises(openai.BadRequestError) as raised:
        ask(client, max_tokens=tokens)
    assert "max_tokens 应是 1 到 1000000 之间的整数" in error_of(raised)["message"]
    assert backends.metaso.requests == []


@pytest.mark.parametrize(("field", "value", "said"), [
    ("max_completion_tokens", 0, "max_completion_tokens 应是 1 到 1000000 之间的整数，收到 0"),
    ("max_tokens", "77", "max_tokens 应是 1 到 1000000 之间的整数，收到 '77'"),
    ("model", "qwen2.5\n✓ 引用核对通过", "model 的值里有换行、控制字符或读不懂的字节"),
], ids=["max-completion-tokens", "digits-as-text", "model-with-a-newline"])
def test_a_request_setting_is_checked_by_its_declaration_naming_the_field_the_client_wrote(served, backends, field,
                                                                                          value, said):
    """请求体里的设置和命令行按同一份声明检查（core/settings.py）：客户端写的是 max_completion_tokens，说明里也是它；
    模型名和 --model 一样不能有换行（不然说明里能伪造出一行“✓ 引用核对通过”）。"""
    body = {"model": "good", "messages": [{"role": "user", "content": QUESTION}], field: value}
    reply = served.post("/chat/completions", body)
    assert reply.status_code == 400 and reply.json()["error"]["code"] == "invalid_value"
    assert said in reply.json()["error"]["message"]
    assert backends.metaso.requests == [] and backends.model.requests == []


def test_a_question_of_only_punctuation_is_400_before_any_search(client, backends):
    with pytest.raises(openai.BadRequestError) as raised:
        ask(client, "？？！……。")
    assert "没有文字" in error_of(raised)["message"]
    assert backends.metaso.requests == []


def test_metaso_failing_is_502_with_the_reason(client, backends):
    backends.metaso.fail_with("search", "503")
    with pytest.raises(openai.InternalServerError) as raised:
        ask(client, "RAID5 至少几块盘")
    assert raised.value.status_code == 502
    assert "秘塔返回 HTTP 503" in error_of(raised)["message"]


def test_an_unknown_path_is_a_404_error_object(client, served):
    with pytest.raises(openai.NotFoundError) as raised:
        client.get("/embeddings", cast_to=object)
    assert "没有这个接口" in error_of(raised)["message"]
    wrong_method = served.client.get("/v1/chat/completions")
    assert wrong_method.status_code == 405 and "没有这个接口" in wrong_method.json()["error"]["message"]


# ---------- 密钥：回答、流的每一块、错误、标准错误里都不出现 ----------

def test_a_key_the_model_echoes_is_masked_in_the_answer_and_the_attachments(served, backends):
    # echo-auth-hidden 把请求头里的 ANS_API_KEY 回显进回答，每两个字之间夹着零宽空格
    reply = served.post("/chat/completions", {"model": "echo-auth-hidden", "messages": [{"role": "user", "content": QUESTION}]})
    assert reply.status_code == 200
    assert "回显" in reply.json()["choices"][0]["message"]["content"]
    assert "mk-***" in reply.json()["choices"][0]["message"]["content"]
    assert not shows(reply.text, *KEYS) and not shows(json.dumps(reply.json(), ensure_ascii=False), *KEYS)


def stream_of(served, model):
    """问一次流式的问题：(整个流的原文, 每个 data: {…} 事件解析出的对象)。"""
    with served.client.stream("POST", "/v1/chat/completions", timeout=60,
                              json={"model": model, "stream": True,
                                    "messages": [{"role": "user", "content": QUESTION}]}) as reply:
        raw = reply.read().decode("utf-8")
    return raw, [json.loads(line[6:]) for line in raw.splitlines() if line.startswith("data: {")]


def test_a_key_the_model_echoes_is_masked_in_every_streamed_chunk(served):
    raw, events = stream_of(served, "echo-auth-hidden")
    text = "".join(event["choices"][0]["delta"].get("content") or "" for event in events)
    assert "mk-***" in text
    assert not shows(text, *KEYS) and not shows(raw, *KEYS)


def test_a_key_in_an_error_the_model_sends_mid_stream_is_masked(served):
    # 模型说了两段之后在流里报错，错误的说明里回显请求头（带着 ANS_API_KEY）：流里的错误对象也要遮掉它
    raw, events = stream_of(served, "error-echoes-auth")
    assert events[-1]["error"]["message"].startswith("模型服务在回答中途报错")
    assert "Authorization: Bearer mk-***" in events[-1]["error"]["message"]
    assert raw.rstrip().endswith("data: [DONE]") and not shows(raw, *KEYS)


def test_a_key_metaso_echoes_in_its_error_is_masked(client, backends):
    backends.metaso.fail_with("search", "echo")  # 500，错误页里回显请求头（带着 METASO_API_KEY）
    with pytest.raises(openai.InternalServerError) as raised:
        ask(client, "NAS 远程访问安全吗")
    message = error_of(raised)["message"]
    assert raised.value.status_code == 502 and "Authorization: Bearer mk-***" in message
    assert not shows(message, *KEYS)


# ---------- 并发：各回各的，缓存共用 ----------

@pytest.mark.slow
def test_concurrent_requests_each_get_their_own_sources_and_verdict(own_backends, own_app, tmp_path):
    """自己的应用：这些问题不进模块共用的那个缓存（别的测试还要问秘塔）。"""
    backends, client = own_backends, client_for(own_app())
    asked = [("家用 NAS 怎么选", "good"), ("RAID5 至少几块盘", "wrong-source"), ("3-2-1 备份原则是什么", "uncited"),
             ("NAS 远程访问安全吗", "echo-prompt"), ("NAS 硬盘选 CMR 还是 SMR", "good"), ("RAID1 是镜像吗", "thinker")]
    environ = cli_env(backends.metaso, backends.model, XDG_CACHE_HOME=str(tmp_path))
    expected = [answer_question(question, model=model, environ=environ) for question, model in asked]
    assert len({json.dumps(result.record["sources"]) for result in expected}) >= 4  # 问题不同，资料也不同
    backends.metaso.delay = 0.1  # 每个请求都在秘塔那里等一会儿：几个请求真的同时在回答
    replies: dict[int, object] = {}

    def one(index):
        question, model = asked[index]
        replies[index] = ask(client, question, model=model)

    threads = [threading.Thread(target=one, args=(index,)) for index in range(len(asked))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    for index, result in enumerate(expected):
        reply = replies[index]
        # Python API 的 markdown 是给智能体的：列不下的问题指向结构化结果，聊天窗口的指向 verification
        expected_content = result.markdown.replace(AGENT.all_problems_at, CHAT.all_problems_at)
        assert reply.choices[0].message.content == expected_content, asked[index]
        assert reply.model_extra["citations"] == [source["link"] for source in result.sources]
        assert reply.model_extra["verification"] == {**{name: result.record[name]
                                                        for name in ("passed", "problems", "claims", "unused")},
                                                     "truncated": False, "query": asked[index][0]}


def test_the_same_question_twice_costs_one_search(client, backends):
    first = ask(client, "NAS 待机功耗高吗")
    calls = len(backends.metaso.requests)
    assert calls >= 1
    second = ask(client, "NAS 待机功耗高吗")
    assert len(backends.metaso.requests) == calls
    assert second.choices[0].message.content == first.choices[0].message.content


# ---------- 访问日志 ----------

def test_one_access_line_per_request_with_method_path_status_and_ms(client, served):
    mark = served.mark()
    ask(client)
    client.models.list()
    served.client.get("/v2/nothing")
    # 流式的回答读完了：客户端收全了，是 200（不是“没等回答完就断开了”的 499）
    list(client.chat.completions.create(model="good", stream=True, messages=[{"role": "user", "content": QUESTION}]))
    lines = served.access_lines(mark, 4)
    assert [ACCESS.fullmatch(line).group(1, 2, 3, 5) for line in lines] == [
        ("POST", "/v1/chat/completions", "200", f"搜索：{QUESTION}"), ("GET", "/v1/models", "200", None),
        ("GET", "/v2/nothing", "404", None), ("POST", "/v1/chat/completions", "200", f"搜索：{QUESTION}")]
    assert len(served.since(mark)) == 4


@pytest.mark.slow
def test_a_path_with_a_newline_or_escape_cannot_forge_a_log_line(start):
    """原样的请求行（测试客户端会先把路径编码好）：真的服务进程、真的连接。"""
    served = start()
    mark = served.mark()  # 刚起的服务：还没有访问日志
    with socket.create_connection(("127.0.0.1", served.port), timeout=10) as raw:
        raw.sendall(b"GET /v1/x%0APOST%20/v1/chat/completions%20200%201%20ms%1B[2K HTTP/1.1\r\n"
                    b"Host: 127.0.0.1\r\nConnection: close\r\n\r\n")
        assert raw.recv(100).startswith(b"HTTP/1.1 404")
    # 这个请求的访问日志写完了：以状态码、毫秒结尾的那一行（伪造成功的话它前面还会多出一行）
    assert served.wait_for_line(lambda line: re.search(r" 404 \d+ ms$", line), 10, mark)
    new = served.since(mark)
    assert len(new) == 1 and new[0].startswith("GET /v1/x\\nPOST /v1/chat/completions 200 1 ms\\x1b[2K 404 ")
    assert "\x1b" not in new[0] and not any(line.startswith("POST /v1/chat/completions 200") for line in new)


# ---------- 各起各的服务进程：参数不同、后端要出事 ----------

@pytest.fixture
def own_backends():
    made = Backends()
    yield made
    made.close()


@pytest.fixture
def start(own_backends, tmp_path):
    """start(参数…, 环境变量=…)：起一个自己的服务进程（后端是 own_backends）；测试结束时不管成败都停掉它。"""
    started = []

    def starting(*flags, **extra):
        started.append(ServerProcess(own_backends.env(tmp_path / "cache", **extra), *flags))
        return started[-1]
    yield starting
    for process in started:
        process.stop()


@pytest.mark.slow
def test_a_model_server_that_went_away_is_503(own_backends, start):
    process = start()
    own_backends.model.close()
    with pytest.raises(openai.InternalServerError) as raised:
        ask(client_for(process))
    assert raised.value.status_code == 503 and "连不上模型服务" in error_of(raised)["message"]
    assert process.stop() == 130  # 模型服务没了，服务照样能停下


@pytest.mark.slow
def test_a_request_over_the_time_limit_is_504(own_backends, own_app):
    process = own_app("--timeout", "1")
    own_backends.metaso.delay = 1.5  # 秘塔慢
    with pytest.raises(openai.APIStatusError) as raised:
        ask(client_for(process), "RAID5 至少几块盘")
    assert raised.value.status_code == 504 and "总时限 1 秒" in error_of(raised)["message"]
    own_backends.metaso.delay = 0
    with pytest.raises(openai.APIStatusError) as raised:  # 模型慢（slow-answer 5 秒才回答）
        ask(client_for(process), "NAS 远程访问安全吗", model="slow-answer")
    assert raised.value.status_code == 504 and "总时限 1 秒" in error_of(raised)["message"]


@pytest.mark.slow
def test_a_full_server_answers_503_at_once(own_backends, own_app):
    process = own_app("--concurrency", "1", "--queue", "0")
    # 一个在秘塔那里没说出第一个字就失败的流式请求，不能多放走一个名额
    own_backends.metaso.fail_with("search", "errcode-3000", times=1)
    with pytest.raises(openai.InternalServerError):
        ask(client_for(process), "NAS 硬盘选 CMR 还是 SMR", stream=True)
    own_backends.metaso.delay = 1.0
    first = []
    calls = len(own_backends.metaso.requests)
    slow = threading.Thread(target=lambda: first.append(ask(client_for(process), "RAID5 至少几块盘")))
    slow.start()
    deadline = time.monotonic() + 10
    while len(own_backends.metaso.requests) == calls and time.monotonic() < deadline:
        time.sleep(0.02)
    with pytest.raises(openai.InternalServerError) as raised:
        ask(client_for(process), "家用 NAS 怎么选")
    assert raised.value.status_code == 503 and "服务忙" in error_of(raised)["message"]
    slow.join(30)
    assert first and "RAID5 至少三块盘" in first[0].choices[0].message.content  # 第一个照样回答完


def test_a_model_the_server_does_not_have_is_404_model_not_found(server, backends):
    with pytest.raises(openai.NotFoundError) as raised:
        ask(client_for(server), "家用 NAS 怎么选", model="qwen9:7b")
    assert error_of(raised)["code"] == "model_not_found" and "qwen9:7b" in error_of(raised)["message"]


def test_a_trailing_slash_is_404_not_a_redirect_built_from_the_host_header(server):
    answered = server.client.get("/v1/models/", follow_redirects=False)
    assert answered.status_code == 404 and "location" not in answered.headers and answered.json()["error"]
    # 别的主机名（DNS 重绑定的网页）连 404 都到不了：门先拒绝它
    rebound = server.client.get("/v1/models/", headers={"Host": "evil.example"}, follow_redirects=False)
    assert rebound.status_code == 421 and "location" not in rebound.headers and rebound.json()["error"]


def test_a_key_hidden_in_the_request_path_is_masked_in_the_access_log(server):
    mark = server.mark()
    hidden = "%E2%80%8B".join(CANARY_KEY)  # 密钥的每两个字之间一个零宽空格（URL 编码）
    server.client.get("/v1/" + hidden)
    [line] = server.access_lines(mark, 1)
    assert "mk-***" in line and not shows(line.encode().decode("unicode_escape"), CANARY_KEY), line


@pytest.mark.slow
def test_a_client_that_walks_away_from_a_stream_keeps_its_slot_until_the_work_is_done(own_backends, start):
    """客户端读了 200 就断开：后台那一步还在做，名额就还占着——以前名额马上放出去，--concurrency 1 时同时做了五个。"""
    process = start("--concurrency", "1", "--queue", "0")
    body = {"model": "slow-stream", "stream": True, "messages": [{"role": "user", "content": "RAID5 至少几块盘"}]}
    with requests.post(process.base + "/chat/completions", json=body, stream=True, timeout=30) as first:
        assert first.status_code == 200
        next(first.iter_lines())  # 收到第一块就走
    refused = requests.post(process.base + "/chat/completions", timeout=30,
                            json={**body, "messages": [{"role": "user", "content": "家用 NAS 怎么选"}]})
    assert refused.status_code == 503 and "服务忙" in refused.json()["error"]["message"]


@pytest.mark.slow
def test_verify_requests_wait_at_the_same_door(own_backends, own_app):
    """/v1/verify 也只放进 --concurrency 加 --queue 个：很长的回答同时来一堆，多出来的马上 503。"""
    process = own_app("--concurrency", "1", "--queue", "0")
    long_answer = "\n\n".join(["RAID5 至少三块盘，可以容忍一块盘损坏 [1]。"] * 3000)
    sources = [{"title": "RAID", "text": "RAID5 至少三块盘，可以容忍一块盘损坏。"}]
    statuses = []
    threads = [threading.Thread(target=lambda: statuses.append(process.post(
        "/verify", {"answer": long_answer, "sources": sources}).status_code))
        for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert 200 in statuses and 503 in statuses, statuses


@pytest.mark.parametrize("sources", [[1], [None], ["ab"], [[1, 2]]])
def test_verify_with_sources_that_are_not_objects_is_400(server, sources):
    result = server.post("/verify", {"answer": "RAID1 用两块盘互为镜像 [1]。", "sources": sources})
    assert result.status_code == 400 and "sources 的第 1 项" in result.json()["error"]["message"]


@pytest.mark.slow
def test_with_a_server_key_every_request_needs_the_bearer(own_backends, start):
    process = start(ANS_SERVER_KEY=SERVER_KEY)
    assert "要带 ANS_SERVER_KEY" in process.stderr
    bare = requests.post(process.base + "/chat/completions", timeout=30,
                         json={"messages": [{"role": "user", "content": QUESTION}]})
    assert bare.status_code == 401 and "Authorization: Bearer" in bare.json()["error"]["message"]
    with pytest.raises(openai.AuthenticationError) as raised:
        ask(client_for(process, "sv-WRONG-KEY-0123456789abcdef"))
    assert raised.value.status_code == 401 and "没有带对这个服务的密钥" in error_of(raised)["message"]
    assert own_backends.metaso.requests == []
    right = ask(client_for(process, SERVER_KEY))
    assert right.model_extra["verification"]["passed"] is True
    assert [(line.split()[0], line.split()[2]) for line in process.access_lines(1, 3)] == [
        ("POST", "401"), ("POST", "401"), ("POST", "200")]
    process.stop()
    assert not shows(process.stderr, *KEYS)


@pytest.mark.slow
@pytest.mark.parametrize("sent", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=["SIGINT", "SIGTERM", "SIGHUP"])
def test_a_signal_stops_the_server_while_a_client_still_holds_its_connection(start, sent):
    """客户端的长连接还开着（client 还在用）：服务收到信号照样退出，不等客户端先关。30 秒只是防止测试卡死的
    上限（机器忙时也远远够用；不按信号退出的服务会一直等下去）。"""
    process = start()
    client = client_for(process)
    assert ask(client).model_extra["verification"]["passed"] is True
    process.process.send_signal(sent)
    assert process.process.wait(30) == 130
    client.close()
    process.reader.join(30)
    assert process.lines[-1] == "已中断" and "Traceback" not in process.stderr


@pytest.mark.slow
@pytest.mark.parametrize("sent", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_signal_during_a_hanging_request_still_stops_within_seconds(own_backends, start, sent):
    """秘塔不回应时收到 SIGTERM、SIGHUP（终端关了）：最多等 SHUTDOWN_SECONDS 秒，那个请求得到一个 503 的错误对象，
    进程退出。"""
    process = start()
    own_backends.metaso.fail_with("search", "hang")
    replies = []
    waiting = threading.Thread(target=lambda: replies.append(requests.post(
        process.base + "/chat/completions", json={"messages": [{"role": "user", "content": QUESTION}]}, timeout=60)))
    waiting.start()
    deadline = time.monotonic() + 10
    while not own_backends.metaso.requests and time.monotonic() < deadline:
        time.sleep(0.02)
    process.process.send_signal(sent)
    # 秘塔一直不回应：服务退出、那个请求得到 503，都发生在秘塔回应之前（它永远不回应），按事件的先后就能判断；
    # 30 秒只是防止测试卡死的上限
    assert process.process.wait(30) == 130
    waiting.join(30)
    assert replies and replies[0].status_code == 503
    assert "服务正在停止" in replies[0].json()["error"]["message"]
    process.reader.join(30)
    assert process.lines[-1] == "已中断" and "Traceback" not in process.stderr


@pytest.mark.slow
def test_a_stream_cut_by_a_signal_says_the_answer_is_unfinished(start):
    """回答流到一半时服务要停：流里最后是一个错误对象（没说完、没核对）和 [DONE]，不是悄悄断掉、像个完整的回答。"""
    process = start()
    events = []

    def read():
        with requests.post(process.base + "/chat/completions", stream=True, timeout=60,
                           json={"model": "slow-stream", "stream": True,
                                 "messages": [{"role": "user", "content": QUESTION}]}) as reply:
            try:
                for line in reply.iter_lines(decode_unicode=True):
                    if line:
                        events.append(line)
            except requests.exceptions.ChunkedEncodingError:
                pass  # [DONE] 之后连接随服务一起关掉
    reading = threading.Thread(target=read)
    reading.start()
    deadline = time.monotonic() + 10
    while len(events) < 3 and time.monotonic() < deadline:
        time.sleep(0.02)
    process.process.send_signal(signal.SIGINT)
    assert process.process.wait(30) == 130  # 防止测试卡死的上限，不是速度要求（服务最多等 SHUTDOWN_SECONDS 秒）
    reading.join(10)
    assert events[-1] == "data: [DONE]"
    assert "服务正在停止，这个回答没有说完、没有核对" in json.loads(events[-2][6:])["error"]["message"]
    assert not any("引用核对通过" in line for line in events)


# ---------- 监听之前：配置和模型服务都得能用（本进程里跑命令行；真要监听就算失败） ----------

@pytest.fixture
def no_listening(monkeypatch):
    """不许监听：走到绑端口那一步就记下来并失败（测试不会挂在一个真的服务上）。"""
    listened = []

    def refuse(host, port):
        listened.append((host, port))
        raise AssertionError("不该开始监听")
    monkeypatch.setattr(openai_server, "listening_socket", refuse)
    return listened


def test_a_missing_model_stops_before_listening_and_before_any_search(fake_metaso, model_server, no_listening):
    done = run_cli("--serve", "0", env=cli_env(fake_metaso, model_server, ANS_MODEL="qwen2.5:72b"))
    assert done.returncode == 3 and "ollama pull qwen2.5:72b" in the_only_line(done.stderr)
    assert no_listening == [] and fake_metaso.requests == []


@pytest.mark.slow
def test_a_missing_model_in_a_real_process_is_one_line_and_no_traceback_even_with_debug(fake_metaso, model_server):
    done = run_with_debug("--serve", "127.0.0.1:0", env=cli_env(fake_metaso, model_server, ANS_MODEL="qwen2.5:72b"))
    assert done.returncode == 3 and "Traceback" not in done.stderr
    assert "ollama pull qwen2.5:72b" in the_only_line(done.stderr) and fake_metaso.requests == []


def test_a_public_address_without_a_server_key_stops_before_anything(fake_metaso, model_server, no_listening):
    done = run_cli("--serve", "0.0.0.0:0", env=cli_env(fake_metaso, model_server, ANS_MODEL="good"))
    assert done.returncode == 2 and "ANS_SERVER_KEY" in done.stderr and "0.0.0.0" in done.stderr
    assert no_listening == [] and fake_metaso.requests == [] and model_server.probes == []


@pytest.mark.parametrize(("flags", "named"), [
    (["--serve", "70000"], "--serve"),
    (["--serve", "x:y"], "--serve"),
    (["--serve", "8000", "家用 NAS 怎么选"], "--serve"),
    (["--serve", "8000", "--json"], "--json"),
    (["--serve", "8000", "--mcp"], "--mcp"),
    (["--concurrency", "2", "家用 NAS 怎么选"], "--concurrency"),
])
def test_bad_serving_flags_are_usage_errors_naming_the_flag(fake_metaso, model_server, no_listening, flags, named):
    done = run_cli(*flags, env=cli_env(fake_metaso, model_server, ANS_MODEL="good"))
    assert done.returncode == 2 and named in the_only_line(done.stderr)
    assert no_listening == [] and fake_metaso.requests == []


@pytest.mark.parametrize(("error", "said"), [
    (OSError(errno.EADDRINUSE, "Address already in use"), "端口 8000 已经被别的程序占用了"),
    (OSError(errno.EACCES, "Permission denied"), "没有权限，1024 以下的端口要管理员权限"),
    (OSError(errno.EADDRNOTAVAIL, "Cannot assign requested address"), "不是这台机器的地址"),
    (socket.gaierror(socket.EAI_NONAME, "Name or service not known"), "解析不出地址"),
], ids=["in-use", "permission", "not-available", "unknown-name"])
def test_a_port_that_cannot_be_bound_is_said_in_chinese_with_the_flag(error, said):
    """绑不上端口的每种原因（真的绑端口的在 tests/test_serve_socket.py；以 root 运行时低端口绑得上，只能在这里看那句话）。"""
    port = 80 if error.errno == errno.EACCES else 8000
    message = openai_server.bind_problem("127.0.0.1", port, error)
    assert message.startswith(f"--serve 监听不了 127.0.0.1:{port}：") and said in message
    assert "系统错误" not in message and str(error.errno) not in message.replace(str(port), "")


# ---------- 请求体的上限（本进程里的 Starlette 应用） ----------

def app_with(env, **serve):
    from dataclasses import replace

    from starlette.testclient import TestClient

    from sourced_answers.api.config import build_settings
    from sourced_answers.cli.parser import build_parser
    from sourced_answers.servers.openai_app import Service, build_app
    settings = build_settings(build_parser("answer-with-sources").parse_args(["--serve", "0"]), env)
    options = replace(settings.run.serve, **serve)
    return TestClient(build_app(Service(settings, options, lambda line: None)))


def test_a_body_over_the_documented_limit_is_413(fake_metaso, model_server):
    app = app_with(cli_env(fake_metaso, model_server, ANS_MODEL="good"))
    limit = 16 * 1024 * 1024
    big = json.dumps({"model": "good", "messages": [{"role": "user", "content": "NAS" * (limit // 3)}]})
    reply = app.post("/v1/chat/completions", content=big.encode(), headers={"Content-Type": "application/json"})
    assert reply.status_code == 413
    assert reply.json()["error"]["code"] == "request_too_large" and f"最多 {limit} 个字节" in reply.json()["error"]["message"]
    assert fake_metaso.requests == []


def test_a_body_without_a_length_is_cut_off_at_the_limit_too(fake_metaso, model_server):
    app = app_with(cli_env(fake_metaso, model_server, ANS_MODEL="good"), max_body=1000)

    def pieces():
        yield b'{"messages": [{"role": "user", "content": "'
        for _ in range(100):
            yield "家用 NAS 怎么选".encode() * 10
        yield b'"}]}'
    reply = app.post("/v1/chat/completions", content=pieces())
    assert reply.status_code == 413 and "超过 1000 个字节" in reply.json()["error"]["message"]
    assert fake_metaso.requests == []
