"""修正没通过核对的回答（--fix）。

两步：
  1. 确定性修正（不调用模型）：只改引用标记，不改一个字的正文——
     · 对不上 / 数字不符的句子，另一条资料能完全通过核对 → 改引那一条（recite）；句子用的是本段的引用、
       或者从引出行继承的引用时，在句末写上那一条（继承的一项整项一起写，见 inherited_edits）；
     · 引用了不存在的编号 → 改成能通过的资料（recite）；
     · 没有引用的段落或列表项，每一句都有一条资料能通过 → 在句末补上引用（add_citation）。
     没有任何资料能通过的句子原样保留、照样被标出；通过的句子一个字也不动；对修正结果再修正不会再变。
  2. 请模型改写（只在回答问题时）：把资料、当前回答和剩下的每个问题交给模型，只改写或删去被标出的句子；
     新回答问题更少、而且保留了之前每个通过的句子，才采用，否则保留上一版。

这里只有纯逻辑：调用模型的函数由调用方传进来。
"""
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from sourced_answers.checker import (
    Claim,
    Located,
    Locator,
    Problem,
    Report,
    Source,
    SourceIndexes,
    Span,
    SupportRule,
    Unit,
    analyse,
    check_answer,
    checked_indexes,
    citations_in,
    claims_with_positions,
    format_citations,
    kind_of,
    read_claim,
    strip_terminal,
    too_short,
    without_citations,
)
from sourced_answers.steps.source_choice import REPAIR_COVERAGE, Fit, Sources

# 请模型改写：(当前回答, 它的 Report) → 改写后的回答（出错时为空字符串）
Rewriter = Callable[[str, Report], str]


@dataclass
class Repair:
    """改了什么。kind：recite（改引）、add_citation（补上引用）、rewrite（改写）、delete（删去）。"""
    kind: str
    paragraph: int | None
    before: str | None
    after: str | None
    reason: str
    overlap_before: float | None = None
    overlap_after: float | None = None
    score_before: float | None = None
    score_after: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Edit:
    """对原文的一处改动：把 [start, end) 换成 text。"""
    start: int
    end: int
    text: str
    repair: Repair


# ---------- 确定性修正 ----------

def problem_identity(problem: Problem) -> tuple[Any, ...]:
    """在修正前后两版回答之间认出同一个问题：(种类, 段落, 去掉引用标记的句子)。这里不能用 claim：
    补上引用的句子进了 claims，后面每一句的下标都变了；改引只改了标记，所以去掉标记比较文字。"""
    if problem.kind == "missing_source":
        return problem.kind, tuple(problem.citations or ())
    return problem.kind, problem.paragraph, without_citations(problem.sentence)


def flagged_claims(report: Report) -> set[int]:
    """要改引的句子：标出它们的问题，问题种类的表说 --fix 可以改引（对不上、数字不符、编号不存在）；它们在
    report.claims 里的下标（问题自己带着，不按文字去对）。引了不存在的编号的句子不管有没有问题点名它，都看编号改引。"""
    return {p.claim for p in report.problems if kind_of(p.kind).fix_may_recite and p.claim is not None}


