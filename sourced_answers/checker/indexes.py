"""一组资料的索引（SourceIndexes：按编号取每条资料的索引，挑可能支持一句话的几条），和最近用过的资料索引、
比较结果的缓存：--verify 一批日志时，同一个问题的回答常常引用同样的网页，索引和同样句子的结论不必每条记录重来。
只用标准库。
"""
import threading
from collections import OrderedDict, defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from sourced_answers.checker.alignment import Window
from sourced_answers.checker.source_index import CANDIDATES, COMMON_SOURCES, MIN_TITLE, SourceIndex, bare
from sourced_answers.checker.types import Source

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


# 最近几组资料（每条的标题和正文都一样）的比较结果：一批日志里同一个问题的回答常常引同一组网页，同样的句子不必每条
# 记录再比一遍。只留最近的几组，每组的正文加起来不超过 RECENT_INDEX_CHARS（内存有界）
RECENT_MEMOS = 8
recent_memos: OrderedDict[tuple[tuple[str, str], ...], dict[tuple[Any, ...], Any]] = OrderedDict()


def shared_memo(sources: Sequence[Source]) -> dict[tuple[Any, ...], Any]:
    key = tuple((source.title or "", source.text or "") for source in sources)
    if sum(len(title) + len(text) for title, text in key) > RECENT_INDEX_CHARS:
        return {}
    with recent_lock:
        memo = recent_memos.pop(key, None)
        recent_memos[key] = memo = {} if memo is None else memo
        while len(recent_memos) > RECENT_MEMOS:
            recent_memos.popitem(last=False)
    return memo


class SourceIndexes:
    """按编号取资料的索引：第一次用到时才建，每条资料只建一次。index_of(编号) → SourceIndex。

    candidates() 回答“还有哪几条资料可能支持这句话”：资料不多时就是全部；很多时只挑和这句话
    共有的少见词最多的几条，免得每个句子都和每条资料比一遍（那是平方级的）。"""

    def __init__(self, sources: Sequence[Source]) -> None:
        self.sources = sources
        self.built: dict[int, SourceIndex] = {}
        self.holders: dict[str, list[int]] | None = None
        self.titles: dict[str, int] | None = None  # 资料的标题（去掉标点、空白，小写）→ 编号（用到时才建）
        # 比较结果的缓存（键由用它的模块定）：同一组资料上同样的句子只比一次，一批记录引同一组资料时也是
        self.memo: dict[tuple[Any, ...], Any] = shared_memo(sources)

    def __call__(self, number: int) -> SourceIndex:
        if number not in self.built:
            self.built[number] = index_of_source(self.sources[number - 1])
        return self.built[number]

    def __len__(self) -> int:
        return len(self.sources)

    def window(self, numbers: Sequence[int], tokens: Sequence[str]) -> Window:
        """对齐用的窗口：所引的几条资料里拿来对的句子（见 SourceIndex.aligned_sentences）。资料都不长时，同一组编号
        只建一次。"""
        indexes = [(number, self(number)) for number in dict.fromkeys(numbers)]
        if len(indexes) == 1:
            return indexes[0][1].window(indexes[0][0], tokens)
        whole = all(index.short for _, index in indexes)
        key = ("window", tuple(number for number, _ in indexes))
        if whole and key in self.memo:
            found: Window = self.memo[key]
            return found
        built = Window([(number, sentence, index.sentence_units(sentence)) for number, index in indexes
                        for sentence in index.aligned_sentences(tokens)])
        if whole:
            self.memo[key] = built
        return built

    def title_number(self, text: str) -> int | None:
        """text（一句话读出来的样子）和哪一条资料的标题一字不差（标点、空白、大小写不算）：那一条的编号，否则 None。
        只是标题的一句话不是回答。标题太短（不到 MIN_TITLE 个字）的不算。"""
        if self.titles is None:
            self.titles = {}
            for number, source in enumerate(self.sources, 1):
                title = bare(source.title or "")
                if len(title) >= MIN_TITLE:
                    self.titles.setdefault(title, number)
        return self.titles.get(bare(text)) if self.titles else None

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
