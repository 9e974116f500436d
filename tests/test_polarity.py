"""同一处说反了（polarity.py）：一边有否定、另一边同一处没有，词却全都对得上。例子都是为这条规则自己写的。

它是支持分的一个特征（polarity_flip），不是确定的规则：发现说反了的句子在 claims 里 contradicts 为 true、
支持分低一些，低于切点时问题的种类是 polarity_mismatch；用了 --judge 时它总要问评判模型，评判模型可以撤销它。
说的不是同一件事、或者不是断言的（问句、选择、委婉的说法、另一件事、标题、假设）不算说反。"""
import json

import pytest

from sourced_answers.checker import Source, SupportRule, check_answer, seen
from sourced_answers.checker.polarity import polarity_flip
from tests.support import cli_env, run_cli

RAID = Source(title="RAID 的几种级别", text=(
    "RAID5 至少要三块盘，可以容忍一块盘损坏，容量利用率较高。这款 NAS 自带两块硬盘，开箱即用。"
    "RAID 不是备份，重要的数据还要另外备份。RAID6 可以容忍两块盘损坏，不能容忍三块盘损坏。"))
ENGLISH = Source(title="RAID levels", text=(
    "RAID 5 tolerates a single disk failure. RAID is not a backup, so keep another copy of important files. "
    "The NAS has built-in drives and works out of the box."))
FLIPPED = "RAID5 至少要三块盘，不能容忍一块盘损坏 [1]。"


def contradicts(answer, source=RAID):
    """核对这句话时发现它和资料在同一处说反了（claims 里的 contradicts）。"""
    return [claim.contradicts for claim in check_answer(answer, [source]).claims]


def flipped(claim, source):
    return polarity_flip(seen(claim), seen(source)) is not None


@pytest.mark.parametrize("answer", [
    FLIPPED,
    "这款 NAS 没有自带硬盘，开箱即用 [1]。",
    "RAID 是备份，重要的数据还要另外备份 [1]。",
    "RAID5 至少要三块盘，无法容忍一块盘损坏 [1]。",
    "RAID5 至少要三块盘，可以容忍一块盘损坏，容量利用率不高 [1]。",
])
def test_the_same_words_with_the_opposite_polarity_are_found(answer):
    assert contradicts(answer) == [True]


@pytest.mark.parametrize("answer", [
    "RAID5 至少要三块盘，可以容忍一块盘损坏 [1]。",       # 两边都肯定
    "RAID 不是备份，重要的数据还要另外备份 [1]。",         # 两边都否定
    "RAID6 不能容忍三块盘损坏 [1]。",                     # 资料同一处也否定
    "这款 NAS 不仅自带两块硬盘，而且开箱即用 [1]。",        # “不仅”不是否定
])
def test_the_same_polarity_on_both_sides_is_not_a_contradiction(answer):
    assert contradicts(answer) == [False]
    assert check_answer(answer, [RAID]).passed


def test_only_the_same_place_counts_when_the_source_says_both():
    """资料里“容忍”一处肯定（两块）、一处否定（三块）：同一处（两块）是肯定的，所以“不能容忍两块”说反了；
    “不能容忍三块”和资料同一处一样。"""
    assert contradicts("RAID6 不能容忍两块盘损坏 [1]。") == [True]
    assert contradicts("RAID6 不能容忍三块盘损坏 [1]。") == [False]


@pytest.mark.parametrize("answer", [
    "RAID 5 does not tolerate a single disk failure [1].",
    "RAID is a backup, so keep another copy of important files [1].",
])
def test_english_is_left_to_the_score_and_the_judge(answer):
    """英文不用这条规则：在 AttributionBench 的 dev 上它标出的有依据、没依据的各一条，误报多了。"""
    assert not any(contradicts(answer, ENGLISH))


def test_a_contradiction_lowers_the_score():
    same = check_answer("RAID5 至少要三块盘，可以容忍一块盘损坏 [1]。", [RAID]).claims[0].score
    opposite = check_answer(FLIPPED, [RAID]).claims[0].score
    assert opposite < same


def test_below_the_cut_it_is_its_own_kind_and_the_message_quotes_both_sides_in_chinese():
    strict = SupportRule("score", 1.0)  # 每一句都低于切点：看它被标出时的种类和说明
    [problem] = check_answer(FLIPPED, [RAID], strict).problems
    assert problem.kind == "polarity_mismatch" and problem.claim == 0
    assert "不能容忍一块" in problem.message and "可以容忍一块" in problem.message
    assert problem.message.endswith("意思正好相反")


def test_the_message_quotes_the_sentence_as_the_user_wrote_it():
    [problem] = check_answer("RAID5 至少要三块盘，**不**能容忍一块盘损坏 [1]。", [RAID], SupportRule("score", 1.0)).problems
    assert "说“**不**能容忍一块”" in problem.message


def judged(tmp_path, model_server, judge):
    saved = tmp_path / "saved.json"
    saved.write_text(json.dumps({"answer": FLIPPED, "sources": [{"title": RAID.title, "text": RAID.text}]},
                                ensure_ascii=False), encoding="utf-8")
    result = run_cli("--verify", str(saved), "--json", "--judge", judge, env=cli_env(None, model_server))
    return result, json.loads(result.stdout)


