"""有风险的句子：句子里有所引资料里一字不差地找不到的数字、名称或否定说法。

支持分只看字面像不像：换了一个人名、一个年份，或者把“可以”说成“不能”的句子，字面几乎一样，支持分很高，
评判模型（--judge）只问支持分拿不准的句子时不会问它。这里找出这类句子里的“关键的字”；--judge-ask risky 时，
支持分放过了的有风险的句子也问评判模型。这只是挑句子的办法，不下结论：有风险的句子不会因此被标出。

  · 数字：一串阿拉伯数字（读出来的文字里全角、别的文字的数字都已换成 0-9，27,400 = 27400），资料里没有同样的
    一串。年份、型号里的数字也算（数量的规则不比年份）；“1)”“2、”这样的列表序号不算；
  · 名称：带大写字母或数字的拉丁单词（Radiohead、iPhone、CMOS、DS920），资料里没有这个词（不分大小写；
    the、In 这类虚词不算）；书名号、引号里的一段（《权利法案》“易卜拉欣”）和带间隔号的译名（扬尼克·辛纳
    取间隔号两边各两个字），资料里没有一字不差的这一段（空白不算）；
  · 否定：句子里的否定词连同它后面的两个汉字（“不能容忍”“没有自带”），或者英文的否定词连同后面的一个词
    （not support、doesn't support 算作 n't support），资料里没有同样的否定说法。“不同”“不过”“非常”“未来”
    “无论”这类词里的字不是否定。
不能证明什么：没有标记的中文人名、地名（“郑和”）认不出来；中文数字（“七次”）不看（数量的规则会比）；
资料里有这个数字、名称，不等于说的是同一件事；资料否定、句子没否定（资料“不能代替”、句子“可以代替”）不算；
同义的否定（“无法”和“不能”）算作找不到。
只用标准库；资料里的这些字每条只取一次（SourceTerms），之后每句话的时间只和这句话的长度有关。
"""
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sourced_answers.checker.quantities import ENUMERATOR
from sourced_answers.checker.reading import Seen
from sourced_answers.checker.text import CJK
from sourced_answers.checker.tokens import ENGLISH_STOPWORDS

RISK_KINDS = {"number": "数字", "name": "名称", "polarity": "否定"}
# 前面紧挨着字母的数字是名称的一部分（DS920、RAID5），按名称比
NUMBER = re.compile(r"(?<![A-Za-z0-9])[0-9]{1,3}(?:,[0-9]{3})+(?![0-9])|(?<![A-Za-z0-9.])[0-9]+(?:\.[0-9]+)?(?![0-9])")
# 拉丁字母的词（带重音的字母也算：Beyoncé 是一个词）
LATIN_WORD = re.compile(r"[A-Za-z0-9\u00c0-\u024f]*[A-Za-z\u00c0-\u024f][A-Za-z0-9\u00c0-\u024f]*")
MARKED_NAME = re.compile(r"《([^《》\n]{1,30})》|“([^“”\n]{1,30})”|「([^「」\n]{1,30})」"
                         rf"|[{CJK}]{{1,2}}(?:[·・•][{CJK}]{{1,8}})*[·・•][{CJK}]{{1,2}}")
CHINESE_NEGATION = re.compile(rf"(?:没有|无法|不能|不会|不是|并非|未能|不|没|未|无|非)(?=[{CJK}])")
# 含否定用字、却不是否定的词
NOT_NEGATION = ("不同", "不过", "不断", "不少", "不仅", "不但", "不管", "不论", "不久", "不如", "不禁", "不妨", "不然",
                "不停", "不时", "无论", "无数", "无疑", "无非", "无线", "非常", "非洲", "未来")
NOT_NEGATION_BEFORE = "除莫是"  # 除非、莫非、是非
NEGATED = re.compile(f"[{CJK}]{{1,2}}")  # 否定词后面看几个汉字
ENGLISH_NEGATION = re.compile(r"\b(not|no|never|cannot|none|without|nor)\s+([A-Za-z][A-Za-z-]*)"
                              r"|\b[A-Za-z]+n['’]t\s+([A-Za-z][A-Za-z-]*)", re.IGNORECASE)


