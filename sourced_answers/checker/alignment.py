"""对齐：一句话的每一段来自所引资料里的哪几个字，哪几段在资料里找不到，哪几处和资料只差一个“槽”。

句子和资料都按“字”比：汉字一个字一个，拉丁文一个单词一个（小写、去掉复数的 s），数字一串一个，别的文字的字母
一个一个（标点、空白不算“字”，但记着它们在哪里断开了分句）。每个“字”编成一个字符（汉字就是它自己，单词和数字
按 crc32 编进私用区），这样找一段一模一样的字就是 C 实现的 str.find，不是 Python 的循环。

从左往右贪心地铺：
  · 接着上一块：上一块在资料里停下的地方，往后隔几个字（≤ GAP）和句子往后隔几个字（≤ GAP）又对上了，
    就是一个“槽”：句子这边的几个字换掉了资料那边的几个字（“不支持”对“支持”、“三块”对“四块”、“提高”对“降低”）；
  · 在资料的任何地方找从这里开始最长的一段（至少两个字）：比接着上一块对上的那一段（连同槽）还长时用它
    （最像的一句说的是另一年的数，另一句一字不差地说了这一年的数时，用的是后一句）；
  · 都没有：这个字没对上。
句子开头、分句末尾在资料里对应的几个字（“不会推进”对“继续推进”、“力度减弱”对“力度加大”）也是槽。
没对上的字连成的几段就是“资料里找不到的字”。

资料不长（≤ WHOLE 个字）时整条都拿来对；更长时只用和这句话共有内容词最多的几句（倒排索引），一句话的代价不随
资料变长。句子很长时分块对（每块 ≤ CLAIM_CHUNK 个字）。全部线性。只用标准库。
"""
import re
import zlib
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache

from sourced_answers.checker.reading import Seen
from sourced_answers.checker.text import CJK
from sourced_answers.checker.tokens import ENGLISH_STOPWORDS, FUNCTION_CHARS

# 一个“字”：汉字；拉丁单词（可以带撇号）；一串数字（可以带小数）；别的文字的一个字母
UNIT = re.compile(rf"[{CJK}]|[A-Za-z]+(?:['’][A-Za-z]+)*|[0-9]+(?:\.[0-9]+)?|[^\W_]")
# 分句的界线：这些标点把“字”隔成不同的分句（槽不跨过它）
CLAUSE_BREAK = re.compile(r"[，。,;；：:！？!?、\n]|\.(?=\s|$)")
GAP = 4  # 接着上一块时，两边最多各隔几个字再对上
# 最短的一块（两个字）；一个字只在句子末尾、两边换掉的字一样多（最多 SINGLE_GAP 个）时算对上（“第一名”的“名”）
MIN_BLOCK = 2
SINGLE_GAP = 2
# 资料不超过这么多个字时整条拿来对，否则只拿最相关的几句（总共最多这么多个字）
WHOLE = 6000
# 句子长于这么多个字时分块对
CLAIM_CHUNK = 2000
# 单词、数字的编码：crc32 落进两个私用区（共 131068 个码位）
PRIVATE_A = 0xF0000
PRIVATE_SIZE = 0xFFFE
SEPARATOR = "\x00"

Span = tuple[int, int]


def unit_code(unit: str) -> str:
    """一个“字”的编码：汉字和别的文字的单个字母就是它自己（小写），单词、数字编进私用区。"""
    if len(unit) == 1 and not unit.isascii():
        return unit.lower()
    key = unit.lower().replace("’", "'")
    if key[:1].isalpha() and len(key) > 3 and key.endswith("s") and not key.endswith("ss"):
        key = key[:-1]  # drives → drive
    value = zlib.crc32(key.encode("utf-8")) % (2 * PRIVATE_SIZE)
    return chr(PRIVATE_A + value) if value < PRIVATE_SIZE else chr(0x100000 + value - PRIVATE_SIZE)


@dataclass(frozen=True)
class Units:
    """一段文字的“字”：编码连成的字符串，每个字在文字里的起止位置，以及它前面是不是分句的界线。"""
    codes: str
    starts: tuple[int, ...]
    ends: tuple[int, ...]
    breaks: tuple[bool, ...]  # breaks[k]：第 k 个字和前一个字之间有分句的界线（第 0 个字为 True）


@lru_cache(maxsize=64)
def units_of(text: str) -> Units:
    """text 的“字”（只读的缓存：对齐、同一处、数的规则读同一句话的同一份）。"""
    codes: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    breaks: list[bool] = []
    last = 0
    for match in UNIT.finditer(text):
        start = match.start()
        codes.append(unit_code(match.group()))
        breaks.append(not starts or CLAUSE_BREAK.search(text, last, start) is not None)
        starts.append(start)
        ends.append(match.end())
        last = match.end()
    return Units("".join(codes), tuple(starts), tuple(ends), tuple(breaks))


