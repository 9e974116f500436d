"""粗心或不怀好意的输入：不露密钥、不丢回答、不覆盖文件、不出 traceback、付费之前就报配置错误。

每一类有人实际试过的坏输入各有一个测试，再加几个同类的兄弟；随机输入的部分在 test_fuzz.py。
"""
import json
import os
import sqlite3
import stat
import subprocess

import pytest

from sourced_answers.search.source_cache import FILE_NAME
from tests.support import CANARY_KEY, GOOD_ANSWER, HERE, NAS_RECORD_SOURCES, cli_command, cli_env, run_cli

QUESTION = "家用 NAS 怎么选"


def metaso_calls(fake):
    return sum(1 for method, path in fake.requests if method == "POST")


def saved(tmp_path, answer, **fields):
    path = tmp_path / "saved.json"
    path.write_text(json.dumps({"answer": answer, "sources": NAS_RECORD_SOURCES, **fields}, ensure_ascii=False),
                    encoding="utf-8")
    return path


# ---------- 密钥 ----------

@pytest.mark.parametrize("key", [CANARY_KEY[:10] + "\n" + CANARY_KEY[10:], CANARY_KEY[:10] + " " + CANARY_KEY[10:],
                                 CANARY_KEY + "\u3000x", "mk-密钥密钥密钥密钥密钥密钥密钥", "mk-\u200bCANARY0123456789"])
def test_malformed_key_is_refused_before_any_call_and_never_shown(fake_metaso, model_server, key):
    result = run_cli(QUESTION, env=cli_env(fake_metaso, model_server, ANS_MODEL="good", METASO_API_KEY=key))
    assert result.returncode == 2
    assert "METASO_API_KEY 的格式不对" in result.stderr and "METASO_BASE" not in result.stderr
    output = result.stdout + result.stderr
    assert all(part not in output for part in key.split() if len(part) >= 6)
    assert metaso_calls(fake_metaso) == 0 and model_server.requests == []


def test_too_short_key_is_refused_instead_of_masking_every_digit(fake_metaso, model_server):
    result = run_cli(QUESTION, env=cli_env(fake_metaso, model_server, ANS_MODEL="good", METASO_API_KEY="1"))
    assert result.returncode == 2 and "太短" in result.stderr and metaso_calls(fake_metaso) == 0


def test_short_key_that_is_not_needed_does_not_corrupt_json(tmp_path):
    result = run_cli("--verify", str(saved(tmp_path, GOOD_ANSWER)), "--json", env=cli_env(METASO_API_KEY="1"))
    record = json.loads(result.stdout)
    assert result.returncode == 0 and record["answer"] == GOOD_ANSWER and "mk-***" not in result.stdout


def test_short_key_that_is_not_needed_does_not_corrupt_the_review_page(tmp_path):
    page = tmp_path / "page.html"
    result = run_cli("--verify", str(saved(tmp_path, GOOD_ANSWER)), "--html", str(page),
                     env=cli_env(METASO_API_KEY="1", ANS_API_KEY="2"))
    assert result.returncode == 0
    text = page.read_text(encoding="utf-8")
    assert "mk-***" not in text and 'href="#src-1">[1]</a>' in text


# ---------- 回答不丢、文件不被覆盖 ----------

@pytest.mark.parametrize("mode", [[], ["--json"]])
def test_failing_judge_keeps_the_paid_answer_and_exits_3(fake_metaso, model_server, mode):
    result = run_cli(QUESTION, "--judge", "server-error-json", "--judge-all", *mode,
                     env=cli_env(fake_metaso, model_server, ANS_MODEL="good"))
    assert result.returncode == 3
    assert "评判模型 server-error-json" in result.stderr and "CUDA out of memory" in result.stderr
    if mode:
        record = json.loads(result.stdout)
        assert record["answer"] == GOOD_ANSWER and "CUDA out of memory" in record["judge"]["error"]
    else:
        assert result.stdout.startswith(GOOD_ANSWER) and "✓ 引用核对通过" in result.stdout


