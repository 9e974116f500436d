"""一种读法：每一条规则读的都是同一份“读者看到的文字”（Seen），不各自去掉这、换掉那。

回答和资料先在这里读一遍，读成一个人看渲染出来的回答时看到的样子：
  · 去掉 Markdown 的强调记号（**粗体**、__粗体__、*斜体*、~~删除线~~、`代码`）、行内的 HTML 标签（<b>、<span …>），
    HTML 实体换成它表示的字（&nbsp; → 空格，&#x4e0d; → 不），Markdown 链接 [文字](网址) 只留文字；
  · 去掉看不见的字符：零宽字符、软连字符、双向控制符、BOM、标签字符、变体选择符（终端控制序列整个去掉，
    和 terminal.py 同一条规则）；分行符 U+2028/U+2029 当作换行；
  · 各种文字的十进制数字（数学粗体 𝟑、阿拉伯-印度 ٣、天城文 ३、全角 ３……）都换成 ASCII 的 0-9；上标的数字
    （³⁹⁹⁹）是数时也换，紧跟在字母或数字后面的上标是指数、化学式（m²、H₂O），不动，紧跟在字后面、后面是标点的上标
    是脚注记号，去掉；
  · 数字里的千位分隔（2,999、2 999、2'999）去掉；全角的字母、符号换成半角，别的空格（不换行空格、窄空格……）换成空格；
  · 汉字之间、汉字和数字之间的空格去掉（“不 能” = “不能”，“120 亿元” = “120亿元”）；只括着一个否定词的括号
    去掉（“（不）能” = “不能”）；
  · 繁体的否定词和数字用字换成简体（沒 → 没，無 → 无，萬 → 万，兩 → 两，個 → 个……），只换这几十个字。
数字、说反了、支持分、“太短不判”、--fix 的藏起来的检查、评判模型的提示词都读 Seen；Seen 只能由 read() 给出
（mypy 检查：传一个没读过的 str 给这些规则是类型错误）。Reading 还记着每一段在原文里的位置，说明里引用的
是用户写的原文（origin_span）。

全部线性：两遍正则替换，没有要替换的文字（绝大多数句子）原样返回、不复制。只用标准库。
"""
import html
import re
import unicodedata
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import NewType

from sourced_answers.checker.terminal import CONTROL, strip_terminal
from sourced_answers.checker.text import CJK
from sourced_answers.checker.unicode_ranges import COMPATIBLE, LINE_UNSAFE, NUMERIC, character_class, parsed

Seen = NewType("Seen", str)

# ---------- 第一遍：一个字换一个字（位置不变） ----------

# 繁体的否定词、数字用字、常用量词和单位 → 简体（只列会影响核对的这些字；别的繁体字两边一样地留着）
TRADITIONAL = {
    "沒": "没", "無": "无", "並": "并", "別": "别", "從": "从", "絕": "绝", "難": "难", "會": "会", "還": "还",
    "應": "应", "該": "该", "須": "须", "們": "们", "過": "过", "於": "于", "與": "与", "為": "为", "這": "这",
    "萬": "万", "億": "亿", "兩": "两", "貳": "贰", "參": "叁", "陸": "陆", "個": "个", "塊": "块", "張": "张",
    "隻": "只", "臺": "台", "點": "点", "號": "号", "屆": "届", "條": "条", "項": "项",
    "歲": "岁", "倍": "倍", "層": "层", "輛": "辆", "顆": "颗", "盤": "盘", "種": "种", "屬": "属", "較": "较",
    "變": "变", "場": "场", "節": "节", "週": "周", "時": "时", "鐘": "钟", "圓": "元", "價": "价", "錢": "钱",
}
SINGLE_TRADITIONAL = {key: value for key, value in TRADITIONAL.items() if key != value}
# 别的空格（不换行空格 &nbsp;、各种宽度的空格、窄空格、数学空格）和全角空格 → 空格；分行符 → 换行
SPACES = "\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000"
# 全角的字母、数字和数学、单位用的符号（％＋－．／＜＝＞＃＄＆＠＊）换成半角；中文的标点（，：；（）！？、“”）不换，
# 它们本来就是中文的写法，规则里两种都认
FULL_WIDTH = "\uff03-\uff06\uff0a\uff0b\uff0d-\uff19\uff1c-\uff1e\uff20-\uff3a\uff41-\uff5a"
FOLD = re.compile(f"[{FULL_WIDTH}{SPACES}\u2028\u2029{''.join(SINGLE_TRADITIONAL)}]|(?![0-9])\\d")


