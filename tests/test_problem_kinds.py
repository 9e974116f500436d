"""问题种类的表（checker/types.py 的 PROBLEM_KINDS）：后面各步读它，不按种类的名字各自判断。

一种问题是不是确定的规则、评判模型能不能改它、--fix 会不会改引、它说的是一句话还是一整块，都只写在表里一处：
改了表里的一格，核对、评判、修正、文字输出跟着变；包里按名字认种类的地方，名字都得在表里。"""
import ast
import re
from collections import OrderedDict
from dataclasses import replace

import pytest

from sourced_answers.checker import (
    DEFAULT_RULE,
    PROBLEM_KINDS,
    ClaimCheck,
    Kind,
    Problem,
    Report,
    check_answer,
    indexes,
)
from sourced_answers.outputs.render import verdict_lines
from sourced_answers.steps.judge import judge_answer
from sourced_answers.steps.repair import fix_citations
from tests.support import HERE, NAS_SOURCES

NAS = NAS_SOURCES
# 第二句引错了资料（讲核显的是资料 1）：只有支持分给的“对不上”（没有数字，别的确定的规则不会也标出它），
# --fix 能改引到 [1]
MISCITED = "家用 NAS 至少选两盘位，方便做 RAID1 镜像 [1]。\n\n需要转码视频时选带核显的 Intel 型号 [2]。"
# 一种新的、说一句话的问题：字面核对判断不了，交给评判模型
DATE_KIND = Kind("日期不符", "sentence", certain=False, judge_may_decide=True, fix_may_recite=False, undecided=True,
                 meaning="句子里的日期和所引资料说的不是同一天")


@pytest.fixture
def fresh_checks(monkeypatch):
    """这个测试里核对的结论不进、也不取共用的缓存：表改过之后下的结论不留给别的测试。"""
    monkeypatch.setattr(indexes, "recent_memos", OrderedDict())


def answer_all(calls):
    def ask(messages):
        calls.append(messages)
        return "是"
    return ask


# ---------- 表说了算 ----------

def test_a_kind_marked_certain_makes_its_sentences_certain_and_the_judge_leaves_them_alone(monkeypatch, fresh_checks):
    report = check_answer(MISCITED, NAS)
    assert [p.kind for p in report.problems] == ["weak_support"]
    calls: list = []
    judge_answer(NAS, report, answer_all(calls), "m", which="all")
    assert len(calls) == 2  # 平常：每一句都问，“是”撤掉“对不上”

    certain = replace(PROBLEM_KINDS["weak_support"], certain=True, judge_may_decide=False)
    monkeypatch.setitem(PROBLEM_KINDS, "weak_support", certain)
    indexes.recent_memos.clear()  # 上面按原来的表下的结论不再用
    report = check_answer(MISCITED, NAS)
    assert [check.certain for check in report.claims] == [False, True]
    calls = []
    verdicts = judge_answer(NAS, report, answer_all(calls), "m", which="all")
    assert len(calls) == 1  # 被确定的规则标出的那一句不问
    assert [p.kind for p in verdicts.problems] == ["weak_support"]  # 也撤不掉


def test_a_new_kind_the_judge_may_decide_is_asked_and_withdrawn_by_a_yes(monkeypatch):
    monkeypatch.setitem(PROBLEM_KINDS, "date_mismatch", DATE_KIND)
    sentence = "第60届格莱美奖颁奖典礼于2018年1月29日举行 [1]。"
    check = ClaimCheck(1, sentence, [1], None, None, None, "date_mismatch")
    report = Report([Problem("date_mismatch", "日期对不上", 1, sentence, [1], claim=0)], [], {1}, [check])
    calls: list = []
    verdicts = judge_answer(NAS, report, answer_all(calls), "m")  # 默认只问拿不准的：字面核对判断不了的总问
    assert len(calls) == 1
    assert verdicts.problems == [] and check.status == "supported"


def test_fix_recites_only_the_kinds_the_table_lets_it(monkeypatch, fresh_checks):
    fixed, repairs, _ = fix_citations(MISCITED, NAS, DEFAULT_RULE)
    assert fixed == MISCITED.replace("型号 [2]", "型号 [1]") and [r.kind for r in repairs] == ["recite"]

    monkeypatch.setitem(PROBLEM_KINDS, "weak_support", replace(PROBLEM_KINDS["weak_support"], fix_may_recite=False))
    indexes.recent_memos.clear()
    fixed, repairs, report = fix_citations(MISCITED, NAS, DEFAULT_RULE)
    assert (fixed, repairs) == (MISCITED, [])
    assert [p.kind for p in report.problems] == ["weak_support"]


def test_the_text_output_suggests_the_judge_for_every_kind_the_checker_cannot_decide(monkeypatch):
    monkeypatch.setitem(PROBLEM_KINDS, "date_mismatch", DATE_KIND)
    report = Report([Problem("date_mismatch", "日期对不上", 1, "颁奖礼在1月29日 [1]。", [1], claim=0)], [], {1}, [])
    assert "日期不符引用的句子可以加 --judge 请评判模型看" in verdict_lines(report)


@pytest.mark.parametrize("wrong, why", [
    (dict(certain=True, judge_may_decide=True), "评判模型改不了"),
    (dict(undecided=True, judge_may_decide=False), "要交给评判模型"),
])
def test_a_kind_that_contradicts_itself_is_refused(wrong, why):
    settings = dict(certain=False, judge_may_decide=False, fix_may_recite=False) | wrong
    with pytest.raises(ValueError, match=why):
        Kind("自相矛盾", "sentence", meaning="", **settings)


