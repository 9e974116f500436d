"""资料的索引：每条资料切成句子，记下每个词出现在哪几句、有哪些数量、是什么语言。每条资料只建一次。

句子和资料比较时只看句子自己的词在索引里的位置，所以资料变长不会让每句话的核对变慢；
资料很多（成百上千条）时，替一句话找“更合适的资料”只挑共有少见词最多的几条，不和每条都比。
"""
import re
import threading
from collections import OrderedDict, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from sourced_answers.checker.quantities import Known, Quantity, quantities_in
from sourced_answers.checker.reading import Seen, read
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

SOURCE_SENTENCE = re.compile(r"[^。！？!?；;\n]*(?:[。！？!?；;\n]|$)")
ENGLISH_SENTENCE_BREAK = re.compile(r"(?<=\.)\s+")


Span = tuple[int, int]


def sentence_spans(text: str) -> list[Span]:
    """资料里每一句的位置（按 。！？；和换行，以及英文句点后的空白切开，两头的空白不算）。"""
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

    def written(self, sentence: int) -> str:
        """第 sentence 句原来的写法（标题是第 0 句，如果有标题）：给人看的证据句。"""
        title_reading, text_reading, spans = self.readings
        if self.has_title:
            if sentence == 0:
                return title_reading.original.strip()
            sentence -= 1
        return text_reading.origin_span(*spans[sentence])

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


# 最近建过的资料索引，按（标题，正文）找：--verify 一批日志时，同一个问题的回答常常引用同样的网页
# （同一个问题问了几遍、几个模型回答同一组资料），每条资料的索引就不必每条记录重建一次。
# 索引只由标题和正文决定，建好之后只会补上按需计算的部分，所以可以共用。条数和每条的长度都有上限，内存有界。
RECENT_INDEXES = 64
RECENT_INDEX_CHARS = 100_000
recent: OrderedDict[tuple[str, str], SourceIndex] = OrderedDict()
recent_lock = threading.Lock()


def index_of_source(source: Source) -> SourceIndex:
    """这条资料的索引：最近建过就拿来用，否则建一个（在锁外面建，建好再放进去）。"""
    key = (source.title or "", source.text or "")
    if len(key[0]) + len(key[1]) > RECENT_INDEX_CHARS:
        return SourceIndex(source)
    with recent_lock:  # Dask 的 worker、调用库函数的程序可能在几个线程里同时核对
        found = recent.get(key)
        if found is not None:
            recent.move_to_end(key)
            return found
    built = SourceIndex(source)
    with recent_lock:
        recent[key] = built
        if len(recent) > RECENT_INDEXES:
            recent.popitem(last=False)
    return built


def written_sentences(source: Source) -> list[str]:
    """资料（标题算第一句）里每一句原来的写法：核对给出的证据句都在里面（审阅页凭它在正文里高亮）。"""
    index = index_of_source(source)
    return [index.written(number) for number in range(len(index.sentences))]


class SourceIndexes:
    """按编号取资料的索引：第一次用到时才建，每条资料只建一次。index_of(编号) → SourceIndex。

    candidates() 回答“还有哪几条资料可能支持这句话”：资料不多时就是全部；很多时只挑和这句话
    共有的少见词最多的几条，免得每个句子都和每条资料比一遍（那是平方级的）。"""

    def __init__(self, sources: Sequence[Source]) -> None:
        self.sources = sources
        self.built: dict[int, SourceIndex] = {}
        self.holders: dict[str, list[int]] | None = None
        # 比较结果的缓存（键由用它的模块定）：同一组资料上同样的句子只比一次
        self.memo: dict[tuple[Any, ...], Any] = {}

    def __call__(self, number: int) -> SourceIndex:
        if number not in self.built:
            self.built[number] = index_of_source(self.sources[number - 1])
        return self.built[number]

    def __len__(self) -> int:
        return len(self.sources)

    def candidates(self, tokens: Sequence[str], exclude: Iterable[int] = ()) -> list[int]:
        """可能支持含有这些词的句子的资料编号，可能性大的在前，最多 CANDIDATES 条。"""
        skipped = set(exclude)
        count = len(self.sources)
        if count <= CANDIDATES:
            return [n for n in range(1, count + 1) if n not in skipped]
        holders = self._holders()
        hits: defaultdict[int, int] = defaultdict(int)
        for token in set(tokens):
            found = holders.get(token, [])
            if len(found) > COMMON_SOURCES:
                continue  # 几乎每条资料都有的词分不出哪条更好，也会让这一步变成平方级
            for number in found:
                hits[number] += 1
        ranked = sorted((n for n in hits if n not in skipped), key=lambda n: (-hits[n], n))
        return ranked[:CANDIDATES]

    def _holders(self) -> dict[str, list[int]]:
        """词 → 含有它的资料编号（第一次用到时建，建一次）。"""
        if self.holders is None:
            self.holders = defaultdict(list)
            for number in range(1, len(self.sources) + 1):
                for token in self(number).postings:
                    self.holders[token].append(number)
        return self.holders