@dataclass(frozen=True)
class Risk:
    """句子里一段在所引资料里找不到的关键的字：种类（RISK_KINDS 的一个）和句子里的那一段。"""
    kind: str
    text: str


def without_spaces(text: Seen) -> str:
    """去掉空白：“扬尼克 · 辛纳”和“扬尼克·辛纳”一字不差。"""
    return "".join(text.split())


def numbers_of(text: Seen) -> list[str]:
    return [match.group().replace(",", "") for match in NUMBER.finditer(ENUMERATOR.sub(" ", text))]


def latin_words(text: Seen) -> list[str]:
    return LATIN_WORD.findall(text)


def is_name(word: str) -> bool:
    """带大写字母或数字、不是虚词的拉丁单词。"""
    lowered = word.lower()
    if lowered in ENGLISH_STOPWORDS:
        return False
    return lowered != word or any(char.isdigit() for char in word)


def marked_names(text: str) -> list[str]:
    """书名号、引号里的一段和带间隔号的译名（text 已经去掉了空白）。"""
    return [next((group for group in match.groups() if group), match.group()) for match in MARKED_NAME.finditer(text)]


def chinese_negations(text: str) -> list[str]:
    """中文的否定说法：否定词和它后面的（至多）两个汉字。text 已经去掉了空白。"""
    found = []
    for match in CHINESE_NEGATION.finditer(text):
        start = match.start()
        if any(text.startswith(word, start) for word in NOT_NEGATION) \
                or (start and text[start - 1] in NOT_NEGATION_BEFORE):
            continue
        negated = NEGATED.match(text, match.end())
        if negated:
            found.append(match.group() + negated.group())
    return found


def english_negations(text: Seen) -> list[str]:
    """英文的否定说法：“否定词 后面的词”（小写）；doesn't support 是 n't support。"""
    return [f"{match.group(1).lower()} {match.group(2).lower()}" if match.group(1) else f"n't {match.group(3).lower()}"
            for match in ENGLISH_NEGATION.finditer(text)]


class SourceTerms:
    """一条资料里能一字不差地比的东西，每条资料只取一次：数字、拉丁单词（小写）、否定说法和去掉空白的正文。"""

    def __init__(self, text: Seen) -> None:
        self.text = without_spaces(text)
        self.numbers = set(numbers_of(text))
        self.words = {word.lower() for word in latin_words(text)}
        self.negations = set(english_negations(text))  # 中文的否定说法直接在 text 里找


def risks_in(claim: Seen, sources: Sequence[SourceTerms]) -> list[Risk]:
    """claim（去掉了引用标记、读过的句子）里，所引的几条资料合在一起也找不到的数字、名称和否定说法：按种类、
    出现的顺序，同样的一段只列一次。没有风险（或者没有资料）时是空列表。"""
    if not sources:
        return []
    numbers = set().union(*(source.numbers for source in sources))
    words = set().union(*(source.words for source in sources))
    said = set().union(*(source.negations for source in sources))
    compact = Seen(without_spaces(claim))
    found = [Risk("number", number) for number in unique(numbers_of(claim)) if number not in numbers]
    found += [Risk("name", word) for word in unique(latin_words(claim)) if is_name(word) and word.lower() not in words]
    found += [Risk("name", name) for name in unique(marked_names(compact)) if not in_text(name, sources)]
    found += [Risk("polarity", phrase) for phrase in unique(chinese_negations(compact)) if not in_text(phrase, sources)]
    found += [Risk("polarity", phrase) for phrase in unique(english_negations(claim)) if phrase not in said]
    return found


def in_text(piece: str, sources: Sequence[SourceTerms]) -> bool:
    """一字不差地（空白不算）出现在某一条资料里。"""
    return any(piece in source.text for source in sources)


def unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))
