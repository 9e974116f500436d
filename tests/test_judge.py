"""--judge：评判模型同意、不同意、说英文、先想再答、答非所问、出错、没有这个模型、连不上、拖过 --timeout。"""
import json
import time

import pytest

from sourced_answers.judge import parse_verdict
from tests.support import (
    GOOD_ANSWER,
    INVENTED,
    NAS_RECORD_SOURCES,
    NAS_SOURCES,
    cli_env,
    run_cli,
)

NAS = NAS_SOURCES


@pytest.mark.parametrize("reply, verdict", [
    ("是", True), ("是。", True), ("是的，资料支持。", True), ("Yes", True), ("yes.", True), ("**Yes**", True),
    ("否", False), ("否。", False), ("不支持", False), ("不是", False), ("No", False), ("no, it does not", False),
    ("<think>想一想</think>\n否", False), ("<think>是吗</think>是", True), ("“否”", False),
    ("这个问题很有意思", None), ("", None), ("<think>只想不说</think>", None), ("Maybe", None),
])
def test_replies_are_parsed_robustly(reply, verdict):
    assert parse_verdict(reply) is verdict


def verify(tmp_path, model_server, judge, answer=GOOD_ANSWER, *extra):
    path = tmp_path / "saved.json"
    path.write_text(json.dumps({"answer": answer, "sources": NAS_RECORD_SOURCES}, ensure_ascii=False), encoding="utf-8")
    return run_cli("--verify", str(path), "--judge", judge, *extra, env=cli_env(None, model_server))


def test_judge_that_agrees_leaves_a_passing_answer_passing(tmp_path, model_server):
    result = verify(tmp_path, model_server, "judge-yes", GOOD_ANSWER, "--json")
    data = json.loads(result.stdout)
    assert result.returncode == 0 and data["passed"]
    calls = data["judge"]["calls"]
    assert data["judge"]["model"] == "judge-yes" and len(calls) == 5
    assert all(c["verdict"] is True and c["reply"] == "是。" and c["seconds"] >= 0 for c in calls)
    assert calls[0]["sentence"] == "家用 NAS 至少选两盘位，方便做 RAID1 镜像 [1]"


def test_judge_that_disagrees_adds_flags_the_lexical_check_missed(tmp_path, model_server):
    result = verify(tmp_path, model_server, "judge-no", GOOD_ANSWER, "--json")
    data = json.loads(result.stdout)
    assert result.returncode == 1 and not data["passed"]
    assert [p["kind"] for p in data["problems"]] == ["judge_unsupported"] * 5
    assert "它的回答：否" in data["problems"][0]["message"]


def test_judge_is_only_asked_about_sentences_the_lexical_check_passed(tmp_path, model_server):
    result = verify(tmp_path, model_server, "judge-yes", GOOD_ANSWER + "\n\n" + INVENTED, "--json")
    data = json.loads(result.stdout)
    assert len(data["judge"]["calls"]) == 5  # 被标出的那句不再问
    assert [p["kind"] for p in data["problems"]] == ["weak_support"]  # 评判模型说“是”也不撤销字面核对的问题


@pytest.mark.parametrize("judge", ["judge-think", "judge-english"])
def test_thinking_or_english_no_counts_as_no(tmp_path, model_server, judge):
    data = json.loads(verify(tmp_path, model_server, judge, GOOD_ANSWER, "--json").stdout)
    assert {c["verdict"] for c in data["judge"]["calls"]} == {False}


def test_rambling_judge_is_recorded_as_no_opinion(tmp_path, model_server):
    result = verify(tmp_path, model_server, "judge-ramble")
    assert result.returncode == 0
    assert "评判模型：judge-ramble（问了 5 句：支持 0，不支持 0，没有意见 5）" in result.stdout


def test_text_output_names_the_judge(tmp_path, model_server):
    result = verify(tmp_path, model_server, "judge-no")
    assert "评判模型：judge-no（问了 5 句：支持 0，不支持 5，没有意见 0）" in result.stdout
    assert "评判模型认为资料 [1] 不完全支持" in result.stdout


def test_judge_errors_exit_3_naming_the_model(tmp_path, model_server):
    result = verify(tmp_path, model_server, "bad-request")
    assert result.returncode == 3 and "评判模型 bad-request" in result.stderr and "Traceback" not in result.stderr


def test_missing_judge_model_says_how_to_pull_it(tmp_path, model_server):
    result = verify(tmp_path, model_server, "nosuch-judge")
    assert result.returncode == 3 and "评判模型 nosuch-judge" in result.stderr
    assert "ollama pull nosuch-judge" in result.stderr


def test_dead_judge_endpoint_is_a_clear_error(tmp_path, model_server):
    result = verify(tmp_path, model_server, "judge-yes", GOOD_ANSWER, "--judge-url", "http://127.0.0.1:9")
    assert result.returncode == 3 and "评判模型 judge-yes" in result.stderr and "127.0.0.1:9" in result.stderr


@pytest.mark.slow
def test_judge_that_hangs_is_ended_by_timeout(tmp_path, model_server):
    started = time.monotonic()
    result = verify(tmp_path, model_server, "judge-hang", GOOD_ANSWER, "--timeout", "2")
    assert result.returncode == 3 and "评判模型 judge-hang" in result.stderr
    assert time.monotonic() - started < 15


def test_question_run_with_a_judge(model_server):
    env = cli_env(None, model_server, ANS_MODEL="good")
    result = run_cli("--demo", "家用 NAS 怎么选", "--judge", "judge-no", env=env)
    assert result.returncode == 1 and "请评判模型 judge-no 逐句看一遍…" in result.stderr
    assert "不支持 5" in result.stdout


def test_judge_url_needs_judge(model_server):
    result = run_cli("--demo", "家用 NAS 怎么选", "--judge-url", "http://127.0.0.1:9", env=cli_env(None, model_server))
    assert result.returncode == 2