def test_failing_judge_in_verify_keeps_every_verdict_and_is_not_asked_again(tmp_path, model_server):
    later = "RAID1 是镜像，两块盘存同样的数据 [2]。"
    path = tmp_path / "saved.jsonl"
    path.write_text("\n".join(json.dumps({"answer": answer, "sources": NAS_RECORD_SOURCES}, ensure_ascii=False)
                              for answer in (GOOD_ANSWER, later, later)) + "\n", encoding="utf-8")
    result = run_cli("--verify", str(path), "--json", "--judge", "server-error-text", "--judge-all",
                     env=cli_env(None, model_server))
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert result.returncode == 3 and len(records) == 3 and all(r["passed"] for r in records)
    assert result.stderr.count("评判模型 server-error-text") == 1
    asked = [json.dumps(r["body"], ensure_ascii=False) for r in model_server.requests]
    assert asked and not any("这句话：RAID1 是镜像" in body for body in asked)  # 出错之后，剩下的回答不再问评判模型


def test_html_that_is_the_verify_input_is_refused(tmp_path):
    path = saved(tmp_path, GOOD_ANSWER)
    before = path.read_bytes()
    for target in (str(path), str(tmp_path / "." / "saved.json")):
        result = run_cli("--verify", str(path), "--html", target, env=cli_env())
        assert result.returncode == 2 and "不能覆盖输入" in result.stderr and result.stdout == ""
    os.link(path, tmp_path / "hard.json")
    assert run_cli("--verify", str(path), "--html", str(tmp_path / "hard.json"), env=cli_env()).returncode == 2
    assert path.read_bytes() == before


