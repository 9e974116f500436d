"""资料的索引：每条资料切成句子，记下每个词出现在哪几句、有哪些数量、是什么语言。每条资料只建一次。

句子和资料比较时只看句子自己的词在索引里的位置，所以资料变长不会让每句话的核对变慢；
资料很多（成百上千条）时，替一句话找“更合适的资料”只挑共有少见词最多的几条，不和每条都比。
"""
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache

from sourced_answers.checker.alignment import WHOLE, Units, Window, units_of
from sourced_answers.checker.quantities import Known, Quantity, quantities_in
from sourced_answers.checker.reading import Reading, Seen, read
from sourced_answers.checker.tokens import plain_units, source_languages, token_set
from sourced_answers.checker.types import Source

# 资料中比较时，一个句子和它后面最多几句连在一起算一个“窗口”
WINDOW = 3
# 出现在太多句子里的词，不逐句统计（它在每个窗口里都算出现），保证时间是线性的
COMMON_POSTINGS = 64
# 数字矛盾只在资料里和句子最接近的那一句（及前后这么多句）里找
QUANTITY_RADIUS = 0
# 找更合适的资料时：资料不超过这么多条就逐条比较；更多时只比较共有少见词最多的这么多条
CANDIDATES = 16
# 出现在这么多条以上资料里的词，挑候选资料时不看
COMMON_SOURCES = 32

# 资料里一“句”最多这么多个字（更长的是没有标点的一整页，切成几段）
LONGEST_SENTENCE = 1000
# 和资料标题比的时候：标题至少这么多个字（去掉标点、空白之后）
MIN_TITLE = 4
NOT_WORD = re.compile(r"[\W_]+")
SOURCE_SENTENCE = re.compile(r"[^。！？!?；;\n]*(?:[。！？!?；;\n]|$)")
ENGLISH_SENTENCE_BREAK = re.compile(r"(?<=\.)\s+")


Span = tuple[int, int]


@lru_cache(maxsize=1024)
def bare(text: str) -> str:
    """比较标题用的写法：读出来、去掉标点和空白、小写（一批记录里同样的标题、同样的句子只读一次）。"""
    return NOT_WORD.sub("", read(text, track=False).text.lower())


def sentence_spans(text: str) -> list[Span]:
    """资料里每一句的位置（按 。！？；和换行，以及英文句点后的空白切开，两头的空白不算）。比 LONGEST_SENTENCE
    还长的一“句”（没有标点的一整页）再切成几段（能在逗号、空白处切就在那里切）：对齐和找证据都按句子来，一句话的
    代价不能随着这样一整页变长。"""
    return [part for span in whole_sentences(text) for part in bounded(text, span)]