@dataclass(frozen=True)
class Part:
    """资料的一句（一条资料的第 sentence 句，编号 source）在对齐用的窗口里从 offset 开始。"""
    source: int
    sentence: int
    offset: int
    units: Units


class Window:
    """拿来对齐的资料：几句的编码用 SEPARATOR 连起来（一段字不会跨过两句），记着每一句从哪里开始。"""

    def __init__(self, parts: Sequence[tuple[int, int, Units]]) -> None:
        pieces: list[str] = []
        self.parts: list[Part] = []
        offset = 0
        for source, sentence, units in parts:
            self.parts.append(Part(source, sentence, offset, units))
            pieces.append(units.codes)
            offset += len(units.codes) + 1
        self.text = SEPARATOR.join(pieces) + SEPARATOR
        self.offsets = [part.offset for part in self.parts]

    def part_at(self, position: int) -> Part:
        return self.parts[bisect_right(self.offsets, position) - 1]


@dataclass(frozen=True)
class Piece:
    """对上的一段：句子里的 claim（读出来的文字里的位置），资料 source 的第 sentence 句里的 span（那一句读出来的
    文字里的位置）。"""
    claim: Span
    source: int
    sentence: int
    span: Span


@dataclass(frozen=True)
class Slot:
    """槽：句子里的 claim 一段换掉了资料里的 span 一段（两边都可以是空的：多了或少了几个字），两头都和资料对上了。
    where：mid（两块之间）、lead（句子开头）或 tail（分句末尾）；before、after：槽前面、后面紧挨着对上的那一块有几个字
    （没有为 0）：两头对上的字越多，越能说明两边说的是同一处。"""
    claim: Span
    source: int
    sentence: int
    span: Span
    where: str
    before: int = 0
    after: int = 0


@dataclass(frozen=True)
class Alignment:
    """一句话对齐的结果：对上的几段（按句子里的顺序）、槽、没对上的几段（句子读出来的文字里的位置），
    以及句子有几个“字”、对上了几个。"""
    pieces: tuple[Piece, ...]
    slots: tuple[Slot, ...]
    unmatched: tuple[Span, ...]
    units: int
    matched: int

    @property
    def empty(self) -> bool:
        return not self.pieces

    @cached_property
    def slot_ends(self) -> dict[int, list[Slot]]:
        """在句子里某个位置结束的槽（同一处的规则按位置找，不逐个去比：一句很长的话有成千上万个槽）。"""
        return slots_by(self.slots, 1)

    @cached_property
    def slot_starts(self) -> dict[int, list[Slot]]:
        return slots_by(self.slots, 0)


def slots_by(slots: Sequence[Slot], end: int) -> dict[int, list[Slot]]:
    found: dict[int, list[Slot]] = {}
    for slot in slots:
        found.setdefault(slot.claim[end], []).append(slot)
    return found


EMPTY = Alignment((), (), (), 0, 0)


def unmatched_content(text: Seen, alignment: Alignment) -> int:
    """没对上的字里有几个是内容：汉字里虚词用字（的、了、是……）不算，英文的 the、of 这类不算，数字不算（数字由数字的
    规则核对）。"""
    count = 0
    for start, end in alignment.unmatched:
        for match in UNIT.finditer(text, start, end):
            unit = match.group()
            if unit[0].isdigit():
                continue
            if unit.isascii():
                count += unit.lower() not in ENGLISH_STOPWORDS
            else:
                count += unit not in FUNCTION_CHARS
    return count


def common_prefix(left: str, left_start: int, right: str, right_start: int) -> int:
    """left[left_start:] 和 right[right_start:] 开头有几个字一样。"""
    length = 0
    limit = min(len(left) - left_start, len(right) - right_start)
    while length < limit and left[left_start + length] == right[right_start + length]:
        length += 1
    return length


def longest_prefix(codes: str, start: int, window: str, near: int) -> tuple[int, int] | None:
    """codes[start:] 开头在 window 里能找到的最长一段（至少 MIN_BLOCK 个字）：(长度, 位置)，位置优先取 near 之后的。"""
    if len(codes) - start < MIN_BLOCK or window.find(codes[start:start + MIN_BLOCK]) < 0:
        return None
    low, high = MIN_BLOCK, MIN_BLOCK
    limit = len(codes) - start
    while high < limit:  # 先成倍地试，再二分：大多数块都不长
        trial = min(limit, high * 2)
        if window.find(codes[start:start + trial]) < 0:
            high = trial
            break
        low = high = trial
    else:
        high = limit
    if high > low:
        while low < high:
            middle = (low + high + 1) // 2
            if window.find(codes[start:start + middle]) >= 0:
                low = middle
            else:
                high = middle - 1
    piece = codes[start:start + low]
    position = window.find(piece, near) if near >= 0 else -1
    return low, position if position >= 0 else window.find(piece)


