"""--fix 的不变的规矩（hypothesis）：通过的回答原样返回；没有资料能支持的句子修正后照样被标出；
修正一次之后再修正不会再变；确定性修正只改引用标记，正文一个字不变。"""
import re

from hypothesis import given
from hypothesis import strategies as st

from sourced_answers.checker import DEFAULT_RULE, Claim, check_answer
from sourced_answers.checker.citations import normalize_citations
from sourced_answers.steps.repair import Sources, fix_citations
from sourced_answers.steps.rewrite import passing_claims
from tests.test_check_properties import GUARD, NAS, SENTENCES, write_answer

# 一半是照着内置页面写的（有资料能支持），一半没有资料能支持
FIX_SENTENCES = SENTENCES + [
    "RAID 不是备份，重要数据仍然要另外备份", "组 RAID 的 NAS 建议用 CMR 硬盘",
    "群晖的 NAS 系统比威联通稳定得多", "NAS 不需要任何备份，RAID 就够了",
]
MARK_WITH_SPACE = re.compile(r"[ \t]*\[[0-9]+\]")
citations = st.lists(st.integers(min_value=1, max_value=7), min_size=0, max_size=2, unique=True).map(sorted)
answers = st.lists(st.lists(st.tuples(st.sampled_from(FIX_SENTENCES), citations), min_size=1, max_size=3),
                   min_size=1, max_size=4)


# 列表：引出行（“[n] 标题”、“以下几点 [n]：”，或者没有）下面的几项，每项一两句，有的写了引用、有的没写
LEADS = ["{marks} 家用 NAS 选购要点", "以下几点 {marks}：", "**{marks} RAID1 和 RAID5 的区别**", ""]
item = st.lists(st.tuples(st.sampled_from(FIX_SENTENCES), citations), min_size=1, max_size=2)
lists = st.tuples(st.sampled_from(LEADS), citations, st.lists(item, min_size=1, max_size=4))


def write_list(shape):
    lead, numbers, items = shape
    lines = [lead.format(marks="".join(f"[{n}]" for n in numbers)).strip()] if lead else []
    for parts in items:
        lines.append("- " + "".join(f"{body} {''.join(f'[{n}]' for n in marks)}。" for body, marks in parts))
    return "\n".join(lines)


def without_marks(text):
    """去掉引用标记（连同它前面的空白：补引用时写成“镜像 [1]。”），其余原样。"""
    return MARK_WITH_SPACE.sub("", normalize_citations(text))


def fix(answer):
    return fix_citations(answer, NAS, DEFAULT_RULE)


@given(answers, st.data())
@GUARD
def test_a_passing_answer_comes_back_byte_for_byte(paragraphs, data):
    answer = write_answer(paragraphs, data)
    if check_answer(answer, NAS).passed:
        fixed, repairs, _ = fix(answer)
        assert fixed == answer and repairs == []


@given(answers, st.data())
@GUARD
def test_fixing_twice_changes_nothing_more(paragraphs, data):
    once, _, _ = fix(write_answer(paragraphs, data))
    twice, repairs, _ = fix(once)
    assert twice == once and repairs == []


@given(answers, st.data())
@GUARD
def test_deterministic_repairs_change_citation_marks_only(paragraphs, data):
    answer = write_answer(paragraphs, data)
    fixed, _, _ = fix(answer)
    assert without_marks(fixed) == without_marks(answer)


@given(answers, st.data())
@GUARD
def test_a_sentence_no_source_passes_is_never_made_to_pass(paragraphs, data):
    answer = write_answer(paragraphs, data)
    before = passing_claims(check_answer(answer, NAS))
    fixed, _, report = fix(answer)
    newly_passing = passing_claims(report) - before
    checker = Sources(NAS, DEFAULT_RULE, coverage_needed=0.0)  # 只用核对本身的标准
    for body in newly_passing:
        assert checker.best(Claim(1, body, body, [])) is not None, body


@given(lists)
@GUARD
def test_fixing_a_list_twice_changes_nothing_more(shape):
    once, _, _ = fix(write_list(shape))
    twice, repairs, _ = fix(once)
    assert twice == once and repairs == []


@given(lists)
@GUARD
def test_deterministic_repairs_of_a_list_change_citation_marks_only(shape):
    answer = write_list(shape)
    fixed, _, _ = fix(answer)
    assert without_marks(fixed) == without_marks(answer)


@given(lists)
@GUARD
def test_a_list_item_no_source_passes_is_never_made_to_pass(shape):
    answer = write_list(shape)
    before = passing_claims(check_answer(answer, NAS))
    fixed, _, report = fix(answer)
    checker = Sources(NAS, DEFAULT_RULE, coverage_needed=0.0)
    for body in passing_claims(report) - before:
        assert checker.best(Claim(1, body, body, [])) is not None, body
