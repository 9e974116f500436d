"""密钥写成渲染出来才认得出的样子（HTML 实体、夹着空标签、Markdown 强调、全角字母）：每道门都遮掉，用的是同一个
遮挡（core.masking）。问题或对话里出现密钥：发给秘塔之前去掉（search.gather.SourceSession），说一句，不显示密钥。

参照的读法（tests/test_masking.reveals）和程序的实现无关：渲染一遍以后还找得到密钥，就算露出来了。"""
import json

import pytest

from sourced_answers.core.masking import KEY_CUT, REDACTED
from tests.serving import MODEL_KEY, SERVER_KEY, Backends, InProcess
from tests.support import CANARY_KEY, cli_env, run_cli
from tests.test_masking import full_width, reveals


def disguised(key):
    """key 的几种写法，渲染出来（聊天程序的 Markdown、网页）读者看到的都是 key 本身。"""
    head, rest = key[:3], key[3:]
    middle = len(rest) // 2
    return {
        "十进制实体": head + f"&#{ord(rest[0])};" + rest[1:],
        "十六进制实体": head + f"&#x{ord(rest[0]):x};" + rest[1:],
        "命名实体": head + rest[:middle] + "&ZeroWidthSpace;" + rest[middle:],
        "夹着空标签": head + rest[:middle] + "<b></b>" + rest[middle:],
        "夹着强调": head + rest[:2] + "*" + rest[2:middle] + "*" + rest[middle:],
        "全角字母": full_width(key[:middle]) + key[middle:],
        "几种一起": full_width(key[:2]) + key[2:4] + f"&#{ord(key[4])};" + key[5:7] + "<i></i>" + key[7:9] + "**"
                    + key[9:],
    }


DISGUISES = disguised(MODEL_KEY)
QUESTION = "家用 NAS 怎么选"


@pytest.mark.parametrize("written", DISGUISES.values(), ids=DISGUISES.keys())
def test_each_disguise_is_what_a_renderer_shows_as_the_key(written):
    """参照先认得出每一种写法：下面的测试如果“没露出来”，不是因为参照读不出它。"""
    assert reveals(f"回显 {written} 完", MODEL_KEY) and MODEL_KEY not in written


# ---------- 遮挡：命令行的文字输出、--json、审阅页、--serve（整段和流式） ----------

def echoing(model_server, written):
    """模型把请求头里的 ANS_API_KEY 写成 written 的样子回显进回答。"""
    model_server.echo_disguise = lambda header: header.replace(MODEL_KEY, written)


@pytest.mark.parametrize("written", DISGUISES.values(), ids=DISGUISES.keys())
def test_the_command_masks_a_disguised_key_in_text_json_and_the_review_page(fake_metaso, model_server, tmp_path,
                                                                            written):
    echoing(model_server, written)
    env = cli_env(fake_metaso, model_server, ANS_MODEL="echo-auth-disguised", ANS_API_KEY=MODEL_KEY)
    for mode in ([], ["--json"]):
        page = tmp_path / f"page{len(mode)}.html"
        result = run_cli(QUESTION, "--html", str(page), "--no-stream", *mode, env=env)
        assert result.returncode in (0, 1), result.stderr
        shown = json.loads(result.stdout)["answer"] if mode else result.stdout
        assert "回显" in shown and REDACTED in shown
        assert not reveals(result.stdout + result.stderr, MODEL_KEY)
        assert not reveals(page.read_text(encoding="utf-8"), MODEL_KEY)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    backends = Backends()
    app = InProcess(backends.env(tmp_path_factory.mktemp("cache")))
    yield app, backends
    app.close()
    backends.close()


@pytest.mark.parametrize("written", DISGUISES.values(), ids=DISGUISES.keys())
def test_serve_masks_a_disguised_key_in_a_whole_reply_and_in_a_stream(served, written):
    """流式时模型的回答七个字一段：写成别的样子的密钥跨好几段，照样整段遮掉。"""
    app, backends = served
    backends.reset()
    echoing(backends.model, written)
    mark = app.mark()
    body = {"model": "echo-auth-disguised", "messages": [{"role": "user", "content": QUESTION}]}
    whole = app.post("/chat/completions", body)
    assert whole.status_code == 200
    content = whole.json()["choices"][0]["message"]["content"]
    assert "回显" in content and REDACTED in content and not reveals(whole.text, MODEL_KEY)
    with app.client.stream("POST", "/v1/chat/completions", json={**body, "stream": True}, timeout=60) as reply:
        raw = reply.read().decode("utf-8")
    events = [json.loads(line[6:]) for line in raw.splitlines() if line.startswith("data: {")]
    streamed = "".join(event["choices"][0]["delta"].get("content") or "" for event in events if event.get("choices"))
    assert "回显" in streamed and REDACTED in streamed
    assert not reveals(streamed, MODEL_KEY) and not reveals(raw, MODEL_KEY)
    assert not reveals("\n".join(app.since(mark)), MODEL_KEY)


# ---------- 问题里的密钥不发给秘塔 ----------

def sent_to_metaso(fake):
    """秘塔收到的每个请求体（原样的字节解成文字，再解开 JSON 的转义）。"""
    return "\n".join(json.dumps(json.loads(raw), ensure_ascii=False) + raw.decode("utf-8") for raw in fake.bodies)


def assert_not_sent(fake, *keys):
    sent = sent_to_metaso(fake)
    assert fake.queries, "没有搜索"
    for key in keys:
        assert not reveals(sent, key) and not reveals("\n".join(fake.queries), key)


