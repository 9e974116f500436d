"""--judge：只问支持分拿不准的句子、两个方向都能改结论、--judge-all、Bespoke-MiniCheck 的问法；评判模型同意、不同意、说英文、先想再答、答非所问、出错、没有这个模型、连不上、拖过 --timeout。"""
import json
import time

import pytest

from sourced_answers.checker import check_answer, support_model
from sourced_answers.steps.judge import parse_verdict
from tests.support import (
    GOOD_ANSWER,
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
    # 只读思考之后的回答（模板写了开头的 <think>、标签大小写、带空白）
    ("是</think>不是", False), ("…是的。</think>不是", False), ("Yes</think>No", False), ("<THINK>想</THINK>否", False),
    ("<think >是吗</think >是", True), ("<think>是的，资料支持", None),
    # 两个意见都说了：没有意见
    ("是……不是", None), ("是的。不支持", None), ("Yes … not supported", None), ("Yes and no", None),
    ("Yes, but the claim is not supported.", None), ("否。是的", None), ("是或否", None),
    ("**是**\n\n不过严格说，这句话没有依据。", None), ("是的，但资料里找不到证据。", None),
    ("Yes. However there is no direct evidence for it.", None),
    # 解释里的字不是相反的意见
    ("否。资料只说 RAID1 支持镜像", False), ("是。不过资料没有说价格", True), ("答案：否", False), ("Not supported.", False),
    ("不完全支持", False), ("不过是", None), ("不确定", None), ("是否", None), ("是不是", None),
])
def test_replies_are_parsed_robustly(reply, verdict):
    assert parse_verdict(reply) is verdict


# 支持分拿不准（落在询问区间里）的两句：一句支持分放过了，一句标出了
UNSURE_PASSED = "NAS 的盘位越多越好，建议四盘位 [1]。"
UNSURE_FLAGGED = "RAID5 重建阵列很快，不会影响使用 [2]。"
CONFIDENTLY_WRONG = "不要把 NAS 的管理界面直接暴露到公网 [4]。"  # 出自资料 3，资料 4 讲硬盘：支持分几乎是 0
UNSURE_ANSWER = GOOD_ANSWER + "\n\n" + UNSURE_PASSED + UNSURE_FLAGGED


def verify(tmp_path, model_server, judge, answer=GOOD_ANSWER, *extra):
    path = tmp_path / "saved.json"
    path.write_text(json.dumps({"answer": answer, "sources": NAS_RECORD_SOURCES}, ensure_ascii=False), encoding="utf-8")
    return run_cli("--verify", str(path), "--judge", judge, *extra, env=cli_env(None, model_server))


def scores_of(answer):
    return {check.sentence: check.score for check in check_answer(answer, NAS).claims}


def test_the_example_sentences_sit_where_the_tests_need_them():
    low, high = support_model().judge_band
    scores = scores_of(UNSURE_ANSWER + CONFIDENTLY_WRONG)
    assert support_model().cut <= scores["NAS 的盘位越多越好，建议四盘位 [1]"] < high
    assert low <= scores["RAID5 重建阵列很快，不会影响使用 [2]"] < support_model().cut
    assert scores["不要把 NAS 的管理界面直接暴露到公网 [4]"] < low
    assert all(score >= high for sentence, score in scores_of(GOOD_ANSWER).items())


def test_confident_sentences_are_not_asked(tmp_path, model_server):
    data = json.loads(verify(tmp_path, model_server, "judge-yes", UNSURE_ANSWER, "--json").stdout)
    asked = [call["sentence"] for call in data["judge"]["calls"]]
    assert asked == ["NAS 的盘位越多越好，建议四盘位 [1]", "RAID5 重建阵列很快，不会影响使用 [2]"]
    assert data["judge"]["skipped"] == 5
    assert all(call["score"] is not None for call in data["judge"]["calls"])


def test_the_judge_clears_a_lexical_flag_in_the_uncertain_band(tmp_path, model_server):
    assert not check_answer(UNSURE_ANSWER, NAS).passed  # 支持分自己标出了 UNSURE_FLAGGED
    result = verify(tmp_path, model_server, "judge-yes", UNSURE_ANSWER, "--json")
    data = json.loads(result.stdout)
    assert result.returncode == 0 and data["passed"] and data["problems"] == []
    flagged = [c for c in data["claims"] if c["sentence"].startswith("RAID5 重建阵列很快")]
    assert flagged[0]["status"] == "supported"


def test_the_judge_flags_both_unsure_sentences_once_each(tmp_path, model_server):
    data = json.loads(verify(tmp_path, model_server, "judge-no", UNSURE_ANSWER, "--json").stdout)
    assert [(p["kind"], p["sentence"]) for p in data["problems"]] == [
        ("judge_unsupported", "NAS 的盘位越多越好，建议四盘位 [1]"),
        ("judge_unsupported", "RAID5 重建阵列很快，不会影响使用 [2]")]  # 原来的 weak_support 不重复列出
    assert "它的回答：否" in data["problems"][0]["message"]


