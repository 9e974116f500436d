"""对齐的结果写进每个句子的核对结果（ClaimCheck）：句子的哪几段对上了哪条资料的哪几个字（evidence），
哪几段在所引资料里找不到（unmatched）。--json、--serve 的 verification、审阅页和文字输出的问题说明都读这一份。

位置都是 Unicode 码位数（Python 的 str 下标，和 --serve 的 annotations 一样）：
  · answer_start、answer_end：在记录的 answer 里（回答原来的写法，终端控制序列去掉之前）；
  · start、end：在资料的 text 里（field 为 "title" 时在 title 里）；text 是资料里那一段原来的写法。
核对一句话时只知道这句话，先记下相对这句话的位置（claim_start、claim_end）；check_answer 知道整个回答，再换成
answer_start、answer_end（located）。
"""
import re
from collections.abc import Sequence
from typing import Any

from sourced_answers.checker.alignment import UNIT, Alignment
from sourced_answers.checker.indexes import SourceIndexes
from sourced_answers.checker.locating import claim_spans
from sourced_answers.checker.polarity import CHINESE_NEGATION, ENGLISH_NEGATION
from sourced_answers.checker.reading import Reading
from sourced_answers.checker.structure import Structure, checked_indexes
from sourced_answers.checker.terminal import stripped_positions
from sourced_answers.checker.tokens import ENGLISH_STOPWORDS, FUNCTION_CHARS, latin_token
from sourced_answers.checker.types import ClaimCheck

Spans = list[dict[str, Any]]
# 找不到的一段两头的这些字不列进去（“还能挖矿赚钱了”列成“还能挖矿赚钱”）
PARTICLES = frozenset("的了着过地得呢吗吧啊呀哦嘛") | {"a", "an", "the"}


def aligned_spans(own: Reading, alignment: Alignment, index_of: SourceIndexes,
                  numbers: Sequence[int]) -> tuple[Spans, Spans]:
    """一句话（它自己的读法 own）对齐的结果：(对上的几段, 找不到的几段)，位置相对这句话（claim_start、claim_end）。
    找不到的只列有内容的几段（只是“的”“了”、标点的不列）。"""
    evidence: Spans = []
    for piece in alignment.pieces:
        claim_start, claim_end = own.in_original(*piece.claim)
        field, start, end = index_of(piece.source).original_span(piece.sentence, piece.span)
        source = index_of.sources[piece.source - 1]
        written = (source.title if field == "title" else source.text) or ""
        evidence.append({"source": piece.source, "claim_start": claim_start, "claim_end": claim_end,
                         "field": field, "start": start, "end": end, "text": written[start:end]})
    unmatched: Spans = []
    cited = set(numbers)
    for whole in alignment.unmatched:
        span = without_known_words(own.text, whole, cited, index_of)
        if not has_content(own.text[span[0]:span[1]]):
            continue
        claim_start, claim_end = own.in_original(*span)
        unmatched.append({"claim_start": claim_start, "claim_end": claim_end,
                          "text": own.original[claim_start:claim_end]})
    return evidence, unmatched


def without_known_words(text: str, span: tuple[int, int], cited: set[int],
                        index_of: SourceIndexes) -> tuple[int, int]:
    """去掉这一段两头在所引资料里有的拉丁字母的词（“NAS”）：一个词单独对不成一段，但它不是资料里找不到的字。"""
    units = list(UNIT.finditer(text, *span))

    def known(match: re.Match[str]) -> bool:
        word = match.group()
        token = latin_token(word) if word.isascii() and word.isalpha() else None
        return token is not None and any(token in index_of(number).postings for number in cited)
    def empty(match: re.Match[str]) -> bool:
        """两头不算数的字：资料里有的拉丁字母的词，和“的”“了”、the、a 这样的助词、冠词。"""
        return known(match) or match.group().lower() in PARTICLES
    while units and empty(units[0]):
        units.pop(0)
    while units and empty(units[-1]):
        units.pop()
    return (units[0].start(), units[-1].end()) if units else (span[0], span[0])


def has_content(text: str) -> bool:
    """有一个内容“字”：不是虚词用字的汉字（否定的字算内容）、不是虚词的英文词（not、no 算）、数字或别的文字的字母。"""
    for match in UNIT.finditer(text):
        unit = match.group()
        if unit.isascii() and unit.isalpha():
            if unit.lower() not in ENGLISH_STOPWORDS or ENGLISH_NEGATION.fullmatch(unit):
                return True
        elif unit not in FUNCTION_CHARS or CHINESE_NEGATION.fullmatch(unit):
            return True
    return False


def located(checks: Sequence[ClaimCheck], structure: Structure, stripped: str, answer: str) -> None:
    """把每个句子的 evidence、unmatched 里相对句子的位置换成在回答（answer，终端控制序列去掉之前）里的位置。
    stripped：去掉控制序列之后的回答（核对切句子用的就是它）；找不到句子在哪里时位置是 None。"""
    positions = stripped_positions(answer)
    indexes = checked_indexes(structure.claims)
    for span, index in zip(claim_spans(stripped), indexes, strict=True):
        if index is None or index >= len(checks):
            continue
        check = checks[index]
        if not check.evidence and not check.unmatched:
            continue
        check.evidence = [placed(item, span, positions) for item in check.evidence]
        check.unmatched = [placed(item, span, positions) for item in check.unmatched]


def placed(item: dict[str, Any], span: tuple[int, int] | None, positions: list[int] | None) -> dict[str, Any]:
    """一项 evidence 或 unmatched：相对句子的位置换成在回答里的位置（一份新的，缓存里那份不动）。"""
    found = dict(item)
    relative_start, relative_end = found.pop("claim_start"), found.pop("claim_end")
    if span is None:
        return {"answer_start": None, "answer_end": None, **found}
    start, end = span[0] + relative_start, span[0] + relative_end
    if positions is not None:
        start = positions[start] if start < len(positions) else (positions[-1] + 1 if positions else 0)
        end = positions[end - 1] + 1 if end > 0 and end - 1 < len(positions) else start
    return {"answer_start": start, "answer_end": end, **found}
