"""摘录：不请模型写，从读到的网页里挑出和问题最相关的几句原话，连同它们的编号 [n] 按原文的顺序排好（纯逻辑）。

没有会写中文的模型时（自带的 SmolLM2-135M 只会英文，给它中文问题只会把问题重复二十遍），这是一个诚实的回答：
每一句都是资料的原话，核对照常进行；它是摘录，不是写出来的回答，输出里说清楚。

  · 候选：每条资料正文里的句子（标题、Markdown 的标题行、导航栏一样的行、太短的不要）；
  · 排序：BM25（中文按相邻两字、拉丁文按单词，和核对用同样的“词”；问句里的“怎么”“吗”“how”这类词不算），
    资料的标题说到了问题里的词时，它的句子加一点分；标题说到了问题里的每一个词时（整页就是在讲这个问题），
    它的句子和最相关的那一句站在一起（标题本身从不摘录）；
  · 挑选：分数够高（不低于最高分的 RELATIVE_FLOOR、至少对上 MIN_MATCHED 个问题里的词）的句子里最多挑 COUNT 句，
    先从不同的资料里各挑最好的一句，再按分数补齐；按资料的编号、句子在资料里的位置排好。
一句也挑不出来时返回空的摘录：调用方如实说“资料里没有找到回答这个问题的句子”，不拿不相关的句子凑数。
"""
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from sourced_answers.checker import Source, seen, tokens_with_spans
from sourced_answers.search.passages import is_navigation

# 最多摘几句
COUNT = 3
# 分数低于最高分的这个比例的句子不要：和最相关的那句差得太远，多半在说别的
RELATIVE_FLOOR = 0.5
# 一句至少要对上问题里这么多个不同的词
MIN_MATCHED = 1
# BM25 的两个参数（常用的取值，没有在任何问题上调过）
K1 = 1.2
B = 0.75
# 资料的标题每对上问题里的一个词，它的句子加这么多分（和一个常见的词在句子里出现一次的分差不多）
TITLE_BONUS = 1.0
# 比这还短的句子（汉字、字母数字的个数）不摘：“首页”“分享到”这样的碎片
MIN_CHARACTERS = 8
# 问句里的这些词不是在问什么：“怎么”“吗”“how”“does”
QUESTION_CHARS = set("吗呢么哪几谁啥嘛吧")
QUESTION_WORDS = {"how", "what", "which", "why", "who", "whom", "many", "much", "doe", "do", "should", "can",
                  "could", "would", "is", "are", "need", "want", "get", "choose", "pick", "best", "good"}
# 句子的界线：句号、问号、叹号、换行；英文的句号后面要跟着空白（“2.5GbE”“0.61”里的点不是）
SENTENCE = re.compile(r"[^。！？!?\n]+?(?:[。！？!?]+|\.(?=\s)|$)|[^\n]+", re.MULTILINE)
HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
ENDING = re.compile(r"[。！？!?.；;，,、：:\s]+$")


@dataclass(frozen=True)
class Candidate:
    """一条资料（source，从 1 起）里的一句原话，和它在资料里的位置。"""
    source: int
    position: int
    text: str


# 面包屑、分享栏这类行：“首页 > 网络 > 正文”“You are here: Home > Networking > Article”
BREADCRUMB = re.compile(r"[>›»|｜]")


def navigation(line: str) -> bool:
    """导航栏、面包屑一样的行（passages.is_navigation 要三个分隔符；摘录时两个就够了：摘录的是一句话）。"""
    marks = len(BREADCRUMB.findall(line))
    return is_navigation(line) or marks >= 2 and len(line) / (marks + 1) < 40


def candidates(sources: Sequence[Source]) -> list[Candidate]:
    """每条资料正文里可以摘的句子（标题、标题行、导航栏、太短的不要）。"""
    found: list[Candidate] = []
    for number, source in enumerate(sources, 1):
        position = 0
        for line in (source.text or "").splitlines():
            if not line.strip() or HEADING.match(line) or navigation(line):
                continue
            for match in SENTENCE.finditer(line):
                sentence = match.group().strip()
                if sum(char.isalnum() for char in sentence) >= MIN_CHARACTERS:
                    found.append(Candidate(number, position, sentence))
                    position += 1
    return found


