"""找密钥时一段文字的几种看法（masking.py 用它们），和把看到的位置换回原文的办法。

密钥可以写得和环境变量里的不一样，读的人照样认得出、抄得下来。每种看法把文字读成一个样子，在那个样子里找密钥，
找到的位置换回原文，遮掉原文里的那一整段（连同夹在中间的标签、实体、记号）：
  plain     去掉看不见的字符（零宽空格、软连字符、组合附加符号……）和空白（“m k - C A N A R Y”）；
  terminal  再去掉终端控制序列（ESC[31m、OSC 8 链接）；
  escapes   再把写成转义的字解开（JSON 的 \\u006d、\\x6d，literal 写出的 \\u200b）；
  rendered  聊天程序、网页、审阅页把它渲染出来以后读者看到的：再去掉 HTML 标签和注释（sk-mo<b></b>del）、Markdown 的
            记号（* _ ~ ` 和链接的方括号、网址：sk-model-*secret*-0001）、转义标点的反斜杠，HTML 实体换成它代表的字
            （&#109; &#x6d; &amp;，不带分号的也算：浏览器照样认），NFKC 会换成 ASCII 的字换成那几个 ASCII 字（全角的
            ｓｋ－、数学字母 𝐬、连字 ﬁ：unicode_ranges.ASCII_LIKE）。密钥自己也这样读一遍（rendered_key）：密钥里的
            _ * 在文字里也被去掉了，两边读法一样才对得上。
几种看法都找（一种看法会吃掉别的看法要的字：“\\x9bm…”里的 m 是密钥的第一个字，也可以是控制序列的结尾），合起来遮。
粗查（key_start）先看文字里有没有哪种写法的密钥开头：没有的文字（绝大多数）不必去读。全部和文字的长度成线性：
每个量词要么有上限、要么在下一个同样开头的字之前停下。
"""
import html
import re
import unicodedata
from bisect import bisect_right
from functools import cache, lru_cache
from typing import NamedTuple

from sourced_answers.checker import ASCII_LIKE_CLASS, LINE_UNSAFE_CLASS, MARKS_CLASS

RANGE = re.compile(r"\\U([0-9a-f]{8})-\\U([0-9a-f]{8})")
Ranges = list[tuple[int, int]]


def ranges_of(character_class: str) -> Ranges:
    return [(int(start, 16), int(end, 16)) for start, end in RANGE.findall(character_class)]


def class_of(ranges: Ranges) -> str:
    return "".join(f"\\U{start:08x}-\\U{end:08x}" for start, end in ranges)


def rough(ranges: Ranges, gap: int) -> Ranges:
    """基本平面以外的范围粗粗地并成几大段（相隔不到 gap 的连起来）：字符类里有基本平面以外的范围时，正则要拿每个字
    和它们逐段比较，慢几十倍。多包进去的字由用到它的地方再确认，或者多遮一点。"""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(r for r in ranges if r[0] > 0xFFFF):
        if merged and start - merged[-1][1] <= gap:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def without(ranges: Ranges, holes: Ranges) -> Ranges:
    """ranges 去掉 holes 里的码位。"""
    for hole_start, hole_end in holes:
        pieces = (((start, min(end, hole_start - 1)), (max(start, hole_end + 1), end)) for start, end in ranges)
        ranges = [piece for both in pieces for piece in both if piece[0] <= piece[1]]
    return ranges


# 遮密钥时当作看不见的字符：控制字符、格式字符（零宽空格、软连字符……）、组合用的附加符号，以及显示成空白的
# 几个字母（韩文填充符、盲文空白）。密钥的字中间夹着它们，看起来仍是那个密钥，所以照样要遮掉。
# 基本平面以外的那一百多段只粗粗地用两大段包住（表情符号不在里面）：多包进去的是古文字和数学字母，夹在密钥中间时
# 多遮一点，不会少遮
HIDDEN_RANGES = ranges_of(LINE_UNSAFE_CLASS + MARKS_CLASS)
ROUGH_HIDDEN = (rough([r for r in HIDDEN_RANGES if r[0] < 0xE0000], 1 << 20)
                + rough([r for r in HIDDEN_RANGES if r[0] >= 0xE0000], 1 << 20))
