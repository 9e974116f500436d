"""照抄资料、只换了一处的句子：对齐之后，每一段对上的字（alignment.Piece）前后紧挨着的几个字，两边说的是不是相反。

一段对上的字两边都一样，它紧挨着的前面（或后面）几个字就是“同一处”：句子和资料在这里各说了什么，只看这几个字
（EDGE 个字以内、不跨过分句）。同一处要确实是同一处（same_place）：对上的一段很长，或者它两头都对上了资料
同一句里紧挨着的地方，或者它就在分句的开头、一直对到分句的末尾。这样找出来的矛盾有三种：
  · polarity：同一处一边有否定、另一边没有（“不支持运行 Docker”对“支持运行 Docker”、“日本向海湾派遣”对
    “日本未能向海湾派遣”、“does not support”对“supports”），否定的正是后面两边都对上了的那几个字。什么是否定、
    什么地方不是在断言（问句、选择、假设、转述、委婉的说法、说的是以前）见 polarity.py；否定的是另加的词
    （“不确定”“不够大”：另加的说法，不是把资料的说法说反了）、只否定了“这样”“这个”的也不算；
  · opposite：同一处两边是一对反义词（opposites.py：“增加”对“减少”、“感性”对“理性”、“increase”对“decrease”）；
  · name：同一处两边都是英文的专有名词（大写开头、不在句首），却不是同一个名字（只差空格、大小写或一两个字母的
    写法不算）。
数字在同一处不一样由数量的规则比（rules.py 用这里的 edges）。
只用标准库；每一段对上的字只看它前后几个字，代价和句子的长度成正比。
"""
import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from sourced_answers.checker.alignment import Alignment, Piece, Span, Units, units_of
from sourced_answers.checker.opposites import OPPOSITES
from sourced_answers.checker.polarity import (
    CLAUSE_BREAK,
    EARLIER,
    NEGATIVE_MEANING,
    clause_start,
    negates_the_piece,
    negations,
    stated,
)
from sourced_answers.checker.reading import Seen
from sourced_answers.checker.source_index import SourceIndexes
from sourced_answers.checker.text import is_chinese_char
from sourced_answers.checker.tokens import ENGLISH_STOPWORDS

# 同一处：对上的一段前后各看这么多个字
EDGE = 4
# 对上的一段至少这么多个字，才说明两边说的是同一处
MIN_PIECE = 2
# 否定的那几个字里只有这些字时，否定的不是一件事（“不能这样”“不是这个”）
FILLER = set("这那些么样的了着过地得是也都就还又很太更最此其它他她我你您们个")
_PROPER = r"[A-Z][A-Za-z0-9'’-]*"
NAME_BEFORE = re.compile(rf"{_PROPER}(?: {_PROPER}){{0,2}}[ \t]*$")
NAME_AFTER = re.compile(rf"[ \t]*{_PROPER}(?: {_PROPER}){{0,2}}(?![A-Za-z])")


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


def edges(claim_units: Units, alignment: Alignment, units_of_sentence: Callable[[int, int], Units]) -> Iterator[Edge]:
    """每一段对上的字（至少 MIN_PIECE 个字）前后的“同一处”。"""
    for piece in alignment.pieces:
        first, last = unit_range(claim_units, piece.claim)
        source_units = units_of_sentence(piece.source, piece.sentence)
        source_first, source_last = unit_range(source_units, piece.span)
        if last - first < MIN_PIECE and not (last - first == 1 and clause_ends(claim_units, last)
                                             and clause_ends(source_units, source_last)):
            continue  # 一个字只在两边的分句都到了末尾时算（“利用率不高”对“利用率较高”的“高”）
        yield Edge(piece, "before", edge_before(claim_units, first), edge_before(source_units, source_first))
        yield Edge(piece, "after", edge_after(claim_units, last), edge_after(source_units, source_last))


# ---------- 否定 ----------

