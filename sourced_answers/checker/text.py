"""核对和显示共用的文字规则，只写在这里：是不是汉字、引用一句话（按显示宽度截短）、字二元组、引用标记的写法、
分段处理时留到下一段的前缀。只用标准库。"""
import re
import unicodedata
from collections.abc import Iterable

from sourced_answers.checker.unicode_ranges import ASCII_LIKE, LINE_UNSAFE, MARKS, character_class

# 中日韩统一表意文字：扩展 A、基本区、兼容区
CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
CJK_CHAR = re.compile(f"[{CJK}]")


def is_chinese_char(char: str) -> bool:
    """一个字是不是汉字（CJK 的范围和 CJK 常量一致；比较码位比正则快，核对时每个词都要问一次）。"""
    return "\u4e00" <= char <= "\u9fff" or "\u3400" <= char <= "\u4dbf" or "\uf900" <= char <= "\ufaff"


def has_chinese(text: str) -> bool:
    return CJK_CHAR.search(text) is not None


def count_chinese(text: str) -> int:
    return len(CJK_CHAR.findall(text))


# 问题列表里引用一句话最多占这么多列（一个汉字两列，一个拉丁字母一列）：中文 30 个字，英文约 60 个字母
QUOTE_WIDTH = 60
# 换行、回车、U+2028/U+2029 这些分行的字符和其余控制字符：引用里一律显示成一个空格，一个问题只占一行
LINE_BREAKING = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]+")
# 双向文本控制符：可以让显示的顺序和实际内容不一样（终端输出、审阅页、引用里都去掉，只在这里列一次）
BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
# 放进一行文字会断行、乱序或者看不见的字符：控制字符、格式字符（零宽字符、双向控制、软连字符、BOM、标签字符）、
# 行分隔符和段分隔符。范围由 unicodedata 生成（unicode_ranges.py）；说明里引用用户给的字符串（core.strings.literal）
# 和一行里引用一句话（one_line）都按这一份
LINE_UNSAFE_CLASS = character_class(LINE_UNSAFE)
# 组合用的附加符号（叠在前一个字上）
MARKS_CLASS = character_class(MARKS)
# NFKC 换成可打印 ASCII 的字（全角的 ｓ、数学字母 𝐬、连字 ﬁ）：找密钥时读成那几个 ASCII 字
ASCII_LIKE_CLASS = character_class(ASCII_LIKE)
# 看不见、却会改变显示的字符（上面那些去掉换行之类以后剩下的：格式字符）：引用里去掉
INVISIBLE = re.compile(f"[{LINE_UNSAFE_CLASS}]")
# 在单词中间截断时，往回退到空格，但至少留下这个比例的宽度
WORD_BREAK_KEEP = 0.6


def char_width(char: str) -> int:
    """一个字在终端里占几列：全角和宽字符（汉字、全角标点）2 列，组合用的附加符号 0 列，其余 1 列。"""
    if char < "\u0300":
        return 1  # 最常见的情况：ASCII 和拉丁字母
    if unicodedata.combining(char):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def display_width(text: str) -> int:
    return sum(char_width(char) for char in text)


def in_word(char: str) -> bool:
    """拉丁文（西里尔文……）单词里的字：在它们中间截断会把一个词切成两半。汉字不算：中文在哪个字后面截都行。"""
    return char.isalnum() and char_width(char) == 1


def one_line(text: str) -> str:
    """换行和控制字符换成空格、连续的空白合成一个、去掉看不见的格式字符：放进一行文字里不会断行，也不会乱序。"""
    return " ".join(INVISIBLE.sub("", LINE_BREAKING.sub(" ", text)).split())


def quote(text: str, width: int = QUOTE_WIDTH) -> str:
    """问题列表里引用的一句话：先变成一行（one_line），再按显示宽度截到 width 列以内，中英文同一个标准。
    截断拉丁文时尽量停在单词之间；只有真的截掉了什么才加“…”（“…”本身算在 width 里）。"""
    line = one_line(text)
    used = 0
    fits = 0  # 前 fits 个字再加上“…”也不超过 width
    for position, char in enumerate(line):
        used += char_width(char)
        if used > width:
            break
        if used < width:
            fits = position + 1
    else:
        return line
    kept, following = line[:fits], line[fits]
    if in_word(kept[-1:]) and in_word(following):
        space = kept.rfind(" ")
        if space > 0 and display_width(kept[:space]) >= width * WORD_BREAK_KEEP:
            kept = kept[:space]
    return kept.rstrip() + "…"


def char_bigrams(text: str) -> set[str]:
    """去掉空白后相邻两个字符组成的集合。"""
    text = "".join(text.split())
    return {text[i:i + 2] for i in range(len(text) - 1)}


def bigram_similarity(first: str, second: str) -> float:
    """两段文字的字二元组集合的 Jaccard 相似度，0 到 1。"""
    a, b = char_bigrams(first), char_bigrams(second)
    union = a | b
    return len(a & b) / len(union) if union else 0.0


def format_citations(numbers: Iterable[int | str]) -> str:
    """[1, 3] → “[1][3]”。"""
    return "".join(f"[{n}]" for n in numbers)


def held_prefix_length(text: str, tokens: Iterable[str]) -> int:
    """text 末尾最长有多少个字符可能是某个 token 的开头（分段处理时要留到下一段再判断）。"""
    longest = 0
    for token in tokens:
        for length in range(min(len(token) - 1, len(text)), 0, -1):
            if text.endswith(token[:length]):
                longest = max(longest, length)
                break
    return longest
