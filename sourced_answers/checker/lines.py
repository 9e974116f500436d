"""一行是什么：标题、分隔线、代码块的记号、列表项和它的缩进、句末标点，以及引出列表的一行
（以冒号结尾的，或者写着资料编号和标题、像标题的）。structure.py 用这些把回答拆开。只用标准库。"""
import re

from sourced_answers.checker.citations import without_citations
from sourced_answers.checker.reading import seen

HEADING = re.compile(r"^\s{0,3}#{1,6}(\s|$)")
RULE = re.compile(r"^\s{0,3}([-*_])([ \t]*\1){2,}[ \t]*$")
FENCE = re.compile(r"^\s{0,3}(```|~~~)")
LIST_ITEM = re.compile(r"^\s*(?:[-*+•·]|\d{1,3}[.)、]|[（(]\d{1,3}[)）])\s+")
LIST_ITEM_CJK = re.compile(r"^\s*(?:\d{1,3}[、]|[（(]\d{1,3}[)）])")
NUMBERED = set("0123456789(（")  # 编号列表项的第一个字
MARKER_STARTS = NUMBERED | set("-*+•·")  # 列表项（去掉缩进）的第一个字
QUOTE_MARK = re.compile(r"^\s{0,3}>\s?")
SENTENCE_END = re.compile(r"[。！？!?]|\.(?=\s|$)")
LEAD_IN_END = re.compile(r"[:：]\s*$")
LEAD_IN_TAIL = ":：*_~`>;"  # 以冒号结尾的一行（读出来的样子）在原文里、去掉行尾的引用之后可能的最后一个字
# 表格：表头下面的分隔行（| --- | :---: |，两边的竖线可以不写）；它和它上面的表头都不是要核对的话
TABLE_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$")
# 读出来之后还有一个字母、数字或汉字的句子才说了什么
CONTENT = re.compile(r"[^\W_]")
# 读的时候会被去掉的记号（强调、标签、实体、链接）：没有它们的文字，读之前和读之后有没有字、结尾是什么都一样
MARKED_UP = re.compile(r"[*_~`<&\[]")


def is_list_item(line: str) -> bool:
    return bool(LIST_ITEM.match(line) or LIST_ITEM_CJK.match(line))


# 标题里写的是一句话（有句末标点、有引用，或者很长）：那是内容，照样核对（不能把说法藏进标题里躲过核对）
HEADING_AS_TEXT = 40
CITATION_MARK = re.compile(r"\[[0-9]{1,40}\]")


def is_title(line: str) -> bool:
    """“## 选购要点”这样的标题：短、没有句末标点、没有引用。"""
    text = HEADING.sub("", line, count=1).strip().strip("#").strip()
    return len(text) <= HEADING_AS_TEXT and not SENTENCE_END.search(text) and not CITATION_MARK.search(text)


def is_lead_in(text: str) -> bool:
    """“以下几点：”这样引出列表的一行（读出来的样子：“**要点：**”也是）：本身不需要引用，它的引用传给下面的列表项。"""
    plain = without_citations(text)
    if LEAD_IN_END.search(plain):
        return True
    return bool(MARKED_UP.search(plain)) and bool(LEAD_IN_END.search(seen(plain)))  # 没有记号就不必再读一遍


# 连同引用、强调记号超过这么多个字的一行，读出来也不会是标题
TITLE_LINE_LIMIT = 10 * HEADING_AS_TEXT


def is_title_line(line: str) -> bool:
    """像标题的一行：读出来（去掉引用、强调记号、列表记号）短、没有句末标点，而且有字——
    “[2] RAID 说明”“**[2]《RAID1 和 RAID5 的区别》**”“## RAID 说明 [2]”“Source [2]: How to choose a NAS”。
    写了引用、后面跟着列表时，它和以冒号结尾的一行一样引出那个列表（小模型常把资料的编号和标题写在列表上面、不写冒号）。"""
    marker = (LIST_ITEM.match(line) or LIST_ITEM_CJK.match(line)) if line.lstrip()[:1] in MARKER_STARTS else None
    text = line[marker.end():] if marker else line
    if len(text) > TITLE_LINE_LIMIT or SENTENCE_END.search(text):
        return False  # 绝大多数正文行：很长，或者有句末标点（读只会去掉记号，句末标点还在）
    plain = without_citations(text)
    if MARKED_UP.search(plain):
        plain = seen(plain)
    plain = plain.strip()
    return len(plain) <= HEADING_AS_TEXT and not SENTENCE_END.search(plain) and bool(CONTENT.search(plain))


def list_position(line: str) -> tuple[int, bool]:
    """列表项的缩进（制表符算 4 格）和它是不是编号的项（“1.”“1、”“（1）”；否则是“-”“*”这样的符号项）。"""
    if line[:1] not in " \t":
        return 0, line[:1] in NUMBERED  # 绝大多数列表项没有缩进
    body = line.lstrip(" \t")
    indent = len(line) - len(body)
    if indent and "\t" in line[:indent]:
        indent = len(line[:indent].expandtabs(4))
    return indent, body[:1] in NUMBERED
