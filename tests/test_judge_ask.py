"""--judge-ask：问评判模型哪些句子。默认（band）和以前一样只问支持分拿不准的；risky 另外问支持分放过了、却有资料里
找不到的数字、名称或否定说法的句子；all 同 --judge-all。"""
import json

import pytest

from sourced_answers.api.config import build_settings
from sourced_answers.checker import check_answer, support_model
from sourced_answers.cli.parser import build_parser
from sourced_answers.core.errors import UsageError
from sourced_answers.core.settings import JUDGE_ASK, JudgeSettings, Settings
from tests.support import GOOD_ANSWER, NAS_RECORD_SOURCES, NAS_SOURCES, cli_env, run_cli

# 资料 2 没说“不能容忍两块”：字面几乎都在，支持分很高，否定却是资料里找不到的说法（同一处说反了的“不能容忍一块”
# 由确定的规则 polarity_mismatch 标出，评判模型不用问，见 test_a_polarity_flip_is_settled_by_the_rule_not_the_judge）
FLIPPED = "RAID5 至少三块盘，可以容忍一块盘损坏，但不能容忍两块 [2]。"
# 资料 3 只说了 Tailscale：另加的名字资料里找不到（同一处换了名字的“VPN 或 ZeroTier”由确定的规则 name_mismatch 标出）
RENAMED = "远程访问优先使用 VPN 或 Tailscale 这类组网工具，例如 ZeroTier [3]。"
CONFIDENTLY_WRONG = "不要把 NAS 的管理界面直接暴露到公网 [4]。"  # 资料 4 讲硬盘：有风险，但支持分有把握地标出了它
UNSURE = "RAID5 重建阵列很快，不会影响使用 [2]。"  # 支持分拿不准（在询问区间里）
RISKY_ANSWER = GOOD_ANSWER + "\n\n" + FLIPPED + RENAMED + "\n\n" + CONFIDENTLY_WRONG + UNSURE


def settings(*arguments: str) -> Settings:
    return build_settings(build_parser().parse_args(["--verify", "saved.json", *arguments]), {})


def verify(tmp_path, model_server, judge, answer, *extra):
    path = tmp_path / "saved.json"
    path.write_text(json.dumps({"answer": answer, "sources": NAS_RECORD_SOURCES}, ensure_ascii=False), encoding="utf-8")
    return run_cli("--verify", str(path), "--judge", judge, *extra, env=cli_env(None, model_server))


def asked(result) -> list[str]:
    return [call["sentence"] for call in json.loads(result.stdout)["judge"]["calls"]]


def test_the_example_sentences_sit_where_the_tests_need_them():
    low, high = support_model().judge_band
    checks = {check.sentence: check for check in check_answer(RISKY_ANSWER, NAS_SOURCES).claims}
    for sentence in (FLIPPED, RENAMED):
        check = checks[sentence.rstrip("。")]
        assert check.status == "supported" and check.score >= high and not check.certain
    assert checks[CONFIDENTLY_WRONG.rstrip("。")].score < low
    assert low <= checks[UNSURE.rstrip("。")].score < high


def test_the_default_is_band_and_declared_once():
    assert JudgeSettings().ask == "band" and list(JUDGE_ASK) == ["band", "risky", "all"]
    assert settings("--judge", "m").judge.ask == "band"


@pytest.mark.parametrize("arguments, ask", [
    (["--judge-ask", "risky"], "risky"), (["--judge-ask", "band"], "band"), (["--judge-ask", "all"], "all"),
    (["--judge-all"], "all"), (["--judge-all", "--judge-ask", "all"], "all"),
])
def test_the_option_is_parsed_into_the_judge_settings(arguments, ask):
    assert settings("--judge", "m", *arguments).judge.ask == ask


@pytest.mark.parametrize("arguments, message", [
    (["--judge-ask", "risky"], "--judge-ask 要和 --judge 一起用"),
    (["--judge", "m", "--judge-all", "--judge-ask", "band"], "--judge-all 就是 --judge-ask all，不要同时给 --judge-ask band"),
])
def test_conflicting_or_lonely_options_are_refused(arguments, message):
    with pytest.raises(UsageError, match=message):
        settings(*arguments)