def folded_char(char: str) -> str:
    if "\uff01" <= char <= "\uff5e":
        return chr(ord(char) - 0xFEE0)  # 全角的字母、数字、符号 → 半角
    if char in "\u2028\u2029":
        return "\n"
    found = SINGLE_TRADITIONAL.get(char)
    if found:
        return found
    if char.isdecimal():
        return str(unicodedata.decimal(char))  # 任何文字的十进制数字
    return " "


def fold_run(match: re.Match[str]) -> str:
    return "".join(map(folded_char, match.group()))


# ---------- 第二遍、第三遍：去掉记号和看不见的字符（位置变了，记下来） ----------

SUPERSCRIPTS = "⁰¹²³⁴⁵⁶⁷⁸⁹"
SUBSCRIPTS = "₀₁₂₃₄₅₆₇₈₉"
SCRIPT_DIGITS = {char: str(value) for chars in (SUPERSCRIPTS, SUBSCRIPTS) for value, char in enumerate(chars)}
# 看不见的字符：控制字符（换行和制表符除外）、格式字符（零宽字符、软连字符、双向控制、BOM、标签字符）、
# 变体选择符和组合用字素连接符（U+2028/U+2029 在第一遍已经换成换行）。带着显示出来的附加符号（重音）不算看不见
INVISIBLE_RANGES = [(start, end) for start, end in parsed(LINE_UNSAFE) if start > 0x1F] + [
    (0x00, 0x08), (0x0B, 0x1F), (0x034F, 0x034F), (0xFE00, 0xFE0F), (0xE0100, 0xE01EF)]
INVISIBLE = "".join(f"\\U{start:08x}-\\U{end:08x}" for start, end in INVISIBLE_RANGES)
NEGATION_WORD = "没有|不|没|无|未|非|别|勿"
# 兼容字符读成 NFKC 的样子（康熙部首 ⼀ → 一、兼容汉字、① → 1、⑸ → (5)、ﬁ → fi、㎏ → kg），当作整数读的字读成数字
# （❺ → 5、Ⅳ → 4、〥 → 5、㈤ → 5）：见 unicode_ranges 的 COMPATIBLE 和 NUMERIC
COMPATIBLE_CLASS = character_class(COMPATIBLE)
NUMERIC_CLASS = character_class(NUMERIC)
ROMAN = re.compile("[\u2160-\u2188]+")
HANGZHOU = re.compile("[\u3021-\u3029]+")
MARKUP = re.compile(
    r"(?P<tag></?[A-Za-z][A-Za-z0-9:-]{0,30}(?:[ \t][^<>\n]{0,300})?/?>)"
    r"|(?P<entity>&(?:#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});)"
    r"|(?P<link>!?\[(?P<label>[^\[\]\n]{1,300})\]\([^()\s]{0,1000}\))"
    r"|(?P<emphasis>\*+|_+|~~+|`+)"
    f"|(?P<invisible>[{INVISIBLE}]+)"
    f"|(?P<script>[{SUPERSCRIPTS}{SUBSCRIPTS}]+)"
    f"|(?P<numeric>[{NUMERIC_CLASS}]+)"
    f"|(?P<compatible>[{COMPATIBLE_CLASS}])")
SPACING = re.compile(
    rf"(?P<space>(?<=[{CJK}])[ \t]+(?=[{CJK}0-9]))"
    rf"|(?P<number>(?<![A-Za-z0-9.])[0-9]+(?:\.[0-9]+)?)[ \t]+(?=[{CJK}])"
    rf"|(?P<grouped>(?<![0-9.,])[0-9]{{1,3}}(?:[ ,'’][0-9]{{3}})+(?![0-9])(?:[ \t]+(?=[{CJK}]))?)"
    rf"|(?P<bracketed>[（(【\[][ \t]*(?P<negation>{NEGATION_WORD})[ \t]*[）)】\]])")
# 有没有要第二遍、第三遍做的事（没有就不做：绝大多数句子两遍都不用）
MARKUP_TRIGGER = re.compile(f"[*_~`<&\\[{SUPERSCRIPTS}{SUBSCRIPTS}{INVISIBLE}{NUMERIC_CLASS}{COMPATIBLE_CLASS}]")
LATIN_OR_DIGIT = re.compile(r"[A-Za-z0-9]")


def emphasis(text: str, start: int, end: int) -> str:
    """一串 * _ ~ ` 是不是强调记号：3*4、3 * 4 里的 * 是乘号，snake_case 里的 _ 是名字的一部分，留着；别的去掉。"""
    run = text[start:end]
    before = text[start - 1] if start else ""
    after = text[end] if end < len(text) else ""
    if run[0] == "*":
        left = start - 1
        while left >= 0 and text[left] == " ":
            left -= 1
        right = end
        while right < len(text) and text[right] == " ":
            right += 1
        digits = left >= 0 and text[left].isdigit() and right < len(text) and text[right].isdigit()
        return run if digits else ""
    if run[0] == "_":
        return run if LATIN_OR_DIGIT.fullmatch(before or " ") and LATIN_OR_DIGIT.fullmatch(after or " ") else ""
    return ""


