"""文字的小工具，每件事只在这里做一次：是不是中文、截短和引用、字二元组、引用标记的写法、遮掉密钥、解析外来的 JSON。"""
import json
import re
import unicodedata
from collections.abc import Iterable, Sequence
from typing import Any

# 中日韩统一表意文字：扩展 A、基本区、兼容区
CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
CJK_CHAR = re.compile(f"[{CJK}]")
TAG = re.compile(r"<[^>]*>")
# 遮掉之后显示的样子
REDACTED = "mk-***"
# 单独的代理码位：JSON 里的 "\\ud800"、命令行里解不了码的字节会变成它们；它们编不成 UTF-8，写出去之前换成 U+FFFD
SURROGATE = re.compile("[\ud800-\udfff]")


def is_chinese_char(char: str) -> bool:
    """一个字是不是汉字（CJK 的范围和 CJK 常量一致；比较码位比正则快，核对时每个词都要问一次）。"""
    return "\u4e00" <= char <= "\u9fff" or "\u3400" <= char <= "\u4dbf" or "\uf900" <= char <= "\ufaff"


def has_chinese(text: str) -> bool:
    return CJK_CHAR.search(text) is not None


def count_chinese(text: str) -> int:
    return len(CJK_CHAR.findall(text))


def truncate(text: str, limit: int) -> str:
    """最多 limit 个字符，截掉的部分用“…”表示。"""
    return text if len(text) <= limit else text[:limit] + "…"


# 问题列表里引用一句话最多占这么多列（一个汉字两列，一个拉丁字母一列）：中文 30 个字，英文约 60 个字母
QUOTE_WIDTH = 60
# 换行、回车、U+2028/U+2029 这些分行的字符和其余控制字符：引用里一律显示成一个空格，一个问题只占一行
LINE_BREAKING = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]+")
# 看不见、却会改变显示的格式字符（零宽字符、双向控制、软连字符）：引用里去掉
# 双向文本控制符：可以让显示的顺序和实际内容不一样（终端输出、审阅页、引用里都去掉，只在这里列一次）
BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
INVISIBLE = re.compile("[\u00ad\u180e\u200b\u200c\u200d\u2060-\u2064\ufeff" + "".join(sorted(BIDI_CONTROLS)) + "]")
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


def excerpt(text: str, limit: int = 120) -> str:
    """错误信息里引用服务器原文时用：去掉 HTML 标签、合并空白，再截短。"""
    return truncate(" ".join(TAG.sub(" ", text).split()), limit)


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


def mask(text: str, secrets: Iterable[str]) -> str:
    """把文字里出现的每个密钥换成 mk-***。长的先换：两个密钥有重叠时，短的那个不会把长的切成两半、露出剩下的部分。"""
    for secret in sorted(secrets, key=len, reverse=True):
        if secret and secret in text:
            text = text.replace(secret, REDACTED)
    return text


def mask_data(value: Any, secrets: Sequence[str]) -> Any:
    """在编码成 JSON、HTML 之前遮掉数据里的密钥（字典的键和值、列表里的每一项）：编码之后密钥里的 " \\ & < 会变样，
    就找不到了。"""
    if not secrets:
        return value
    if isinstance(value, str):
        return mask(value, secrets)
    if isinstance(value, dict):
        return {mask_data(key, secrets): mask_data(item, secrets) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [mask_data(item, secrets) for item in value]
    return value


def without_surrogates(value: Any) -> Any:
    """数据里每个字符串（字典的键和值、列表里的每一项）中单独的代理码位换成 U+FFFD。"""
    if isinstance(value, str):
        return SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {without_surrogates(key): without_surrogates(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [without_surrogates(item) for item in value]
    return value


def json_value(text: str) -> Any:
    """解析一段外来的 JSON（输入文件、秘塔和模型服务的回答）：和 json.loads 一样，只是 "\\ud800" 这样的转义解出的
    单独代理码位换成 U+FFFD——它们编不成 UTF-8，留着的话写页面、缓存、请求时才出错。出错时抛 ValueError。"""
    value = json.loads(text)
    return without_surrogates(value) if "\\u" in text else value


def held_prefix_length(text: str, tokens: Iterable[str]) -> int:
    """text 末尾最长有多少个字符可能是某个 token 的开头（分段处理时要留到下一段再判断）。"""
    longest = 0
    for token in tokens:
        for length in range(min(len(token) - 1, len(text)), 0, -1):
            if text.endswith(token[:length]):
                longest = max(longest, length)
                break
    return longest
