"""审阅页上的对齐：句子里资料中找不到的那几个字标出来，被标出的句子下面并排放着它和资料里对上的那一段
（对上的字也标出来），人几秒钟就能看出“这几个字资料里没有”。读的是记录里每一句的 evidence 和 unmatched
（checker/evidence.py：位置在 answer 和资料 text 里，Unicode 码位数）。记录里没有这两项（旧版本写的）时什么也不加。
"""
import unicodedata
from collections.abc import Sequence
from typing import Any

from sourced_answers.checker import Structure, checked_positions, in_word, stripped_positions
from sourced_answers.outputs.records import Record
from sourced_answers.outputs.review_reasons import escape, is_number

# 资料那一边：对上的几段前后各多给这么多个字（到句子的标点为止；拉丁文不截在单词中间），看得出上下文
CONTEXT = 40
SENTENCE_END = "。！？!?；;\n"

Span = tuple[int, int]


def checked_by_claim(record: Record, structure: Structure) -> dict[int, dict[str, Any]]:
    """每个句子（在 structure.claims 里的位置）在 record["claims"] 里的那一项；记录的 claims 和回答对不上时是空的。"""
    checked = record.get("claims") or []
    positions = checked_positions(structure)
    if not isinstance(checked, list) or len(checked) != len(positions):
        return {}
    return {position: claim for position, claim in zip(positions, checked, strict=True) if isinstance(claim, dict)}


class Shown:
    """记录里 answer 的位置 → 页面上显示的回答（去掉终端控制序列之后）里的位置。"""

    def __init__(self, answer: str) -> None:
        positions = stripped_positions(answer)
        self.inverse = None if positions is None else {original: shown for shown, original in enumerate(positions)}

    def span(self, start: object, end: object) -> Span | None:
        if not (is_number(start) and is_number(end)) or end <= start:
            return None
        if self.inverse is None:
            return int(start), int(end)
        first = self.inverse.get(int(start))
        last = self.inverse.get(int(end) - 1)
        return (first, last + 1) if first is not None and last is not None else None


def spans_of(items: object, shown: Shown, within: Span) -> list[Span]:
    """一项项 {answer_start, answer_end} → 页面上的位置，只留在 within（这一句）里面的，相对这一句的开头。"""
    found: list[Span] = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        span = shown.span(item.get("answer_start"), item.get("answer_end"))
        if span and within[0] <= span[0] and span[1] <= within[1]:
            found.append((span[0] - within[0], span[1] - within[0]))
    return sorted(found)


def marked(text: str, spans: Sequence[Span], css: str) -> str:
    """转义 text，spans 那几段包进 <mark class=css>（重叠的、越界的跳过）。"""
    pieces: list[str] = []
    position = 0
    for start, end in spans:
        if start < position or end > len(text):
            continue
        pieces.append(escape(text[position:start]))
        pieces.append(f'<mark class="{css}">{escape(text[start:end])}</mark>')
        position = end
    pieces.append(escape(text[position:]))
    return "".join(pieces)


def claim_html(text: str, checked: dict[str, Any] | None, shown: Shown, span: Span) -> str:
    """页面上的一句：资料里找不到的那几个字标出来（class="gap"）。"""
    gaps = spans_of(checked.get("unmatched"), shown, span) if checked else []
    return marked(text, gaps, "gap")


def source_excerpt(checked: dict[str, Any], sources: Sequence[Any]) -> tuple[int, str] | None:
    """这一句对上得最多的那条资料里对上的那一段（前后多给一点上下文，到句子的标点为止），对上的字标出来
    （class="same"）：(资料编号, HTML)。没有对上资料正文的字时为 None。"""
    by_source: dict[int, list[Span]] = {}
    for item in checked.get("evidence") or []:
        if not isinstance(item, dict) or item.get("field") != "text":
            continue
        number, start, end = item.get("source"), item.get("start"), item.get("end")
        if isinstance(number, int) and 1 <= number <= len(sources) and is_number(start) and is_number(end):
            by_source.setdefault(number, []).append((int(start), int(end)))
    if not by_source:
        return None
    number = max(by_source, key=lambda n: (sum(end - start for start, end in by_source[n]), -n))
    source = sources[number - 1]
    text = str(source.get("text") or "") if isinstance(source, dict) else ""
    spans = sorted(by_source[number])
    low, high = spans[0][0], max(end for _, end in spans)
    if high > len(text):
        return None
    left = max(low - CONTEXT, max((text.rfind(mark, 0, low) + 1 for mark in SENTENCE_END), default=0))
    right = min(high + CONTEXT, min((i for i in (text.find(mark, high) for mark in SENTENCE_END) if i >= 0),
                                    default=len(text)) + 1, len(text))
    left, right = cut_between_words(text, left, low), cut_between_words(text, right, high)
    excerpt = text[left:right]
    prefix = "…" if text[:left].strip() else ""
    suffix = "…" if text[right:].strip() else ""
    return number, prefix + marked(excerpt, [(start - left, end - left) for start, end in spans], "same") + suffix


def cut_between_words(text: str, cut: int, limit: int) -> int:
    """上下文的一头截在 cut：不截在拉丁文（数字、西里尔文……）的单词中间，也不把附加符号和它前面的字分开——
    往对上的那一段（limit）挪到单词的边上，再越过空白（“…”紧挨着字）。汉字之间在哪里截都行。"""
    step = 1 if cut <= limit else -1

    def inside(position: int) -> bool:
        if not 0 < position < len(text):
            return False
        before, after = text[position - 1], text[position]
        return (in_word(before) and in_word(after)) or unicodedata.combining(after) > 0
    while cut != limit and (inside(cut) or text[cut if step > 0 else cut - 1].isspace()):
        cut += step
    return cut


def comparison(text: str, checked: dict[str, Any] | None, shown: Shown, span: Span, sources: Sequence[Any],
               prefix: str) -> str:
    """被标出的一句下面：左边是这句话（找不到的字标出来），右边是资料里对上的那一段（对上的字标出来）。"""
    if not checked:
        return ""
    found = source_excerpt(checked, sources)
    if found is None:
        return ""
    number, excerpt = found
    return (f'<div class="compare"><div><b>回答</b>：{claim_html(text, checked, shown, span)}</div>'
            f'<div><b>资料 <a href="#{prefix}src-{number}">[{number}]</a></b>：{excerpt}</div></div>')
