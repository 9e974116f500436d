"""文字的小工具，每件事只在这里做一次：截短、遮掉密钥、解析外来的 JSON。是不是中文、引用一句话、字二元组、
引用标记的写法这些核对也要用的规则在 checker/text.py（这里原样转出，别的层从这里或 checker 取用）。"""
import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from sourced_answers.checker import (
    BIDI_CONTROLS,
    CJK,
    CJK_CHAR,
    INVISIBLE,
    LINE_BREAKING,
    QUOTE_WIDTH,
    WORD_BREAK_KEEP,
    bigram_similarity,
    char_bigrams,
    char_width,
    count_chinese,
    display_width,
    format_citations,
    has_chinese,
    held_prefix_length,
    in_word,
    is_chinese_char,
    one_line,
    quote,
)

__all__ = [
    "BIDI_CONTROLS", "CJK", "CJK_CHAR", "INVISIBLE", "LINE_BREAKING", "QUOTE_WIDTH", "WORD_BREAK_KEEP",
    "bigram_similarity", "char_bigrams", "char_width", "count_chinese", "display_width", "format_citations",
    "has_chinese", "held_prefix_length", "in_word", "is_chinese_char", "one_line", "quote",
    "REDACTED", "SURROGATE", "TAG", "excerpt", "json_value", "mask", "mask_data", "masked_json", "truncate",
    "without_surrogates",
]

TAG = re.compile(r"<[^>]*>")
# 遮掉之后显示的样子
REDACTED = "mk-***"
# 单独的代理码位：JSON 里的 "\\ud800"、命令行里解不了码的字节会变成它们；它们编不成 UTF-8，写出去之前换成 U+FFFD
SURROGATE = re.compile("[\ud800-\udfff]")


def truncate(text: str, limit: int) -> str:
    """最多 limit 个字符，截掉的部分用“…”表示。"""
    return text if len(text) <= limit else text[:limit] + "…"


def excerpt(text: str, limit: int = 120) -> str:
    """错误信息里引用服务器原文时用：去掉 HTML 标签、合并空白，再截短。"""
    return truncate(" ".join(TAG.sub(" ", text).split()), limit)


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


def masked_json(value: Any, secrets: Sequence[str], indent: int | None = None) -> str:
    """一条记录（或汇总）写成 JSON 的唯一办法：先在数据上遮掉密钥，再编码（编码之后密钥里的 " \\ 会变样，就找不到了）。
    indent 为 None 时是一行（JSON Lines 的一行，末尾带换行）。"""
    text = json.dumps(mask_data(value, secrets), ensure_ascii=False, indent=indent)
    return text + "\n"


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