def test_the_judge_cannot_clear_a_confident_flag_or_a_certain_rule(tmp_path, model_server):
    answer = UNSURE_ANSWER + "\n\n" + CONFIDENTLY_WRONG + "\n\nRAID5 至少四块盘，可以容忍一块盘损坏 [2]。"
    data = json.loads(verify(tmp_path, model_server, "judge-yes", answer, "--json").stdout)
    assert [p["kind"] for p in data["problems"]] == ["weak_support", "number_mismatch"]
    assert len(data["judge"]["calls"]) == 2


def test_judge_all_asks_every_cited_sentence_and_decides_each(tmp_path, model_server):
    answer = GOOD_ANSWER + "\n\n" + CONFIDENTLY_WRONG + "\n\nRAID5 至少四块盘，可以容忍一块盘损坏 [2]。"
    data = json.loads(verify(tmp_path, model_server, "judge-yes", answer, "--json", "--judge-all").stdout)
    assert len(data["judge"]["calls"]) == 6 and data["judge"]["skipped"] == 0  # 数字对不上的那句不问
    assert [p["kind"] for p in data["problems"]] == ["number_mismatch"]  # 数字规则它撤不掉


def test_a_wrong_number_is_not_cleared_even_when_the_score_is_unsure(tmp_path, model_server):
    # 支持分拿不准、同时数字也对不上（资料 2 没有“12 小时”）：结论是 weak_support，但评判模型说“是”也不能让它通过
    answer = "RAID5 重建阵列很快，12 小时就能完成，不会影响使用 [2]。"
    [check] = check_answer(answer, NAS).claims
    assert check.certain and check.status == "weak_support"
    data = json.loads(verify(tmp_path, model_server, "judge-yes", answer, "--json", "--judge-all").stdout)
    assert data["judge"]["calls"] == [] and not data["passed"]


def test_a_sentence_written_twice_is_asked_once(tmp_path, model_server):
    answer = UNSURE_FLAGGED + "\n\n" + UNSURE_FLAGGED
    data = json.loads(verify(tmp_path, model_server, "judge-no", answer, "--json").stdout)
    assert len(data["judge"]["calls"]) == 1
    # 同一段话写了两遍本身也是一个问题（repeated），评判模型的意见在两处各换成一个 judge_unsupported
    assert [(p["kind"], p["paragraph"]) for p in data["problems"]] == [("repeated", 2), ("judge_unsupported", 1),
                                                                       ("judge_unsupported", 2)]


def test_two_identical_sentences_in_one_paragraph_are_asked_once_and_flagged_each(tmp_path, model_server):
    """同一段里一字不差的两句：只问一次；评判模型说“否”，两句各换成一个 judge_unsupported，带着各自的下标
    （以前按段落和文字认，两句合成了一个问题）。"""
    answer = UNSURE_FLAGGED + UNSURE_FLAGGED
    data = json.loads(verify(tmp_path, model_server, "judge-no", answer, "--json").stdout)
    assert len(data["judge"]["calls"]) == 1
    assert [(p["kind"], p["claim"]) for p in data["problems"]] == [("repeated", 1), ("judge_unsupported", 0),
                                                                   ("judge_unsupported", 1)]
    assert [c["status"] for c in data["claims"]] == ["judge_unsupported", "judge_unsupported"]


def test_a_higher_threshold_moves_the_band_with_it(tmp_path, model_server):
    low, high = support_model().judge_band
    # 支持分很高（主语和宾语对调了，字面看不出来；“不能”改成“可以”现在由 polarity_mismatch 这条确定的规则标出）
    answer = "异地备份可以代替快照 [5]。"
    [check] = check_answer(answer, NAS).claims
    assert check.score >= high
    assert json.loads(verify(tmp_path, model_server, "judge-no", answer, "--json").stdout)["judge"]["calls"] == []
    moved = json.loads(verify(tmp_path, model_server, "judge-no", answer, "--json", "--threshold",
                              str(round(check.score - 0.05, 3))).stdout)
    assert len(moved["judge"]["calls"]) == 1 and not moved["passed"]


def test_judge_that_agrees_leaves_a_passing_answer_passing(tmp_path, model_server):
    result = verify(tmp_path, model_server, "judge-yes", GOOD_ANSWER, "--json", "--judge-all")
    data = json.loads(result.stdout)
    assert result.returncode == 0 and data["passed"]
    calls = data["judge"]["calls"]
    assert data["judge"]["model"] == "judge-yes" and len(calls) == 5
    assert all(c["verdict"] is True and c["reply"] == "是。" and c["seconds"] >= 0 for c in calls)
    assert calls[0]["sentence"] == "家用 NAS 至少选两盘位，方便做 RAID1 镜像 [1]"


