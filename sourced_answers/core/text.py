"""文字的小工具，每件事只在这里做一次：截短、说明里引用用户给的字符串（literal）、遮掉密钥、解析外来的 JSON。
是不是中文、引用一句话、字二元组、引用标记的写法这些核对也要用的规则在 checker/text.py（这里原样转出，别的层从这里
或 checker 取用）。"""
import json
import re
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

from sourced_answers.checker import (
    BIDI_CONTROLS,
    CJK,
    CJK_CHAR,
    INVISIBLE,
    LINE_BREAKING,
    LINE_UNSAFE_CLASS,
    MARKS_CLASS,
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
    "BIDI_CONTROLS", "CJK", "CJK_CHAR", "INVISIBLE", "LINE_BREAKING", "LINE_UNSAFE_CLASS", "MARKS_CLASS",
    "QUOTE_WIDTH", "WORD_BREAK_KEEP", "bigram_similarity", "char_bigrams", "char_width", "count_chinese",
    "display_width", "format_citations", "has_chinese", "held_prefix_length", "in_word", "is_chinese_char",
    "one_line", "quote",
    "HIDDEN", "LITERAL_LIMIT", "REDACTED", "SURROGATE", "TAG", "VisibleCopy", "excerpt", "held_secret_length",
    "json_value", "literal", "mask", "mask_data", "masked_json", "truncate", "without_surrogates",
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


# 遮密钥时当作看不见的字符：控制字符、格式字符（零宽空格、软连字符……）、组合用的附加符号，以及显示成空白的
# 几个字母（韩文填充符、盲文空白）。密钥的字中间夹着它们，看起来仍是那个密钥，所以照样要遮掉。
# 基本平面以外的那一百多段只粗粗地用两大段包住（表情符号不在里面）：字符类里有基本平面以外的范围时，正则要拿每个字
# 和它们逐段比较，慢几十倍；多包进去的是古文字和数学字母，夹在密钥中间时多遮一点，不会少遮
ASTRAL_MARKS = [(start, end) for start, end in
                ((int(a, 16), int(b, 16)) for a, b in re.findall(r"\\U([0-9a-f]{8})-\\U([0-9a-f]{8})",
                                                                 LINE_UNSAFE_CLASS + MARKS_CLASS))
                if start > 0xFFFF]
ROUGH_ASTRAL = "".join(f"\\U{min(a for a, _ in group):08x}-\\U{max(b for _, b in group):08x}" for group in
                       ([r for r in ASTRAL_MARKS if r[0] < 0xE0000], [r for r in ASTRAL_MARKS if r[0] >= 0xE0000]))
BASIC_PLANE = "".join(part for part in re.findall(r"\\U[0-9a-f]{8}-\\U[0-9a-f]{8}", LINE_UNSAFE_CLASS + MARKS_CLASS)
                      if part[2:6] == "0000")
HIDDEN_CLASS = f"{BASIC_PLANE}\u115f\u1160\u3164\uffa0\u2800\ud800-\udfff{ROUGH_ASTRAL}"
HIDDEN = re.compile(f"[{HIDDEN_CLASS}]+")


class VisibleCopy:
    """一段文字去掉看不见的字符（HIDDEN）以后的样子（text，在 C 里一次替换得到），和把其中的位置换回原文的办法
    （original：第一次用到时才按段记下位置，之后二分查找；没找到密钥的文字用不着它）。"""

    def __init__(self, text: str) -> None:
        self.source = text
        self.text = HIDDEN.sub("", text)
        self.starts: list[int] = []   # 每段可见字符在 self.text 里的起点
        self.origins: list[int] = []  # 同一段在原文里的起点

    def original(self, index: int) -> int:
        """self.text 里第 index 个字（或末尾之后）在原文里的位置。"""
        if len(self.text) == len(self.source):
            return index
        if not self.starts:
            position = length = 0
            for run in HIDDEN.finditer(self.source):
                if run.start() > position:
                    self.starts.append(length)
                    self.origins.append(position)
                    length += run.start() - position
                position = run.end()
            self.starts.append(length)
            self.origins.append(position)  # 最后一段（可能是空的）：末尾之后的位置也换得回去
        piece = bisect_right(self.starts, index) - 1
        return self.origins[piece] + index - self.starts[piece]


@lru_cache(maxsize=64)
def visible(secret: str) -> str:
    """密钥去掉看不见的字符：环境变量里的密钥自己夹着零宽字符时，输出里有没有那个字都认得出来。"""
    return HIDDEN.sub("", secret)


@lru_cache(maxsize=64)
def smallest_period(key: str) -> int:
    """key 的最小周期 p（key[i] == key[i + p]）：KMP 的失配函数，每个密钥只算一次。"""
    border, borders = 0, [0] * len(key)
    for index in range(1, len(key)):
        while border and key[index] != key[border]:
            border = borders[border - 1]
        if key[index] == key[border]:
            border += 1
        borders[index] = border
    return len(key) - (borders[-1] if key else 0)


def occurrences(text: str, key: str) -> list[tuple[int, int]]:
    """key 在 text 里出现的地方，互相重叠的连成一段（[起, 止)）。线性：两次出现重叠时，错开的距离一定是 key 的
    周期，所以沿着周期往后接，每接一次只比较一个周期长的字；接不下去时才重新 find（str.find 本身是线性的）。"""
    found: list[tuple[int, int]] = []
    period = smallest_period(key)
    tail = key[len(key) - period:]
    start = text.find(key)
    while start >= 0:
        end = periodic_end(text, start + len(key), tail)
        found.append((start, end))
        start = text.find(key, end - len(key) + 1)
    return found


def periodic_end(text: str, end: int, tail: str) -> int:
    """从 end 起 text 还照着 tail 重复了多远（只算整个的 tail）。块的长度成倍地加，再成半地减：比较在 C 里做，
    Python 里只走对数次（“aaaa…”这样的密钥遇到一长串 a 也不会一个字一个字地走）。"""
    blocks = [tail]
    while text.startswith(blocks[-1], end):
        end += len(blocks[-1])
        if len(blocks[-1]) < 1 << 20:
            blocks.append(blocks[-1] * 2)
    for block in reversed(blocks[:-1]):
        if text.startswith(block, end):
            end += len(block)
    return end


# 先粗查一遍用密钥的前这么多个字：它们之间可以夹着看不见的字符。找不到就不会有这个密钥
KEY_START = 4


@lru_cache(maxsize=64)
def key_start(key: str) -> re.Pattern[str]:
    """找密钥开头几个字的正则：字与字之间可以夹着看不见的字符。每个字只试一次，看不见的字符也只走一遍：线性。"""
    return re.compile(f"[{HIDDEN_CLASS}]*".join(re.escape(char) for char in key[:KEY_START]))


def mask(text: str, secrets: Iterable[str]) -> str:
    """把文字里出现的每个密钥换成 mk-***：密钥的字中间夹着看不见的字符（零宽空格、软连字符、组合附加符号、换行）
    也算；两个密钥重叠、同一个密钥连着出现时，整段一起遮掉，不会露出半截。和文字的长度成线性。"""
    keys = [key for key in dict.fromkeys(visible(secret) for secret in secrets) if key]
    if not text or not any(key_start(key).search(text) for key in keys):
        return text  # 绝大多数文字：连哪个密钥的开头都没有，不必去掉看不见的字符再找
    copy = VisibleCopy(text)
    spans = sorted(span for key in keys for span in occurrences(copy.text, key))
    if not spans:
        return text
    merged: list[list[int]] = []
    for start, end in spans:  # 按可见的字合并：两段之间只隔着看不见的字符时也连成一段
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    pieces, position = [], 0
    for start, end in merged:
        first, last = copy.original(start), copy.original(end - 1)
        pieces += [text[position:first], REDACTED]
        position = last + 1
    return "".join(pieces) + text[position:]


def held_secret_length(text: str, secrets: Iterable[str]) -> int:
    """流式输出时 text 末尾要先留着多少个字：可能是某个密钥的开头（夹着看不见的字符也算），等下一段到了再决定。
    只看末尾：够放下最长的密钥（去掉看不见的字符以后）就行。"""
    keys = [key for key in dict.fromkeys(visible(secret) for secret in secrets) if key]
    if not keys or not text:
        return 0
    longest = max(len(key) for key in keys)
    size = 2 * longest
    copy = VisibleCopy(text[-size:])
    while len(copy.text) < longest and size < len(text):  # 末尾夹着很多看不见的字符：往前多看一些
        size *= 4
        copy = VisibleCopy(text[-size:])
    shown = copy.text
    held_from = len(shown)
    for key in keys:  # 从最早可能的位置往后找：第一个对得上的就是这个密钥最长的开头
        candidate = shown.find(key[0], max(0, len(shown) - len(key) + 1))
        while 0 <= candidate < held_from:
            if key.startswith(shown[candidate:]):
                held_from = candidate
                break
            candidate = shown.find(key[0], candidate + 1)
    return len(copy.source) - copy.original(held_from) if held_from < len(shown) else 0


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


JSON_ESCAPE = re.compile(r'\\(?:u([0-9a-fA-F]{4})|(["\\/bfnrt]))')
SIMPLE_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def json_unescaped(text: str) -> str:
    """一段（可能不完整、不合法的）JSON 原文里的转义换成它们代表的字：\\" → "，\\u200b → 零宽空格，配对的代理
    合成一个字、单独的换成 U+FFFD。给看不懂的输入行摘一段原文时先这样做再遮密钥：原文里密钥可能写成转义的样子
    （密钥里的 " 写成 \\"、字母写成 \\u004b），不解开就认不出来。"""
    if "\\" not in text:
        return text

    def one(match: re.Match[str]) -> str:
        return chr(int(match.group(1), 16)) if match.group(1) else SIMPLE_ESCAPES[match.group(2)]
    decoded = JSON_ESCAPE.sub(one, text)
    return decoded.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def masked_excerpt(raw: bytes, secrets: Sequence[str], limit: int = 200) -> str:
    """一行看不懂的输入的开头一段（放进错误记录给人看）：先解开 JSON 转义、遮掉整行里的密钥，再截短——
    先截的话，截断处可能留下半个密钥。"""
    text = json_unescaped(raw.decode("utf-8", errors="replace"))
    return mask(text, secrets)[:limit]