def test_a_contradiction_is_always_asked_and_the_judge_can_flag_it(tmp_path, model_server):
    result, record = judged(tmp_path, model_server, "judge-no")
    assert record["claims"][0]["contradicts"] is True
    assert [call["verdict"] for call in record["judge"]["calls"]] == [False]
    assert result.returncode == 1 and [p["kind"] for p in record["problems"]] == ["judge_unsupported"]


def test_the_judge_can_clear_a_contradiction_because_it_is_not_a_certain_rule(tmp_path, model_server):
    result, record = judged(tmp_path, model_server, "judge-yes")
    assert record["claims"][0]["contradicts"] is True and not record["claims"][0]["certain"]
    assert result.returncode == 0 and record["passed"]


@pytest.mark.parametrize("claim, source", [
    ("这个做法不要求额外的硬盘 [1]。", "这个做法要求额外的硬盘。"),
    ("RAID5 不一定能容忍两块盘损坏 [1]。", "RAID5 一定能容忍两块盘损坏。"),
    ("这个设置对 RAID5 无效 [1]。", "这个设置对 RAID5 有效。"),
    ("这台机器的内存不足 [1]。", "这台机器的内存足够。"),
    ("这块硬盘从来不会丢数据 [1]。", "这块硬盘会丢数据。"),
    ("别把管理界面暴露到公网 [1]。", "把管理界面暴露到公网更方便。"),
    ("请勿把管理界面暴露到公网 [1]。", "请把管理界面暴露到公网。"),
    ("美国也不会卷入战争 [1]。", "大多数人认为美国卷入战争的可能性很大。"),
])
def test_other_negation_words_follow_the_same_rule(claim, source):
    assert contradicts(claim, Source(title="t", text=source)) == [True]


@pytest.mark.parametrize("sentence", ["这个牌子的硬盘特别耐用 [1]。", "不错的选择是两盘位 [1]。", "区别在于校验盘的数量 [1]。"])
def test_words_that_only_contain_a_negation_character_are_not_negations(sentence):
    assert contradicts(sentence, Source(title="t", text=sentence.replace(" [1]", ""))) == [False]


# ---------- 不是同一件事，或者不是断言：不算说反（issue 36 在没见过的数据上看到的误报的样子） ----------

@pytest.mark.parametrize("claim, source", [
    # 资料里的否定在问句里
    ("石蜡熔化不属于化学变化", "石蜡熔化属于化学变化吗？石蜡熔化只是状态改变。"),
    ("石蜡熔化不属于化学变化", "石蜡熔化属于化学变化吗，我们来看一看。"),
    ("这种情况不会好转", "这种情况是否会好转，目前还不清楚。"),
    ("他不能参加比赛", "他能不能参加比赛要看医生的意见。"),
    # 选择里的一项
    ("汽车的驱动方式是全时四驱系统", "汽车的驱动方式有全时四驱系统或者非全时四驱系统。"),
    ("这个接口不支持热插拔", "这个接口支持热插拔还是不支持热插拔，要看主板。"),
    # 委婉的说法，不是相反的意思
    ("手指受伤后患者很难握紧拳头", "手指受伤后患者不能握紧拳头。"),
    ("患者不能握紧拳头", "患者难以握紧拳头，需要休息。"),
    ("这种盘很少出现坏道", "这种盘不会出现坏道。"),
    ("水军无法通过集中点赞控制评分", "上线新功能是为了避免水军通过集中点赞控制评分。"),
    # 另一件事：否定的是别的东西
    ("超导体不能悬浮在地面上", "超导体就可以悬浮在空中。"),
    ("他的审计专业知识需要提高", "作为一名非审计专业学生，我一开始无从下手。"),
    ("ADSL 是非对称数字用户环路", "ADSL 线路是非对称数字网。"),
    ("青年成才的关键在于良好的环境", "青年成才的关键在于自身的奋斗而非良好的环境。"),
    ("适合移民的人群主要是年轻人", "功成名就的老板基本也不适合移民。"),
    # 假设、让步
    ("孩子尝试和异性交往", "即使孩子真的不和异性交往，处理不当也会留下阴影。"),
    ("系统会自动备份", "如果不开启这个选项，系统不会自动备份。"),
    ("美国卷入战争的可能性很大", "如果他再次入主白宫，经济状况会更好，美国也不会卷入战争。"),
])
def test_what_is_not_the_same_assertion_is_not_a_contradiction(claim, source):
    assert not flipped(claim, source)
    assert not flipped(source, claim)


def test_a_negation_in_the_source_title_or_a_heading_is_not_a_contradiction():
    source = Source(title="为什么 RAID 不是备份", text="# RAID 不能代替备份\n\nRAID 把数据写到几块盘上。")
    assert contradicts("RAID 是备份 [1]。", source) == [False]
    assert contradicts("RAID 能代替备份 [1]。", source) == [False]