HIDDEN_BASIC = class_of([r for r in HIDDEN_RANGES if r[1] <= 0xFFFF]) + "\u115f\u1160\u3164\uffa0\u2800\ud800-\udfff"
HIDDEN_CLASS = HIDDEN_BASIC + class_of(ROUGH_HIDDEN)
# NFKC 换成 ASCII 的字：基本平面以外的（数学字母、带圈的拉丁字母）粗粗地并成几段，读的时候再确认
LIKE_RANGES = ranges_of(ASCII_LIKE_CLASS)
ASCII_LIKE_ROUGH = class_of([r for r in LIKE_RANGES if r[1] <= 0xFFFF] + rough(LIKE_RANGES, 256))
# 渲染出来的看法里看不见的字：同样的字，只是粗包的那两大段空出数学字母那几段（它们读成 ASCII 字母，不是看不见）
RENDERED_HIDDEN = HIDDEN_BASIC + class_of(without(ROUGH_HIDDEN, rough(LIKE_RANGES, 256)))

# 找密钥时看不见的东西（除了 HIDDEN_CLASS 里的字符）：空白、终端控制序列、写成转义的看不见的字符和空白。
# 写成转义的密钥本身的字（JSON 里的 \u006d、\x6d）换成那个字再找。
TERMINAL = r"\x1b\[[0-?]*[ -/]*[@-~]|\x9b[0-?]*[ -/]*[@-~]|[\x1b][\]P^_X][^\x07\x1b]{0,4096}(?:\x07|\x1b\\)"
ESCAPE = r"\\(?:u([0-9a-fA-F]{4})|x([0-9a-fA-F]{2})|U([0-9a-fA-F]{8})|([nrtfvb]))"
# 渲染时不显示的：注释和标签（内容里没有尖括号：遇到下一个“<”就停）、链接的网址、转义标点的反斜杠、Markdown 的记号
COMMENT = r"<!--[^<>]{0,300}-->"
TAG = r"</?[A-Za-z][A-Za-z0-9:-]{0,30}(?:[ \t/][^<>\n]{0,300})?>"
# 实体前面补的零最多 4096 个（浏览器认更多的，可没有人这样写；终端的 OSC 序列也只认 4096 个字以内的）
ENTITY = r"&(?:#0{0,4096}[0-9]{1,8}|#[xX]0{0,4096}[0-9A-Fa-f]{1,8}|[A-Za-z][A-Za-z0-9]{0,31});?"
LINK_TARGET = r"\]\([^()\s\]]{0,1000}\)"
PUNCTUATION_ESCAPE = r"\\(?=[!-/:-@\[-`{-~])"
MARKDOWN_MARKS = r"*_~`\[\]"
VIEWS = ("plain", "terminal", "escapes", "rendered")


class Seeing(NamedTuple):
    """找密钥用的正则。hidden：看不见的字符；ignored：渲染出来读者看不到的单个字（看不见的、空白、Markdown 的记号）；
    views：每种看法不看（或换掉）的部分；starts：不看的部分都在这些字里开头，没有它们的文字原样就是那种看法的样子；
    seen_only：两处之间只有不看的东西。"""
    hidden: re.Pattern[str]
    ignored: re.Pattern[str]
    views: dict[str, re.Pattern[str]]
    starts: dict[str, re.Pattern[str]]
    seen_only: re.Pattern[str]


