"""遮掉密钥的唯一办法：每一道门（终端、日志、--json、审阅页、汇总、缓存、HTTP 回应和错误、SSE 的每一块、MCP 的结果、
Python API 抛出的错误、最后一行的报错）写出去之前都经过这里。

  mask(text, secrets)          文字里的每个密钥换成 mk-***：密钥的字中间夹着看不见的字符、空白、终端控制序列、
                               HTML 标签、Markdown 的记号，写成转义（\\u006d）、HTML 实体（&#109;）、全角字母（ｓｋ－）
                               也认得出来（几种看法见 key_views.py）；
  mask_data(value, secrets)    编码成 JSON、HTML 之前在数据上遮（编码之后密钥里的 " \\ & < 会变样）；
  masked_json(value, secrets)  一条记录写成 JSON 的唯一办法（先遮再编码）；
  masked_error(error, secrets) 一个要抛给调用方的错误，说明里的密钥遮掉；
  held_secret_length           流式输出时末尾先留着的、可能是半个密钥的那一段（safe_output.SafeWriter 用它）。
门模块不直接 json.dumps、print、写流：tests/test_masking.py 读代码，绕过这里的写法（没有写明 “# 不经过遮挡：理由”）
会让测试失败。全部和文字的长度成线性。
"""
import json
import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any, TypeVar

from sourced_answers.core.strings import SURROGATE


# 遮掉之后显示的样子
class LazyViews:
    """key_views 在第一次真要找密钥时才导入（--help、环境里没有密钥时不付它和它用的 html 的导入）；导入之后 kv 就是
    那个模块本身，之后的调用不再经过这里。"""

    def __getattr__(self, name: str) -> Any:
        global kv
        from sourced_answers.core import key_views
        kv = key_views
        return getattr(key_views, name)


kv: Any = LazyViews()

REDACTED = "mk-***"


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


def visible_keys(secrets: Iterable[str]) -> list[str]:
    return [key for key in dict.fromkeys(kv.visible(secret) for secret in secrets) if key]


def may_hold_secret(text: str, secrets: Iterable[str]) -> bool:
    """text 里有没有哪个密钥的开头（mask 先做的那一步粗查）：没有就一定没有要遮的。"""
    return any(kv.key_start(key).search(text) for key in visible_keys(secrets))


def mask(text: str, secrets: Iterable[str]) -> str:
    """把文字里出现的每个密钥换成 mk-***：密钥的字中间夹着看不见的字符（零宽空格、软连字符、组合附加符号、换行）、
    空白（一个字一个空格）、终端控制序列、HTML 标签和注释、Markdown 的记号，或者写成转义（\u006d、\u200b）、HTML
    实体（&#109;）、全角字母（ｓ）也算，遮掉的是原文里的那一整段；两个密钥重叠、同一个密钥连着出现时，整段一起
    遮掉，不会露出半截。和文字的长度成线性。"""
    return replaced(text, secrets, REDACTED)


def replaced(text: str, secrets: Iterable[str], replacement: str) -> str:
    """mask 的本体：文字里出现的每个密钥（连同夹在里面、写成别的样子的整段）换成 replacement。"""
    keys = visible_keys(secrets)
    if not text or not any(kv.key_start(key).search(text) for key in keys):
        return text  # 绝大多数文字：连哪个密钥的开头都没有，不必去掉看不见的字符再找
    # 几种看法都找（key_views.VIEWS）：转义解开的（JSON 里的 \u006d、literal 写出的 \u200b）和不解开的（密钥自己
    # 带着反斜杠时，解开就认不出它了）、去掉控制序列的和不去掉的、渲染出来的（找渲染出来的密钥）
    views = ["plain", "rendered"] + (["terminal"] if "\x1b" in text or "\x9b" in text else [])
    spans = sorted((copy.original(start), copy.original_end(end - 1))
                   for copy in (kv.VisibleCopy(text, view) for view in views + (["escapes"] if "\\" in text else []))
                   for key in keys_for(keys, copy.view) for start, end in occurrences(copy.text, key))
    if not spans:
        return text
    merged: list[list[int]] = []
    for first, after in spans:  # 两段重叠、或者中间只隔着看不见的东西时连成一段
        if merged and (first <= merged[-1][1] or kv.seeing().seen_only.fullmatch(text, merged[-1][1], first)):
            merged[-1][1] = max(merged[-1][1], after)
        else:
            merged.append([first, after])
    pieces, position = [], 0
    for first, after in merged:
        pieces += [text[position:first], replacement]
        position = after
    return "".join(pieces) + text[position:]


