"""随机输入（hypothesis）：地址、密钥、问题、保存下来的回答、模型的回复。每一个都要守住这些不变式——

  · 没有 traceback（本进程里运行，任何没接住的异常都会让测试失败）；
  · 退出码只有 0、1、2、3、130，而且意思对：2 的时候一次秘塔都没请求过；
  · 密钥（够长、像个密钥的值）从不出现在任何输出里；
  · --json 的输出永远是合法的 JSON；
  · 除了 --html 指定的页面和缓存，什么文件都不写。

生成的地址只指向本机（127.0.0.1、localhost、[::1]）或者根本不是有效地址，绝不会连到别的机器。
FUZZ_EXAMPLES=500 可以多跑一些例子。
"""
import json
import os
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support import CANARY_KEY, GOOD_ANSWER, NAS_RECORD_SOURCES, cli_env, examples, run_cli

QUESTION = "家用 NAS 怎么选"
EXIT_CODES = {0, 1, 2, 3, 130}
FUZZ = settings(max_examples=examples(40, "FUZZ_EXAMPLES"), deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12)


def metaso_calls(fake):
    return sum(1 for method, _ in fake.requests if method == "POST")


def assert_invariants(result, *, fake=None, calls_before=0, secret=None, json_output=False):
    assert result.returncode in EXIT_CODES, result.stderr
    if result.returncode == 2 and fake is not None:
        assert metaso_calls(fake) == calls_before, "配置错误之前就请求了秘塔"
    if secret and len(secret) >= 16:
        assert secret not in result.stdout + result.stderr
    if json_output and result.returncode in (0, 1):
        for line in result.stdout.split("\n")[:-1]:  # JSON Lines 只按 \n 分行（字符串里可以有 U+2028 之类）
            json.loads(line)
        assert result.stdout.endswith("\n")
    if result.returncode in (2, 3):  # 出错了就说为什么：一行“✗ …”的中文说明（本进程里的异常会直接让测试失败）
        assert any(line.startswith("✗ ") for line in result.stderr.splitlines()), result.stderr


# ---------- 地址 ----------

def url_strategy(port):
    """只会指向本机、或者根本无效的地址（不会触发对外的域名解析或连接）。"""
    schemes = st.sampled_from(["http://", "https://", "", "HTTP://", "ftp://", "javascript:", "//", "http:/"])
    hosts = st.sampled_from(["127.0.0.1", "localhost", "[::1]", "[::1", "::1", "", "-bad-", "a b", "[zz]",
                             "user:pw@127.0.0.1", "127.0.0.1\n", "127.0.0.1\x00", "[::1]x"])
    ports = st.sampled_from([f":{port}", ":9", ":0", ":abc", ":99999", "", ":", f":{port}:{port}"])
    paths = st.sampled_from(["", "/", "/v1", "/v1/", "/v1/chat/completions", "/chat/completions", "/v1/models",
                             "/api/v1/search"]) | st.text(max_size=12).map(lambda text: "/" + text)
    return st.tuples(schemes, hosts, ports, paths).map("".join)


@FUZZ
@given(data=st.data())
def test_any_model_url(fake_metaso, model_server, data):
    port = model_server.url.rsplit(":", 1)[1]
    url = data.draw(url_strategy(port))
    before = metaso_calls(fake_metaso)
    result = run_cli(QUESTION, "--json", env=cli_env(fake_metaso, model_server, ANS_MODEL="good", OLLAMA_URL=url))
    assert_invariants(result, fake=fake_metaso, calls_before=before, json_output=True)


@FUZZ
@given(data=st.data())
def test_any_metaso_base(fake_metaso, model_server, data):
    port = fake_metaso.base_url.rsplit(":", 1)[1].split("/")[0]
    url = data.draw(url_strategy(port))
    before = metaso_calls(fake_metaso)
    result = run_cli(QUESTION, "--json", env=cli_env(fake_metaso, model_server, ANS_MODEL="good", METASO_BASE=url))
    assert_invariants(result, fake=fake_metaso, calls_before=before, secret=fake_metaso.key, json_output=True)


# ---------- 密钥 ----------