def resync(units: Units, start: int, window: Window, near: int) -> tuple[int, int, int] | None:
    """接着上一块（它在资料里停在 near）：句子往后隔 a 个字、资料往后隔 b 个字又对上了 length 个字，返回
    (a, b, length)；a + b 最小的那个。资料那边不跨过句子的界线。"""
    codes, text = units.codes, window.text
    boundary = text.find(SEPARATOR, near)
    best: tuple[int, int, int] | None = None
    for a in range(0, GAP + 1):
        if start + a >= len(codes) or best is not None and a >= best[0] + best[1]:
            break
        if a and units.breaks[start + a]:
            break  # 槽不跨过句子的分句
        piece = codes[start + a:start + a + MIN_BLOCK]
        found = text.find(piece, near, min(boundary, near + GAP + len(piece))) if len(piece) == MIN_BLOCK else -1
        if found >= 0:
            length = common_prefix(codes, start + a, text, found)
            b = found - near
            if best is None or a + b < best[0] + best[1]:
                best = (a, b, length)
            continue
        # 一个字：句子的分句、或者资料的那一句到了末尾，两边换掉的字一样多（“第一名”对“第三名”、
        # “at least two disks and …”对“at least three disks.”）
        single = start + a + 1 >= len(codes) or units.breaks[start + a + 1] or text[near + a + 1:near + a + 2] in (
            SEPARATOR, "")
        if 0 < a <= SINGLE_GAP and single and near + a < boundary and text[near + a] == codes[start + a] \
                and (best is None or 2 * a < best[0] + best[1]):
            best = (a, a, 1)
    return best


def clause_end(units: Units, start: int, limit: int) -> int:
    """第 start 个字所在的分句在第几个字结束（最多看 limit 个字，更远时是 start + limit + 1）。"""
    end = start + 1
    while end < len(units.codes) and not units.breaks[end] and end <= start + limit:
        end += 1
    return end


Blocks = list[tuple[int, int, int]]  # [(句子里的开始, 结束, 窗口里的开始)]（以“字”计）
Slots = list[tuple[int, int, int, int, str]]  # [(句子里的开始, 结束, 窗口里的开始, 结束, where)]


def align_units(units: Units, window: Window) -> tuple[Blocks, Slots]:
    """句子的字铺到窗口上：对上的几块和槽（见模块说明）。"""
    codes, text = units.codes, window.text
    blocks: Blocks = []
    slots: Slots = []
    position, near = 0, -1
    while position < len(codes):
        local = resync(units, position, window, near) if near >= 0 else None
        found = longest_prefix(codes, position, text, near)
        if local and local[0]:
            # 跳过几个字之后，别处有比接着上一块更长的一段：那几个字没对上，从那里接着铺
            later = longest_prefix(codes, position + local[0], text, near)
            if later and later[0] > local[2]:
                local = None
        if local and (found is None or found[0] <= local[0] + local[2]):
            a, b, length = local
            if a or b:
                slots.append((position, position + a, near, near + b, "mid"))
            blocks.append((position + a, position + a + length, near + b))
            position += a + length
            near += b + length
        elif found:
            length, at = found
            blocks.append((position, position + length, at))
            position += length
            near = at + length
        elif near >= 0 and blocks and blocks[-1][1] == position:
            # 上一块之后这个分句剩下的几个字，对资料里那一句剩下的几个字（“力度减弱”对“力度加大”）
            end = clause_end(units, position, GAP)
            stop = text.find(SEPARATOR, near)
            part = window.part_at(near)
            source_end = near
            while source_end < stop and source_end - near <= GAP + 2 and (source_end == near or not part.units.breaks[
                    source_end - part.offset]):
                source_end += 1
            if end - position <= GAP and source_end - near <= GAP + 2:
                slots.append((position, end, near, source_end, "tail"))
            position += 1
        else:
            position += 1
    if blocks:
        lead = leading_slot(units, window, blocks[0])
        if lead:
            slots.insert(0, lead)
    return blocks, slots