@cache
def seeing() -> Seeing:
    """第一次要找密钥时才编译（字符类有几百段，每个正则要编译一毫秒多）：没有密钥的运行（--verify、--help 常常如此）
    不为它们付启动的时间。"""
    plain = f"[{HIDDEN_CLASS}\\s]+"
    written = f"[\\x1b\\x9b\\\\{HIDDEN_CLASS}\\s]"
    return Seeing(
        hidden=re.compile(f"[{HIDDEN_CLASS}]+"),
        ignored=re.compile(f"[{RENDERED_HIDDEN}\\s{MARKDOWN_MARKS}]+"),
        views={"plain": re.compile(plain),
               "terminal": re.compile(f"{TERMINAL}|{plain}"),
               "escapes": re.compile(f"{TERMINAL}|{plain}|{ESCAPE}"),
               "rendered": re.compile(f"{TERMINAL}|{COMMENT}|{TAG}|(?P<entity>{ENTITY})|{LINK_TARGET}|"
                                      f"{PUNCTUATION_ESCAPE}|[{RENDERED_HIDDEN}\\s{MARKDOWN_MARKS}]+|"
                                      f"(?P<like>[{ASCII_LIKE_ROUGH}])")},
        starts={"plain": re.compile(written), "terminal": re.compile(written), "escapes": re.compile(written),
                "rendered": re.compile(f"[\\x1b\\x9b\\\\<&{MARKDOWN_MARKS}{HIDDEN_CLASS}\\s{ASCII_LIKE_ROUGH}]")},
        seen_only=re.compile(f"(?:{TERMINAL}|[{HIDDEN_CLASS}\\s]|{ESCAPE})*"))


def escaped_char(match: re.Match[str]) -> str:
    """escapes 看法的一处匹配如果是转义，它代表的字；看不见的字、空白和别的匹配是空的（整个不算）。"""
    code = match.group(1) or match.group(2) or match.group(3)
    if code is None or int(code, 16) > 0x10FFFF:
        return ""
    char = chr(int(code, 16))
    return "" if char.isspace() or seeing().hidden.fullmatch(char) else char


@lru_cache(maxsize=4096)
def folded(text: str) -> str:
    """渲染出来的字读者读成什么：NFKC（全角、数学字母、连字换成 ASCII），再去掉看不见的字、空白和 Markdown 的记号。"""
    normal = text if text.isascii() else unicodedata.normalize("NFKC", text)
    return seeing().ignored.sub("", normal)


def entity_text(entity: str) -> str:
    """一个 HTML 实体代表的字（浏览器的规矩，html.unescape）。数字的先去掉前面的零：补零补到几千位的实体，
    int() 会拒绝。"""
    if entity.startswith("&#"):
        hexadecimal = entity[2:3] in "xX"
        digits = entity[3 if hexadecimal else 2:].rstrip(";").lstrip("0") or "0"
        return html.unescape(f"&#{int(digits, 16 if hexadecimal else 10)};")
    return html.unescape(entity)


def shown_as(match: re.Match[str], view: str) -> str | None:
    """一种看法下，一处匹配读成什么："" 是不看，None 是照原样读（不认识的实体、读成自己的字）。"""
    if view == "escapes":
        return escaped_char(match)
    if view != "rendered" or match.lastgroup not in ("entity", "like"):
        return ""
    written = match.group()
    decoded = entity_text(written) if match.lastgroup == "entity" else written
    if decoded == written and match.lastgroup == "entity":
        return None
    shown = folded(decoded)
    return None if shown == written else shown