def script_digits(text: str, start: int, end: int) -> str:
    """上标、下标的数字：紧跟字母或数字的是指数、化学式（m²、10³、H₂O），不动；紧跟在别的字后面、后面是标点、空白
    或结尾的是脚注记号（“镜像¹。”），去掉；其余（“售价 ³⁹⁹⁹ 元”“售价³⁹⁹⁹元”）是数，换成 ASCII 数字。"""
    run = text[start:end]
    before = text[start - 1] if start else ""
    after = text[end] if end < len(text) else ""
    if LATIN_OR_DIGIT.fullmatch(before or " "):
        return run
    if before and not before.isspace() and not after.isalnum():
        return ""
    return "".join(SCRIPT_DIGITS[char] for char in run)


def roman_value(numerals: str) -> int:
    """罗马数字（Ⅰ–ↈ 这些字）的值：ⅩⅣ = 14，前面的比后面的小就减去。"""
    values = [int(unicodedata.numeric(char)) for char in numerals]
    total = 0
    for index, value in enumerate(values):
        total += -value if index + 1 < len(values) and value < values[index + 1] else value
    return total


def numeric_digits(run: str) -> str:
    """一串 NUMERIC 的字读成的数字：罗马数字按罗马数字的规矩，杭州数码逐位（〤〥 = 45），别的每个字一个数。"""
    if ROMAN.fullmatch(run):
        return str(roman_value(run))
    if HANGZHOU.fullmatch(run):
        return "".join(str(int(unicodedata.numeric(char))) for char in run)
    return " ".join(str(int(unicodedata.numeric(char))) for char in run)


def plain(decoded: str) -> str:
    """实体解出来的字也照样读：全角、繁体、兼容字符和当作整数读的字。"""
    decoded = FOLD.sub(fold_run, decoded).replace("\t", " ")
    if len(decoded) == 1 and re.fullmatch(f"[{NUMERIC_CLASS}]", decoded):
        return numeric_digits(decoded)
    if len(decoded) == 1 and re.fullmatch(f"[{COMPATIBLE_CLASS}]", decoded):
        return FOLD.sub(fold_run, unicodedata.normalize("NFKC", decoded))
    return decoded


def markup_replacement(text: str, match: re.Match[str]) -> str:
    kind = match.lastgroup
    if kind == "tag" or kind == "invisible":
        return ""
    if kind == "numeric":
        return numeric_digits(match.group())
    if kind == "compatible":
        return FOLD.sub(fold_run, unicodedata.normalize("NFKC", match.group()))
    if kind == "entity":
        decoded = html.unescape(match.group())
        return "" if decoded == match.group() or not decoded.isprintable() and decoded != "\n" else plain(decoded)
    if kind == "link":
        return match.group("label")
    if kind == "emphasis":
        return emphasis(text, match.start(), match.end())
    return script_digits(text, match.start(), match.end())


def spacing_replacement(text: str, match: re.Match[str]) -> str:
    kind = match.lastgroup
    if kind == "space":
        return ""
    if kind == "number":
        return match.group("number")  # 数字和后面的汉字之间的空格（“120 亿元”）；RAID1 镜像里的 1 是名字，不动
    if kind == "grouped":
        return "".join(char for char in match.group() if char.isdigit())
    return match.group("negation")


# ---------- 位置 ----------

