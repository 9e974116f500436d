"""回答的结构：段落、需要引用的块（正文行、列表项）、句子，以及引出列表的一行把引用传给哪些列表项。

核对、修正、文字输出和审阅页都用这里切出来的同一份句子（在原文里找到它们的位置见 locating.py）。全部是线性时间。
"""
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

from sourced_answers.checker.citations import (
    citation_runs,
    cited_numbers,
    normalize_citations,
)
from sourced_answers.checker.lines import (
    CONTENT,
    FENCE,
    HEADING,
    LEAD_IN_TAIL,
    LIST_ITEM,
    LIST_ITEM_CJK,
    MARKED_UP,
    MARKER_STARTS,
    NUMBERED,
    QUOTE_MARK,
    RULE,
    SENTENCE_END,
    TABLE_SEPARATOR,
    is_lead_in,
    is_list_item,
    is_title,
    is_title_line,
    list_position,
)
from sourced_answers.checker.reading import seen
from sourced_answers.checker.terminal import strip_terminal
from sourced_answers.checker.thinking import strip_think
from sourced_answers.checker.types import Claim

# 行尾“……。[2]”：引用写在句号后面，仍然属于这一句
CITATION_AFTER_LINE_END = re.compile(r"([。！？!?.])[ \t]*(\[[0-9]{1,40}\](?:[ \t]*\[[0-9]{1,40}\])*)[ \t]*$")


@dataclass
class Unit:
    """需要有引用的一块：段落里连续的正文行，或一个列表项（item 是它在段落里是第几项）。
    claims：它的句子在 Structure.claims 里的位置；own：它自己写的、算数的引用（“👍 [1]”里的不算）。"""
    paragraph: int
    item: int | None
    lines: list[str]
    claims: range = range(0)
    own: tuple[int, ...] = ()

    @property
    def where(self) -> str:
        return f"第 {self.paragraph} 段" if self.item is None else f"第 {self.paragraph} 段第 {self.item} 项"


@dataclass
class Structure:
    """一个回答拆开之后：需要引用的块、要核对的句子、没有引用的块。"""
    units: list[Unit]
    claims: list[Claim]
    uncited: list[Unit]


def split_paragraphs(answer: str) -> list[list[str]]:
    """按空行切段落；去掉标题、分隔线、代码块（它们不是需要引用的内容）。返回 [[行, …], …]。
    写成一句话的标题是内容（单独一段）；没有结束的代码块不算代码块（不然一个 ``` 就能让后面的一切都不核对）。"""
    lines = answer.split("\n")
    fences = [number for number, line in enumerate(lines) if FENCE.match(line)]
    unclosed = fences[-1] if len(fences) % 2 else None
    paragraphs: list[list[str]] = []
    current: list[str] = []
    in_fence = False
    for number, line in enumerate(lines):
        if FENCE.match(line):
            if number != unclosed:  # 没有结束的那个 ``` 只是一行记号：去掉它，后面的照样核对
                in_fence = not in_fence
            continue
        if in_fence:
            continue
        heading = bool(HEADING.match(line))
        if heading or RULE.match(line):
            if current:
                paragraphs.append(current)
                current = []
            if heading and not is_title(line):
                paragraphs.append([HEADING.sub("", line, count=1).strip().strip("#").strip()])
            continue
        line = QUOTE_MARK.sub("", line)
        if line.strip():
            current.append(line)
        elif current:
            paragraphs.append(current)
            current = []
    if current:
        paragraphs.append(current)
    if "|" not in answer:
        return paragraphs  # 没有表格（绝大多数回答）
    return [kept for kept in map(without_table_headings, paragraphs) if kept]


def without_table_headings(lines: list[str]) -> list[str]:
    """去掉表格的表头和分隔行：表头是列名（“| 型号 | 盘位 |”），不是一句要引用、要核对的话。"""
    if not any("|" in line and "--" in line and TABLE_SEPARATOR.match(line) for line in lines):
        return lines
    kept = []
    for number, line in enumerate(lines):
        separator = TABLE_SEPARATOR.match(line) and "|" in line
        heading = number + 1 < len(lines) and "|" in line and bool(TABLE_SEPARATOR.match(lines[number + 1])) \
            and "|" in lines[number + 1]
        if not (separator or heading):
            kept.append(line)
    return kept


