"""数字的规则：句子里的数量在所引资料里找不到，或者在同一处和资料说的数不一样（number_mismatch，确定的规则）。

  · 同一处不一样：句子照抄了资料的一段、只把数换了（“RAID5 至少需要四块盘”对“RAID5 至少需要三块盘”、
    “争夺第一名”对“争夺第三名”、“1991年成立”对“1990年成立”）：对齐之后，数在一段对上的字紧挨着的同一处
    （slots.edges），资料在同一处用同一个单位说了另一个数。资料同一句里也说了句子的这个数（“偷逃 0.61 亿元，罚款
    高达 1.06 亿元”），或者资料别处说了这个数、而且那一句把句子的这个分句对得比同一处那一句更多（最像的一句说的是
    北美的上映日期，另一句说了内地的），就不算；日期和总数在资料别处一字不差地说过也不算；
  · 找不到：这个数量（值和单位，写法不论：三块 = 3 块 = ③块 = Ⅲ块）在所引的几条资料里都没有。年份例外：资料里
    根本没提这一年时，回答常常只是给资料里的事补上年份（标注者多半仍算有依据），所以年份只在同一处说了另一年时算错。
举例用的数（“例如 100 元的商品”）不算。不比最接近的一句里别的数：那一句常常说的是另一件事。
"""
import re
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from sourced_answers.checker.alignment import Alignment, Units, Window, align, units_of
from sourced_answers.checker.edges import edges, same_place
from sourced_answers.checker.indexes import SourceIndexes
from sourced_answers.checker.polarity import positions
from sourced_answers.checker.quantities import (
    DATE_UNIT,
    DAY,
    YEAR_UNIT,
    Found,
    Known,
    Quantity,
    Span,
    found_in,
    is_noun_unit,
    quantity_spans,
    totals_in,
)
from sourced_answers.checker.reading import Reading, Seen
from sourced_answers.checker.text import quote

# 数东西用的量词：和通用的“个”算同一种单位（岁、元、米、年这些不算）
COUNTED_UNITS = frozenset("个块盘位台张条项本部只件次种份人名层颗粒杯瓶碗场节章集季轮号路道码间辆架艘口片座所家首")
# 资料别处说了这个数的句子，最多拿这么多句来和同一处那一句比
ALTERNATIVES = 8


@dataclass(frozen=True)
class Swapped:
    """同一处换了数：句子里的那个数量和它的位置（读出来的文字里），资料（source 的第 sentence 句）里那个数量的位置。"""
    quantity: Quantity
    claim: Span
    source: int
    sentence: int
    span: Span


def same_unit(left: str | None, right: str | None) -> bool:
    """两个单位算不算同一种数量：一样；或者一个是通用的“个”、另一个是数东西用的量词（“两个盘位”=“两盘位”，
    “一名”≠“18岁”）；或者有一个只是名词（“100,000 subscribers”“100k channel subscribers”，见
    quantities.is_noun_unit）。没有单位的数（“2018”）只和没有单位或者名词的比。"""
    if left == right or is_noun_unit(left) or is_noun_unit(right):
        return True
    if "个" not in (left, right):
        return False
    other = right if left == "个" else left
    return other in COUNTED_UNITS


def sentence_quantities(index_of: SourceIndexes, source: int, sentence: int) -> list[tuple[Quantity, Span]]:
    """资料 source 的第 sentence 句里的数量和位置（每句只读一次）。"""
    key = ("sentence quantities", source, sentence)
    if key not in index_of.memo:
        index_of.memo[key] = quantity_spans(index_of(source).sentences[sentence], single=True)
    found: list[tuple[Quantity, Span]] = index_of.memo[key]
    return found


def overlaps(span: Span, other: Span) -> bool:
    """两段有重叠；空的一段（一个位置）落在另一段里（包括两头）也算。"""
    if span[0] == span[1]:
        return other[0] <= span[0] <= other[1]
    if other[0] == other[1]:
        return span[0] <= other[0] <= span[1]
    return span[0] < other[1] and other[0] < span[1]


