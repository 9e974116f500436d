"""核对规则：把结构、资料索引、比较和数量组合成问题列表。

  1. 引用的编号必须存在（1…资料条数）——missing_source；
  2. 每个段落、每个列表项都要有引用（列表项可以继承引出它的那一行的引用）——uncited_paragraph；
  3. 列出从没被引用的资料；
  4. 带引用的句子要和所引资料对得上——weak_support；
  5. 句子里的数字和资料对不上——number_mismatch；
  6. 句子和所引资料不是同一种语言，字面核对判断不了——cross_language；
  7. 空的回答——empty_answer，从不通过。
整个核对对回答和资料的长度是线性的。
"""
from collections.abc import Sequence
from typing import Any

from sourced_answers.checker.features import Support, compare
from sourced_answers.checker.quantities import (
    Quantity,
    contradicting_quantities,
    quantities_in,
    totals_in,
    unmatched_quantities,
)
from sourced_answers.checker.source_index import SourceIndexes
from sourced_answers.checker.structure import Structure, analyse, unit_citations
from sourced_answers.checker.tokens import LANGUAGE_NAMES, ClaimWords, claim_words, language_of, material
from sourced_answers.checker.types import Claim, Problem, Report, Source
from sourced_answers.text import format_citations, truncate
from sourced_answers.thinking import strip_think

DEFAULT_THRESHOLD = 0.35
# 少于这么多“字料”（中文二元组算 1，拉丁文单词算 2）的句子多半是“资料 [3] 提到”这类引导语，不检查重合度
MIN_MATERIAL = 8
# 另一条资料的重合度至少高出这么多，才建议“可能应引用 [k]”
BETTER_MARGIN = 0.2


def structure_problems(answer: str, source_count: int) -> tuple[list[Problem], list[int], set[int], Structure]:
    """编号存在、每段（每个列表项）有引用、没被引用的资料。返回 (问题, 没用到的编号, 引用过的编号, 结构)。"""
    structure = analyse(answer)
    cited: set[int] = set()
    for unit in structure.units:
        cited.update(unit_citations(unit))
    problems = [Problem("missing_source", f"引用了不存在的 [{n}]", citations=[n])
                for n in sorted(cited) if not 1 <= n <= source_count]
    for unit in structure.uncited:
        text = "\n".join(unit.lines).strip()
        problems.append(Problem("uncited_paragraph", f"{unit.where}没有引用：{text[:30]}…",
                                paragraph=unit.paragraph, sentence=text))
    unused = [n for n in range(1, source_count + 1) if n not in cited]
    return problems, unused, cited, structure


def support_problems(claims: list[Claim], sources: Sequence[Source], threshold: float = DEFAULT_THRESHOLD,
                     indexes: SourceIndexes | None = None) -> list[Problem]:
    """逐句比对。indexes：同一组资料已经建好的索引（核对、修正反复用同一组资料时传进来）。"""
    index_of = indexes or SourceIndexes(sources)
    problems = []
    for claim in claims:
        numbers = claim.citations
        if not numbers or not all(1 <= n <= len(sources) for n in numbers):
            continue  # 没有引用的句子由段落规则负责；不存在的编号由“引用不存在”负责
        problem = check_claim(claim, sources, index_of, threshold)
        if problem:
            problems.append(problem)
    return problems


