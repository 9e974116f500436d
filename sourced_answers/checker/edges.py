"""同一处：对齐之后，每一段对上的字（alignment.Piece）紧挨着的前面、后面几个字（Edge），和它是不是确实是同一处
（same_place）。照抄资料、只换了一处的规则（slots.py 的说反了、反义词，names.py 的名字，number_rule.py 的数）
都只看这里给出的同一处。

一段对上的字两边都一样，它紧挨着的前面（或后面）几个字就是“同一处”：句子和资料在这里各说了什么，只看这几个字
（EDGE 个字以内、不跨过分句）。同一处要确实是同一处：对上的一段很长，或者它两头都对上了资料同一句里紧挨着的
地方，或者它就在分句的开头、一直对到分句的末尾。只用标准库；每一段只看它前后几个字，代价和句子的长度成正比。
"""
import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from sourced_answers.checker.alignment import Alignment, Piece, Span, Units
from sourced_answers.checker.polarity import CLAUSE_BREAK
from sourced_answers.checker.reading import Seen
from sourced_answers.checker.tokens import ENGLISH_STOPWORDS

# 同一处：对上的一段前后各看这么多个字
EDGE = 4


# 对上的一段至少这么多个字，才说明两边说的是同一处
MIN_PIECE = 2


# 否定的那几个字里只有这些字时，否定的不是一件事（“不能这样”“不是这个”）
FILLER = set("这那些么样的了着过地得是也都就还又很太更最此其它他她我你您们个")


@dataclass(frozen=True)
class Contradiction:
    """同一处的矛盾：种类（polarity、opposite、name），句子里的那几个字和资料（source 的第 sentence 句）里的那几个字
    （读出来的文字里的位置）。"""
    kind: str
    claim: Span
    source: int
    sentence: int
    span: Span


@dataclass(frozen=True)
class Edge:
    """对上的一段（piece）紧挨着的前面（side 为 before）或后面（after）：句子里的几个字（claim，在句子读出来的文字里）
    和资料那一句里的几个字（span，在那一句读出来的文字里），各自不超过 EDGE 个字、不跨过分句，可以是空的。"""
    piece: Piece
    side: str
    claim: Span
    span: Span


def unit_range(units: Units, span: Span) -> tuple[int, int]:
    """文字里 span 这一段是第几个到第几个“字”（不含结尾）。"""
    return bisect_left(units.starts, span[0]), bisect_right(units.starts, span[1] - 1)


def edge_before(units: Units, first: int) -> Span:
    """第 first 个字前面、同一个分句里的至多 EDGE 个字的位置（没有时是第 first 个字开头的一个空位）。"""
    start = first
    while start > 0 and first - start < EDGE and not units.breaks[start]:
        start -= 1
    if start == first:
        point = units.starts[first] if first < len(units.starts) else (units.ends[-1] if units.ends else 0)
        return point, point
    return units.starts[start], units.ends[first - 1]


def edge_after(units: Units, last: int) -> Span:
    """第 last 个字（不含）后面、同一个分句里的至多 EDGE 个字的位置。"""
    end = last
    while end < len(units.codes) and end - last < EDGE and not units.breaks[end]:
        end += 1
    if end == last:
        point = units.ends[last - 1] if last else 0
        return point, point
    return units.starts[last], units.ends[end - 1]


def clause_ends(units: Units, position: int) -> bool:
    """第 position 个字（不含）之前，分句到了末尾。"""
    return position >= len(units.codes) or units.breaks[position]


# 一句话最多看这么多段对上的字的同一处。真的一句话远远到不了（两千段是几万字）；一整篇没有句号、1 MB 的“一句话”
# 再往后的同一处不比（支持分照样算整句），核对的时间不会因为它变成几秒（bench/benchmark_check.py）
MAX_PIECES = 2000