class VisibleCopy:
    """一段文字在一种看法下的样子（text），和把其中的位置换回原文的办法（original、original_end）。每一段记着
    (在 text 里的开始, 在原文里的开始, 在原文里的结束)：照抄的一段结束是 None（一个字对一个字）；换出来的字
    （转义、实体、全角字母，一处可以换成几个字：ﬁ → fi）记着它们替换的那一段在原文里从哪里到哪里。"""

    def __init__(self, text: str, view: str = "escapes") -> None:
        self.source = text
        self.view = view
        self.segments: list[tuple[int, int, int | None]] = []
        if not seeing().starts[view].search(text):
            self.text = text
            return
        pieces: list[str] = []
        length = position = 0
        for match in seeing().views[view].finditer(text):
            shown = shown_as(match, view)
            if shown is None:
                continue
            if match.start() > position:
                pieces.append(text[position:match.start()])
                self.segments.append((length, position, None))
                length += match.start() - position
            if shown:
                pieces.append(shown)
                self.segments.append((length, match.start(), match.end()))
                length += len(shown)
            position = match.end()
        pieces.append(text[position:])
        self.segments.append((length, position, None))  # 最后一段（可能是空的）：末尾之后的位置也换得回去
        self.text = "".join(pieces)

    def _segment(self, index: int) -> tuple[int, int, int | None]:
        return self.segments[bisect_right(self.segments, (index, float("inf"), 0)) - 1]

    def original(self, index: int) -> int:
        """self.text 里第 index 个字（或末尾之后）在原文里从哪里开始。"""
        if not self.segments:
            return index
        start, origin, end = self._segment(index)
        return origin if end is not None else origin + index - start

    def original_end(self, index: int) -> int:
        """self.text 里第 index 个字在原文里到哪里结束（转义、实体占好几个字）。"""
        if not self.segments:
            return index + 1
        start, origin, end = self._segment(index)
        return end if end is not None else origin + index - start + 1


@lru_cache(maxsize=64)
def visible(secret: str) -> str:
    """密钥去掉看不见的字符：环境变量里的密钥自己夹着零宽字符时，输出里有没有那个字都认得出来。"""
    return seeing().hidden.sub("", secret)


# 密钥渲染出来以后至少要剩这么多个字（或者整个密钥那么长）、而且不少于一半，才拿它去找渲染出来的文字：
# 几乎全是 * _ 的“密钥”渲染出来只剩几个字母，拿它去找会遮掉正常的文字
MIN_RENDERED = 8


@lru_cache(maxsize=64)
def rendered_key(key: str) -> str:
    """key（已经去掉看不见的字符）渲染出来的样子：找 rendered 那种看法时用它。太短时是空的（见 MIN_RENDERED）。"""
    shown = VisibleCopy(key, "rendered").text
    if shown == key:
        return key
    return shown if len(shown) >= min(len(key), MIN_RENDERED) and 2 * len(shown) >= len(key) else ""


# ---------- 粗查：文字里有没有哪种写法的密钥开头 ----------

# 先粗查一遍用密钥的前这么多个字：它们之间可以夹着看不见的东西。找不到就不会有这个密钥
KEY_START = 4
# 夹在密钥的两个字之间、看不见的东西（粗查用，每种看法的都算：多放过的由 VisibleCopy 再确认，只求不漏）
WRITTEN_BETWEEN = f"(?:{TERMINAL}|[{HIDDEN_CLASS}\\s]|{ESCAPE})*"
ANY_BETWEEN = (f"(?:{TERMINAL}|{COMMENT}|{TAG}|{ENTITY}|{LINK_TARGET}|{ESCAPE}|\\\\|"
               f"[{RENDERED_HIDDEN}\\s{MARKDOWN_MARKS}])*")
ENTITY_TAIL = ENTITY[1:]


def hexes(code: int, digits: int) -> str:
    return "".join(f"[{digit}{digit.upper()}]" if digit.isalpha() else digit for digit in f"{code:0{digits}x}")


def escape_tails(char: str) -> str:
    """写成转义的这个字，反斜杠后面的部分：u006d、U0000006d、x6d（十六进制大小写都行）。"""
    short = f"|x{hexes(ord(char), 2)}" if ord(char) < 0x100 else ""
    return f"u{hexes(ord(char), 4)}|U{hexes(ord(char), 8)}{short}"