@pytest.mark.parametrize("written", [MODEL_KEY, *DISGUISES.values()], ids=["原样", *DISGUISES.keys()])
def test_a_key_in_the_question_is_cut_before_the_command_searches(fake_metaso, model_server, written):
    result = run_cli(f"{QUESTION} {written} 要多少钱", env=cli_env(fake_metaso, model_server, ANS_MODEL="good", ANS_API_KEY=MODEL_KEY))
    assert result.returncode in (0, 1), result.stderr
    assert_not_sent(fake_metaso, MODEL_KEY)
    assert fake_metaso.queries == [f"{QUESTION} 要多少钱"]
    assert KEY_CUT in result.stderr and not reveals(result.stdout + result.stderr, MODEL_KEY)


def test_each_key_the_program_knows_is_cut_from_the_search(fake_metaso, model_server):
    """METASO_API_KEY、ANS_API_KEY、ANS_JUDGE_API_KEY、ANS_SERVER_KEY：搜索的文字里一个也不留。"""
    judge_key = "jk-JUDGE-CANARY-0123456789"
    question = f"{QUESTION} {CANARY_KEY} {MODEL_KEY} {judge_key} {SERVER_KEY}"
    env = cli_env(fake_metaso, model_server, ANS_MODEL="good", ANS_API_KEY=MODEL_KEY, ANS_JUDGE_API_KEY=judge_key,
                  ANS_SERVER_KEY=SERVER_KEY)
    result = run_cli(question, env=env)
    assert result.returncode in (0, 1), result.stderr
    assert_not_sent(fake_metaso, CANARY_KEY, MODEL_KEY, judge_key, SERVER_KEY)
    assert KEY_CUT in result.stderr


def test_a_question_without_a_key_is_searched_as_it_is_and_nothing_is_said(fake_metaso, model_server):
    result = run_cli(f"{QUESTION} sk-model 是什么", env=cli_env(fake_metaso, model_server, ANS_MODEL="good", ANS_API_KEY=MODEL_KEY))
    assert result.returncode in (0, 1), result.stderr
    assert fake_metaso.queries == [f"{QUESTION} sk-model 是什么"] and KEY_CUT not in result.stderr


def test_a_question_that_is_only_a_key_is_refused_without_searching(fake_metaso, model_server):
    result = run_cli(DISGUISES["几种一起"], env=cli_env(fake_metaso, model_server, ANS_MODEL="good", ANS_API_KEY=MODEL_KEY))
    assert result.returncode == 2 and "除了密钥没有别的文字" in result.stderr
    assert fake_metaso.queries == [] and not reveals(result.stderr, MODEL_KEY)


@pytest.mark.parametrize("written", [MODEL_KEY, DISGUISES["几种一起"]], ids=["原样", "几种一起"])
def test_serve_cuts_a_key_in_the_chat_history_and_says_so_in_the_access_log(served, written):
    """追问时搜索的文字接上之前的问题：之前的问题里的密钥一样去掉；访问日志说去掉了，不显示密钥。"""
    app, backends = served
    backends.reset()
    mark = app.mark()
    asked = f"{QUESTION}（{len(written)} 个字），我的密钥是"  # 每个参数问的不一样：不从缓存里拿上一个的结果
    reply = app.post("/chat/completions", {"model": "good", "messages": [
        {"role": "user", "content": f"{asked} {written}"},
        {"role": "assistant", "content": "至少选两盘位。"},
        {"role": "user", "content": "那呢？"}]})
    assert reply.status_code == 200, reply.text
    assert_not_sent(backends.metaso, MODEL_KEY)
    assert backends.metaso.queries == [f"{asked} 那呢？"]
    [line] = app.access_lines(mark, 1)
    assert KEY_CUT in line and not reveals(line, MODEL_KEY)


def test_mcp_and_the_python_api_cut_a_key_before_searching(tmp_path):
    from answer_with_sources import answer_question
    from tests.test_mcp_server import in_process, text_of
    backends = Backends()
    try:
        with in_process(backends, tmp_path) as session:
            result = session.call("answer_question", {"question": f"{QUESTION} {DISGUISES['全角字母']}"})
            assert KEY_CUT in text_of(result) and not reveals(text_of(result), MODEL_KEY)
            assert_not_sent(backends.metaso, MODEL_KEY)
        backends.reset()
        said: list[str] = []
        answer_question(f"{QUESTION} {DISGUISES['十进制实体']}", environ=backends.env(tmp_path / "api-cache"),
                        log=said.append)
        assert_not_sent(backends.metaso, MODEL_KEY)
        assert any(KEY_CUT in line for line in said)
    finally:
        backends.close()


def test_eval_cuts_a_key_in_a_question_of_the_file(fake_metaso, model_server, tmp_path):
    questions = tmp_path / "questions.txt"
    questions.write_text(f"{QUESTION} {DISGUISES['夹着空标签']}\nNAS 远程访问安全吗\n", encoding="utf-8")
    result = run_cli("--eval", str(questions), "--models", "good",
                     env=cli_env(fake_metaso, model_server, ANS_MODEL="good", ANS_API_KEY=MODEL_KEY))
    assert result.returncode in (0, 1), result.stderr
    assert_not_sent(fake_metaso, MODEL_KEY)
    assert KEY_CUT in result.stderr and not reveals(result.stdout + result.stderr, MODEL_KEY)