def check_claim(claim: Claim, sources: Sequence[Source], index_of: SourceIndexes,
                threshold: float) -> Problem | None:
    numbers = list(dict.fromkeys(claim.citations))
    cited = format_citations(numbers)
    label = "（继承自上文）" if claim.inherited else ""
    language = language_of(claim.body)
    if language and all(index_of(n).language not in (None, language) for n in numbers):
        return check_across_languages(claim, numbers, index_of, language, label)
    words = claim_words(claim.body)
    results = [compare(claim.body, words, index_of(n), n) for n in numbers]
    best = max(results, key=lambda r: (r.passes(threshold), r.overlap))
    # 太短的句子（“资料 [3] 提到”）不判重合度，但照样核对数字
    if material(claim.body) >= MIN_MATERIAL and not best.passes(threshold):
        better = better_source(claim, words, sources, index_of, numbers, best, threshold)
        if best.overlap < threshold:
            message = f"“{truncate(claim.text, 40)}” 和资料 {cited}{label} 的重合度只有 {best.overlap:.0%}"
        else:
            message = f"“{truncate(claim.text, 40)}” 中“{truncate(best.novel or '', 30)}”在资料 {cited}{label} 里找不到"
        if better:
            message += f"，可能应引用 [{better}]"
        return Problem("weak_support", message, claim.paragraph, claim.text, numbers,
                       best.overlap, best.evidence, better)
    claimed = quantities_in(claim.body, claim=True)
    if not claimed:
        return None
    evidence = best.evidence
    overlap = best.overlap
    known: set[Quantity] = set().union(*(index_of(n).quantities for n in numbers))
    missing = sorted(set(unmatched_quantities(claimed, known)))
    if missing:
        shown = "、".join(f"{v:g}" for v in missing)
        message = f"“{truncate(claim.text, 40)}” 里的数字 {shown} 在资料 {cited}{label} 里找不到"
        return Problem("number_mismatch", message, claim.paragraph, claim.text, numbers, overlap, evidence)
    if best.sentence is not None:
        contradicted = contradicting_quantities(claimed, index_of(best.source).quantities_near(best.sentence),
                                                known, totals_in(claim.body))
        if contradicted:
            shown = "、".join(f"{v:g}" for v in contradicted)
            message = (f"“{truncate(claim.text, 40)}” 里的数字 {shown} 和资料 [{best.source}]{label} "
                       f"里说同一件事的地方对不上")
            return Problem("number_mismatch", message, claim.paragraph, claim.text, numbers, overlap, evidence)
    return None


def check_across_languages(claim: Claim, numbers: list[int], index_of: SourceIndexes, language: str,
                           label: str) -> Problem | None:
    """句子和它引用的资料不是同一种语言：字面重合说明不了什么，只比数值（三块 = three），其余交给人或 --judge。"""
    cited = format_citations(numbers)
    known = {value for n in numbers for value, _ in index_of(n).quantities}
    missing = sorted({value for value, _ in quantities_in(claim.body, claim=True)} - known)
    if missing:
        shown = "、".join(f"{v:g}" for v in missing)
        message = f"“{truncate(claim.text, 40)}” 里的数字 {shown} 在资料 {cited}{label} 里找不到"
        return Problem("number_mismatch", message, claim.paragraph, claim.text, numbers)
    if material(claim.body) < MIN_MATERIAL:
        return None
    source_name = LANGUAGE_NAMES[index_of(numbers[0]).language or ""]
    return Problem("cross_language", f"“{truncate(claim.text, 40)}” 引用的资料 {cited}{label} 是{source_name}、句子是"
                                     f"{LANGUAGE_NAMES[language]}，字面核对无法判断，请用 --judge 或人工核对",
                   claim.paragraph, claim.text, numbers)


def better_source(claim: Claim, words: ClaimWords, sources: Sequence[Source], index_of: SourceIndexes,
                  cited: list[int], best: Support, threshold: float) -> int | None:
    """另一条资料明显更能支持这句话时，返回它的编号。"""
    candidates = []
    for number in index_of.candidates(words.distinct, cited):
        result = compare(claim.body, words, index_of(number), number)
        if result.passes(threshold) and result.overlap >= best.overlap + BETTER_MARGIN:
            candidates.append(result)
    if not candidates:
        return None
    return max(candidates, key=lambda r: r.overlap).source


def check_answer(answer: str, sources: Sequence[Source], threshold: float = DEFAULT_THRESHOLD,
                 indexes: SourceIndexes | None = None) -> Report:
    """所有规则一起跑，返回 Report。空的回答（去掉思考过程后什么也没有）从不通过。"""
    if not strip_think(answer).strip():
        return Report([Problem("empty_answer", "回答是空的（去掉思考过程之后什么也没有）")],
                      list(range(1, len(sources) + 1)), set())
    problems, unused, cited, structure = structure_problems(answer, len(sources))
    problems += support_problems(structure.claims, sources, threshold, indexes)
    return Report(problems, unused, cited)


# 教程里的两个函数，接口保持不变：返回中文说明的列表；support 的资料是教程里的 dict（title、text）

def check(answer: str, source_count: int) -> tuple[list[str], list[int]]:
    problems, unused, _, _ = structure_problems(answer, source_count)
    return [p.message for p in problems], unused


def support(answer: str, sources: Sequence[dict[str, Any]], threshold: float = DEFAULT_THRESHOLD) -> list[str]:
    _, _, _, structure = structure_problems(answer, len(sources))
    checked = [Source.from_json(source) for source in sources]
    return [p.message for p in support_problems(structure.claims, checked, threshold)]