def bounded(text: str, span: Span) -> list[Span]:
    """一句切成不超过 LONGEST_SENTENCE 个字的几段。"""
    start, end = span
    parts: list[Span] = []
    while end - start > LONGEST_SENTENCE:
        limit = start + LONGEST_SENTENCE
        cut = max(text.rfind(mark, limit - LONGEST_SENTENCE // 4, limit) for mark in "，, 、")
        cut = cut + 1 if cut > start else limit
        parts.append((start, cut))
        start = cut
    parts.append((start, end))
    return [(left, right) for left, right in parts if text[left:right].strip()]


def whole_sentences(text: str) -> list[Span]:
    spans: list[Span] = []
    for piece in SOURCE_SENTENCE.finditer(text):
        if "." in piece.group():
            cuts = [piece.start()] + [point for gap in ENGLISH_SENTENCE_BREAK.finditer(text, piece.start(), piece.end())
                                      for point in gap.span()] + [piece.end()]
            parts = list(zip(cuts[::2], cuts[1::2], strict=True))
        else:
            parts = [piece.span()]
        for start, end in parts:
            part = text[start:end]
            kept = part.strip()
            if kept:
                left = start + len(part) - len(part.lstrip())
                spans.append((left, left + len(kept)))
    return spans


def source_sentences(text: Seen) -> list[Seen]:
    """把资料（读出来的文字）切成句子。"""
    return [Seen(text[start:end]) for start, end in sentence_spans(text)]


@dataclass
class Match:
    """句子的词在一条资料里找到的情况：最好的连续 WINDOW 句里找到 window_hits 个词；
    单句里找到最多的是第 sentence 句（找到 sentence_hits 个；一个也没找到时 sentence 为 None）。"""
    window_hits: int
    sentence: int | None
    sentence_hits: int


def grams_of(units: Sequence[str], size: int) -> set[tuple[str, ...]]:
    """连着的 size 个“字”组成的全部片段。"""
    if size == 1:
        return {(unit,) for unit in units}
    return set(zip(*(units[offset:] for offset in range(size)), strict=False))


class SourceIndex:
    """一条资料的内容词、数字和逐句的倒排索引。"""

    def __init__(self, source: Source) -> None:
        # 和回答里的句子一样读（reading.py）：每条规则比的都是读出来的文字；给人看的证据句是资料原来的写法
        title_reading, text_reading = read(source.title or ""), read(source.text or "")
        title, text = title_reading.text, text_reading.text
        spans = sentence_spans(text)
        heading = [Seen(title.strip())] if title.strip() else []
        self.sentences = heading + [Seen(text[start:end]) for start, end in spans]
        self.has_title = bool(heading)
        self.readings = (title_reading, text_reading, spans)  # 给人看的证据句用到时才取原文（written）
        self.postings: defaultdict[str, list[int]] = defaultdict(list)
        for number, sentence in enumerate(self.sentences):
            for token in token_set(sentence):
                self.postings[token].append(number)
        # 主要语言（给人看）和里面有正文的语言（判断句子能不能和它按字面比较）
        self.language, self.languages = source_languages(Seen(title + "\n" + text))
        self.sentence_quantities: dict[int, set[Quantity]] = {}
        self.title, self.text = title, text
        self.tutorial_pairs: set[str] | None = None  # 原教程的字二元组（--rule tutorial 时才建）
        self.grams: dict[int, set[tuple[str, ...]]] = {}
        self.aligned: dict[int, Units] = {}  # 对齐用的每一句的“字”（alignment.py），用到时才切
        self.by_value: defaultdict[float, list[int]] | None = None  # 数值 → 说到它的句子（用到时才建）
        self.windows: dict[int, Window] = {}  # 编号 → 整条资料的对齐窗口（资料不长时）

    def sentence_units(self, sentence: int) -> Units:
        """第 sentence 句对齐用的“字”（第一次用到时才切）。"""
        found = self.aligned.get(sentence)
        if found is None:
            found = self.aligned[sentence] = units_of(self.sentences[sentence])
        return found

    @cached_property
    def short(self) -> bool:
        """整条资料不长（大约不超过 alignment.WHOLE 个字）：对齐时整条都拿来对。"""
        return len(self.title) + len(self.text) <= WHOLE

    def window(self, number: int, tokens: Iterable[str]) -> Window:
        """只有这一条资料（编号 number）的对齐窗口。资料不长时整条都在窗口里，每个编号只建一次。"""
        if self.short and number in self.windows:
            return self.windows[number]
        built = Window([(number, sentence, self.sentence_units(sentence))
                        for sentence in self.aligned_sentences(tokens)])
        if self.short:
            self.windows[number] = built
        return built

    def aligned_sentences(self, tokens: Iterable[str]) -> list[int]:
        """对齐时拿来对的句子：资料不长时是全部；长的只取和这些词共有得最多的几句（按资料里的顺序），
        加起来大约 WHOLE 个字以内（至少一句）。"""
        if self.short:
            return list(range(len(self.sentences)))
        hits: defaultdict[int, int] = defaultdict(int)
        for token in tokens:
            posted = self.postings.get(token)
            if posted and len(posted) <= COMMON_POSTINGS:
                for sentence in posted:
                    hits[sentence] += 1
        chosen: list[int] = []
        size = 0
        for sentence in sorted(hits, key=lambda number: (-hits[number], number)):
            length = len(self.sentences[sentence])
            if chosen and size + length > WHOLE:
                break
            chosen.append(sentence)
            size += length
        return sorted(chosen)

    def written(self, sentence: int) -> str:
        """第 sentence 句原来的写法（标题是第 0 句，如果有标题）：给人看的证据句。"""
        title_reading, text_reading, spans = self.readings
        if self.has_title:
            if sentence == 0:
                return title_reading.original.strip()
            sentence -= 1
        return text_reading.origin_span(*spans[sentence])

    def heading(self, sentence: int) -> bool:
        """第 sentence 句是资料的标题或者 Markdown 的标题（“# RAID 不能代替备份”）：不是断言。"""
        return sentence == 0 and self.has_title or self.sentences[sentence].lstrip().startswith("#")

    def located(self, sentence: int, span: tuple[int, int]) -> tuple[Reading, int, int]:
        """第 sentence 句读出来的文字里的 span → (那一句所在的读法：标题的或正文的, 在那个读法里的开始, 结束)。"""
        title_reading, text_reading, spans = self.readings
        if self.has_title:
            if sentence == 0:
                title = title_reading.text
                shift = len(title) - len(title.lstrip())
                return title_reading, span[0] + shift, span[1] + shift
            sentence -= 1
        start = spans[sentence][0]
        return text_reading, start + span[0], start + span[1]

    def written_span(self, sentence: int, span: tuple[int, int]) -> str:
        """第 sentence 句读出来的文字里 span 这一段在资料原文里的样子（说明里引用资料原来的写法）。"""
        reading, start, end = self.located(sentence, span)
        return reading.origin_span(start, end)

    def original_span(self, sentence: int, span: tuple[int, int]) -> tuple[str, int, int]:
        """span 在资料原文里的位置：("title" 或 "text", 开始, 结束)，按 Unicode 码位数。"""
        reading, start, end = self.located(sentence, span)
        field = "title" if self.has_title and sentence == 0 else "text"
        return (field, *reading.in_original(start, end))

    @cached_property
    def quantities(self) -> Known:
        """整条资料里的数量（句子里有数字时才用得到，第一次用到时才读）。"""
        return Known(quantities_in(Seen(self.title + "\n" + self.text)))

    @cached_property
    def units(self) -> list[str]:
        """整条资料的“字”（见 tokens.plain_units），第一次用到时才切。"""
        return plain_units(Seen(self.title + "\n" + self.text))

    def unit_grams(self, size: int) -> set[tuple[str, ...]]:
        """整条资料里连着的 size 个“字”（见 tokens.plain_units）组成的全部片段，第一次用到时才建。"""
        if size not in self.grams:
            self.grams[size] = grams_of(self.units, size)
        return self.grams[size]

    def sentences_with(self, value: float) -> list[int]:
        """说到了这个数值的句子（第一次用到时把每一句的数量读一遍）。"""
        if self.by_value is None:
            self.by_value = defaultdict(list)
            for number, sentence in enumerate(self.sentences):
                for found, _ in quantities_in(sentence):
                    self.by_value[found].append(number)
        return self.by_value.get(value, [])

    def quantities_near(self, sentence: int) -> set[Quantity]:
        """第 sentence 句（和它前后各 QUANTITY_RADIUS 句）里的数量。"""
        found: set[Quantity] = set()
        last = min(len(self.sentences), sentence + QUANTITY_RADIUS + 1)
        for number in range(max(0, sentence - QUANTITY_RADIUS), last):
            if number not in self.sentence_quantities:
                self.sentence_quantities[number] = quantities_in(self.sentences[number])
            found |= self.sentence_quantities[number]
        return found

    def best_window(self, tokens: Iterable[str]) -> tuple[int, int | None]:
        """连续 WINDOW 句之内最多能找到 tokens 里的几个；以及单句里找到最多的那一句的编号。"""
        match = self.match(tokens)
        return match.window_hits, match.sentence

    def match(self, tokens: Iterable[str]) -> Match:
        """句子的词（去重过的）在这条资料里最集中的地方：见 Match。"""
        window_hits: defaultdict[int, int] = defaultdict(int)
        sentence_hits: defaultdict[int, int] = defaultdict(int)
        common = 0
        for token in tokens:
            posted = self.postings.get(token)
            if not posted:
                continue
            if len(posted) > COMMON_POSTINGS:
                common += 1
                continue
            starts: Iterable[int]
            if len(posted) == 1:
                first = posted[0] - WINDOW + 1
                starts = range(first if first > 0 else 0, posted[0] + 1)
            else:
                starts = set()  # 一个词在同一个窗口里出现几次都只算一次
                for sentence in posted:
                    first = sentence - WINDOW + 1
                    starts |= set(range(first if first > 0 else 0, sentence + 1))
            for sentence in posted:
                sentence_hits[sentence] += 1
            for start in starts:
                window_hits[start] += 1
        best = max(sentence_hits, key=lambda number: sentence_hits[number]) if sentence_hits else None
        return Match(max(window_hits.values(), default=0) + common, best,
                     sentence_hits[best] + common if best is not None else common)