def split_units(lines: list[str], paragraph: int) -> list[Unit]:
    """按出现顺序切块：连续的正文行是一块，每个列表项各是一块（缩进的续行属于上一个列表项）。"""
    units: list[Unit] = []
    items = 0
    for line in lines:
        if is_list_item(line):
            items += 1
            units.append(Unit(paragraph, items, [line]))
        elif units and units[-1].item is not None and line[:1] in (" ", "\t"):
            units[-1].lines.append(line)
        elif units and units[-1].item is None:
            units[-1].lines.append(line)
        else:
            units.append(Unit(paragraph, None, [line]))
    return units


def says_something(claim: Claim) -> bool:
    """读出来之后还有内容（字母、数字、汉字）的句子。"""
    return has_content(claim.body)


@lru_cache(maxsize=4096)
def has_content(body: str) -> bool:
    """（回答常常整句重复：同一句只判断一次。）列表项的记号（“2. ”“- ”）不是内容：“2. 👍👍👍 [2]”也没说什么。"""
    if body[:1] in MARKER_STARTS or body[:1] in " \t":
        marker = LIST_ITEM.match(body)
        body = body[marker.end():] if marker else body
    if not MARKED_UP.search(body):
        return bool(CONTENT.search(body))  # 绝大多数句子：没有记号，不必再读一遍
    return bool(CONTENT.search(seen(body)))


def is_decoration(claim: Claim) -> bool:
    """没有内容、却有表情或符号的一截（“👍 [1]”“🎉 [2]”）：不是一句话，它的引用不算这一段的引用；它自己写了引用时
    核对把它标出来（citation_rules.decoration_problem：它没说出资料里的任何内容）。只有标点、记号的一截
    （“……！”[1]”里引号后面的“”[1]”、“**[1]**”、“方面 [1]：”里的“：”）是前面那句话的尾巴，引用照样算这一段的。"""
    if says_something(claim):
        return False
    return any(unicodedata.category(char).startswith("S") for char in seen(claim.body))


def claims_in_line(line: str, paragraph: int) -> list[Claim]:
    """一行（已统一引用写法）里的句子。以引用结尾的句子用自己的引用；句首的“[2] 中提到……”这个引用属于
    它后面的内容，不挪到上一句；没有引用的句子 citations 为空。回答常常整行重复：同样的一行只切一次。"""
    return [Claim(paragraph, text, body, list(citations)) for text, body, citations in line_sentences(line)]


@lru_cache(maxsize=4096)
def line_sentences(line: str) -> tuple[tuple[str, str, tuple[int, ...]], ...]:
    """claims_in_line 的缓存（只读）：一行里每个句子的 (原文, 正文, 引用)。"""
    return tuple((claim.text, claim.body, tuple(claim.citations)) for claim in split_line(line))


def split_line(line: str) -> list[Claim]:
    line = CITATION_AFTER_LINE_END.sub(r"\2\1", line)
    claims: list[Claim] = []
    start = 0
    first = line[:1]
    numbered = first in NUMBERED or first in " \t" and line.lstrip()[:1] in NUMBERED
    marker = (LIST_ITEM.match(line) or LIST_ITEM_CJK.match(line)) if numbered else None
    marker_end = marker.end() if marker else 0  # “1. ”里的点是列表的记号，不是句号
    for end_mark in SENTENCE_END.finditer(line + "。"):
        if marker_end and end_mark.start() < marker_end:
            continue
        segment_end = end_mark.start()
        cursor = start
        leading: list[int] = []
        for run_start, run_end, numbers in citation_runs(line, start, segment_end):
            before = line[cursor:run_start]
            # “1. [2] 标题”：编号后面的引用也在句首
            if not before.strip() or marker_end > cursor and not line[marker_end:run_start].strip():
                leading += numbers
            else:
                text = line[cursor:run_end]
                claims.append(Claim(0, text.strip(), before.strip(), leading + numbers))
                leading = []
            cursor = run_end
        rest = line[cursor:segment_end]
        if rest.strip():
            claims.append(Claim(0, rest.strip(), rest.strip(), leading))
        start = end_mark.end()
    return claims


def analyse(answer: str) -> Structure:
    """把回答（去掉思考过程、统一引用写法）拆成需要引用的块和要核对的句子。核对、修正、审阅页常常要拆同一个回答
    好几遍：拆的结果缓存起来，每次给出一份新的句子（改了它也不影响下一次）。"""
    cached = analysed(answer)
    claims = [claim.copy() for claim in cached.claims]
    return Structure(cached.units, claims, cached.uncited)


