"""照抄资料、只换了一处的句子：对齐之后，每一段对上的字（alignment.Piece）前后紧挨着的几个字，两边说的是不是相反。

同一处（紧挨着对上的一段的几个字，确实是同一处的才比）见 edges.py。这样找出来的矛盾有三种：
  · polarity：同一处一边有否定、另一边没有（“不支持运行 Docker”对“支持运行 Docker”、“日本向海湾派遣”对
    “日本未能向海湾派遣”、“does not support”对“supports”），否定的正是后面两边都对上了的那几个字。什么是否定、
    什么地方不是在断言（问句、选择、假设、转述、委婉的说法、说的是以前）见 polarity.py；否定的是另加的词
    （“不确定”“不够大”：另加的说法，不是把资料的说法说反了）、只否定了“这样”“这个”的也不算；
  · opposite：同一处两边是一对反义词（opposites.py：“增加”对“减少”、“感性”对“理性”、“increase”对“decrease”）；
  · name：换了名字（names.py）。
另加的否定的评价（“坚持公益性质没有必要”对“要坚持公益性质”）也算 polarity。数字在同一处不一样由数量的规则比
（number_rule.py 也用 edges.py 的同一处）。
只用标准库；每一段对上的字只看它前后几个字，代价和句子的长度成正比。
"""
import re

from sourced_answers.checker.alignment import Alignment, Span, Units, units_of
from sourced_answers.checker.edges import Contradiction, Edge, edges, same_place, says_something, unit_range
from sourced_answers.checker.indexes import SourceIndexes
from sourced_answers.checker.names import chinese_name, name
from sourced_answers.checker.opposites import OPPOSITES
from sourced_answers.checker.polarity import (
    CLAUSE_BREAK,
    EARLIER,
    NEGATIVE_MEANING,
    clause_end,
    clause_start,
    negates_the_piece,
    negations,
    stated,
)
from sourced_answers.checker.reading import Seen
from sourced_answers.checker.text import is_chinese_char

# ---------- 否定 ----------


def polarity(claim: Seen, source: Seen, edge: Edge) -> Contradiction | None:
    """对上的一段前面，一边否定了它、另一边没有（见模块说明）。"""
    if edge.side != "before":
        return None
    said = chain(claim, edge.claim)
    there = chain(source, edge.span)
    if len(said) % 2 == len(there) % 2:
        return None  # 都没有否定、都否定了，或者一边是双重否定（“不能不包括”）另一边没有否定
    if len(said) % 2:
        negated, negating, piece, other, other_span, others = claim, said, edge.piece.claim, source, edge.span, there
    else:
        negated, negating, piece, other, other_span, others = source, there, edge.piece.span, claim, edge.claim, said
    negation = (negating[0][0], negating[-1][1])
    other_piece = edge.piece.span if other is source else edge.piece.claim
    around = (near_clause(other, other_span[1], other_span[1]), near_clause(other, other_piece[1], other_piece[1]))
    around = ((around[0][0], other_span[1]), (other_piece[1], around[1][1]))
    if any([n for n in negations(other, part) if n not in others] or NEGATIVE_MEANING.search(other, *part)
           for part in around):
        return None  # 另一边这个分句里（对上的一段前后）还有别的否定（别的写法、“X 不是好办法”）或委婉的说法：说不清
    if not says_something(negated, piece) or not stated(negated, negation[0], negation[1]):
        return None
    if EARLIER.search(negated, near_clause(negated, *negation)[0], negation[1]):
        return None  # 说的是以前、还没有（“之前没有这个条例”“尚无存款保险制度”对“制定了这个条例”）：不是说反
    if not stated(other, other_span[1]):
        return None
    claim_span = (said[0][0], edge.piece.claim[1]) if said else (edge.claim[1], edge.piece.claim[1])
    source_span = (there[0][0], edge.piece.span[1]) if there else (edge.span[1], edge.piece.span[1])
    return Contradiction("polarity", shortened(claim, claim_span), edge.piece.source, edge.piece.sentence,
                         shortened(source, source_span))


# 对上的一段后面紧跟着、一直到分句末尾的“没有必要”“没什么用”“并不重要”“毫无收益”“与……无关”：另加的否定的评价，
# 把资料要做、说有用的事说成没用（“坚持公益性质没有必要”对“要坚持公益性质”）
NEGATED_VALUE = re.compile(
    r"[ \t]*(?:(?:(?:并|根本|完全|都|也)?(?:没有|没|不|毫无|并无|无)(?:什么|任何|多大|太大|多少)?"
    r"(?:必要|用处|作用|意义|效果|帮助|收益|好处|价值|重要|影响|关系|关联|需要|用)|无关|无用|无益|无效)"
    r"|(?:is|are|was|were) (?:not|never) (?:necessary|needed|important|useful|relevant|helpful|effective)"
    r"|(?:is|are|was|were) (?:unnecessary|useless|irrelevant|pointless|ineffective)"
    r"|(?:has|have|had) no (?:effect|impact|use|benefit|value|relation|relationship)"
    r"|(?:does|do|did) not (?:matter|help|work))[ \t]*[了的]?[ \t]*(?=[，。,;；：:！？!?\n]|$)",
    re.IGNORECASE)


