"""密钥写成渲染出来才认得出的样子（HTML 实体、夹着空标签、Markdown 强调、全角字母）：每道门都遮掉，用的是同一个
遮挡（core.masking）。

参照的读法（tests/test_masking.reveals）和程序的实现无关：渲染一遍以后还找得到密钥，就算露出来了。"""
import json

import pytest

from sourced_answers.core.masking import REDACTED
from tests.serving import MODEL_KEY, Backends, InProcess
from tests.support import cli_env, run_cli
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