keys = (st.text(alphabet=st.characters(blacklist_characters="\x00"), max_size=40)
        | st.text(alphabet=string.ascii_letters + string.digits + "-_", min_size=16, max_size=40)
        | st.builds(lambda a, b, c: a + b + c, st.just(CANARY_KEY[:8]), st.sampled_from(["\n", " ", "\t", "", "é"]),
                    st.just(CANARY_KEY[8:])))


@FUZZ
@given(key=keys)
def test_any_key(fake_metaso, model_server, key):
    before = metaso_calls(fake_metaso)
    result = run_cli(QUESTION, "--json", env=cli_env(fake_metaso, model_server, ANS_MODEL="good",
                                                     METASO_API_KEY=key))
    assert_invariants(result, fake=fake_metaso, calls_before=before, secret=key.strip(), json_output=True)
    for part in key.split():
        assert len(part) < 16 or part not in result.stdout + result.stderr


# ---------- 问题 ----------

@FUZZ
@given(question=st.text(max_size=60) | st.text(alphabet="\x1b[]\x07\u202e\u200b -？。\t\n", max_size=20))
def test_any_question(fake_metaso, model_server, question):
    before = metaso_calls(fake_metaso)
    result = run_cli("--json", "--", question, env=cli_env(fake_metaso, model_server, ANS_MODEL="good"))
    assert_invariants(result, fake=fake_metaso, calls_before=before, secret=fake_metaso.key, json_output=True)


# ---------- 保存下来的回答 ----------

def saved_records():
    sources = st.lists(st.fixed_dictionaries({"text": st.text(max_size=80) | json_values},
                                             optional={"title": json_values, "link": json_values,
                                                       "read": json_values, "cached": json_values}), max_size=4)
    records = st.fixed_dictionaries({"answer": st.sampled_from([GOOD_ANSWER, ""]) | st.text(max_size=120) | json_values,
                                     "sources": st.just(NAS_RECORD_SOURCES) | sources | json_values},
                                    optional={"question": json_values, "model": json_values})
    lines = st.lists(records.map(lambda r: json.dumps(r, ensure_ascii=False)) | st.text(max_size=30),
                     min_size=1, max_size=3).map("\n".join)
    return records.map(lambda r: json.dumps(r, ensure_ascii=False)) | lines | json_values.map(json.dumps)


@FUZZ
@given(content=saved_records() | st.binary(max_size=60).map(lambda b: b.decode("latin-1")))
def test_any_saved_answer(tmp_path_factory, content):
    folder = tmp_path_factory.mktemp("verify")
    (folder / "saved.json").write_text(content, encoding="utf-8", errors="surrogateescape")
    page = folder / "page.html"
    result = run_cli("--verify", str(folder / "saved.json"), "--json", "--html", str(page),
                     env=cli_env(METASO_API_KEY=CANARY_KEY))
    assert_invariants(result, secret=CANARY_KEY, json_output=True)
    assert result.returncode in (0, 1, 2)
    assert set(os.listdir(folder)) <= {"saved.json", "page.html"}
    assert page.exists() == (result.returncode in (0, 1))


# ---------- 模型的回复 ----------

def model_replies():
    plausible = st.fixed_dictionaries({"choices": st.lists(st.fixed_dictionaries(
        {"message": st.fixed_dictionaries({"content": json_values | st.just(GOOD_ANSWER)}) | json_values,
         "finish_reason": json_values}), max_size=2) | json_values, "usage": json_values})
    whole = (plausible | json_values).map(lambda value: (json.dumps(value), "application/json"))
    events = st.lists(st.fixed_dictionaries({"choices": st.lists(st.fixed_dictionaries(
        {"delta": st.fixed_dictionaries({"content": json_values}) | json_values, "finish_reason": json_values}),
        max_size=2) | json_values}) | json_values, max_size=5)
    stream = events.map(lambda items: ("".join(f"data: {json.dumps(item)}\n\n" for item in items)
                                       + "data: [DONE]\n\n", "text/event-stream"))
    return whole | stream | st.text(max_size=40).map(lambda text: (text, "text/plain"))


@FUZZ
@given(reply=model_replies(), mode=st.sampled_from(["--stream", "--no-stream"]))
def test_any_model_reply(fake_metaso, model_server, reply, mode):
    model_server.fuzz_reply = reply
    result = run_cli(QUESTION, "--json", mode, env=cli_env(fake_metaso, model_server, ANS_MODEL="fuzz"))
    assert_invariants(result, fake=fake_metaso, secret=fake_metaso.key, json_output=True)
    assert result.returncode in (0, 1, 3)


