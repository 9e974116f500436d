"""每个问题标出回答里的哪几句：审阅页（标出、把原因写在哪一句下面）和模型改写（被改掉的句子因为什么被标出）
用的是同一个规矩。句子用它在 Structure.claims 里的位置表示（和 claims_with_positions 的顺序一样）。

问题自己带着它那一句的下标（Problem.claim，指进 Report.claims），这里不按文字去对：
  · 有 claim 的问题：就是那一句；
  · 引了不存在的编号：引了这些编号的每一句（同一组编号只算一次；spread 为 False 时只是它点名的那一句）；
  · 整块没有引用（uncited_paragraph）：核对按块的顺序报，第 k 个这样的问题就是第 k 个没有引用的块，标出它的每一句；
  · 抄了标签、claim 为 None（那一句没有引用）：这一段第一个有标签的句子，也就是问题点名的那一句；
  · 别的（空回答之类）：不属于某一句。
全部和句子数、问题数、引用数成正比。
"""
from collections.abc import Sequence

from sourced_answers.checker.markup import copied_tags_by_paragraph
from sourced_answers.checker.structure import Structure, checked_indexes
from sourced_answers.checker.types import Problem


def checked_positions(structure: Structure) -> list[int]:
    """Report.claims 的第 k 项是第几个句子：[位置, …]（带引用的句子，按顺序）。"""
    return [position for position, index in enumerate(checked_indexes(structure.claims)) if index is not None]


def problem_places(structure: Structure, problems: Sequence[Problem], spread: bool = True) -> dict[int, list[int]]:
    """句子的位置 → 标出它的问题（在 problems 里的下标，按顺序）。problems 要是对这同一个回答核对出来的。
    spread 为 False 时，引了不存在的编号的问题只标它点名的那一句（它的 claim），不标别的引了这些编号的句子。"""
    positions = checked_positions(structure)
    uncited = iter(structure.uncited)
    tagged: dict[int, int] | None = None  # 段落 → 第一个有标签的句子（用到时才找）
    by_citation: dict[int, list[int]] | None = None  # 编号 → 引了它的句子（用到时才建）
    missing_seen: set[tuple[int, ...]] = set()
    places: dict[int, list[int]] = {}
    for number, problem in enumerate(problems):
        found: Sequence[int] = ()
        if problem.kind == "missing_source" and spread:
            numbers = tuple(sorted(set(problem.citations or ())))
            if numbers not in missing_seen:
                missing_seen.add(numbers)
                if by_citation is None:
                    by_citation = citing(structure)
                found = sorted({position for n in numbers for position in by_citation.get(n, [])})
        elif problem.kind == "uncited_paragraph":
            unit = next(uncited, None)
            found = unit.claims if unit is not None else ()
        elif problem.claim is not None and 0 <= problem.claim < len(positions):
            found = (positions[problem.claim],)
        elif problem.kind == "copied_markup" and problem.paragraph is not None:
            if tagged is None:
                tagged = {paragraph: tags.first
                          for paragraph, tags in copied_tags_by_paragraph(structure.claims).items()}
            found = (tagged[problem.paragraph],) if problem.paragraph in tagged else ()
        for position in found:
            places.setdefault(position, []).append(number)
    return places


def citing(structure: Structure) -> dict[int, list[int]]:
    """编号 → 引了它的句子的位置（每句只记一次）。"""
    found: dict[int, list[int]] = {}
    for position, claim in enumerate(structure.claims):
        for number in set(claim.citations):
            found.setdefault(number, []).append(position)
    return found
