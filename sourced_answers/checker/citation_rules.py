"""引用和结构的确定的规则：编号存在（missing_source）、抄了提示词标签（copied_markup）、每段有引用（uncited_paragraph）、
只有表情或符号的一截写了引用（weak_support，decoration_problem），以及没被引用的资料。只看回答的结构和引用，不看资料的内容。"""
from sourced_answers.checker.markup import copied_markup_problems
from sourced_answers.checker.structure import Structure, analyse, checked_indexes, is_decoration, unit_citations
from sourced_answers.checker.text import format_citations, quote
from sourced_answers.checker.types import Claim, ClaimCheck, Problem


def structure_problems(answer: str, source_count: int) -> tuple[list[Problem], list[int], set[int], Structure]:
    """编号存在、抄了提示词标签、每段（每个列表项）有引用、没被引用的资料。
    返回 (问题, 没用到的编号, 引用过的编号, 结构)。"""
    structure = analyse(answer)
    places: dict[int, list[int]] = {}  # 编号 → 写了它的段落（按顺序，不重复）
    for unit in structure.units:
        for number in unit_citations(unit):
            paragraphs = places.setdefault(number, [])
            if not paragraphs or paragraphs[-1] != unit.paragraph:
                paragraphs.append(unit.paragraph)
    indexes = checked_indexes(structure.claims)
    problems = missing_source_problems(structure, places, source_count, indexes)
    problems += copied_markup_problems(structure.claims, source_count, indexes)
    for unit in structure.uncited:
        text = "\n".join(unit.lines).strip()
        # 引用只写在表情后面（“🎉🎉 [1]”）：说出它为什么不算，不然读的人看见 [1] 会以为说错了
        why = "（只有表情或符号的一截写的引用不算）" if unit_citations(unit) else ""
        problems.append(Problem("uncited_paragraph", f"{unit.where}没有引用{why}：“{quote(text)}”",
                                paragraph=unit.paragraph, sentence=text))
    # 用到的资料：回答里算数的引用（只有表情、符号的“👍 [3]”不算用到了 [3]）；不存在的编号由上面的规则报
    cited = {number for unit in structure.units for number in unit.own} | {
        number for number in places if not 1 <= number <= source_count}
    unused = [n for n in range(1, source_count + 1) if n not in cited]
    return problems, unused, cited, structure


# 一个问题里最多写出这么多个不存在的编号，其余的只说个数（一句话引了几千个不存在的编号时，说明也不会变长）
MISSING_SHOWN = 5


def missing_source_problems(structure: Structure, places: dict[int, list[int]], source_count: int,
                            indexes: list[int | None]) -> list[Problem]:
    """不存在的编号，按第一次引用它们的句子归成一个问题：指出段落和句子，以及另外还有几段也引用了它们。
    一句话引了很多个不存在的编号也只是一个问题（每个编号一个问题、每个都带上整句话，输出就成了平方级的）。
    点名了句子的问题带着那一句的下标（indexes：每个句子在 Report.claims 里的下标）；
    编号只出现在段落（列表项）共用、继承的引用里时，问题只点名段落，claim 为 None。"""
    missing = sorted(n for n in places if not 1 <= n <= source_count)
    if not missing:
        return []
    first: dict[int, int] = {}  # 编号 → 第一个自己写了它的句子（在句子列表里的位置）
    for position, claim in enumerate(structure.claims):
        if not claim.shared and not claim.inherited:  # 句子自己写的引用
            for number in claim.citations:
                if not 1 <= number <= source_count:
                    first.setdefault(number, position)
    groups: dict[tuple[int, int | None], list[int]] = {}
    for number in missing:
        paragraph = places[number][0]
        written = first.get(number)
        named = written if written is not None and structure.claims[written].paragraph == paragraph else None
        groups.setdefault((paragraph, named), []).append(number)
    problems = []
    for (paragraph, named), numbers in groups.items():
        sentence = structure.claims[named].text if named is not None else None
        shown = format_citations(numbers[:MISSING_SHOWN])
        if len(numbers) > MISSING_SHOWN:
            shown += f" 等 {len(numbers)} 个编号"
        message = f"“{quote(sentence)}” 引用了不存在的 {shown}" if sentence else f"引用了不存在的 {shown}"
        others = {other for number in numbers for other in places[number] if other != paragraph}
        if others:
            message += f"（另外还有 {len(others)} 段也引用了{'它' if len(numbers) == 1 else '它们'}）"
        problems.append(Problem("missing_source", message, paragraph, sentence, citations=numbers,
                                claim=indexes[named] if named is not None else None))
    return problems


def decoration_problem(claim: Claim) -> tuple[ClaimCheck, Problem] | None:
    """只有表情或符号、自己写了引用的一截（“🎉🎉 [1]”“👍👍👍 [2]”）：它没说出资料里的任何内容，引用给不了它依据。
    不是这样的一截时为 None。确定的规则（certain）：评判模型不问它。"""
    if not is_decoration(claim):
        return None
    numbers = list(dict.fromkeys(claim.citations))
    where = (claim.paragraph, claim.text, numbers)
    message = f"“{quote(claim.text)}” 只有表情或符号，没有说出资料 {format_citations(numbers)} 里的任何内容"
    return (ClaimCheck(*where, None, None, None, "weak_support", certain=True),
            Problem("weak_support", message, *where))