def test_an_unknown_choice_is_a_usage_error_in_chinese(model_server):
    result = run_cli("--verify", "-", "--judge", "m", "--judge-ask", "some", env=cli_env(None, model_server), stdin="")
    assert result.returncode == 2 and "--judge-ask" in result.stderr and "risky" in result.stderr


def test_by_default_confident_risky_sentences_are_not_asked(tmp_path, model_server):
    result = verify(tmp_path, model_server, "judge-no", RISKY_ANSWER, "--json")
    assert asked(result) == [UNSURE.rstrip("。")]
    assert json.loads(result.stdout)["judge"]["calls"][0]["risks"] == []


def test_the_default_asks_exactly_what_band_asks(tmp_path, model_server):
    default = json.loads(verify(tmp_path, model_server, "judge-no", RISKY_ANSWER, "--json").stdout)
    band = json.loads(verify(tmp_path, model_server, "judge-no", RISKY_ANSWER, "--json", "--judge-ask", "band").stdout)
    for data in (default, band):
        for call in data["judge"]["calls"]:
            call.pop("seconds")
    assert default == band


def test_risky_also_asks_passed_sentences_with_a_missing_name_or_negation(tmp_path, model_server):
    result = verify(tmp_path, model_server, "judge-no", RISKY_ANSWER, "--json", "--judge-ask", "risky")
    data = json.loads(result.stdout)
    calls = {call["sentence"]: call["risks"] for call in data["judge"]["calls"]}
    assert calls == {FLIPPED.rstrip("。"): [{"kind": "polarity", "text": "不能容忍"}],
                     RENAMED.rstrip("。"): [{"kind": "name", "text": "ZeroTier"}],
                     UNSURE.rstrip("。"): []}  # 支持分有把握地标出的那句照样不问（问了只可能撤掉它）
    assert [(p["kind"], p["sentence"]) for p in data["problems"]] == [
        ("weak_support", CONFIDENTLY_WRONG.rstrip("。")), ("judge_unsupported", FLIPPED.rstrip("。")),
        ("judge_unsupported", RENAMED.rstrip("。")), ("judge_unsupported", UNSURE.rstrip("。"))]
    assert result.returncode == 1


def test_a_judge_that_agrees_leaves_risky_sentences_passing(tmp_path, model_server):
    result = verify(tmp_path, model_server, "judge-yes", GOOD_ANSWER + "\n\n" + FLIPPED, "--json",
                    "--judge-ask", "risky")
    data = json.loads(result.stdout)
    assert result.returncode == 0 and data["passed"] and asked(result) == [FLIPPED.rstrip("。")]


def test_risky_asks_nothing_more_when_every_word_is_in_the_sources(tmp_path, model_server):
    result = verify(tmp_path, model_server, "judge-no", GOOD_ANSWER, "--json", "--judge-ask", "risky")
    assert result.returncode == 0 and asked(result) == []


def test_text_output_says_how_many_were_asked_for_their_risk(tmp_path, model_server):
    result = verify(tmp_path, model_server, "judge-no", GOOD_ANSWER + "\n\n" + FLIPPED + RENAMED, "--judge-ask", "risky")
    assert ("评判模型：judge-no（问了 2 句（其中 2 句支持分放过了，但有资料里找不到的数字、名称或否定）："
            "支持 0，不支持 2，没有意见 0；支持分有把握的 5 句没有问）") in result.stdout


@pytest.mark.parametrize("ask", ["band", "risky", "all"])
def test_a_polarity_flip_is_settled_by_the_rule_not_the_judge(tmp_path, model_server, ask):
    """“不能容忍一块”对资料的“可以容忍一块”：同一处说反了是确定的规则（slots.py），评判模型不问、也撤不掉它。"""
    flipped = GOOD_ANSWER + "\n\nRAID5 至少三块盘，不能容忍一块盘损坏 [2]。"
    for judge in ("judge-no", "judge-yes"):
        data = json.loads(verify(tmp_path, model_server, judge, flipped, "--json", "--judge-ask", ask).stdout)
        assert not any("不能容忍" in call["sentence"] for call in data["judge"]["calls"])
        kinds = [p["kind"] for p in data["problems"]]
        assert kinds.count("polarity_mismatch") == 1 and not data["passed"]
        if judge == "judge-yes":  # 评判模型说支持，也撤不掉它
            assert kinds == ["polarity_mismatch"]