def negated_value(claim: Seen, source: Seen, edge: Edge) -> Contradiction | None:
    """对上的一段后面，句子另加了一个否定的评价（NEGATED_VALUE），资料在那一处的分句里没有否定、也没有委婉的说法。"""
    if edge.side != "after":
        return None
    end = edge.piece.claim[1]
    said = NEGATED_VALUE.match(claim, end)
    if said is None or not stated(claim, end, said.end()) or not stated(source, edge.piece.span[1]):
        return None  # 资料那一处是问句（“有什么用呢”）、假设、转述：不是在断言
    source_clause = near_clause(source, *edge.piece.span)
    if negations(source, source_clause) or NEGATIVE_MEANING.search(source, *source_clause):
        return None
    return Contradiction("polarity", shortened(claim, (edge.piece.claim[0], said.end()), 16), edge.piece.source,
                         edge.piece.sentence, shortened(source, source_clause, 16))


# 看一处的分句时最多往两边各看这么多个字：真的分句远远没有这么长，一整篇没有标点的“分句”里隔得更远的字说明不了什么
# （每一处都看整个分句，一句很长的话就成了平方级）
NEAR = 200


def near_clause(text: str, start: int, end: int) -> tuple[int, int]:
    """[start, end) 所在的分句，两边各最多 NEAR 个字。"""
    return max(clause_start(text, start), start - NEAR), min(clause_end(text, end), end + NEAR)


def clause_negations(text: str, span: Span) -> list[tuple[int, int]]:
    """span 所在的分句里的否定词。"""
    return negations(text, near_clause(text, *span))


def chain(text: str, span: Span) -> list[tuple[int, int]]:
    """span（对上的一段前面的同一处）里一连串否定了对上的那一段的否定词：最后一个和对上的那一段之间只有“能”“会”
    这类字，前面的每一个和下一个之间也只有这类字（“不能不包括”是两个）。"""
    found = negations(text, span)
    linked: list[tuple[int, int]] = []
    reach = span[1]
    for negation in reversed(found):
        if not negates_the_piece(text, (negation[0], reach), negation):
            break
        if linked and negation[1] == linked[0][0] and text[slice(*negation)] == text[slice(*linked[0])]:
            continue  # 说话时重复了一遍（“我没没讲”）：还是一个否定
        linked.insert(0, negation)
        reach = negation[0]
    return linked


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


OPPOSITE_WORDS = frozenset(word for pair in OPPOSITES for word in pair)


def opposite(claim: Seen, source: Seen, edge: Edge, claim_units: Units, source_units: Units) -> Contradiction | None:
    """同一处两边是一对反义词，而且一个字的反义词再往外的那个字两边一样（或者都到了边上）：“许多人”对“不少人”里的
    “多”“少”不算，那是两个不同的词“许多”“不少”。两个字的反义词（“增加”对“减少”）本身就是词，前面怎么说都算
    （“会减少”对“及时增加”）。资料这一句里两个词都说了（“长、短喉管”）也不算。"""
    said = adjacent_words(claim, claim_units, edge.claim, edge.side, edge.piece.claim)
    if not any(word in OPPOSITE_WORDS for word, _, _ in said):
        return None  # 句子这一边紧挨着的词没有一个在反义词表里（绝大多数）：不必再看资料那一边
    there = adjacent_words(source, source_units, edge.span, edge.side, edge.piece.span)
    for index, ((left, left_span, left_end), (right, right_span, right_end)) in enumerate(zip(said, there,
                                                                                               strict=False)):
        if left == right or (left, right) not in OPPOSITES or left in source:
            continue
        count = index // 2 + 1
        same_outside = (left_end and right_end) or min(len(left), len(right)) >= 2 and is_chinese_char(left[0]) or \
            outward(claim, claim_units, edge.claim, edge.side, count) == \
            outward(source, source_units, edge.span, edge.side, count) != ""
        if not same_outside:
            continue
        if not stated(claim, left_span[0]) or not stated(source, right_span[0]):
            return None
        if len(clause_negations(claim, left_span)) % 2 != len(clause_negations(source, right_span)) % 2:
            return None  # 一边还多了一个否定（“二十号以前还没接回来”对“二十号以后就接回来了”）：两处相反，说不清
        return Contradiction("opposite", left_span, edge.piece.source, edge.piece.sentence, right_span)
    return None


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
        if claim[slice(*edge.claim)] == source[slice(*edge.span)]:
            continue  # 同一处两边一字不差：没有什么不一样
        source_units = index_of(edge.piece.source).sentence_units(edge.piece.sentence)
        hit = polarity(claim, source, edge) or negated_value(claim, source, edge) \
            or opposite(claim, source, edge, claim_units, source_units) \
            or name(claim, source, edge, alignment) or chinese_name(claim, source, alignment, edge)
        if hit and not any(hit.claim == other.claim for other in found):
            found.append(hit)
    return found