def says_something(text: str, span: Span) -> bool:
    """对上的那一段开头（同一个分句里的至多四个字）有内容，不只是“这样”“是这个”这类字。"""
    clause_end = CLAUSE_BREAK.search(text, span[0])
    end = min(span[1], clause_end.start() if clause_end else len(text))
    head = text[span[0]:end]
    words = re.findall(r"[A-Za-z]+|[^\W\d_]", head)[:4]
    if words and words[0].isascii():
        return any(word.lower() not in ENGLISH_STOPWORDS for word in words)
    return any(word not in FILLER for word in words)


def polarity(claim: Seen, source: Seen, edge: Edge) -> Contradiction | None:
    """对上的一段前面，一边否定了它、另一边没有（见模块说明）。"""
    if edge.side != "before":
        return None
    said = [n for n in negations(claim, edge.claim) if negates_the_piece(claim, edge.claim, n)]
    there = [n for n in negations(source, edge.span) if negates_the_piece(source, edge.span, n)]
    if bool(said) == bool(there):
        return None
    if said:
        negated, negation, piece, other, other_span = claim, said[-1], edge.piece.claim, source, edge.span
    else:
        negated, negation, piece, other, other_span = source, there[-1], edge.piece.span, claim, edge.claim
    other_clause = (clause_start(other, other_span[1]), other_span[1])
    if negations(other, other_clause) or NEGATIVE_MEANING.search(other, *other_clause):
        return None  # 另一边这个分句里也有否定（别的写法、双重否定）或委婉的说法：说不清
    if not says_something(negated, piece) or not stated(negated, negation[0], negation[1]):
        return None
    if EARLIER.search(negated, clause_start(negated, negation[0]), negation[1]):
        return None  # 说的是以前、还没有（“之前没有这个条例”“尚无存款保险制度”对“制定了这个条例”）：不是说反
    if not stated(other, other_span[1]):
        return None
    claim_span = (said[-1][0], edge.piece.claim[1]) if said else (edge.claim[1], edge.piece.claim[1])
    source_span = (there[-1][0], edge.piece.span[1]) if there else (edge.span[1], edge.piece.span[1])
    return Contradiction("polarity", shortened(claim, claim_span), edge.piece.source, edge.piece.sentence,
                         shortened(source, source_span))


def shortened(text: str, span: Span, width: int = 12) -> Span:
    """说明里引用的一段不要太长：从开头起最多 width 个字（不跨过分句）。"""
    start, end = span
    stop = CLAUSE_BREAK.search(text, start, end)
    end = min(end, stop.start() if stop else end, start + width)
    return start, end


# ---------- 反义词、名字 ----------

def adjacent_words(text: str, units: Units, span: Span, side: str, piece: Span) -> list[tuple[str, Span, bool]]:
    """同一处紧挨着对上的那一段的词：一个、两个、三个字，以及连同对上的那一段的第一个（最后一个）字（“感性”对
    “理性”里的“性”在对上的那一段里）。每个词带着它的位置，以及它是不是到了同一处的边上（再往外没有字了）。"""
    first, last = unit_range(units, span)
    inside = unit_range(units, piece)
    words: list[tuple[str, Span, bool]] = []
    for count in range(1, last - first + 1):
        if side == "before":
            choices = ((last - count, last), (last - count, inside[0] + 1))
            edge_reached = last - count == first
        else:
            choices = ((first, first + count), (inside[1] - 1, first + count))
            edge_reached = first + count == last
        for low, high in choices:
            word_span = (units.starts[low], units.ends[high - 1])
            words.append((word_of(text, word_span), word_span, edge_reached))
    return words


def outward(text: str, units: Units, span: Span, side: str, count: int) -> str:
    """同一处里，离对上的那一段 count 个字之外的那个字（没有时是空的）。"""
    first, last = unit_range(units, span)
    index = last - count - 1 if side == "before" else first + count
    return text[units.starts[index]:units.ends[index]] if first <= index < last else ""