# 搜索的文字里去掉了密钥时说的话（命令行的标准错误、--serve 的访问日志）：从不显示密钥本身
KEY_CUT = "搜索的文字里有密钥（本程序从环境变量里认得的），发给秘塔之前去掉了：密钥只发给它自己的服务"


def searchable(query: str, secrets: Iterable[str]) -> tuple[str, str | None]:
    """发给秘塔的搜索文字：问题（和对话里接上的上文）里的每个密钥整段去掉——夹着看不见的字、写成实体、全角字母的
    也算，和 mask 认得的一样。返回 (去掉之后的文字, 去掉了时要说的话 KEY_CUT，没有时 None)。秘塔的客户端
    （search.gather.SourceSession）发之前调用它，--serve 的访问日志用它写“搜索：……”。"""
    cut = " ".join(replaced(query, secrets, " ").split())
    return (query, None) if cut == " ".join(query.split()) else (cut, KEY_CUT)


def keys_for(keys: list[str], view: str) -> list[str]:
    """在一种看法里找的密钥：渲染出来的文字里找渲染出来的密钥（太短的不找，见 key_views.rendered_key）。"""
    if view != "rendered":
        return keys
    return [shown for shown in dict.fromkeys(kv.rendered_key(key) for key in keys) if shown]


def held_secret_length(text: str, secrets: Iterable[str]) -> int:
    """流式输出时 text 末尾要先留着多少个字：可能是某个密钥的开头（夹着看不见的字符、空白、控制序列、标签，写成
    转义、实体、全角字母也算），等下一段到了再决定。只看末尾：够放下最长的密钥（去掉看不见的东西以后）就行。几种看法
    （VIEWS）各算一次，取最长的；末尾没写完的转义（\\u00）、标签（<b）、实体（&#10）、链接网址也等它写完。"""
    keys = visible_keys(secrets)
    if not keys or not text:
        return 0
    half_escape = kv.PARTIAL_ESCAPE.search(text[-10:])
    held = len(half_escape.group()) if half_escape else 0
    for view in kv.VIEWS:
        wanted = keys_for(keys, view)
        if not wanted:
            continue
        written = kv.unfinished_markup(text) if view == "rendered" else len(text)
        held = max(held, len(text) - written + held_in_view(text[:written], wanted, view))
    return held