def swapped_numbers(own: Seen, alignment: Alignment, claimed: Sequence[tuple[Quantity, Span]],
                    index_of: SourceIndexes) -> list[Swapped]:
    """同一处换了数的那些数量（见模块说明，还没有排除资料别处说过的）。"""
    if not claimed or not alignment.pieces:
        return []
    claim_units = units_of(own)
    found: list[Swapped] = []
    places = [edge for edge in edges(claim_units, alignment, lambda n, k: index_of(n).sentence_units(k))
              if same_place(edge, alignment, own, claim_units)]
    # 对上的各段、各处同一处都按在句子里的位置排好：每个数只看它附近的几段（一句很长的话里有成千上万个数）
    pieces = sorted(alignment.pieces, key=lambda piece: piece.claim)
    piece_starts = [piece.claim[0] for piece in pieces]
    places.sort(key=lambda edge: edge.claim)
    place_starts = [edge.claim[0] for edge in places]
    longest = max((edge.claim[1] - edge.claim[0] for edge in places), default=0)
    for quantity, span in claimed:
        holder = bisect_right(piece_starts, span[0]) - 1
        if holder >= 0 and copied_with_context(claim_units, pieces[holder].claim, span):
            continue  # 连同前后的字一字不差地照抄了资料：就是资料的数
        first = bisect_left(place_starts, span[0] - longest)
        for edge in places[first:bisect_right(place_starts, span[1])]:
            if not overlaps(span, edge.claim):
                continue
            there = [(other, where) for other, where in sentence_quantities(index_of, edge.piece.source,
                                                                             edge.piece.sentence)
                     if overlaps(where, edge.span) and same_unit(other[1], quantity[1])]
            ends = range_ends(own, claimed, span)
            if there and all(other[0] != quantity[0] and other[0] not in ends for other, _ in there):
                found.append(Swapped(quantity, span, edge.piece.source, edge.piece.sentence, there[0][1]))
                break
    return found


RANGE = re.compile(r"[ \t]*(?:[-–—~～至到]|to|through)[ \t]*", re.IGNORECASE)


def range_ends(text: str, claimed: Sequence[tuple[Quantity, Span]], span: Span) -> set[float]:
    """span 这个数是一个范围的一头时（“2 to 3 months”“3-5 块”“三到五年”），另一头的值：资料说的是另一头，
    不算换了数。"""
    ends: set[float] = set()
    for other, where in claimed:
        between = (where[1], span[0]) if where[1] <= span[0] else (span[1], where[0])
        if where != span and between[0] <= between[1] and RANGE.fullmatch(text, *between):
            ends.add(other[0])
    return ends


def copied_with_context(units: Units, piece: Span, span: Span) -> bool:
    """这个数在对上的一段里，而且那一段除了这个数和它后面的一个字（单位）还有别的字：是连同上下文照抄的。
    只有“two disks”这两个字对上了别处的一句，说明不了什么。"""
    if not (piece[0] <= span[0] and span[1] <= piece[1]):
        return False
    size = bisect_left(units.starts, piece[1]) - bisect_left(units.starts, piece[0])
    number = bisect_left(units.starts, span[1]) - bisect_left(units.starts, span[0])
    return size > number + 1


# 比数时的分句：到逗号、句号、分号、问号、叹号、换行为止（冒号不算：“价格：2999 元”是一个分句）
NUMBER_CLAUSE_BREAK = re.compile(r"[，。,;；！？!?\n]")


def clause_span(text: str, span: Span) -> Span:
    """span 所在的分句（标点的位置每段文字只找一遍：一句很长的话里每个数都要找它的分句）。"""
    starts, _ = positions(NUMBER_CLAUSE_BREAK, text)
    before = bisect_left(starts, span[0])
    after = bisect_left(starts, span[1])
    return (starts[before - 1] + 1 if before else 0), (starts[after] if after < len(starts) else len(text))


def covered_units(text: Seen, units: Units, window: Window) -> set[int]:
    """这段文字里对上了窗口里的资料的“字”（第几个）。"""
    found: set[int] = set()
    for piece in align(text, window).pieces:
        first = bisect_left(units.starts, piece.claim[0])
        last = bisect_left(units.starts, piece.claim[1])
        found.update(range(first, last))
    return found


def explained_elsewhere(own: Seen, swap: Swapped, numbers: Sequence[int], index_of: SourceIndexes) -> bool:
    """资料同一句里也说了这个数；或者资料别处说这个数的一句，对上了这个分句里同一处那一句没对上的字（“Silver”
    “中国内地”：那一句说的才是句子说的这件事，见模块说明）。"""
    quantity = swap.quantity
    if any(other[0] == quantity[0] and same_unit(other[1], quantity[1])
           for other, _ in sentence_quantities(index_of, swap.source, swap.sentence)):
        return True
    clause = Seen(own[slice(*clause_span(own, swap.claim))])
    units = units_of(clause)
    offset = clause_span(own, swap.claim)[0]
    number = set(range(bisect_left(units.starts, swap.claim[0] - offset),
                       bisect_left(units.starts, swap.claim[1] - offset)))
    here = covered_units(clause, units, Window([(swap.source, swap.sentence,
                                                 index_of(swap.source).sentence_units(swap.sentence))]))
    checked = 0
    for source in numbers:
        index = index_of(source)
        for sentence in index.sentences_with(quantity[0]):
            if (source, sentence) == (swap.source, swap.sentence):
                continue
            there = covered_units(clause, units, Window([(source, sentence, index.sentence_units(sentence))]))
            if there - here - number:
                return True
            checked += 1
            if checked >= ALTERNATIVES:
                return False
    return False