# ---------- 秘塔的回复 ----------

def metaso_replies():
    result = st.fixed_dictionaries({}, optional={"title": json_values, "link": json_values, "snippet": json_values,
                                                 "date": json_values})
    plausible = st.fixed_dictionaries({"webpages": st.lists(result, max_size=3) | json_values},
                                      optional={"errCode": json_values, "errMsg": json_values, "code": json_values})
    return (plausible | json_values).map(json.dumps) | st.text(max_size=40)


@FUZZ
@given(search=metaso_replies(), reader=st.text(max_size=60) | metaso_replies(),
       status=st.sampled_from([200, 200, 200, 400, 500]))
def test_any_metaso_reply(fake_metaso, model_server, search, reader, status):
    fake_metaso.fail("search", search, status=status)
    fake_metaso.fail("reader", reader, content_type="text/plain; charset=utf-8")
    result = run_cli(QUESTION, "--json", "--no-cache", env=cli_env(fake_metaso, model_server, ANS_MODEL="good"))
    assert_invariants(result, secret=fake_metaso.key, json_output=True)
    assert result.returncode in (0, 1, 3)


# ---------- 密钥里有 JSON、HTML 的特殊字符：每一种输出里都遮掉 ----------

metachar_keys = st.text(alphabet=string.ascii_letters + string.digits + "\"\\&<>'`/%;=-_", min_size=10, max_size=40).map(
    lambda text: "sk-" + text)


def encodings(key):
    """密钥在各种输出里可能的样子：原样、JSON 转义过、HTML 转义过。"""
    import html
    return {key, json.dumps(key, ensure_ascii=False)[1:-1], html.escape(key, quote=True), html.escape(key, quote=False)}


@FUZZ
@given(key=metachar_keys)
def test_a_sent_key_with_metacharacters_never_shows_in_any_output(tmp_path_factory, model_server, key):
    folder = tmp_path_factory.mktemp("keys")
    answer = f"家用 NAS 至少选两盘位，方便做 RAID1 镜像，调试信息 {key} [1]。"
    (folder / "saved.json").write_text(json.dumps({"answer": answer, "sources": NAS_RECORD_SOURCES},
                                                  ensure_ascii=False), encoding="utf-8")
    for mode in (["--json"], []):
        page, summary = folder / f"page{len(mode)}.html", folder / f"summary{len(mode)}.json"
        # --judge 和回答用同一个服务：ANS_API_KEY 这次会发出去，所以每种输出都要遮掉它
        result = run_cli("--verify", str(folder / "saved.json"), *mode, "--judge", "judge-yes", "--html", str(page),
                         "--summary", str(summary), env=cli_env(None, model_server, ANS_API_KEY=key))
        assert_invariants(result, json_output=bool(mode))
        outputs = [result.stdout, result.stderr, page.read_text(encoding="utf-8"),
                   summary.read_text(encoding="utf-8")]
        for shown in encodings(key):
            assert not any(shown in output for output in outputs), shown


def test_overlapping_keys_are_masked_longest_first(tmp_path, fake_metaso, model_server):
    # 回答的服务用 ANS_API_KEY，评判模型在另一个服务上用 ANS_JUDGE_API_KEY：两个都发出去，一个包含另一个
    short, long = "sk-OVERLAP-123456", "sk-OVERLAP-123456-EXTRA99"
    from tests.scripted_model import ScriptedModel
    judge = ScriptedModel()
    try:
        echoed = f"家用 NAS 至少选两盘位，方便做 RAID1 镜像，调试 {long} 和 {short} [1]。"
        model_server.fuzz_reply = (json.dumps({"choices": [{"message": {"content": echoed}, "finish_reason": "stop"}]},
                                              ensure_ascii=False), "application/json")
        page = tmp_path / "page.html"
        result = run_cli(QUESTION, "--json", "--html", str(page), "--judge", "judge-yes", "--judge-url", judge.url,
                         env=cli_env(fake_metaso, model_server, ANS_MODEL="fuzz", ANS_API_KEY=short,
                                     ANS_JUDGE_API_KEY=long))
        assert result.returncode in (0, 1), result.stderr
        for output in (result.stdout, result.stderr, page.read_text(encoding="utf-8")):
            assert "OVERLAP" not in output and "EXTRA99" not in output
        assert "调试 mk-*** 和 mk-***" in json.loads(result.stdout)["answer"]
    finally:
        judge.close()