def edges(claim_units: Units, alignment: Alignment, units_of_sentence: Callable[[int, int], Units]) -> Iterator[Edge]:
    """每一段对上的字（至少 MIN_PIECE 个字）前后的“同一处”（一句话最多 MAX_PIECES 段）。"""
    for piece in alignment.pieces[:MAX_PIECES]:
        first, last = unit_range(claim_units, piece.claim)
        source_units = units_of_sentence(piece.source, piece.sentence)
        source_first, source_last = unit_range(source_units, piece.span)
        if last - first < MIN_PIECE and not (last - first == 1 and clause_ends(claim_units, last)
                                             and clause_ends(source_units, source_last)):
            continue  # 一个字只在两边的分句都到了末尾时算（“利用率不高”对“利用率较高”的“高”）
        yield Edge(piece, "before", edge_before(claim_units, first), edge_before(source_units, source_first))
        yield Edge(piece, "after", edge_after(claim_units, last), edge_after(source_units, source_last))


def says_something(text: str, span: Span) -> bool:
    """对上的那一段开头（同一个分句里的至多四个字）有内容，不只是“这样”“是这个”这类字。"""
    clause_end = CLAUSE_BREAK.search(text, span[0], span[1])  # 只在这一段里找：一句话可以很长
    end = clause_end.start() if clause_end else span[1]
    head = text[span[0]:end]
    words = re.findall(r"[A-Za-z]+|[^\W\d_]", head)[:4]
    if words and words[0].isascii():
        return any(word.lower() not in ENGLISH_STOPWORDS for word in words)
    return any(word not in FILLER for word in words)


def stripped(text: str, span: Span) -> Span:
    """span 去掉两头的空白。"""
    start, end = span
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


# 带数字的型号、名称：字母紧挨着数字（RAID5、DS920+），或者大写字母的词后面隔一个空格跟着数字（RAID 5、Wi-Fi 6）
IDENTIFIER = re.compile(r"[A-Za-z]+[0-9]+|[A-Z][A-Za-z-]* [0-9]+")


# 对上的一段有这么多个字（有内容）时，单凭它就说明两边说的是同一处
LONG_PIECE = 5


# 分句开头的同一处（“不会推进农村危房改造”对“继续推进农村危房改造”），对上的一段至少这么多个字
LEAD_PIECE = 3


def same_place(edge: Edge, alignment: Alignment, claim: Seen, claim_units: Units) -> bool:
    """同一处确实是同一处：对上的那一段很长，或者是一个带数字的型号、名称（“RAID 5”“DS920”：说的就是它）；
    或者它前面（后面）隔着这几个字又有一段对上了资料同一句里紧挨着的地方（两头都对上了）；或者这几个字就在句子
    分句的开头（结尾）。两个字的偶然对上不算。"""
    first, last = unit_range(claim_units, edge.piece.claim)
    size = last - first
    if size >= LONG_PIECE and says_something(claim, edge.piece.claim):
        return True
    if size >= MIN_PIECE and IDENTIFIER.search(claim, *edge.piece.claim):
        return True
    final = size == 1  # 分句末尾的一个字（edges 只在两边的分句都到了末尾时给出这样的一段）
    touching = alignment.slot_ends.get(edge.piece.claim[0], []) if edge.side == "before" else \
        alignment.slot_starts.get(edge.piece.claim[1], [])
    for slot in touching:
        anchored = min(slot.before, slot.after) >= MIN_PIECE or \
            final and slot.after == 1 and slot.before >= LEAD_PIECE
        if slot.where == "mid" and slot.source == edge.piece.source and slot.sentence == edge.piece.sentence \
                and anchored:
            return True
    if size < LEAD_PIECE:
        return False
    edge_first, edge_last = unit_range(claim_units, edge.claim)
    clause_end = last
    while clause_end < len(claim_units.codes) and not claim_units.breaks[clause_end]:
        clause_end += 1
    if edge.side == "before":
        at_start = edge_first == edge_last or claim_units.breaks[edge_first] and first - edge_first < EDGE
        return at_start and clause_end - last <= 1  # 分句开头的同一处，对上的一段一直到分句的末尾
    return edge_last >= len(claim_units.codes) or claim_units.breaks[edge_last]
