"""引用核对：纯逻辑，不做任何 I/O。

输入是回答文本和资料列表（每条资料是带 "title"、"text" 的 dict），
输出是问题列表。规则来自原教程：
  1. 引用的编号必须存在（1…资料条数）；
  2. 每个段落（空行分隔）至少有一个引用；
  3. 列出从没被引用的资料；
  4. 带引用的句子和它引用的资料做字二元组（bigram）重合度筛查，
     低于阈值就提示“可能引错了来源”。
重合度只是筛查，不是证明：重合度高不代表引用一定对。
"""
import re
from dataclasses import asdict, dataclass, field

DEFAULT_THRESHOLD = 0.35
# 少于这么多个二元组的“句子”多半是“资料 [3] 提到”这类引导语，不算一句话
MIN_BIGRAMS = 8

CITATION = re.compile(r"\[(\d+)\]")
CITATION_RUN = re.compile(r"(?:\[\d+\])+")
SENTENCE_END = re.compile(r"[。！？]")
# 行尾“……。[2]”：引用写在句号后面，仍然属于这一句
CITATION_AFTER_LINE_END = re.compile(r"([。！？])[ \t]*((?:\[\d+\])+)[ \t]*$")
# 算二元组之前去掉的字符：空白、方括号、数字和常见标点（与教程一致）
NOT_COUNTED = re.compile(r"[\s\[\]\d，。、；：（）“”,.;:()!?！？-]")


@dataclass
class Problem:
    """核对发现的一个问题。message 是给人看的中文说明。"""
    kind: str
    message: str
    paragraph: int | None = None
    sentence: str | None = None
    citations: list[int] | None = None
    overlap: float | None = None

    def to_dict(self):
        return asdict(self)


@dataclass
class CitedSentence:
    paragraph: int
    text: str
    citations: list[int]


@dataclass
class Report:
    problems: list[Problem] = field(default_factory=list)
    unused: list[int] = field(default_factory=list)
    cited: set[int] = field(default_factory=set)

    @property
    def passed(self):
        return not self.problems


def citation_number(digits):
    # 超长的数字串（如 [99999999999999999999]）只会是不存在的编号，截短以免 int() 吃掉时间
    return int(digits[:30])


def cited_numbers(text):
    return [citation_number(m.group(1)) for m in CITATION.finditer(text)]


def split_paragraphs(answer):
    """按空行切段落，忽略空白段落。逐行扫描，线性时间。"""
    paragraphs = []
    current = []
    for line in answer.split("\n"):
        if line.strip():
            current.append(line)
        elif current:
            paragraphs.append("\n".join(current))
            current = []
    if current:
        paragraphs.append("\n".join(current))
    return paragraphs


def cited_sentences_in_line(line):
    """一行里所有以引用结尾的句子，返回 (句子原文, 引用编号)。

    句子不跨过 。！？；一个句子从上一个句子（或上一组引用）之后开始，
    到下一组引用为止。行首的“[2] 中提到……”不会被挪到上一句。
    """
    line = CITATION_AFTER_LINE_END.sub(r"\2\1", line)
    sentences = []
    start = 0
    for end_mark in SENTENCE_END.finditer(line + "。"):
        segment_end = end_mark.start()
        cursor = start
        for run in CITATION_RUN.finditer(line, start, segment_end):
            sentences.append((line[cursor:run.end()], cited_numbers(run.group())))
            cursor = run.end()
        start = end_mark.end()
    return sentences


def split_cited_sentences(answer):
    found = []
    for number, paragraph in enumerate(split_paragraphs(answer), 1):
        for line in paragraph.split("\n"):
            for text, citations in cited_sentences_in_line(line):
                found.append(CitedSentence(number, text, citations))
    return found


def bigrams(text):
    text = NOT_COUNTED.sub("", text)
    return {text[i:i + 2] for i in range(len(text) - 1)}


def support_score(sentence_bigrams, source_bigrams):
    """句子的二元组里，有多大比例出现在资料中（0…1）。"""
    if not sentence_bigrams:
        return 0.0
    return len(sentence_bigrams & source_bigrams) / len(sentence_bigrams)


def format_citations(numbers):
    return "".join(f"[{n}]" for n in numbers)


def weak_support_problems(answer, sources, threshold=DEFAULT_THRESHOLD):
    source_bigrams = {}
    problems = []
    for sentence in split_cited_sentences(answer):
        words = bigrams(CITATION.sub("", sentence.text))
        if len(words) < MIN_BIGRAMS:
            continue
        numbers = sentence.citations
        if not all(1 <= n <= len(sources) for n in numbers):
            continue  # 不存在的编号由“引用不存在”那条规则报告
        best = 0.0
        for n in numbers:
            if n not in source_bigrams:
                source = sources[n - 1]
                source_bigrams[n] = bigrams((source.get("title") or "") + (source.get("text") or ""))
            best = max(best, support_score(words, source_bigrams[n]))
        if best < threshold:
            shown = sentence.text.strip()
            message = f"“{shown[:40]}” 和资料 {format_citations(numbers)} 的重合度只有 {best:.0%}"
            problems.append(Problem("weak_support", message, sentence.paragraph,
                                    shown, list(numbers), round(best, 4)))
    return problems


def structure_problems(answer, source_count):
    """编号存在、每段有引用、没被引用的资料。返回 (问题, 没用到的编号, 引用过的编号)。"""
    paragraphs = split_paragraphs(answer)
    cited = set(cited_numbers(answer))
    problems = [Problem("missing_source", f"引用了不存在的 [{n}]", citations=[n])
                for n in sorted(cited) if not 1 <= n <= source_count]
    for number, paragraph in enumerate(paragraphs, 1):
        if not CITATION.search(paragraph):
            message = f"第 {number} 段没有引用：{paragraph[:30]}…"
            problems.append(Problem("uncited_paragraph", message, paragraph=number))
    unused = [n for n in range(1, source_count + 1) if n not in cited]
    return problems, unused, cited


def check_answer(answer, sources, threshold=DEFAULT_THRESHOLD):
    """所有规则一起跑，返回 Report。"""
    problems, unused, cited = structure_problems(answer, len(sources))
    problems += weak_support_problems(answer, sources, threshold)
    return Report(problems, unused, cited)


# 教程里的两个函数，接口保持不变：返回中文说明的列表

def check(answer, source_count):
    problems, unused, _ = structure_problems(answer, source_count)
    return [p.message for p in problems], unused


def support(answer, sources, threshold=DEFAULT_THRESHOLD):
    return [p.message for p in weak_support_problems(answer, sources, threshold)]