# 引出列表的一行连同它列出的前这么多项一起判：判一次的代价和列表多长无关（几十万项的列表照样是线性的）
CONTEXT_ITEMS = 20


@dataclass
class Scope:
    """引出列表的一行管着的范围：它的缩进和记号（不是列表项的引出行是 -1、None：管到下一块正文为止）、
    传给列表项的引用、引出列表的那一句（它连同列出的各项一起判）。"""
    indent: int
    numbered: bool | None
    citations: list[int]
    claim: Claim | None
    siblings: bool = False

    def holds(self, indent: int, numbered: bool) -> bool:
        """缩进为 indent 的列表项在不在这一行下面：缩进得更深，或者同样的缩进、上面是编号的项、它是符号项
        （“1. [2] RAID 说明：”下面紧跟着的“- RAID1 ……”）；以冒号结尾、后面紧跟着同一层的项的列表项（siblings）
        还管着它后面同一层、和紧跟着的那一项同一种记号的项（“- [2] RAID 说明：”后面的“- RAID1 ……”）。"""
        if self.numbered is None or indent > self.indent:
            return True
        if indent < self.indent:
            return False
        return (self.numbered and not numbered) or (self.siblings and numbered == self.numbered)


def lead_claim(unit_claims: list[Claim]) -> Claim | None:
    """引出列表的那一句：这一块里最后一句有引用的话（“……方面 [1]：”切开之后，冒号是没有内容的另一截）。"""
    claim = next((c for c in reversed(unit_claims) if c.citations and not is_decoration(c)), None)
    if claim is not None:
        claim.context = ()
    return claim


@lru_cache(maxsize=8)
def analysed(answer: str) -> Structure:
    """analyse 的缓存（只读）。

    引出列表的一行把引用传给它引出的列表项（中间隔一个空行也算）：以冒号结尾的一行（“以下几点：[2]”），
    或者写了引用、像标题的一行（“[2] RAID 说明”，小模型常不写冒号）；列表项本身以冒号结尾或者像标题时，
    也引出缩进在它下面的项。列表项没有自己的引用时就拿继承来的引用核对；没有可继承的引用就算没有引用。
    引出行自己连同它列出的各项（不论那一项的引用是自己写的还是继承的）一起判支持分（context）。
    段落（列表项）里没写引用的句子用这一段的引用核对。只有表情、标点的句子（“👍 [1]”）不是一句话：它的引用不算
    这一段的引用；这一段别处有引用（自己的或者继承的）时，表情自己写的引用留着，核对把它标出来。"""
    answer = normalize_citations(strip_think(strip_terminal(answer)))
    units: list[Unit] = []
    claims: list[Claim] = []
    uncited: list[Unit] = []
    scopes: list[Scope] = []  # 外层的在前
    previous: Previous | None = None  # 上一个列表项（有引用时）：它可能引出缩进在它下面的项
    for number, lines in enumerate(split_paragraphs(answer), 1):
        for unit in split_units(lines, number):
            unit_claims = [c for line in unit.lines for c in claims_in_line(line, number)]
            own = own_citations(unit, unit_claims)
            if unit.item is None:
                scopes = []
                previous = None
                colon = is_lead_in("\n".join(unit.lines))
                if colon or is_title_line(unit.lines[-1]) and cited_numbers(unit.lines[-1]):
                    # 传下去的是引出列表的那一句的引用（“……[1]。\n[2] RAID 说明”下面的项引 [2]，不是 [1][2]）
                    lead = lead_claim(unit_claims) if own else None
                    scopes.append(Scope(-1, None, list(lead.citations) if lead else own, lead))
                if not own and not colon:
                    uncited.append(unit)
            else:
                # 缩进和记号只在这一项可能有引用（自己的、继承的）、上一项有引用或者在列表项引出的范围里时才用得着：
                # 没有引用的长列表不必算
                needed = own or previous or scopes and (scopes[-1].citations or scopes[-1].numbered is not None)
                indent, numbered = list_position(unit.lines[0]) if needed else (0, False)
                while scopes and not scopes[-1].holds(indent, numbered):
                    scopes.pop()
                opened = opened_scope(previous, indent, numbered) if previous is not None else None
                if opened is not None:
                    while scopes and (scopes[-1].indent, scopes[-1].numbered) == (opened.indent, opened.numbered):
                        scopes.pop()  # 同一层的前一个引出行管到这里为止
                    scopes.append(opened)
                scope = scopes[-1] if scopes else None
                inherited = scope.citations if scope is not None and not own else []
                if inherited:
                    for claim in unit_claims:
                        if not is_decoration(claim):  # 表情自己写的引用留着（要标出它），没写的不核对
                            claim.citations = list(inherited)
                            claim.inherited = True
                elif not own:
                    uncited.append(unit)
                lead = scope.claim if scope is not None else None
                if lead is not None and unit_claims and len(lead.context) < CONTEXT_ITEMS:
                    lead.context += (" ".join(c.body for c in unit_claims),)
                # 有引用（自己的或者继承的）的项才可能引出下面的项
                previous = Previous(unit, unit_claims, indent, numbered) if own or inherited else None
            if uncited and uncited[-1] is unit:  # 整块没有引用只说一次：表情写的引用不另外标出
                for claim in unit_claims:
                    claim.citations = []
            unit.claims = range(len(claims), len(claims) + len(unit_claims))
            units.append(unit)
            claims += unit_claims
    return Structure(units, claims, uncited)