def leading_slot(units: Units, window: Window, first: tuple[int, int, int]) -> tuple[int, int, int, int, str] | None:
    """句子开头没对上的几个字（和第一块在同一个分句里），对资料里第一块前面、同一个分句里的几个字。"""
    start, _, at = first
    if start == 0 or start > GAP or any(units.breaks[1:start + 1]):
        return None
    part = window.part_at(at)
    local = at - part.offset
    begin = local
    while begin > 0 and not part.units.breaks[begin] and local - begin < GAP + 2:
        begin -= 1
    if begin > 0 and not part.units.breaks[begin]:
        return None  # 资料那边这个分句在第一块前面还有很多字：说不清对的是哪几个
    return 0, start, part.offset + begin, at, "lead"


def align(claim: Seen, window: Window) -> Alignment:
    """一句话（读出来的文字）对齐到窗口里的资料上。句子很长时分块对齐（每块 ≤ CLAIM_CHUNK 个字）。"""
    units = units_of(claim)
    if not units.codes or not window.parts:
        return Alignment((), (), ((0, len(claim)),) if units.codes else (), len(units.codes), 0)
    blocks: list[tuple[int, int, int]] = []
    slots: list[tuple[int, int, int, int, str]] = []
    for chunk_start in range(0, len(units.codes), CLAIM_CHUNK):
        chunk = sliced(units, chunk_start, chunk_start + CLAIM_CHUNK)
        found_blocks, found_slots = align_units(chunk, window)
        blocks += [(start + chunk_start, end + chunk_start, at) for start, end, at in found_blocks]
        slots += [(start + chunk_start, end + chunk_start, low, high, where)
                  for start, end, low, high, where in found_slots]
    return assembled(claim, units, window, blocks, slots)


def sliced(units: Units, start: int, end: int) -> Units:
    if start == 0 and end >= len(units.codes):
        return units
    breaks = (True,) + units.breaks[start + 1:end]
    return Units(units.codes[start:end], units.starts[start:end], units.ends[start:end], breaks)


def char_span(units: Units, start: int, end: int) -> Span:
    """第 start 到 end 个字（不含）在文字里的位置；空的一段在第 start 个字的开头（或最后一个字的末尾）。"""
    if end > start:
        return units.starts[start], units.ends[end - 1]
    if start < len(units.starts):
        return units.starts[start], units.starts[start]
    return (units.ends[-1], units.ends[-1]) if units.ends else (0, 0)


def assembled(claim: Seen, units: Units, window: Window, blocks: list[tuple[int, int, int]],
              slots: list[tuple[int, int, int, int, str]]) -> Alignment:
    covered = [False] * len(units.codes)
    pieces: list[Piece] = []
    for start, end, at in blocks:
        part = window.part_at(at)
        local = at - part.offset
        for position in range(start, end):
            covered[position] = True
        piece = Piece(char_span(units, start, end), part.source, part.sentence,
                      char_span(part.units, local, local + end - start))
        if pieces and pieces[-1].source == piece.source and pieces[-1].sentence == piece.sentence \
                and pieces[-1].claim[1] <= piece.claim[0] and pieces[-1].span[1] <= piece.span[0] \
                and units_between(units, pieces[-1].claim[1], piece.claim[0]) == 0 \
                and units_between(part.units, pieces[-1].span[1], piece.span[0]) == 0:
            last = pieces.pop()  # 中间只隔着标点、空白：是一块
            piece = Piece((last.claim[0], piece.claim[1]), piece.source, piece.sentence, (last.span[0], piece.span[1]))
        pieces.append(piece)
    found_slots = []
    ending = {end: end - start for start, end, _ in blocks}
    beginning = {start: end - start for start, end, _ in blocks}
    for start, end, low, high, where in slots:
        if where == "tail" and any(covered[start:end]):
            continue  # 分句末尾的槽后面又对上了别的字：那不是末尾
        part = window.part_at(low)
        found_slots.append(Slot(char_span(units, start, end), part.source, part.sentence,
                                char_span(part.units, low - part.offset, high - part.offset), where,
                                ending.get(start, 0), beginning.get(end, 0)))
    unmatched: list[Span] = []
    run: int | None = None
    for position, done in enumerate(covered + [True]):
        if not done and run is None:
            run = position
        elif done and run is not None:
            unmatched.append(char_span(units, run, position))
            run = None
    return Alignment(tuple(pieces), tuple(found_slots), tuple(unmatched), len(units.codes), sum(covered))


def units_between(units: Units, start: int, end: int) -> int:
    """文字里 [start, end) 之间有几个“字”。"""
    return bisect_right(units.starts, end - 1) - bisect_right(units.starts, start - 1) if end > start else 0