def test_html_onto_a_fifo_or_a_device_is_refused(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for target in (str(fifo), os.devnull, str(tmp_path)):
        result = run_cli("--verify", str(saved(tmp_path, GOOD_ANSWER)), "--html", target, env=cli_env())
        assert result.returncode == 2 and "审阅页" in result.stderr
    assert stat.S_ISFIFO(fifo.stat().st_mode) and stat.S_ISCHR(os.stat(os.devnull).st_mode)


def test_html_in_a_missing_directory_is_refused_before_paying(fake_metaso, model_server, tmp_path):
    result = run_cli(QUESTION, "--html", str(tmp_path / "nope" / "page.html"),
                     env=cli_env(fake_metaso, model_server, ANS_MODEL="good"))
    assert result.returncode == 2 and "不存在" in result.stderr and metaso_calls(fake_metaso) == 0


# ---------- 空的回答从不通过 ----------

@pytest.mark.parametrize("answer", ["", "   \n\n ", "<think>想了很久 [1]</think>", "<think>没想完"])
def test_empty_saved_answer_never_passes(tmp_path, answer):
    result = run_cli("--verify", str(saved(tmp_path, answer)), "--json", env=cli_env())
    record = json.loads(result.stdout)
    assert result.returncode == 1 and not record["passed"]
    assert [p["kind"] for p in record["problems"]] == ["empty_answer"]


# ---------- 不出 traceback ----------

@pytest.mark.parametrize("url", ["http://[::1", "http://[::1]:abc", "http://127.0.0.1:0", "http://127.0.0.1:1\nx",
                                 "http://127.0.0.1:11434?key=1", "http://127.0.0.1:11434/#top",
                                 "http://exa\tmple:1", "http://127.0.0.1:99999999999999999999"])
def test_broken_ollama_url_is_a_usage_error(fake_metaso, model_server, url):
    result = run_cli(QUESTION, env=cli_env(fake_metaso, model_server, ANS_MODEL="good", OLLAMA_URL=url))
    assert result.returncode == 2 and "OLLAMA_URL" in result.stderr and metaso_calls(fake_metaso) == 0


def test_question_that_is_not_utf8_is_a_usage_error(fake_metaso, model_server):
    result = run_cli("家用 NAS 怎么选".encode("gbk").decode("utf-8", "surrogateescape"),
                     env=cli_env(fake_metaso, model_server, ANS_MODEL="good"))
    assert result.returncode == 2 and "不是有效的 UTF-8" in result.stderr and metaso_calls(fake_metaso) == 0


@pytest.mark.slow
def test_gbk_bytes_on_the_real_command_line(fake_metaso, model_server):
    """真正的进程收到 GBK 编码的参数字节（终端是 GBK 时就是这样）。"""
    env = cli_env(fake_metaso, model_server, ANS_MODEL="good", LC_ALL="C.UTF-8")
    command = [os.fsencode(part) for part in cli_command()] + ["家用 NAS 怎么选".encode("gbk")]
    done = subprocess.run(command, env=env, cwd=HERE, capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
    stderr = done.stderr.decode("utf-8", "replace")
    assert done.returncode == 2 and "Traceback" not in stderr and "UTF-8" in stderr


@pytest.mark.parametrize("model, expected", [("parts", 0), ("content-number", 3), ("content-object", 3),
                                             ("choices-object", 3), ("usage-strings", 0), ("truncated", 3)])
@pytest.mark.parametrize("mode", ["--stream", "--no-stream"])
def test_odd_model_replies_never_crash(fake_metaso, model_server, model, expected, mode):
    result = run_cli(QUESTION, mode, env=cli_env(fake_metaso, model_server, ANS_MODEL=model))
    if model == "choices-object" and mode == "--stream":
        expected = 0  # 这个脚本只在非流式的回答里放坏掉的 choices
    assert result.returncode == expected, result.stderr
    if expected == 3:
        assert "回答" in result.stderr and "地址" not in result.stderr  # 半路断开不是“地址不能用”
    else:
        assert GOOD_ANSWER.split("[1]")[0] in result.stdout


def test_eval_with_string_usage_prints_the_table(fake_metaso, model_server, tmp_path):
    questions = tmp_path / "q.txt"
    questions.write_text(QUESTION + "\n", encoding="utf-8")
    result = run_cli("--eval", str(questions), "--models", "usage-strings", env=cli_env(fake_metaso, model_server))
    assert result.returncode == 0, result.stderr
    assert "usage-strings | 1 | 1 | 100%" in result.stdout


@pytest.mark.parametrize("content, expected", [
    ("[" * 100_000 + "]" * 100_000, "嵌套太深"),
    ('{"answer": "a [1]", "sources": [{"text": "a"}], "n": 1' + "0" * 5000 + "}", "太长的数字"),
    ('{"answer": "a", "sources": [], "question": 42}', "question 应是字符串"),
    ('{"answer": "a", "sources": [], "model": ["x"]}', "model 应是字符串"),
    ("{'answer': 'a'}", "第 2 列这里应该是用双引号括起来的字段名"),
    ('{"answer": "a",}', "这里应该是用双引号括起来的字段名"),
])
def test_hostile_saved_files_are_usage_errors_in_chinese(tmp_path, content, expected):
    path = tmp_path / "saved.json"
    path.write_text(content, encoding="utf-8")
    result = run_cli("--verify", str(path), "--html", str(tmp_path / "page.html"), env=cli_env())
    assert result.returncode == 2 and expected in result.stderr, result.stderr
    assert not (tmp_path / "page.html").exists()


@pytest.mark.parametrize("endpoint", ["search", "reader"])
def test_deeply_nested_metaso_json_is_a_service_error_not_a_crash(fake_metaso, model_server, endpoint):
    fake_metaso.fail(endpoint, "[" * 5000 + "]" * 5000)
    result = run_cli(QUESTION, "--json", env=cli_env(fake_metaso, model_server, ANS_MODEL="good"))
    assert result.returncode in (0, 1, 3)
    if endpoint == "search":
        assert result.returncode == 3 and result.stderr.splitlines()[-1].startswith("✗ 秘塔返回了无法解析的内容（HTTP 200")
    else:  # 读不了的那些网页不用，照样回答：标准错误上没有“✗”
        assert result.returncode in (0, 1) and json.loads(result.stdout)["answer"]
        assert not [line for line in result.stderr.splitlines() if line.startswith("✗")], result.stderr


def test_one_unreadable_cache_entry_is_dropped_and_the_run_goes_on(fake_metaso, model_server, cache_home):
    env = cli_env(fake_metaso, model_server, ANS_MODEL="good")
    assert run_cli(QUESTION, env=env).returncode == 0
    with sqlite3.connect(cache_home / "answer-with-sources" / FILE_NAME) as connection:
        connection.execute("UPDATE entries SET value = '{not json' WHERE kind = 'search'")
        connection.execute("UPDATE entries SET value = '42' WHERE kind = 'page'")
    for _ in range(2):
        result = run_cli(QUESTION, env=env)
        assert result.returncode == 0, result.stderr
    assert metaso_calls(fake_metaso) == 3 + 3  # 坏掉的三条各重新请求一次，之后又从缓存里读


# ---------- 标准输出 ----------

@pytest.mark.slow
@pytest.mark.parametrize("shell, code", [(">&-", 130), ("| head -c 20 >/dev/null", 130), ("> /dev/full", 2)])
def test_closed_broken_or_full_stdout_ends_without_a_traceback(tmp_path, shell, code):
    path = tmp_path / "saved.jsonl"
    path.write_text("\n".join(json.dumps({"answer": GOOD_ANSWER * 20, "sources": NAS_RECORD_SOURCES},
                                         ensure_ascii=False) for _ in range(300)) + "\n", encoding="utf-8")
    command = " ".join(f"'{part}'" for part in cli_command("--verify", str(path)))
    done = subprocess.run(["bash", "-c", f"{command} {shell}; echo \"exit=${{PIPESTATUS[0]}}\" >&2"],
                          env=cli_env(), capture_output=True, text=True, timeout=120)
    assert f"exit={code}" in done.stderr and "Traceback" not in done.stderr and "Exception" not in done.stderr
    if code == 2:
        assert "写不进标准输出：磁盘已满" in done.stderr


@pytest.mark.slow
def test_a_question_with_stdout_closed_from_the_start_pays_for_nothing(fake_metaso, model_server):
    """>&-：回答没有地方打印，秘塔和模型一次也不请求，退出码 130，不打堆栈。"""
    command = " ".join(f"'{part}'" for part in cli_command(QUESTION))
    done = subprocess.run(["bash", "-c", f"{command} >&-"], env=cli_env(fake_metaso, model_server, ANS_MODEL="good"),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 130 and "Traceback" not in done.stderr
    assert fake_metaso.requests == [] and model_server.requests == []
    assert "标准输出是关着的" in done.stderr


@pytest.mark.slow
def test_stdout_closed_from_the_start_still_writes_the_page_the_user_asked_for(fake_metaso, model_server, tmp_path):
    """>&- 加 --html：付了费的回答不能丢，审阅页照样写出来。"""
    page = tmp_path / "review.html"
    command = " ".join(f"'{part}'" for part in cli_command(QUESTION, "--html", str(page)))
    done = subprocess.run(["bash", "-c", f"{command} >&-"], env=cli_env(fake_metaso, model_server, ANS_MODEL="good"),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "RAID1" in page.read_text(encoding="utf-8") and "审阅页已写到" in done.stderr


@pytest.mark.slow
@pytest.mark.parametrize("encoding", ["gbk", "ascii"])
def test_a_terminal_that_is_not_utf8_gets_the_output_with_question_marks_not_silence(tmp_path, encoding):
    """GBK、ASCII 的终端写不出 ✓、⚠ 或汉字：换成“?”照样输出，退出码照旧（以前当作标准输出被关掉，什么也不打印）。"""
    saved = tmp_path / "saved.json"
    saved.write_text(json.dumps({"answer": "RAID5 至少三块盘 [1]。", "sources": [{"text": "RAID5 至少三块盘，可以容忍一块盘损坏。"}]},
                                ensure_ascii=False), encoding="utf-8")
    done = subprocess.run(cli_command("--verify", str(saved)), env=cli_env(PYTHONIOENCODING=encoding),
                          capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    shown = done.stdout.decode(encoding)
    assert "引用核对通过" in shown if encoding == "gbk" else "RAID5" in shown and "?" in shown


# ---------- 付费之前、说中文 ----------

@pytest.mark.parametrize("suffix", ["/v1", "/v1/", "/v1/chat/completions", "/chat/completions", "/v1/models"])
def test_model_url_pasted_with_an_api_path_works(fake_metaso, model_server, suffix):
    result = run_cli(QUESTION, env=cli_env(fake_metaso, model_server, ANS_MODEL="good",
                                           OLLAMA_URL=model_server.url + suffix))
    assert result.returncode == 0, result.stderr
    assert [r["path"] for r in model_server.requests] == ["/v1/chat/completions"]


def test_metaso_base_pasted_with_the_search_path_works(fake_metaso, model_server):
    result = run_cli(QUESTION, env=cli_env(fake_metaso, model_server, ANS_MODEL="good",
                                           METASO_BASE=fake_metaso.base_url + "/search"))
    assert result.returncode == 0, result.stderr


@pytest.mark.slow
def test_timeout_message_names_the_timeout_that_ran_out(fake_metaso, model_server):
    result = run_cli(QUESTION, "--no-stream", "--timeout", "1.5",
                     env=cli_env(fake_metaso, model_server, ANS_MODEL="slow-answer"))
    assert result.returncode == 3 and "--timeout" in result.stderr and "1.5 秒" in result.stderr
    assert "600 秒" not in result.stderr


@pytest.mark.slow
def test_the_probe_before_paying_respects_timeout(fake_metaso, model_server):
    """模型服务的 /v1/models 一直不回答：预检按 --timeout 放弃，说的是总时限，秘塔没有被请求（预检每个请求的超时
    不超过剩下的时间，由 test_preflight 按给请求的超时检查，不按墙上时间）。"""
    model_server.models_delay = 10
    result = run_cli(QUESTION, "--timeout", "1", env=cli_env(fake_metaso, model_server, ANS_MODEL="good"))
    assert result.returncode == 3 and "总时限 1 秒（--timeout）" in result.stderr and "Traceback" not in result.stderr
    assert fake_metaso.requests == []


@pytest.mark.parametrize("args, expected", [
    (["--j", "x"], "有歧义"), (["--demo-pages", "xx", QUESTION], "可以是"), (["--json=1", QUESTION], "不带取值"),
    (["--size"], "需要一个取值"), (["--bogus", QUESTION], "不认识的参数")])
def test_argparse_speaks_chinese(args, expected):
    result = run_cli(*args, env=cli_env())
    assert result.returncode == 2 and expected in result.stderr
    assert not any(word in result.stderr for word in ("ambiguous", "choose from", "ignored explicit", "expected"))


def test_connection_errors_are_described_in_chinese(model_server):
    result = run_cli(QUESTION, env=cli_env(None, model_server, ANS_MODEL="good", METASO_API_KEY=CANARY_KEY,
                                           METASO_BASE="http://127.0.0.1:9/api/v1"))
    assert result.returncode == 3 and "连接被拒绝" in result.stderr
    assert "Max retries" not in result.stderr and "Errno" not in result.stderr


@pytest.mark.parametrize("flag", ["--html", "--judge", "--judge-url", "--model", "--models", "--eval", "--verify"])
def test_empty_flag_values_are_not_silently_ignored(fake_metaso, model_server, flag):
    result = run_cli(QUESTION, f"{flag}=", env=cli_env(fake_metaso, model_server, ANS_MODEL="good"))
    assert result.returncode == 2 and f"{flag} 的值是空的" in result.stderr and metaso_calls(fake_metaso) == 0


@pytest.mark.parametrize("question", ["\x1b[2J", "-", "？？？", "\u200e\u202e", " \t ", "\x00\x07"])
def test_question_without_words_is_not_paid_for(fake_metaso, model_server, question):
    result = run_cli("--", question, env=cli_env(fake_metaso, model_server, ANS_MODEL="good"))
    assert result.returncode == 2 and metaso_calls(fake_metaso) == 0


def test_control_characters_are_removed_from_the_question(fake_metaso, model_server):
    result = run_cli("家用\x1b[31m NAS\x07 怎么选", "--json", env=cli_env(fake_metaso, model_server, ANS_MODEL="good"))
    assert result.returncode == 0 and json.loads(result.stdout)["question"] == "家用 NAS 怎么选"


@pytest.mark.parametrize("value", ["relative/cache", "./x", "~/cache"])
def test_relative_xdg_cache_home_is_ignored(fake_metaso, model_server, tmp_path, monkeypatch, value):
    monkeypatch.chdir(tmp_path)
    env = cli_env(fake_metaso, model_server, ANS_MODEL="good", XDG_CACHE_HOME=value, HOME=str(tmp_path / "home"))
    result = run_cli(QUESTION, env=env)
    assert result.returncode == 0, result.stderr
    assert set(os.listdir(tmp_path)) - {"home", "cache"} == set()  # 当前目录里什么也没建
    assert (tmp_path / "home" / ".cache" / "answer-with-sources" / FILE_NAME).exists()


def test_help_goes_to_the_given_output():
    result = run_cli("-h", env=cli_env())
    assert result.returncode == 0 and "用法：" in result.stdout and result.stderr == ""


def test_unreadable_verify_file_is_described_in_chinese(tmp_path):
    for path, expected in ((tmp_path / "nope.json", "没有这个文件或目录"), (tmp_path, "这是一个目录")):
        result = run_cli("--verify", str(path), env=cli_env())
        assert result.returncode == 2 and expected in result.stderr, result.stderr