@cache
def lookalikes() -> dict[str, str]:
    """读成的 ASCII 字 → 读成它们的字（ASCII_LIKE 里的每一个：ｓ 𝐬 ⓢ 读成 s，ﬁ 读成 fi；读成空的是 ＊ ＿ 这些记号）。"""
    found: dict[str, str] = {}
    for start, end in LIKE_RANGES:
        for code in range(start, end + 1):
            shown = folded(chr(code))
            found[shown] = found.get(shown, "") + chr(code)
    return found


@cache
def ligatures() -> dict[str, str]:
    """读成好几个 ASCII 字的（ﬁ → fi、⒜ → (a)、㎏ → kg）。"""
    return {reads: chars for reads, chars in lookalikes().items() if len(reads) > 1}


def one_of(chars: str) -> str:
    return "".join(map(re.escape, dict.fromkeys(chars)))


class Way(NamedTuple):
    """粗查一个密钥的一种写法：key 是在那种看法里找的样子；written：字可以写成转义（\\u006d）；rendered：字可以写成
    实体、全角字母、连字，字之间可以夹着标签、记号。"""
    key: str
    written: bool
    rendered: bool

    @property
    def end(self) -> int:
        return min(KEY_START, len(self.key))

    def char(self, index: int) -> str:
        """第 index 个字的一种写法（连字除外）。"""
        char = self.key[index]
        options = [f"[{one_of(char + (lookalikes().get(char, '') if self.rendered else ''))}]"]
        options += [f"\\\\(?:{escape_tails(char)})"] if self.written else []
        options += [ENTITY] if self.rendered else []
        return f"(?:{'|'.join(options)})"

    def ligatures_at(self, index: int) -> list[tuple[str, int]]:
        """从第 index 个字起读成密钥的几个字的连字：(这些连字, 读成几个字)。"""
        found = []
        for reads, chars in ligatures().items() if self.rendered else ():
            covered = min(len(reads), self.end - index)
            if reads[:covered] == self.key[index:index + covered]:
                found.append((chars, covered))
        return found

    def rest(self, index: int) -> str:
        """第 index 个字到粗查的最后一个字，每个字前面可以夹着看不见的东西。"""
        if index >= self.end:
            return ""
        options = [self.char(index) + self.rest(index + 1)]
        options += [f"[{one_of(chars)}]{self.rest(index + size)}" for chars, size in self.ligatures_at(index)]
        between = ANY_BETWEEN if self.rendered else WRITTEN_BETWEEN
        return f"{between}(?:{'|'.join(options)})"

    def starts(self) -> list[tuple[str, str, int]]:
        """开头可以怎样写：(第一个字可以是的字, 接着它的正则, 读成了密钥的几个字)。连字也可以从中间开始（ﬁ 的 i 是
        密钥的第一个字）。粗查里一个实体只代表一个字：实体写成的连字（&#64257;）恰好在密钥开头时粗查认不出来。"""
        first = self.key[0]
        found = [(one_of(first + (lookalikes().get(first, "") if self.rendered else "")), "", 1)]
        found += [("\\\\", f"(?:{escape_tails(first)})", 1)] if self.written else []
        if self.rendered:
            found.append(("&", ENTITY_TAIL, 1))
            found += [(one_of(chars), "", size) for chars, size in self.ligatures_at(0)]
            for reads, chars in ligatures().items():
                for cut in range(1, len(reads)):
                    covered = min(len(reads) - cut, self.end)
                    if reads[cut:cut + covered] == self.key[:covered]:
                        found.append((one_of(chars), "", covered))
        return found