def word_of(text: str, span: Span) -> str:
    """比较用的写法：汉字原样，英文小写、去掉复数的 s，词和词之间一个空格。"""
    piece = text[slice(*span)]
    if any(is_chinese_char(char) for char in piece):
        return "".join(piece.split())
    return " ".join(normal_word(word) for word in piece.lower().split())


def normal_word(word: str) -> str:
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss") and word.isascii():
        return word[:-1]
    return word


def opposite(claim: Seen, source: Seen, edge: Edge, claim_units: Units, source_units: Units) -> Contradiction | None:
    """同一处两边是一对反义词，而且反义词再往外的那个字两边一样（或者都到了边上）：“许多人”对“不少人”里的
    “多”“少”不算，那是两个不同的词“许多”“不少”。资料这一句里两个词都说了（“长、短喉管”）也不算。"""
    said = adjacent_words(claim, claim_units, edge.claim, edge.side, edge.piece.claim)
    there = adjacent_words(source, source_units, edge.span, edge.side, edge.piece.span)
    for index, ((left, left_span, left_end), (right, right_span, right_end)) in enumerate(zip(said, there,
                                                                                               strict=False)):
        if left == right or (left, right) not in OPPOSITES or left in source:
            continue
        count = index // 2 + 1
        same_outside = (left_end and right_end) or \
            outward(claim, claim_units, edge.claim, edge.side, count) == \
            outward(source, source_units, edge.span, edge.side, count) != ""
        if not same_outside:
            continue
        if not stated(claim, left_span[0]) or not stated(source, right_span[0]):
            return None
        return Contradiction("opposite", left_span, edge.piece.source, edge.piece.sentence, right_span)
    return None


def proper_name(text: str, span: Span, side: str) -> Span | None:
    """span 里紧挨着对上的那一段的专有名词的位置：一到三个只隔着空格、大写开头的英文词（“Northern Ireland”），
    不在句首，不全是虚词；没有时为 None。"""
    piece = text[span[0]:span[1]]
    run = NAME_BEFORE.search(piece) if side == "before" else NAME_AFTER.match(piece)
    if not run:
        return None
    start = span[0] + run.start() + len(run.group()) - len(run.group().lstrip())
    end = span[0] + run.end() - (len(run.group()) - len(run.group().rstrip()))
    if not text[:start].strip():
        return None  # 句首大写：不一定是名字
    if all(word.lower() in ENGLISH_STOPWORDS for word in text[start:end].split()):
        return None
    return start, end


def same_name(left: str, right: str) -> bool:
    """只差空格、大小写，或者一个是另一个的一部分（“HBO Max”“HBOMax”“GIF”“GF”）。"""
    a, b = "".join(left.lower().split()), "".join(right.lower().split())
    if a in b or b in a:
        return True
    shorter, longer = sorted((a, b), key=len)
    return len(longer) - len(shorter) <= 1 and sum(x != y for x, y in zip(a, b, strict=False)) <= 1


def name(claim: Seen, source: Seen, edge: Edge, alignment: Alignment) -> Contradiction | None:
    """同一处两边都是英文的专有名词，却不是同一个名字；而且两个名字正好就是对齐时换掉的那一段（槽，前后都对上了，
    或者在句子开头）：“The four-time MVP”对“James”这样的别称、只对上了一半的地名不算。"""
    said, there = proper_name(claim, edge.claim, edge.side), proper_name(source, edge.span, edge.side)
    if not said or not there:
        return None
    left, right = claim[slice(*said)], source[slice(*there)]
    if same_name(left, right):
        return None
    if right.lower() in claim.lower() or left.lower() in source.lower():
        return None  # 两个名字两边都说到了（“Drano Max Gel”对“Drano”、列出的几个地方）：不是换了名字
    if not any(stripped(claim, slot.claim) == said
               and stripped(source, slot.span) == there for slot in alignment.slots):
        return None
    if not stated(claim, said[0], choice=True):
        return None
    return Contradiction("name", said, edge.piece.source, edge.piece.sentence, there)