def recite_edits(located: Located, report: Report, pool: Sources, locator: Locator,
                 budget: int | None = None) -> list[Edit]:
    """被标出的句子（和引了不存在的编号的句子）改引一条能让它完全通过的资料。budget：最多看这么多句。
    用本段引用的句子（shared）只在这一段没有别的句子改引时才写上自己的引用：本段的引用改了之后它多半就通过了，
    不必在句子中间多写一个（下一遍再看它）。"""
    flagged = flagged_claims(report)
    count = len(pool.sources)
    edits: list[Edit] = []
    shared: list[Edit] = []
    examined = 0
    for (claim, span), index in zip(located, checked_indexes([claim for claim, _ in located]), strict=True):
        if index is None or span is None:
            continue
        if budget is not None and examined >= budget:
            break
        if claim.inherited:
            continue  # 继承了引用的列表项整项一起修（inherited_edits）
        invalid = [n for n in claim.citations if not 1 <= n <= count]
        if not invalid and index not in flagged:
            continue
        examined += 1
        if claim.shared:
            edit = shared_edit(claim, span, pool) if index in flagged else None
            if edit:
                shared.append(edit)
            continue
        marks = own_marks(claim, span, locator)
        if marks is None:
            continue
        valid = [n for n in dict.fromkeys(claim.citations) if 1 <= n <= count]
        keep = [n for n in valid if pool.passing(claim, [n]) is not None] if invalid else []
        after: Fit | None
        if keep:
            new, after = keep, pool.passing(claim, keep)
        else:
            best = pool.best(claim)
            if best is None:
                continue
            new, after = [best[0]], best[1]
        old_mark = format_citations(claim.citations)
        new_mark = format_citations(new)
        reason = (f"引用了不存在的 {format_citations(invalid)}" if invalid
                  else f"资料 {old_mark} 支持不了这句话，资料 {new_mark} 能")
        repair = Repair("recite", claim.paragraph, claim.text, claim.text.replace(old_mark, new_mark),
                        reason, *changed(pool.fit(claim, claim.citations), after))
        edits.append(Edit(marks[0], marks[1], new_mark, repair))
    recited = {edit.repair.paragraph for edit in edits}
    return edits + [edit for edit in shared if edit.repair.paragraph not in recited]


def shared_edit(claim: Claim, span: Span, pool: Sources) -> Edit | None:
    """句子自己没写引用、用的是这一段（这一项）的引用，而那几条资料支持不了它：在句末写上能支持它的资料。
    （引出列表的一行下面没写列表记号的几行也是这样。）这一段别的句子的依据只会多一条，不会少。"""
    best = pool.best(claim)
    if best is None:
        return None
    shared = format_citations(claim.citations)
    repair = Repair("recite", claim.paragraph, f"{claim.body} {shared}", f"{claim.body} [{best[0]}]",
                    f"这句话用的是本段的引用 {shared}，它们支持不了它，资料 [{best[0]}] 能",
                    *changed(pool.fit(claim, claim.citations), best[1]))
    return Edit(span[1], span[1], f" [{best[0]}]", repair)


def inherited_edits(located: Located, units: Sequence[Unit], report: Report, pool: Sources,
                    budget: int | None = None) -> list[Edit]:
    """从引出行继承引用的列表项里有句子被标出（继承来的资料支持不了它）：给这一项的每一句写上自己的引用——
    被标出的句子写能让它完全通过的资料，别的句子写它继承来的编号（不写的话它会改用这一项新写的那条资料）。
    被标出的句子有一句找不到资料，这一项就不动（照样被标出，交给模型改写）。太短、不判支持分的句子不写。
    budget：最多看这么多项。"""
    flagged = flagged_claims(report)
    if not flagged:
        return []
    indexes = checked_indexes([claim for claim, _ in located])
    edits: list[Edit] = []
    examined = 0
    for unit in units:
        if not unit.claims or not located[unit.claims.start][0].inherited:
            continue  # 一项里的句子要么都继承了引用，要么都没有
        positions = list(unit.claims)
        marked = {p for p in positions if indexes[p] in flagged}
        if not marked:
            continue
        if budget is not None and examined >= budget:
            break
        examined += 1
        planned: list[Edit] = []
        for position in positions:
            claim, span = located[position]
            edit = inherited_edit(claim, span, position in marked, pool)
            if edit is None and (position in marked or span is None):
                planned = []
                break
            if edit is not None:
                planned.append(edit)
        edits += planned
    return edits