def held_in_view(text: str, keys: list[str], view: str) -> int:
    """held_secret_length 在一种看法下的答案。"""
    longest = max(len(key) for key in keys)
    size = 2 * longest
    copy = kv.VisibleCopy(text[kv.clean_start(text, len(text) - size, view):] if size < len(text) else text, view)
    while len(copy.text) < longest and size < len(text):  # 末尾夹着很多看不见的字符：往前多看一些
        size *= 4
        copy = kv.VisibleCopy(text[kv.clean_start(text, len(text) - size, view):] if size < len(text) else text, view)
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
    就找不到了。先把所有的字连起来粗查一遍：连哪个密钥的开头都没有（绝大多数记录）就原样返回，不必一个字符串
    一个字符串地遮（一个长回答的记录有几十万个字符串）。连起来只会多出跨两个字符串的“开头”，不会少：多出的只让
    它走慢的那条路。"""
    if not secrets:
        return value
    pieces: list[str] = []
    strings_of(value, pieces)
    if not may_hold_secret("\0".join(pieces), secrets):
        return value
    return masked_data(value, secrets)


def strings_of(value: Any, pieces: list[str]) -> None:
    """value 里的每个字符串（字典的键和值、列表里的每一项）按顺序放进 pieces。"""
    if isinstance(value, str):
        pieces.append(value)
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str):
                pieces.append(key)
            if isinstance(item, str):
                pieces.append(item)
            elif isinstance(item, dict | list | tuple):
                strings_of(item, pieces)
    elif isinstance(value, list | tuple):
        for item in value:
            if isinstance(item, str):
                pieces.append(item)
            elif isinstance(item, dict | list | tuple):
                strings_of(item, pieces)


def masked_data(value: Any, secrets: Sequence[str]) -> Any:
    """mask_data 慢的那条路：每个字符串各遮一遍。"""
    if isinstance(value, str):
        return mask(value, secrets)
    if isinstance(value, dict):
        return {masked_data(key, secrets): masked_data(item, secrets) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [masked_data(item, secrets) for item in value]
    return value


def masked_json(value: Any, secrets: Sequence[str], indent: int | None = None) -> str:
    """一条记录（或汇总）写成 JSON 的唯一办法：先在数据上遮掉密钥，再编码（编码之后密钥里的 " \\ 会变样，就找不到了）。
    indent 为 None 时是一行（JSON Lines 的一行，末尾带换行）。"""
    return encoded(value, secrets, indent) + "\n"


def encoded(value: Any, secrets: Sequence[str], indent: int | None = None) -> str:
    """先照原样编码，把编码里的转义解开（每个字符串就原样、连续地出现在里面）粗查一遍：连哪个密钥的开头都没有
    （绝大多数记录）就用它；有的话在数据上遮掉再编码。一个长回答的记录有几十万个字符串，不必一个一个地查。"""
    text = json.dumps(value, ensure_ascii=False, indent=indent)
    if secrets and may_hold_secret(json_strings_view(text), secrets):
        text = json.dumps(masked_data(value, secrets), ensure_ascii=False, indent=indent)
    return text


JSON_ESCAPE = re.compile(r'\\(?:u([0-9a-fA-F]{4})|(["\\/bfnrt]))')
SIMPLE_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def json_strings_view(text: str) -> str:
    """json.dumps（ensure_ascii=False）编码出来的文字里的转义（\\"、\\\\、\\n、控制字符的 \\u001b）解开：
    数据里的每个字符串原样、连续地出现在结果里（粗查密钥用，不是合法的 JSON）。"""
    if "\\" not in text:
        return text

    def one(match: re.Match[str]) -> str:
        return chr(int(match.group(1), 16)) if match.group(1) else SIMPLE_ESCAPES[match.group(2)]
    return JSON_ESCAPE.sub(one, text)


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


E = TypeVar("E", bound=BaseException)


def masked_error(error: E, secrets: Sequence[str]) -> E:
    """一个要交给调用方的错误（Python API 抛出的、服务回的）：说明里的密钥遮掉，类型不变。遮的是 args 和每个文字属性：
    MetasoError 的说明由 message、next_step 拼出，不看 args；ModelError 的 partial 是已经收到的半个回答。"""
    if not secrets:
        return error
    error.args = tuple(mask(arg, secrets) if isinstance(arg, str) else arg for arg in error.args)
    for name, value in list(vars(error).items()):
        if isinstance(value, str):
            setattr(error, name, mask(value, secrets))
    return error


def masked_json_bytes(value: Any, secrets: Sequence[str]) -> bytes:
    """HTTP 回应、SSE 的一块、MCP 的一帧：先遮再编码成一行 UTF-8 的 JSON（单独的代理码位换成 U+FFFD）。"""
    return SURROGATE.sub("\ufffd", encoded(value, secrets)).encode("utf-8")