def lenient(quantity: Quantity, totals: set[Quantity]) -> bool:
    """日期、只说了几日的日子和总数：资料别处一字不差地说过就算对得上（最接近的一句可能在说同一本书的另一个日期、
    只说了总数的一部分）。"""
    return quantity[1] in (DATE_UNIT, DAY) or quantity in totals


@dataclass(frozen=True)
class NumberFinding:
    """数字的规则的结论：同一处换了的数（swapped），和资料里找不到的数（missing，值）。"""
    swapped: tuple[Swapped, ...]
    missing: tuple[float, ...]


def check_numbers(own: Reading, alignment: Alignment, numbers: Sequence[int], known: Known,
                  index_of: SourceIndexes, claimed: set[Quantity], spans: Found) -> NumberFinding | None:
    """句子（它自己的读法 own，不连同引出的列表项）里的数和所引资料比（见模块说明）；都对得上时为 None。
    claimed：句子里的数量（quantities_in，“一个”不算）；spans：连同“一块”“一个”的数量和位置（同一处比数时用）。"""
    totals = totals_in(own.text)
    swapped = [swap for swap in swapped_numbers(own.text, alignment, spans, index_of)
               if not (lenient(swap.quantity, totals) and found_in(swap.quantity, known))
               and not explained_elsewhere(own.text, swap, numbers, index_of)]
    swapped_spans = {swap.claim for swap in swapped}
    missing = sorted({quantity[0] for quantity, span in spans if quantity in claimed
                      and span not in swapped_spans and quantity[1] != YEAR_UNIT and not found_in(quantity, known)})
    if not swapped and not missing:
        return None
    return NumberFinding(tuple(swapped), tuple(missing))



def number_message(quoted: str, own: Reading, finding: NumberFinding, cited: str, here: str,
                   index_of: SourceIndexes) -> str:
    """数字的问题的说明：同一处换了数的，写出资料和回答各自的写法；找不到的，写出是哪几个数。quoted：说明里引用的
    句子；cited：它引用的资料（“[1]”“[1]（继承自上文）”）；here：资料编号后面的说明（“（继承自上文）”或者空的）。"""
    if finding.swapped:
        swap = finding.swapped[0]
        said = own.origin_span(*with_unit(own.text, swap.claim))
        sentence = index_of(swap.source).sentences[swap.sentence]
        there = index_of(swap.source).written_span(swap.sentence, with_unit(sentence, swap.span))
        return f"“{quoted}”：资料 [{swap.source}]{here} 在同一处说的是“{quote(there)}”，回答写成“{quote(said)}”"
    return not_found(quoted, list(finding.missing), cited)


def with_unit(text: str, span: tuple[int, int]) -> tuple[int, int]:
    """数连同紧跟在后面的单位（一个汉字量词，或者紧挨着的字母、%）：“三”→“三块”，“2.1”→“2.1%”。"""
    end = span[1]
    word = re.match(r" ([A-Za-z]{1,12})\b", text[end:end + 14])
    if word:
        return span[0], end + word.end()  # 英文：“three disks”
    while end < len(text) and end - span[1] < 3 and (text[end].isalpha() or text[end] in "%％") \
            and not text[end].isspace():
        end += 1
        if not text[end - 1].isascii():
            break
    return span[0], end


def shown(values: list[float]) -> str:
    return "、".join(number_shown(value) for value in values)


def number_shown(value: float) -> str:
    """说明里的一个数：1.2e+10 写成“120 亿”，42 万写成“42 万”，别的照常（3、2.5、2023）。"""
    for size, name in ((1e8, "亿"), (1e4, "万")):
        if abs(value) >= size and (value / size) == round(value / size, 4):
            return f"{value / size:g} {name}"
    return f"{value:g}"


def not_found(quoted: str, missing: list[float], cited: str) -> str:
    return f"“{quoted}” 里的数字 {shown(missing)} 在资料 {cited} 里找不到"