@dataclass(frozen=True)
class Reading:
    """一段文字读出来的样子（text）和它在原文（original）里的位置：segments 是每一段的 (在 text 里的开始,
    在 original 里的开始, 是不是照抄的)；没有任何改动时是空的（text 就是 original）。"""
    text: Seen
    original: str
    segments: tuple[tuple[int, int, bool], ...] = field(default=())

    def origin(self, position: int) -> int:
        """text 里的位置 → original 里的位置（替换出来的字对应它替换的那一段的开头）。"""
        if not self.segments:
            return position
        index = bisect_right(self.segments, (position, float("inf"))) - 1
        start, source, copied = self.segments[max(index, 0)]
        return source + (position - start if copied else 0)

    def after(self, position: int) -> int:
        """原文里紧跟在 text 的第 position 个字后面的位置。替换出来的字（“⑸”读成的“(5)”、实体解出来的字）后面是
        被替换的那一段的后面，不是它的开头后面一个字。"""
        if not self.segments:
            return position + 1
        index = max(bisect_right(self.segments, (position, float("inf"))) - 1, 0)
        start, source, copied = self.segments[index]
        if copied:
            return source + position - start + 1
        return self.segments[index + 1][1] if index + 1 < len(self.segments) else len(self.original)

    def in_original(self, start: int, end: int) -> tuple[int, int]:
        """text 里 [start, end) 在原文里的位置（不把两头被去掉的记号算进来）。"""
        if end <= start:
            point = self.origin(start) if start < len(self.text) else len(self.original)
            return point, point
        return self.origin(start), self.after(end - 1)

    def origin_span(self, start: int, end: int) -> str:
        """text 里 [start, end) 那一段在原文里的样子：说明里引用用户写的字。紧挨着两头被去掉的记号也算进来
        （“不能容忍”引用成“**不**能容忍”，不是“不**能容忍”），两头的空白不算。"""
        if not self.segments:
            return self.original[start:end]
        if end <= start:
            return ""
        left = self.after(start - 1) if start > 0 else 0
        right = self.origin(end) if end < len(self.text) else len(self.original)
        return self.original[left:right].strip()


Segments = tuple[tuple[int, int, bool], ...]


def edited(text: str, pattern: re.Pattern[str], replace: Callable[[str, re.Match[str]], str],
           track: bool) -> tuple[str, Segments]:
    """text 里每一处 pattern 换成 replace 给出的字：(新的文字, 每一段的位置；track=False 或没有改动时为空)。"""
    pieces: list[str] = []
    segments: list[tuple[int, int, bool]] = []
    position = 0
    length = 0
    for match in pattern.finditer(text):
        replacement = replace(text, match)
        if replacement == match.group():
            continue
        start, end = match.span()
        if start > position:
            pieces.append(text[position:start])
            if track:
                segments.append((length, position, True))
            length += start - position
        if replacement:
            pieces.append(replacement)
            if track:
                segments.append((length, start, False))
            length += len(replacement)
        position = end
    if not pieces and position == 0:
        return text, ()
    pieces.append(text[position:])
    if track:
        segments.append((length, position, True))
    return "".join(pieces), tuple(segments)


def composed(outer: Segments, inner: Reading) -> Segments:
    """两遍替换的位置接起来：outer 把最后的文字对到中间那一版（inner.text），inner 把中间那一版对到原文。
    outer 里照抄的一段在中间那一版里可能跨过 inner 的几段：按 inner 的边界切开，每个位置都对得上。"""
    if not inner.segments:
        return outer
    if not outer:
        return inner.segments
    boundaries = [start for start, _, _ in inner.segments]
    result: list[tuple[int, int, bool]] = []
    for number, (start, middle, copied) in enumerate(outer):
        if not copied:
            result.append((start, inner.origin(middle), False))
            continue
        end = middle + (outer[number + 1][0] - start) if number + 1 < len(outer) else len(inner.text)
        result.append((start, inner.origin(middle), copied_at(inner, middle)))
        index = bisect_right(boundaries, middle)
        while index < len(boundaries) and boundaries[index] < end:
            boundary = boundaries[index]
            result.append((start + boundary - middle, inner.origin(boundary), copied_at(inner, boundary)))
            index += 1
    return tuple(result)


def copied_at(reading: Reading, position: int) -> bool:
    """reading.text 里 position 这个字是不是照抄原文的。"""
    index = bisect_right(reading.segments, (position, float("inf"))) - 1
    return reading.segments[max(index, 0)][2]


def read(text: str, track: bool = True) -> Reading:
    """读一段文字（见模块说明）。track=False 时不记位置（资料只要读出来的文字）。
    终端控制序列整个去掉（terminal.py）；回答在拆成句子之前已经去掉了，所以句子的位置照样对得上原文。"""
    if CONTROL.search(text):
        text = strip_terminal(text)
    folded = FOLD.sub(fold_run, text) if FOLD.search(text) else text
    if MARKUP_TRIGGER.search(folded):
        middle, first = edited(folded, MARKUP, markup_replacement, track)
    else:
        middle, first = folded, ()
    final, second = edited(middle, SPACING, spacing_replacement, track)
    if not first and not second:
        return Reading(Seen(final), text)
    return Reading(Seen(final), text, composed(second, Reading(Seen(middle), text, first)) if track else ())


@lru_cache(maxsize=4096)
def read_claim(body: str) -> Reading:
    """一句话（去掉引用之后）的读法：同一句话常常在核对、修正、审阅页里读好几遍。"""
    return read(body)


def seen(text: str) -> Seen:
    """只要读出来的文字、不要位置时（资料、提示词）。"""
    return read(text, track=False).text
