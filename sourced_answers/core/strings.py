"""字符串的小工具，每件事只在这里做一次：截短、说明里引用用户给的字符串（literal）、解析外来的 JSON
（遮掉密钥在 core/masking.py）。是不是中文、引用一句话、字二元组、引用标记的写法这些核对也要用的规则在
checker/text.py，别的层从 checker 取用（只有一个名字，不在这里再转出一次）。"""
import json
import math
import re
from typing import Any

from sourced_answers.checker import LINE_UNSAFE_CLASS

__all__ = ["LITERAL_LIMIT", "SURROGATE", "TAG", "excerpt", "json_text", "json_value", "literal", "truncate",
           "without_surrogates"]

TAG = re.compile(r"<[^>]*>")
# 单独的代理码位：JSON 里的 "\\ud800"、命令行里解不了码的字节会变成它们；它们编不成 UTF-8，写出去之前换成 U+FFFD
SURROGATE = re.compile("[\ud800-\udfff]")


def truncate(text: str, limit: int) -> str:
    """最多 limit 个字符，截掉的部分用“…”表示。"""
    return text if len(text) <= limit else text[:limit] + "…"


def excerpt(text: str, limit: int = 120) -> str:
    """错误信息里引用服务器原文时用：去掉 HTML 标签、合并空白，再截短。"""
    return truncate(" ".join(TAG.sub(" ", text).split()), limit)


# 说明里引用一个用户给的字符串最多这么多个字符（转义之后）；再长的从中间省略，两头都留着（路径的开头和文件名）
LITERAL_LIMIT = 300
LITERAL_UNSAFE = re.compile(f"[{LINE_UNSAFE_CLASS}\ud800-\udfff]")
NAMED_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def escaped(char: str) -> str:
    """一个不能直接显示的字符写成什么：\\n、\\r、\\t，别的写成码位（\\x1b、\\u200b、\\U000e0041）。
    命令行里读不懂的字节（Python 把它们变成 U+DC80–U+DCFF）写回原来的字节 \\xff。"""
    code = ord(char)
    if char in NAMED_ESCAPES:
        return NAMED_ESCAPES[char]
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def literal(value: object, limit: int | None = LITERAL_LIMIT) -> str:
    """说明（报错、警告、进度）里写出用户给的字符串的唯一办法：路径、文件名、模型名、页面名、地址、参数的值。
    结果一定是一行：换行、回车、其余控制字符、U+2028/U+2029、双向控制符、零宽字符这些（checker 的 LINE_UNSAFE）
    写成看得见的转义（\\n、\\u202e），读不懂的字节写成 \\xff——一个文件名不能在说明里另起一行、伪造出
    “✓ 引用核对通过”，也不能把后面的字倒过来显示。值本身不改（只是显示），太长时从中间省略（limit 为 None 时
    不省略：整条说明兜底时用）。"""
    text = LITERAL_UNSAFE.sub(lambda found: escaped(found.group()), str(value))
    if limit is None or len(text) <= limit:
        return text
    keep = (limit - 1) // 2
    return text[:keep] + "…" + text[len(text) - keep:]


def without_surrogates(value: Any) -> Any:
    """数据里每个字符串（字典的键和值、列表里的每一项）中单独的代理码位换成 U+FFFD。"""
    if isinstance(value, str):
        return SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {without_surrogates(key): without_surrogates(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [without_surrogates(item) for item in value]
    return value


class JsonNumberError(ValueError):
    """外来的 JSON 里有 NaN、Infinity，或者大到成了无穷大的数；说明是中文的，可以直接给人看。"""


def not_json_constant(name: str) -> Any:
    raise JsonNumberError(f"里面有 {name}，它不是 JSON 的值")


def finite_number(text: str) -> float:
    number = float(text)
    if math.isinf(number):
        raise JsonNumberError(f"里面的数 {truncate(text, 40)} 超出了范围")
    return number


def json_value(text: str) -> Any:
    """解析一段外来的 JSON（输入文件、秘塔和模型服务的回答、请求体）：和 json.loads 一样，只是
      · "\\ud800" 这样的转义解出的单独代理码位换成 U+FFFD——它们编不成 UTF-8，留着的话写页面、缓存、请求时才出错；
      · NaN、Infinity 不是 JSON（json.loads 却收下），1e400 这样的数在程序里是无穷大：都算出错，不让它们往下走到
        int() 之类的地方（OverflowError）。
    出错时抛 ValueError。"""
    value = json.loads(text, parse_constant=not_json_constant, parse_float=finite_number)
    return without_surrogates(value) if "\\u" in text else value


def json_text(value: object) -> str:
    """对方（秘塔、模型服务）的数据里本该是文字的值：文字原样，别的（对象、列表、数、true）写成 JSON——
    说明里是对方发来的样子，不是 Python 的 repr（{'a': 1}、True）。"""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