def inherited_edit(claim: Claim, span: Span | None, flagged: bool, pool: Sources) -> Edit | None:
    """继承了引用的一句：被标出的改引能支持它的资料，没被标出的写明它继承来的编号；太短的、找不到资料的为 None。"""
    if span is None or too_short(read_claim(claim.body).text):
        return None
    inherited = format_citations(claim.citations)
    if not flagged:
        repair = Repair("add_citation", claim.paragraph, claim.text, f"{claim.text} {inherited}",
                        f"写明这句话从上文继承的 {inherited}（这一项别的句子改引了别的资料）")
        return Edit(span[1], span[1], f" {inherited}", repair)
    best = pool.best(claim)
    if best is None:
        return None
    repair = Repair("recite", claim.paragraph, f"{claim.body} {inherited}", f"{claim.body} [{best[0]}]",
                    f"从上文继承的 {inherited} 支持不了这一项，资料 [{best[0]}] 能",
                    *changed(pool.fit(claim, claim.citations), best[1]))
    return Edit(span[1], span[1], f" [{best[0]}]", repair)


def changed(before: Fit, after: Fit | None) -> tuple[float | None, float | None, float | None, float | None]:
    """Repair 的 overlap_before、overlap_after、score_before、score_after。"""
    return (before.overlap, after.overlap if after else None, before.score, after.score if after else None)


def own_marks(claim: Claim, span: Span, locator: Locator) -> Span | None:
    """句子自己的引用标记在原文里的位置；标记里的编号必须正好是这句话的引用（句首引用等情况不动）。"""
    marks = locator.marks_after(span[1])
    if marks is None:
        return None
    written = locator.text[marks[0]:marks[1]]
    if citations_in(written) != claim.citations:
        return None
    return marks


def add_citation_edits(located: Located, uncited: Sequence[Unit], pool: Sources,
                       budget: int | None = None) -> list[Edit]:
    """没有引用的段落 / 列表项（uncited：回答里没有引用的块，核对为它们各报一个 uncited_paragraph）：
    每一个够长的句子都能找到一条完全通过的资料，才给整块补上引用；只补一部分会让剩下的句子躲过“没有引用”的检查。
    located 是同一个回答的 claims_with_positions，块的句子按位置（Unit.claims）取，不按文字去找。
    budget：最多看这么多块。"""
    edits: list[Edit] = []
    for unit in uncited if budget is None else uncited[:budget]:
        planned: list[Edit] = []
        for claim, span in (located[position] for position in unit.claims):
            if too_short(read_claim(claim.body).text):
                continue
            best = pool.best(claim) if span else None
            if best is None or span is None:
                planned = []
                break
            mark = f" [{best[0]}]"
            repair = Repair("add_citation", claim.paragraph, claim.text, claim.text + mark.rstrip(),
                            "这句话没有引用，资料 [" + str(best[0]) + "] 能支持它", *changed(Fit(None, None), best[1]))
            planned.append(Edit(span[1], span[1], mark, repair))
        if planned:
            edits += planned
    return edits


def apply_edits(answer: str, edits: list[Edit]) -> str:
    """一遍拼出改好的回答（改动按位置排好，互不重叠）。"""
    pieces = []
    position = 0
    for edit in sorted(edits, key=lambda e: e.start):
        pieces += [answer[position:edit.start], edit.text]
        position = edit.end
    pieces.append(answer[position:])
    return "".join(pieces)


def improved(before: Report, after: Report) -> bool:
    """after 的问题是 before 的问题的真子集（没有冒出新问题）。"""
    old = {problem_identity(p) for p in before.problems}
    new = {problem_identity(p) for p in after.problems}
    return new < old


# 确定性修正最多做这么多遍：每一遍都让问题严格变少，一般两遍就到了不动点（再修正也不会再变）
MAX_PASSES = 8


def planned_edits(answer: str, report: Report, pool: Sources, budget: int | None = None) -> list[Edit]:
    """这一版回答（已经去掉终端控制序列）上能做的确定性修正：改引和补上引用，每一处都单独验证过（改了之后那一句能完全
    通过）。budget：最多看这么多个被标出的句子和没有引用的块（只为提示“可以 --fix”时用，不传就是全部）。"""
    located = claims_with_positions(answer)
    structure = analyse(answer)
    return (recite_edits(located, report, pool, Locator(answer), budget)
            + inherited_edits(located, structure.units, report, pool, budget)
            + add_citation_edits(located, structure.uncited, pool, budget))


