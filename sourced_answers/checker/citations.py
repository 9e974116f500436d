"""引用标记：认出各种写法，统一成 [1][2]，取出编号。

认这些写法：[1] [ 2 ] 【1】 ［１］ [1, 2] [1，2] [1-3] [1–3] [^1] [1][3]。编号最多 40 位（更长的只会是乱码）。
别的模块只用这里的函数，不直接用这里的正则。
"""
import re
from collections.abc import Iterator
from itertools import pairwise

from sourced_answers.checker.text import format_citations

_DIGITS = r"[0-9０-９]{1,40}"
_SEPARATOR = r"[ \t]*(?:[,，、;；]|[-–—~～])[ \t]*"
_MARK = rf"[\[【［][ \t]*(?:\^[ \t]*)?({_DIGITS}(?:{_SEPARATOR}{_DIGITS})*)[ \t]*[\]】］]"
CITATION_MARK = re.compile(_MARK)
# 已经是统一写法的标记（[12]：半角方括号里只有不以 0 开头的数字）；和不是这种写法的标记（要统一的）
_PLAIN = r"\[(?:[1-9][0-9]{0,29}|[0-9])\]"
UNUSUAL_MARK = re.compile(rf"(?!{_PLAIN}){_MARK}")
_LIST_SEPARATOR = re.compile(r"[ \t]*[,，、;；][ \t]*")
_DASH = re.compile(r"[ \t]*[-–—~～][ \t]*")
# 统一写法之后的引用：[编号]
CITATION = re.compile(r"\[([0-9]{1,40})\]")
CITATION_RUN = re.compile(r"\[[0-9]{1,40}\](?:[ \t]*\[[0-9]{1,40}\])*")
# 句子后面紧跟的一串引用标记（任何写法）；以及写在行尾句号后面的“……。[2]”
_MARK_RUN = re.compile(rf"[ \t]*((?:{_MARK})(?:[ \t]*(?:{_MARK}))*)")
_MARK_AFTER_END = re.compile(rf"[。！？!?.][ \t]*((?:{_MARK})(?:[ \t]*(?:{_MARK}))*)[ \t]*(?=\n|$)")
# 一个范围最多展开这么多个编号（[1-99999999] 不展开成一亿个）
MAX_RANGE = 50


def citation_number(digits: str) -> int:
    """超长的数字串（如 [99999999999999999999]）只会是不存在的编号；截短以免 int() 报错。"""
    return int(digits[:30])  # int() 也认全角数字


def expand_citation(inner: str) -> list[int]:
    """一个引用标记里的编号：“1, 2” → [1, 2]；“1-3” → [1, 2, 3]；“1-2-4” 按相邻两数各算一段范围。"""
    numbers = []
    for part in _LIST_SEPARATOR.split(inner):
        ends = [citation_number(piece) for piece in _DASH.split(part) if piece]
        if len(ends) == 1:
            numbers.append(ends[0])
        for low, high in pairwise(ends):
            if low <= high and high - low <= MAX_RANGE:
                numbers.extend(range(low, high + 1))
            else:
                numbers.extend([low, high])
    return numbers


def citation_marks(text: str) -> Iterator[tuple[int, int, list[int]]]:
    """text 里的每个引用标记（任何写法）：(开始, 结束, 编号)。"""
    for match in CITATION_MARK.finditer(text):
        yield match.start(), match.end(), expand_citation(match.group(1))


def normalized_mark(match: re.Match[str]) -> str:
    mark = match.group()
    inner = mark[1:-1]
    plain = inner.isascii() and inner.isdigit() and len(inner) <= 30 and (len(inner) == 1 or inner[0] != "0")
    if mark[0] == "[" and plain:
        return mark  # 已经是 [12] 这样的写法（绝大多数）：不用再拆开、拼回去
    return format_citations(expand_citation(match.group(1)))


def normalize_citations(text: str) -> str:
    """把各种引用写法统一成 [1][2] 这样的形式，其余文字不变。所有标记都已经是统一的写法时（绝大多数回答）原样
    返回：一个标记里不会有另一个标记的“[”，所以找不到要统一的标记，就没有要改的。"""
    if not UNUSUAL_MARK.search(text):
        return text
    return CITATION_MARK.sub(normalized_mark, text)


def cited_numbers(text: str) -> list[int]:
    """统一过写法的 text 里的编号，按出现的顺序。"""
    return [citation_number(m.group(1)) for m in CITATION.finditer(text)]


def citations_in(text: str) -> list[int]:
    """任何写法的 text 里的编号，按出现的顺序。"""
    return cited_numbers(normalize_citations(text))


def strip_citation_marks(text: str) -> str:
    """删掉引用标记（任何写法），别的一个字也不动。"""
    return CITATION_MARK.sub("", text)


def without_citations(text: str | None) -> str:
    """去掉引用标记（任何写法），空白合并成一个空格：比较两个句子是不是同一句时用（None 当作空的）。"""
    return " ".join(CITATION.sub(" ", normalize_citations(text or "")).split())


def citation_runs(line: str, start: int, end: int) -> Iterator[tuple[int, int, list[int]]]:
    """统一过写法的 line 在 [start, end) 之间的每一串连着的引用：(开始, 结束, 编号)。"""
    for run in CITATION_RUN.finditer(line, start, end):
        yield run.start(), run.end(), cited_numbers(run.group())


def marks_after(text: str, position: int) -> tuple[int, int] | None:
    """紧跟在 position 之后的一串引用标记（任何写法）的位置；也认行尾“……。[2]”的写法。没有时为 None。"""
    match = _MARK_RUN.match(text, position) or _MARK_AFTER_END.match(text, position)
    return match.span(1) if match else None
