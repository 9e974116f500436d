"""一个句子和一条资料比较：给人看的重合度、找不到的一段内容、最接近的一句，以及算支持分的特征。

支持分（score.py）由下面这几个只看字面的特征组合而成，权重由 bench/fit_support_score.py 在 CiteCheck dev 上拟合：

  window_recall   句子的内容词有多少出现在资料最相关的连续三句里（也就是给人看的“重合度”）
  unit_recall     句子的“字”有多少出现在整条资料里（汉字一个字一个，拉丁文一个单词一个，数字一串一个）
  weakest_third   把句子分成前、中、后三段，每段里相邻两“字”的片段在资料里找到的比例，取最低的那一段：
                  照抄了一半、另一半是编的句子，整体重合度可能不低，这一项会很低
  novel_run       资料里连续找不到的内容词最多有几个（取对数）
  missing_content 资料里找不到的内容词有几个（取对数）
  unmatched_content  对齐（alignment.py）之后没对上资料的字里有几个是内容（取对数）：照抄了资料、又另加了一句
                  （“……，具有一定的创新性”）的句子，每个词资料里都有，可另加的那几个字没有一处对得上
  missing_numbers 句子里的数量（值和单位，年份除外）有几个在这条资料里找不到（取对数）。中文句子里这样的数由确定的
                  规则标出（number_rule.py）；英文句子里“找不到的数”在没见过的数据上不够准，不单独下结论，只由它
                  拉低支持分

拟合时还比较过别的特征（单句的重合度、整条资料的重合度、二到四“字”片段的重合度、共有的最长一段、
问句式的资料、否定词、原来的手写规则、句子和资料的长度），在 dev 调参的一半上加进去都没有让结果更好，所以没有用
（长度还会让这个在中文网页上拟合的模型在很短的资料、很短的英文句子上外推得很离谱）。见 docs/checker.md。
同一处换了数由 number_rule.py 里确定的规则核对。
"""
import math
import re
from dataclasses import dataclass, field

from sourced_answers.checker.alignment import EMPTY, Alignment, align, unmatched_content
from sourced_answers.checker.quantities import YEAR_UNIT, found_in, quantities_in
from sourced_answers.checker.reading import Reading, Seen
from sourced_answers.checker.source_index import SourceIndex, grams_of
from sourced_answers.checker.tokens import ClaimWords, plain_units

# 句中连续这么多个内容词在资料里都找不到，就认为这一段是资料之外的内容（标出时指给人看）
NOVEL_RUN = 11
# 一串找不到的内容中间，要连着这么多个词能在资料里找到才算断开（偶然撞上一个常见词不算）
RUN_BREAK = 2

# 原教程算字二元组之前去掉的字符：空白、方括号、数字和常见标点
TUTORIAL_DROPPED = re.compile(r"[\s\[\]\d，。、；：（）“”,.;:()!?！？-]")
TUTORIAL_MIN_BIGRAMS = 8

FEATURES = ("window_recall", "unit_recall", "weakest_third", "novel_run", "missing_content", "unmatched_content",
            "missing_numbers")


@dataclass
class Support:
    """一个句子和一条资料的比较结果：给人看的部分，加上算支持分的特征。"""
    source: int
    overlap: float
    novel: str | None  # 资料里连续找不到的一长串内容（没有则为 None）
    evidence: str | None  # 资料里和句子最接近的一句（资料原来的写法；读出来的样子在 SourceIndex.sentences 里）
    sentence: int | None = None  # evidence 是资料的第几句
    features: dict[str, float] = field(default_factory=dict)
    alignment: Alignment = EMPTY  # 句子对到这一条资料上（alignment.py）


def recall(grams: set[tuple[str, ...]], known: set[tuple[str, ...]]) -> float:
    return len(grams & known) / len(grams) if grams else 1.0