@lru_cache(maxsize=64)
def key_start(key: str) -> "Starts":
    """找密钥开头几个字的粗查（key 已经去掉看不见的字符），每种看法的写法都在里面：字与字之间可以夹着看不见的东西，
    每个字可以写成转义、实体、全角字母。先用一个字符类找第一个字（正则在 C 里跳着找，不在每个位置都试一遍），
    再按它是哪个字接着比（(?<=…) 回头看一眼），开头读成同样几个字的写法共用后面的正则。线性：每个字只试一次，
    夹着的东西也只走一遍。"""
    shown = rendered_key(key)
    ways = [Way(key, True, True)] if shown == key else [Way(key, True, False)]
    ways += [Way(shown, False, True)] if shown and shown != key else []
    first, branches = "", []
    for way in ways:
        heads: dict[int, list[str]] = {}
        for chars, tail, size in way.starts():
            first += chars
            heads.setdefault(size, []).append(f"(?<=[{chars}]){tail}")
        branches += [f"(?:{'|'.join(choices)}){way.rest(size)}" for size, choices in heads.items()]
    rest = "|".join(branches)
    basic = "".join(char for char in first if ord(char) <= 0xFFFF)
    astral = "".join(char for char in first if ord(char) > 0xFFFF)
    return Starts(re.compile(f"[{basic}](?:{rest})"), re.compile(f"[{astral}](?:{rest})") if astral else None)


# 基本平面以外的字：粗查先看有没有（一整段的字符类，扫一遍很快）
ASTRAL = re.compile("[\U00010000-\U0010ffff]")


class Starts(NamedTuple):
    """key_start 的两个正则：第一个字在基本平面里的、在基本平面以外的（数学字母 𝐬 这些）。字符类里有基本平面以外的
    字时，正则在每个位置都要拿它们逐个比较，扫一遍慢十倍左右；文字里没有基本平面以外的字（绝大多数）时不用第二个。"""
    basic: re.Pattern[str]
    astral: re.Pattern[str] | None

    def search(self, text: str) -> bool:
        if self.basic.search(text):
            return True
        return bool(self.astral and ASTRAL.search(text) and self.astral.search(text))


# ---------- 流式输出：末尾没写完的写法 ----------

PARTIAL_ESCAPE = re.compile(r"\\(?:u[0-9a-fA-F]{0,3}|U[0-9a-fA-F]{0,7}|x[0-9a-fA-F]?)?$")
# 末尾还可能变成一个标签、注释、实体、链接网址的一段（从最后一个“<”“&”“]”起）：等它写完才知道读者看到什么
PARTIAL_MARKUP = {
    "<": re.compile(r"<(?:!(?:-(?:-[^<>]{0,300})?)?|/?(?:[A-Za-z][A-Za-z0-9:-]{0,30}(?:[ \t/][^<>\n]{0,300})?)?)"),
    "&": re.compile(r"&(?:#0{0,4096}[0-9]{0,8}|#[xX]0{0,4096}[0-9A-Fa-f]{0,8}|[A-Za-z][A-Za-z0-9]{0,31})?"),
    "]": re.compile(r"\](?:\([^()\s\]]{0,1000})?"),
}
# 一处标签、注释、实体、控制序列最长多少个字（上面这些正则的上限加上开头和结尾）
LONGEST_MARKUP = 4200
# 它们开头的字
MARKUP_STARTS = "<&]\\\x1b\x9b"


def unfinished_markup(text: str) -> int:
    """text 末尾没写完的标签、注释、实体、链接网址从哪里开始（没有时是 len(text)）。"""
    begin = max(0, len(text) - LONGEST_MARKUP)
    starts = [at for at in (text.rfind(mark, begin) for mark in PARTIAL_MARKUP) if at >= 0
              and PARTIAL_MARKUP[text[at]].fullmatch(text, at)]
    return min(starts, default=len(text))


def clean_start(text: str, start: int, view: str) -> int:
    """只读 text[start:] 时，开头不能切在一处标签、实体、控制序列的中间（切开的后半截会被读成看得见的字）：
    往前挪到那一处的开头。那一处一定从它前面最近的某个开头的字起（它们的内容里没有同样的开头）。"""
    earliest = start
    for mark in MARKUP_STARTS:
        at = text.rfind(mark, max(0, start - LONGEST_MARKUP), start)
        found = seeing().views[view].match(text, at) if at >= 0 else None
        if found and found.end() > start:
            earliest = min(earliest, at)
    return earliest