def new_problem_paragraphs(before: Report, after: Report) -> set[int | None]:
    """改了之后冒出来的问题（before 里没有的）在哪几段。"""
    old = {problem_identity(p) for p in before.problems}
    return {p.paragraph for p in after.problems if problem_identity(p) not in old}


def one_pass(answer: str, report: Report, sources: Sequence[Source], rule: SupportRule, pool: Sources,
             indexes: SourceIndexes) -> tuple[str, list[Repair], Report] | None:
    """确定性修正的一遍：全部改动一起做，没有冒出新问题、问题又少了就采用。合在一起冒出了新问题（一段里改了一句的引用，
    同段没写引用的句子跟着换了依据）时，去掉那几段里的改动再试一次。两次都不行时为 None。每一遍核对两次，是线性的。"""
    edits = planned_edits(answer, report, pool)
    for _ in range(2):
        if not edits:
            return None
        repaired = apply_edits(answer, edits)
        after = check_answer(repaired, sources, rule, indexes)
        if improved(report, after):
            return repaired, [edit.repair for edit in edits], after
        spoiled = new_problem_paragraphs(report, after)
        edits = [edit for edit in edits if edit.repair.paragraph not in spoiled] if spoiled else []
    return None


def fix_citations(answer: str, sources: Sequence[Source], rule: SupportRule, report: Report | None = None,
                  coverage_needed: float = REPAIR_COVERAGE,
                  indexes: SourceIndexes | None = None) -> tuple[str, list[Repair], Report]:
    """确定性修正：返回 (修正后的回答, [Repair], 修正后的 Report)。没有能修的就原样返回。
    一次就到不动点：一遍一遍地修，直到没有能做的、或者做了也不再让问题变少（所以对结果再修正不会再变）。
    indexes：这组资料已经建好的索引（不传就建一份，这一次修正里反复用）。"""
    indexes = indexes or SourceIndexes(sources)
    report = report or check_answer(answer, sources, rule, indexes)
    if report.passed:
        return answer, [], report
    answer = strip_terminal(answer)  # 改的位置是在核对读的那一版里找的（去掉了终端控制序列）
    pool = Sources(sources, rule, coverage_needed, indexes)
    repairs: list[Repair] = []
    for _ in range(MAX_PASSES):
        done = one_pass(answer, report, sources, rule, pool, indexes)
        if done is None:
            break
        answer, more, report = done
        repairs += more
        if report.passed:
            break
    return answer, repairs, report


# 没用 --fix 时，提示“可以 --fix”之前最多看这么多处：提示的代价是一个和回答长短无关的常数，不是一次完整的修正
HINT_BUDGET = 50


@dataclass(frozen=True)
class Fixable:
    """没用 --fix 时能确定性修正的处数；more：还有没看的问题（处数是“至少”）。"""
    count: int
    more: bool = False


NOTHING_FIXABLE = Fixable(0)


def repairable(answer: str, sources: Sequence[Source], rule: SupportRule, report: Report,
               indexes: SourceIndexes | None = None, budget: int = HINT_BUDGET) -> Fixable:
    """不加 --fix 时：能确定性修正的有几处（用来在结论后面提示 --fix）。只看前 budget 个被标出的句子和没有引用的块，
    每一处都单独验证过（改引之后那一句能完全通过），不把改动拼起来重新核对整个回答。"""
    if report.passed:
        return NOTHING_FIXABLE
    pool = Sources(sources, rule, REPAIR_COVERAGE, indexes or SourceIndexes(sources))
    edits = planned_edits(strip_terminal(answer), report, pool, budget)
    return Fixable(len(edits), more=len(report.problems) > budget)


# ---------- 请模型改写（提示词见 prompts.py） ----------


