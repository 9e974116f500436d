"""换了名字：照抄资料、只把一个名字换成了另一个（name_mismatch）。

  · 英文：同一处两边都是专有名词（大写开头、不在句首），却不是同一个名字（只差空格、大小写或一两个字母的写法不算）；
  · 中文：对齐时换掉的一段两边都像人名（以常见的姓开头的两到四个字），或者都在书名号里（《茶馆》对《雷雨》）。
只用标准库。
"""
import re

from sourced_answers.checker.alignment import Alignment, Span
from sourced_answers.checker.edges import FILLER, MIN_PIECE, Contradiction, Edge, stripped
from sourced_answers.checker.polarity import stated
from sourced_answers.checker.reading import Seen
from sourced_answers.checker.tokens import ENGLISH_STOPWORDS

_PROPER = r"[A-Z][A-Za-z0-9'’-]*"


NAME_BEFORE = re.compile(rf"{_PROPER}(?: {_PROPER}){{0,2}}[ \t]*$")


NAME_AFTER = re.compile(rf"[ \t]*{_PROPER}(?: {_PROPER}){{0,2}}(?![A-Za-z])")


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
    start = edge.piece.claim[0]
    for slot in alignment.slot_ends.get(start, []) + alignment.slot_ends.get(start - 1, []):
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