def test_judge_that_disagrees_adds_flags_the_lexical_check_missed(tmp_path, model_server):
    result = verify(tmp_path, model_server, "judge-no", GOOD_ANSWER, "--json", "--judge-all")
    data = json.loads(result.stdout)
    assert result.returncode == 1 and not data["passed"]
    assert [p["kind"] for p in data["problems"]] == ["judge_unsupported"] * 5
    assert "它的回答：否" in data["problems"][0]["message"]


def test_a_passing_answer_with_only_confident_sentences_asks_nothing(tmp_path, model_server):
    result = verify(tmp_path, model_server, "judge-no", GOOD_ANSWER)
    assert result.returncode == 0
    assert "评判模型：judge-no（问了 0 句：支持 0，不支持 0，没有意见 0；支持分有把握的 5 句没有问）" in result.stdout
    assert not [r for r in model_server.requests if r["body"]["model"] == "judge-no"]


@pytest.mark.parametrize("name", ["bespoke-minicheck", "bespoke-minicheck:7b"])
def test_bespoke_minicheck_is_asked_in_its_trained_form(tmp_path, model_server, name):
    data = json.loads(verify(tmp_path, model_server, name, UNSURE_ANSWER, "--json").stdout)
    assert data["passed"] and [c["verdict"] for c in data["judge"]["calls"]] == [True, True]
    requests = [r for r in model_server.requests if r["body"]["model"] == name]
    claims = set()
    for request in requests:
        [message] = request["body"]["messages"]
        assert message["role"] == "user" and message["content"].startswith("Document: ")
        claims.add(message["content"].rsplit("\nClaim: ", 1)[1])
    assert claims == {"NAS 的盘位越多越好，建议四盘位", "RAID5 重建阵列很快，不会影响使用"}


def test_other_judges_get_our_instructions(tmp_path, model_server):
    verify(tmp_path, model_server, "judge-yes", UNSURE_ANSWER, "--json")
    request = next(r for r in model_server.requests if r["body"]["model"] == "judge-yes")
    assert "只回答“是”或“否”" in request["body"]["messages"][0]["content"]


@pytest.mark.parametrize("judge", ["judge-think", "judge-english"])
def test_thinking_or_english_no_counts_as_no(tmp_path, model_server, judge):
    data = json.loads(verify(tmp_path, model_server, judge, UNSURE_ANSWER, "--json").stdout)
    assert {c["verdict"] for c in data["judge"]["calls"]} == {False}


def test_rambling_judge_is_recorded_as_no_opinion(tmp_path, model_server):
    result = verify(tmp_path, model_server, "judge-ramble", GOOD_ANSWER, "--judge-all")
    assert result.returncode == 0
    assert "评判模型：judge-ramble（问了 5 句：支持 0，不支持 0，没有意见 5）" in result.stdout


def test_text_output_names_the_judge(tmp_path, model_server):
    result = verify(tmp_path, model_server, "judge-no", UNSURE_ANSWER)
    assert "评判模型：judge-no（问了 2 句：支持 0，不支持 2，没有意见 0；支持分有把握的 5 句没有问）" in result.stdout
    assert "评判模型认为资料 [1] 不完全支持" in result.stdout


def test_judge_errors_exit_3_naming_the_model(tmp_path, model_server):
    result = verify(tmp_path, model_server, "bad-request", UNSURE_ANSWER)
    assert result.returncode == 3
    assert result.stderr.splitlines()[-1] == ("✗ 评判模型 bad-request：模型服务返回 HTTP 400：max_tokens is too large"
                                              "（回答和字面核对的结论已经输出）")


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
    result = verify(tmp_path, model_server, "judge-hang", UNSURE_ANSWER, "--timeout", "2")
    assert result.returncode == 3 and "评判模型 judge-hang" in result.stderr
    assert time.monotonic() - started < 15


def test_question_run_with_a_judge(model_server):
    env = cli_env(None, model_server, ANS_MODEL="good")
    result = run_cli("--demo", "家用 NAS 怎么选", "--judge", "judge-no", "--judge-all", env=env)
    assert result.returncode == 1 and "请评判模型 judge-no 看每一个带引用的句子…" in result.stderr
    assert "不支持 5" in result.stdout


def test_judge_url_and_judge_all_need_judge(model_server):
    result = run_cli("--demo", "家用 NAS 怎么选", "--judge-url", "http://127.0.0.1:9", env=cli_env(None, model_server))
    assert result.returncode == 2
    result = run_cli("--demo", "家用 NAS 怎么选", "--judge-all", env=cli_env(None, model_server))
    assert result.returncode == 2 and "--judge-all 要和 --judge 一起用" in result.stderr