def own_citations(unit: Unit, unit_claims: list[Claim]) -> list[int]:
    """这一块自己写的、算数的引用（记在 unit.own 里）；块里没写引用的句子拿这一块的引用核对（shared）。"""
    contentful = [has_content(c.body) for c in unit_claims]
    own = [n for c, said in zip(unit_claims, contentful, strict=True) if said or not is_decoration(c)
           for n in c.citations]
    unit.own = tuple(own)
    for claim, said in zip(unit_claims, contentful, strict=True):
        if not said and not is_decoration(claim):
            claim.citations = []  # 只有标点的一截不核对（句子留着：抄了标签的规则要找它）
        elif said and own and not claim.citations:
            # 段落里别的句子写了引用、这一句没写：它也得有依据，拿这一段的引用核对它
            # （一段末尾写一个引用的写法很常见）
            claim.citations = list(dict.fromkeys(own))
            claim.shared = True
    return own


class Previous(NamedTuple):
    """上一个有引用（自己的或者继承的）的列表项：它的块、句子、缩进、是不是编号项。"""
    unit: Unit
    claims: list[Claim]
    indent: int
    numbered: bool


def opened_scope(item: Previous, next_indent: int, next_numbered: bool) -> Scope | None:
    """上一个列表项（有引用：自己的或者继承的）引出了下一项时，它管着下面的项：返回它的范围。引出的意思是：
    下一项在它下面（缩进得更深，或者编号项下面的符号项），它以冒号结尾或者像标题；或者下一项和它同一层，
    它以冒号结尾（它管着后面同一层的项）。"""
    indent, numbered = item.indent, item.numbered
    below = next_indent > indent or (next_indent == indent and numbered and not next_numbered)
    beside = not below and next_indent == indent
    last = item.unit.lines[-1]
    # 以冒号结尾的行，去掉行尾的引用之后最后一个字是冒号或者记号：别的列表项（绝大多数）不必再读
    colon = (below or beside) and last.rstrip(" \t[]0123456789")[-1:] in LEAD_IN_TAIL \
        and is_lead_in("\n".join(item.unit.lines))
    if not colon and (not below or not is_title_line(last)):
        return None
    citations = list(dict.fromkeys(n for c in item.claims for n in c.citations))
    # 管着同一层的项时，记着的是那些项的记号（“- [2] RAID 说明：”下面可以是“1. ……”“2. ……”）
    return Scope(indent, next_numbered if beside else numbered, citations, lead_claim(item.claims), siblings=beside)


def checked_indexes(claims: Sequence[Claim]) -> list[int | None]:
    """每个句子在核对结果里的下标（Report.claims，也就是 --json 的 claims）：带引用的句子按顺序各占一个，
    没有引用的句子不核对支持分、不在里面，为 None。Problem.claim 就是这个下标；核对和找句子的人都用这一个规矩。"""
    indexes: list[int | None] = []
    count = 0
    for claim in claims:
        if claim.citations:
            indexes.append(count)
            count += 1
        else:
            indexes.append(None)
    return indexes


def unit_citations(unit: Unit) -> list[int]:
    return cited_numbers("\n".join(unit.lines))