def test_a_key_the_run_does_not_send_is_still_masked_in_the_json_and_the_page(tmp_path):
    # ANS_API_KEY=password：--verify 不找模型服务，这个值不发出去，可它是环境里的密钥，分享出去的页面和 JSON 里一样遮掉
    answer = "忘了密码请打开 https://example.com/password-reset 页面 [1]。"
    path = tmp_path / "saved.json"
    path.write_text(json.dumps({"answer": answer, "sources": [{"text": answer}]}, ensure_ascii=False),
                    encoding="utf-8")
    page = tmp_path / "page.html"
    result = run_cli("--verify", str(path), "--json", "--html", str(page), env=cli_env(ANS_API_KEY="password"))
    assert json.loads(result.stdout)["answer"] == answer.replace("password", "mk-***")
    shown = page.read_text(encoding="utf-8")
    assert "mk-***-reset" in shown and "password" not in shown


@pytest.mark.parametrize("where", ["page_in_missing_folder", "missing_input", "page_written", "summary_in_missing_folder"])
def test_a_key_the_run_does_not_send_is_masked_the_same_way_in_every_message(tmp_path, where):
    # 没发出去的 ANS_API_KEY 也出现在路径里：配置阶段的报错、读输入的报错、写完的提示都一样，遮掉
    key = "sk-notsent-123456"
    path = tmp_path / "saved.json"
    path.write_text(json.dumps({"answer": GOOD_ANSWER, "sources": NAS_RECORD_SOURCES}, ensure_ascii=False),
                    encoding="utf-8")
    arguments = {"page_in_missing_folder": ["--verify", str(path), "--html", str(tmp_path / "nodir" / f"{key}.html")],
                 "missing_input": ["--verify", str(tmp_path / f"missing-{key}.json")],
                 "page_written": ["--verify", str(path), "--html", str(tmp_path / f"{key}.html")],
                 "summary_in_missing_folder": ["--verify", str(path), "--summary",
                                               str(tmp_path / "nodir" / f"{key}.json")]}[where]
    result = run_cli(*arguments, env=cli_env(ANS_API_KEY=key))
    assert key not in result.stderr and "mk-***" in result.stderr, result.stderr


# ---------- 一行在哪里结束：只有 \n（\r\n 也认） ----------

record_lines = st.lists(st.sampled_from([
    json.dumps({"answer": GOOD_ANSWER, "sources": NAS_RECORD_SOURCES}, ensure_ascii=False),
    json.dumps({"answer": "家用 NAS\u2028至少选两盘位 [1]。", "sources": NAS_RECORD_SOURCES}, ensure_ascii=False),
    json.dumps({"answer": "行内有\r回车 [1]。", "sources": NAS_RECORD_SOURCES}, ensure_ascii=False),
    "", "  ", "{", "[]", "\ufeff{}"]), min_size=1, max_size=6)


@FUZZ
@given(lines=record_lines, ending=st.sampled_from(["\n", "\r\n", "\r", "\u2028", "\n\r"]),
       bom=st.booleans(), data=st.data())
def test_any_line_endings_give_the_same_verdicts_through_every_reader(tmp_path_factory, lines, ending, bom, data):
    text = ("\ufeff" if bom else "") + ending.join(lines)
    folder = tmp_path_factory.mktemp("endings")
    (folder / "in.jsonl").write_text(text, encoding="utf-8")
    from_file = run_cli("--verify", str(folder / "in.jsonl"), "--json", env=cli_env())
    from_stdin = run_cli("--verify", "-", "--json", "--jobs", str(data.draw(st.sampled_from([1, 2]))),
                         env=cli_env(), stdin=text)
    for result in (from_file, from_stdin):
        assert_invariants(result, json_output=True)
        assert result.returncode in (0, 1, 2)
    if from_file.returncode in (0, 1):  # 格式对的输入：从文件读和从标准输入读，结论一字不差
        assert from_stdin.stdout == from_file.stdout and from_stdin.returncode == from_file.returncode
