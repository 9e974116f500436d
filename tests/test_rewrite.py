"""--fix 的改写不能把被标出的说法藏起来：挪进没有句末标点的短标题、关上的代码块，缩成一句短话，换成一个长“词”，
或者和另一句被标出的话并成一句，都不算修好（以前每一种都是“问题从 1 个减到 0 个”，编造的话连同它的数字还在）。
真的删掉、改成资料支持的说法，才算。例子都是为这条规则自己写的。"""
import pytest

from sourced_answers.checker import DEFAULT_RULE, SourceIndexes, check_answer
from sourced_answers.steps.rewrite import rewrite_round
from tests.support import GOOD_ANSWER, NAS_SOURCES

MARS = "火星上的 NAS 可以用来煮咖啡，每天能省下 500 元电费"
ANSWER = GOOD_ANSWER + f"\n\n{MARS} [2]。"
OTHER = "群晖的 NAS 系统比威联通稳定得多，适合所有家庭"


def rewrite(answer, rewritten):
    report = check_answer(answer, NAS_SOURCES)
    assert not report.passed
    return rewrite_round(answer, report, NAS_SOURCES, DEFAULT_RULE, lambda current, found: rewritten,
                         SourceIndexes(NAS_SOURCES))


@pytest.mark.parametrize("hiding", [
    f"## {MARS.replace('，', '')}",                          # 没有句末标点的短标题
    f"```\n{MARS}\n```",                                     # 关上的代码块
    "火星 NAS 能煮咖啡 [2]。",                                 # 缩短（缩成了一句被标出的短话也不算修好）
    "火星NAS每天煮咖啡省500元 [2]",                             # 一长串没有标点的“词”
    "MarsNASbrewscoffeeandsaves500yuan [2]",                # 一个长 token
    "> 火星上的 NAS 能煮咖啡，省 500 元电费",                    # 引用块里
    "能煮咖啡 [2]。",                                         # 缩成一句太短不判的话，只留下编造的一小部分
    "\x1b]0;" + MARS + " [2]。",                             # 没有结尾的 OSC 后面（它照样是文字，照样核对）
])
def test_a_rewrite_that_hides_the_flagged_claim_is_not_taken(hiding):
    new_answer, new_report, repairs, message = rewrite(ANSWER, GOOD_ANSWER + "\n\n" + hiding)
    assert new_answer is None and new_report is None and repairs == [], message
    assert "保留上一版" in message


def test_merging_two_flagged_claims_into_one_is_not_a_fix():
    answer = ANSWER + f"\n\n{OTHER} [1]。"
    merged = GOOD_ANSWER + f"\n\n{MARS}，而且{OTHER} [2]。"
    new_answer, _, _, message = rewrite(answer, merged)
    assert new_answer is None and "没有真的删掉或改对" in message, message


def test_a_rewrite_that_really_removes_the_claim_is_taken():
    new_answer, new_report, repairs, message = rewrite(ANSWER, GOOD_ANSWER)
    assert new_answer == GOOD_ANSWER and new_report.passed and [r.kind for r in repairs] == ["delete"], message


def test_a_rewrite_into_what_the_source_says_is_taken():
    fixed = GOOD_ANSWER + "\n\nNAS 适合作为家里的主备份，电脑和手机里的照片定期同步到 NAS 上 [5]。"
    new_answer, new_report, _, message = rewrite(ANSWER, fixed)
    assert new_answer == fixed and new_report.passed, message


def test_fixing_one_of_two_flagged_claims_is_taken_and_the_other_stays_flagged():
    answer = ANSWER + f"\n\n{OTHER} [1]。"
    partly = GOOD_ANSWER + f"\n\n{OTHER} [1]。"
    new_answer, new_report, _, message = rewrite(answer, partly)
    assert new_answer == partly and [p.kind for p in new_report.problems] == ["weak_support"], message


def test_a_heading_that_was_there_before_does_not_make_a_real_removal_look_hidden():
    answer = "## 火星 NAS 煮咖啡的传说\n\n" + ANSWER
    new_answer, _, _, message = rewrite(answer, "## 火星 NAS 煮咖啡的传说\n\n" + GOOD_ANSWER)
    assert new_answer is not None, message
