"""回答本身完不完整：被长度上限截断了（truncated），或者一字不差地重复同一段、同一句（repeated：小模型卡在循环里）。

这两种问题和引用对不对无关：半个回答、把一段话写八遍的回答，每一句都引对了也不是一个核对过的回答。
  · truncated：回答到了长度上限（模型服务说 finish_reason 是 length，或者保存的记录写着 truncated: true）。
    说明里写出它停在哪里（最后几个字），问题记在最后一段上；
  · repeated：同一段（段落或列表项，去掉首尾空白）出现了两次以上，或者同一句话（去掉引用后的正文）出现了
    两次以上（整段重复了的不再按句子另报）。太短的（内容不到 MIN_REPEATED 个字，“是的 [1]”）不算。
    每一段、每一句重复的内容只报一次，写出它出现在哪几段、一共几次。
纯逻辑，只用标准库；按文字分组（字典），代价和回答的长度成正比。
"""
from collections.abc import Sequence

from sourced_answers.checker.reading import seen
from sourced_answers.checker.structure import Structure, Unit, checked_indexes
from sourced_answers.checker.text import quote
from sourced_answers.checker.tokens import content_characters
from sourced_answers.checker.types import Problem

# 内容（字母、数字、汉字）不到这么多个字的段、句重复了不算：“是的 [1]”“详见 [2]”
MIN_REPEATED = 8
# 说明里引用回答最后的这么多个字
TAIL = 24


def truncated_problem(answer: str, structure: Structure) -> Problem:
    """回答被长度上限截断了：停在哪几个字上，记在最后一段。"""
    tail = " ".join(answer.split())[-TAIL:]
    paragraph = structure.units[-1].paragraph if structure.units else None
    return Problem("truncated", f"回答到了长度上限被截断了，停在“…{quote(tail, 2 * TAIL + 2)}”：后面没有写完",
                   paragraph=paragraph)


def places(paragraphs: Sequence[int]) -> str:
    """段号写成“第 1、3–8 段”：连着的写成一段范围。"""
    numbers = sorted(set(paragraphs))
    spans: list[str] = []
    start = previous = numbers[0]
    for number in numbers[1:] + [None]:
        if number is not None and number == previous + 1:
            previous = number
            continue
        spans.append(str(start) if start == previous else f"{start}–{previous}")
        if number is not None:
            start = previous = number
    return f"第 {'、'.join(spans)} 段"


def repeated_problems(structure: Structure) -> list[Problem]:
    """一字不差地重复的段和句（见模块说明），按第一次重复出现的位置排好。"""
    units: dict[str, list[Unit]] = {}
    for unit in structure.units:
        text = "\n".join(unit.lines).strip()
        if content_characters(seen(text)) >= MIN_REPEATED:
            units.setdefault(text, []).append(unit)
    indexes = checked_indexes(structure.claims)
    found: list[tuple[int, Problem]] = []
    covered: set[int] = set()  # 整段重复了的段里的句子：不再按句子另报一次
    for text, copies in units.items():
        if len(copies) < 2:
            continue
        for unit in copies:
            covered.update(unit.claims)
        first_repeat = copies[1]
        message = (f"第 {first_repeat.paragraph} 段：和前面的第 {copies[0].paragraph} 段一字不差，这段话一共写了 "
                   f"{len(copies)} 遍（{places([u.paragraph for u in copies])}）：“{quote(text)}”")
        # 记在第二遍的第一句上（它有引用时）：审阅页把原因写在那一句下面
        at = indexes[first_repeat.claims.start] if first_repeat.claims else None
        sentence = structure.claims[first_repeat.claims.start].text if at is not None else text
        found.append((first_repeat.claims.start if first_repeat.claims else 0,
                      Problem("repeated", message, paragraph=first_repeat.paragraph, sentence=sentence, claim=at)))
    sentences: dict[str, list[int]] = {}
    for position, claim in enumerate(structure.claims):
        if position not in covered and content_characters(seen(claim.body)) >= MIN_REPEATED:
            # 按正文比（引用不算）：同一句话写了两遍，引用不同也是写了两遍（哪一句引错了由别的规则管）
            sentences.setdefault(" ".join(claim.body.split()), []).append(position)
    for text, positions in sentences.items():
        if len(positions) < 2:
            continue
        claims = [structure.claims[position] for position in positions]
        message = (f"第 {claims[1].paragraph} 段：这句话前面已经一字不差地写过，一共写了 {len(positions)} 遍"
                   f"（{places([c.paragraph for c in claims])}）：“{quote(text)}”")
        second = positions[1]
        found.append((second, Problem("repeated", message, paragraph=claims[1].paragraph, sentence=claims[1].text,
                                      citations=claims[1].citations or None, claim=indexes[second])))
    return [problem for _, problem in sorted(found, key=lambda pair: pair[0])]