def novel_span(words: ClaimWords, index: SourceIndex) -> tuple[tuple[int, int] | None, int]:
    """资料里连续找不到的内容词：够 NOVEL_RUN 个时这一段在句子里的位置（否则为 None），以及最长一段有几个词。"""
    run_start = run = matched = longest = 0
    novel: tuple[int, int] | None = None
    known = index.postings
    for token, start, end, _ in words.content:
        if token in known:
            matched += 1
            if matched >= RUN_BREAK:
                run = 0
            continue
        matched = 0
        if run == 0:
            run_start = start
        run += 1
        longest = max(longest, run)
        if run >= NOVEL_RUN:
            novel = (run_start, end)
    return novel, longest


def novel_text(body: Reading, words: ClaimWords, index: SourceIndex, novel: tuple[int, int]) -> str:
    """把整段找不到的内容都显示出来（一直延伸到下一个能找到的词之前），用句子原来的写法。"""
    end = novel[1]
    for token, start, token_end, _ in words.content:
        if start >= novel[1]:
            if token in index.postings:
                break
            end = token_end
    return body.origin_span(novel[0], end)


def compare(body: Reading, words: ClaimWords, index: SourceIndex, number: int) -> Support:
    """句子（去掉引用后的文字读出来的样子 body，及其内容词 words）和一条资料比较。"""
    distinct = words.distinct
    alignment = align(body.text, index.window(number, distinct))
    if not distinct:
        return Support(number, 1.0, None, None, features=features_of(body.text, words, index, 1.0, 0, alignment),
                       alignment=alignment)
    match = index.match(distinct)
    evidence = index.written(match.sentence) if match.sentence is not None else None
    span, longest = novel_span(words, index)
    overlap = round(match.window_hits / len(distinct), 4)
    return Support(number, overlap, novel_text(body, words, index, span) if span else None, evidence,
                   match.sentence, features_of(body.text, words, index, overlap, longest, alignment), alignment)


def features_of(body: Seen, words: ClaimWords, index: SourceIndex, overlap: float,
                longest_novel: int, alignment: Alignment) -> dict[str, float]:
    """FEATURES 里每个特征的值（见模块说明）。"""
    units = plain_units(body)
    missing = sum(token not in index.postings for token in words.distinct)
    thirds = [units[k * len(units) // 3:(k + 1) * len(units) // 3 + 1] for k in range(3)]
    return {
        "window_recall": overlap,
        "unit_recall": recall(grams_of(units, 1), index.unit_grams(1)),
        "weakest_third": min(recall(grams_of(third, 2), index.unit_grams(2)) for third in thirds),
        "novel_run": math.log1p(longest_novel),
        "missing_content": math.log1p(missing),
        "unmatched_content": math.log1p(unmatched_content(body, alignment)),
        "missing_numbers": math.log1p(missing_numbers(body, index)),
    }


def missing_numbers(body: Seen, index: SourceIndex) -> int:
    """句子里的数量（举例的不算、年份不算）有几个在这条资料里找不到（写法不论）。"""
    found = quantities_in(body, claim=True)
    if not found:
        return 0
    known = index.quantities
    return sum(quantity[1] != YEAR_UNIT and not found_in(quantity, known) for quantity in found)


def tutorial_bigrams(text: str) -> set[str]:
    text = TUTORIAL_DROPPED.sub("", text)
    return {text[i:i + 2] for i in range(len(text) - 1)}


def tutorial_overlap(body: Seen, index: SourceIndex) -> float | None:
    """原教程的重合度：句子的字二元组有多少出现在资料（标题加正文）里。二元组少于 8 个的句子不判，返回 None。"""
    pairs = tutorial_bigrams(body)
    if len(pairs) < TUTORIAL_MIN_BIGRAMS:
        return None
    if index.tutorial_pairs is None:
        index.tutorial_pairs = tutorial_bigrams(index.title + index.text)
    return len(pairs & index.tutorial_pairs) / len(pairs)
