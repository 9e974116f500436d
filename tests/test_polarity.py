"""同一处说反了（polarity_mismatch）：一边有否定、另一边同一处没有，词却全都对得上。例子都是为这条规则自己写的。"""
import json

import pytest

from sourced_answers.checker import Source, check_answer
from tests.support import cli_env, run_cli

RAID = Source(title="RAID 的几种级别", text=(
    "RAID5 至少要三块盘，可以容忍一块盘损坏，容量利用率较高。这款 NAS 自带两块硬盘，开箱即用。"
    "RAID 不是备份，重要的数据还要另外备份。RAID6 可以容忍两块盘损坏，不能容忍三块盘损坏。"))
ENGLISH = Source(title="RAID levels", text=(
    "RAID 5 tolerates a single disk failure. RAID is not a backup, so keep another copy of important files. "
    "The NAS has built-in drives and works out of the box."))


def kinds(answer, source=RAID):
    return [problem.kind for problem in check_answer(answer, [source]).problems]


@pytest.mark.parametrize("answer", [
    "RAID5 至少要三块盘，不能容忍一块盘损坏 [1]。",
    "这款 NAS 没有自带硬盘，开箱即用 [1]。",
    "RAID 是备份，重要的数据还要另外备份 [1]。",
    "RAID5 至少要三块盘，无法容忍一块盘损坏 [1]。",
    "RAID5 至少要三块盘，可以容忍一块盘损坏，容量利用率不高 [1]。",
])
def test_the_same_words_with_the_opposite_polarity_are_flagged(answer):
    assert kinds(answer) == ["polarity_mismatch"]


@pytest.mark.parametrize("answer", [
    "RAID5 至少要三块盘，可以容忍一块盘损坏 [1]。",       # 两边都肯定
    "RAID 不是备份，重要的数据还要另外备份 [1]。",         # 两边都否定
    "RAID6 不能容忍三块盘损坏 [1]。",                     # 资料同一处也否定
    "这款 NAS 不仅自带两块硬盘，而且开箱即用 [1]。",        # “不仅”不是否定
])
def test_the_same_polarity_on_both_sides_passes(answer):
    assert kinds(answer) == []


def test_only_the_same_place_counts_when_the_source_says_both():
    """资料里“容忍”一处肯定（两块）、一处否定（三块）：同一处（两块）是肯定的，所以“不能容忍两块”说反了；
    “不能容忍三块”和资料同一处一样。"""
    assert kinds("RAID6 不能容忍两块盘损坏 [1]。") == ["polarity_mismatch"]
    assert kinds("RAID6 不能容忍三块盘损坏 [1]。") == []


@pytest.mark.parametrize("answer", [
    "RAID 5 does not tolerate a single disk failure [1].",
    "RAID is a backup, so keep another copy of important files [1].",
])
def test_english_is_left_to_the_score_and_the_judge(answer):
    """英文不用这条规则：在 AttributionBench 的 dev 上它标出的有依据、没依据的各一条，误报多了。"""
    assert "polarity_mismatch" not in kinds(answer, ENGLISH)


def test_the_message_quotes_both_sides_in_chinese():
    [problem] = check_answer("RAID5 至少要三块盘，不能容忍一块盘损坏 [1]。", [RAID]).problems
    assert "不能容忍一块" in problem.message and "可以容忍一块" in problem.message
    assert problem.message.endswith("意思正好相反") and problem.claim == 0


def test_polarity_is_its_own_kind_in_json_and_the_judge_cannot_clear_it(tmp_path, model_server):
    saved = tmp_path / "saved.json"
    saved.write_text(json.dumps({"answer": "RAID5 至少要三块盘，不能容忍一块盘损坏 [1]。",
                                 "sources": [{"title": RAID.title, "text": RAID.text}]}, ensure_ascii=False),
                     encoding="utf-8")
    result = run_cli("--verify", str(saved), "--json", "--judge-all", "--judge", "judge-yes",
                     env=cli_env(None, model_server))
    record = json.loads(result.stdout)
    assert result.returncode == 1 and [p["kind"] for p in record["problems"]] == ["polarity_mismatch"], result.stderr
    assert record["claims"][0]["status"] == "polarity_mismatch"


@pytest.mark.parametrize("claim, source", [
    ("这个做法不要求额外的硬盘 [1]。", "这个做法要求额外的硬盘。"),
    ("RAID5 不一定能容忍两块盘损坏 [1]。", "RAID5 一定能容忍两块盘损坏。"),
    ("这个设置对 RAID5 无效 [1]。", "这个设置对 RAID5 有效。"),
    ("这台机器的内存不足 [1]。", "这台机器的内存足够。"),
    ("这块硬盘从来不会丢数据 [1]。", "这块硬盘会丢数据。"),
    ("别把管理界面暴露到公网 [1]。", "把管理界面暴露到公网更方便。"),
    ("请勿把管理界面暴露到公网 [1]。", "请把管理界面暴露到公网。"),
])
def test_other_negation_words_follow_the_same_rule(claim, source):
    assert kinds(claim, Source(title="t", text=source)) == ["polarity_mismatch"]


@pytest.mark.parametrize("sentence", ["这个牌子的硬盘特别耐用 [1]。", "不错的选择是两盘位 [1]。", "区别在于校验盘的数量 [1]。"])
def test_words_that_only_contain_a_negation_character_are_not_negations(sentence):
    assert kinds(sentence, Source(title="t", text=sentence.replace(" [1]", ""))) == []