def query_words(question: str) -> set[str]:
    """问题里用来找句子的词：内容词，去掉问句的那几个（“怎么”“吗”“how many”）。"""
    words = set()
    for token, _, _, content in tokens_with_spans(seen(question)):
        if content and token not in QUESTION_WORDS and not (set(token) & QUESTION_CHARS):
            words.add(token)
    return words


def words_of(text: str) -> list[str]:
    return [token for token, _, _, content in tokens_with_spans(seen(text)) if content]


def scores(question: str, pool: Sequence[Candidate], sources: Sequence[Source]) -> list[tuple[float, int]]:
    """每一句的分数和它对上了几个问题里的词：[(分数, 对上的词数)]。分数是 BM25，资料的标题每对上问题里的一个词
    加 TITLE_BONUS；标题说到了问题里的每一个词（至少两个：整页就是在讲这个问题）时，这一页的每一句都算对上了，
    再加上全部句子里最高的 BM25 分，和别的页里说得最像的那一句站在一起。"""
    wanted = query_words(question)
    if not wanted or not pool:
        return [(0.0, 0)] * len(pool)
    counted = [Counter(words_of(candidate.text)) for candidate in pool]
    average = sum(sum(words.values()) for words in counted) / len(counted) or 1.0
    holding = Counter(word for words in counted for word in set(words) if word in wanted)
    titled = {number: len(wanted & set(words_of(source.title or ""))) for number, source in enumerate(sources, 1)}
    plain = []
    for words in counted:
        length = sum(words.values())
        total = 0.0
        for word in wanted & set(words):
            rarity = math.log(1 + (len(pool) - holding[word] + 0.5) / (holding[word] + 0.5))
            frequency = words[word]
            total += rarity * frequency * (K1 + 1) / (frequency + K1 * (1 - B + B * length / average))
        plain.append((total, len(wanted & set(words))))
    best = max(total for total, _ in plain)
    found = []
    for candidate, (total, matched) in zip(pool, plain, strict=True):
        about = len(wanted) >= 2 and titled[candidate.source] == len(wanted)
        bonus = TITLE_BONUS * titled[candidate.source] if matched or about else 0.0
        found.append((total + bonus + (best if about else 0.0), max(matched, MIN_MATCHED if about else 0)))
    return found


def chosen(pool: Sequence[Candidate], scored: Sequence[tuple[float, int]], count: int = COUNT) -> list[Candidate]:
    """分数够高的句子里挑 count 句：先从不同的资料里各挑最好的一句，再按分数补齐；按资料和位置排好。"""
    ranked = sorted(range(len(pool)), key=lambda index: -scored[index][0])
    if not ranked or scored[ranked[0]][0] <= 0:
        return []
    floor = scored[ranked[0]][0] * RELATIVE_FLOOR
    good = [index for index in ranked if scored[index][0] >= floor and scored[index][1] >= MIN_MATCHED]
    picked: list[int] = []
    seen_sources: set[int] = set()
    for index in good:  # 先每条资料一句
        if pool[index].source not in seen_sources and len(picked) < count:
            picked.append(index)
            seen_sources.add(pool[index].source)
    for index in good:  # 再按分数补齐
        if index not in picked and len(picked) < count:
            picked.append(index)
    return sorted((pool[index] for index in picked), key=lambda candidate: (candidate.source, candidate.position))


def excerpt_answer(question: str, sources: Sequence[Source], count: int = COUNT) -> str:
    """摘录的回答：挑出的每一句一行（列表项），句末写上它的编号，原话一字不改（只把句末的标点换成句号，
    引用写在句号前面）。一句也挑不出来时是空的。"""
    pool = candidates(sources)
    lines = []
    for candidate in chosen(pool, scores(question, pool, sources), count):
        text = ENDING.sub("", candidate.text)
        english = not any("\u4e00" <= char <= "\u9fff" for char in text)
        lines.append(f"- {text} [{candidate.source}]{'.' if english else '。'}")
    return "\n".join(lines)