# ---------- 包里按名字认的种类都在表里 ----------

# 也叫 kind、status、却不是问题种类的几套词
OTHER_WORDS = {
    "recite": "Repair.kind", "add_citation": "Repair.kind", "rewrite": "Repair.kind", "delete": "Repair.kind",
    "polarity": "slots.Contradiction.kind", "opposite": "slots.Contradiction.kind", "name": "slots.Contradiction.kind",
    "running": "Dask 的 status", "pending": "Dask 的 status", "lost": "Dask 的 status", "error": "Dask 的 status",
}
SNAKE_CASE = re.compile(r"[a-z]+(?:_[a-z]+)+")
# 句子（ClaimCheck.status）没有问题时的两种状态
PASSING_STATUSES = {"supported", "too_short"}


def names_a_kind(node: ast.AST) -> bool:
    """x.kind、x.status、record.get("kind")。"""
    if isinstance(node, ast.Attribute):
        return node.attr in ("kind", "status")
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
            and bool(node.args) and isinstance(node.args[0], ast.Constant) and node.args[0].value in ("kind", "status"))


def strings_in(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [text for element in node.elts for text in strings_in(element)]
    return []


def kind_strings(tree: ast.AST) -> list[tuple[str, int]]:
    """一个模块里当作问题种类用的文字（按行排）：和种类比较的、给出问题（Problem(…)、ClaimCheck 的状态）的、
    写进状态的、对照到种类 id 的表（名字以 _KINDS 结尾的 dict，值是 snake_case 的 id；值是中文名的不算）的值。"""
    found: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        values: list[ast.AST] = []
        if isinstance(node, ast.Compare) and any(names_a_kind(side) for side in (node.left, *node.comparators)):
            values = [node.left, *node.comparators]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("Problem", "ClaimCheck"):
            values = node.args[:1] if node.func.id == "Problem" else node.args[6:7]
            values += [keyword.value for keyword in node.keywords if keyword.arg in ("kind", "status")]
        elif isinstance(node, ast.Assign) and any(names_a_kind(target) for target in node.targets):
            values = [node.value]
        elif isinstance(node, ast.Assign | ast.AnnAssign) and isinstance(node.value, ast.Dict):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(target, ast.Name) and target.id.endswith("_KINDS") for target in targets):
                values = [value for value in node.value.values
                          if value is not None and all(SNAKE_CASE.fullmatch(text) for text in strings_in(value))]
        found += [(text, node.lineno) for value in values for text in strings_in(value)]
    return sorted(found, key=lambda item: item[1])


PACKAGE = sorted((HERE / "sourced_answers").rglob("*.py"))


def test_every_kind_the_package_names_is_in_the_table():
    unknown = [f"{path.relative_to(HERE)}:{line} “{text}”" for path in PACKAGE
               for text, line in kind_strings(ast.parse(path.read_text(encoding="utf-8")))
               if text not in PROBLEM_KINDS and text not in PASSING_STATUSES and text not in OTHER_WORDS]
    assert unknown == [], "这些种类不在 checker/types.py 的 PROBLEM_KINDS 里：先在表里登记它们的意思"


def test_the_scan_finds_a_kind_written_the_ways_the_package_writes_them():
    source = ('if problem.kind == "date_mismatch": pass\n'
              'ok = record.get("kind") in ("date_drift",)\n'
              'p = Problem("date_gap", "…")\n'
              'check.status = "date_skew"\n'
              'DATE_KINDS = {"day": "date_off"}\n')
    assert [text for text, _ in kind_strings(ast.parse(source))] == [
        "date_mismatch", "date_drift", "date_gap", "date_skew", "date_off"]


def test_every_kind_in_the_table_is_given_somewhere():
    given = {text for path in PACKAGE if path.name != "types.py"
             for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
             if isinstance(node, ast.Constant) and isinstance(text := node.value, str)}
    assert [kind for kind in PROBLEM_KINDS if kind not in given] == []


# ---------- 表说的是真的 ----------

EXAMPLES = [
    MISCITED,
    "家用 NAS 至少选两盘位 [7]。RAID5 至少三块盘 [2]。",
    "家用 NAS 至少选两盘位，方便做 RAID1 镜像。\n\n- RAID5 至少四块盘 [2]\n- RAID5 不能容忍一块盘损坏 [2]",
    'NAS 要选 Intel 型号 <source id="1">。\n\nRAID 不是备份 [2]。',
    "Choose at least two bays for RAID1 mirroring [1].",
    "RAID 不是备份 [2]。\n\nRAID 不是备份 [2]。\n\nRAID 不是备份 [2]。",
]


@pytest.mark.parametrize("answer", EXAMPLES)
def test_a_problem_about_one_sentence_names_it_and_a_block_names_none(answer):
    report = check_answer(answer, NAS)
    assert report.problems
    for problem in report.problems:
        about = PROBLEM_KINDS[problem.kind].about
        if about == "block":
            assert problem.claim is None
        elif about == "sentence" and problem.kind not in ("missing_source", "copied_markup"):  # 见 docs/reference.md
            assert problem.claim is not None and report.claims[problem.claim].sentence == problem.sentence