# 常见的汉族姓（单字姓和几个复姓）：换了人名的槽，两边都是以姓开头的两到四个字
SURNAMES = set("王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈"
               "姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤")
COMPOUND_SURNAMES = ("欧阳", "司马", "上官", "诸葛", "东方", "皇甫", "尉迟", "公孙", "慕容", "令狐")
CHINESE_NAME = re.compile(r"[\u4e00-\u9fff]{2,4}")


def chinese_person(text: str) -> bool:
    """像一个中文人名：两到四个汉字，以常见的姓开头，没有虚词用字。"""
    if not CHINESE_NAME.fullmatch(text) or any(char in FILLER for char in text[1:]):
        return False
    return text[0] in SURNAMES or text.startswith(COMPOUND_SURNAMES)


def chinese_name(claim: Seen, source: Seen, alignment: Alignment, edge: Edge) -> Contradiction | None:
    """对齐时换掉的一段（槽，两头都对上了）两边都像人名、却不是同一个（“由朱亚文主演”对“由黄晓明主演”）；
    或者两边都在书名号里（《茶馆》对《雷雨》）。"""
    for slot in alignment.slots:
        if slot.where != "mid" or slot.source != edge.piece.source or slot.sentence != edge.piece.sentence \
                or not 0 <= edge.piece.claim[0] - slot.claim[1] <= 1 or min(slot.before, slot.after) < MIN_PIECE:
            continue  # 槽后面紧挨着（最多隔一个书名号）就是这一段对上的字
        said, there = stripped(claim, slot.claim), stripped(source, slot.span)
        left, right = claim[slice(*said)], source[slice(*there)]
        if left == right or left in source or right in claim:
            continue
        titled = claim[said[0] - 1:said[0]] == "《" and claim[said[1]:said[1] + 1] == "》" \
            and source[there[0] - 1:there[0]] == "《" and source[there[1]:there[1] + 1] == "》"
        if (titled or chinese_person(left) and chinese_person(right)) and stated(claim, said[0], choice=True):
            return Contradiction("name", said, slot.source, slot.sentence, there)
    return None


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
    for slot in alignment.slots:
        anchored = min(slot.before, slot.after) >= MIN_PIECE or \
            final and slot.after == 1 and slot.before >= LEAD_PIECE
        if slot.where == "mid" and slot.source == edge.piece.source and slot.sentence == edge.piece.sentence \
                and anchored and (slot.claim[1] == edge.piece.claim[0] if edge.side == "before" else
                                  slot.claim[0] == edge.piece.claim[1]):
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


def contradictions(claim: Seen, alignment: Alignment, index_of: SourceIndexes) -> list[Contradiction]:
    """一句话（读出来的文字 claim）对齐之后，每一段对上的字前后同一处的矛盾（同一处只报一个）。资料的标题、
    Markdown 的标题不是断言，对上它们的字不比。"""
    claim_units = units_of(claim)
    found: list[Contradiction] = []
    for edge in edges(claim_units, alignment, lambda n, k: index_of(n).sentence_units(k)):
        if index_of(edge.piece.source).heading(edge.piece.sentence) or \
                not same_place(edge, alignment, claim, claim_units):
            continue
        source = index_of(edge.piece.source).sentences[edge.piece.sentence]
        source_units = index_of(edge.piece.source).sentence_units(edge.piece.sentence)
        hit = polarity(claim, source, edge) or opposite(claim, source, edge, claim_units, source_units) \
            or name(claim, source, edge, alignment) or chinese_name(claim, source, alignment, edge)
        if hit and not any(hit.claim == other.claim for other in found):
            found.append(hit)
    return found
