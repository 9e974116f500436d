"""同样的问题只说一次，说出它所有的地方：文字输出（render）和审阅页（review_reasons）都用这里的规矩。

一个打转的回答把同一句话写了十段，核对就给出十个只差段落号的问题；一行一行地列，人读到的是十遍同一句话，
后面的问题反倒被“还有 N 个问题没有列出”挤掉了。这里把它们合成一条：“第 1–10 段没有引用：……”。

“同样”的意思：种类一样，说明除了开头的地方（“第 N 段”“第 N 段第 k 项”）以外一字不差，给人看的数字和证据
（引用的编号、重合度、支持分、最接近的一句、更合适的资料）也都一样。只要有一样不同，就是两条：不同的说明从不合并。
不属于某一段的问题（空回答）不合并。--json 和 --serve 的 verification 里仍然是每个问题一项，这里只管怎样说。
"""
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# 说明开头的地方：没有引用的段落、列表项（checker 的 Unit.where 写的就是这两种）
PLACE = re.compile(r"第 (\d+) 段(?:第 (\d+) 项)?")
# 说给人看的、合并时必须一样的字段（说明之外）
SHOWN_FIELDS = ("citations", "overlap", "score", "evidence", "better_source")
# 连着的几个号至少这么多个才写成“1–3”，两个就写“1、2”
RANGE_FROM = 3

Place = tuple[int, int | None]  # (第几段, 第几项；不是列表项时为 None)
ProblemRecord = Mapping[str, Any]


@dataclass(frozen=True)
class Said:
    """说一次的一条：members 是这几个问题在给出的列表里的下标（按原来的顺序），places 是它们的地方（排好、不重复；
    不属于某一段时是空的），tail 是说明里地方后面的部分（“没有引用：“……””，或者“：“……” 和资料 [1] ……”）。"""
    members: tuple[int, ...]
    places: tuple[Place, ...]
    tail: str

    @property
    def first(self) -> int:
        return self.members[0]

    @property
    def repeated(self) -> bool:
        """说的不止一个问题（不止一个地方，或者同一个地方有几处）。"""
        return len(self.members) > 1

    def where(self) -> str:
        """所有的地方：“第 1–10 段”“第 2 段第 1–3 项”；同一个地方有几处时后面说一共几处。"""
        return places_text(self.places) + self.times()

    def times(self) -> str:
        """同一个地方有几处（同一段里同样的一句写了两遍）时：“（共 2 处）”；没有时是空的。"""
        return f"（共 {len(self.members)} 处）" if len(self.members) > len(self.places) else ""

    def text_in(self, paragraph: int) -> str:
        """写在“第 N 段有 k 个问题：”下面的一行：段落号已经写在上面，不再重复（“第 1–3 项没有引用：……”、
        ““……” 和资料 [1] 的重合度只有 14%”）。"""
        where = places_text(self.places).removeprefix(f"第 {paragraph} 段")
        return (where + self.tail).removeprefix("：") + self.times()

    def text(self) -> str:
        """合成的一行说明：“第 1–10 段没有引用：“……””“第 1、3、5 段：“……” 和资料 [1] 的重合度只有 14%”；
        只有一个问题时就是 Problem.located 的写法。"""
        return self.where() + self.tail if self.places else self.tail


def split_place(problem: ProblemRecord) -> tuple[Place | None, str]:
    """(地方, 说明里地方后面的部分)。说明以自己的段落开头时（没有引用的段落、列表项）地方从说明里取；
    别的问题的说明里没有段落号，地方是 paragraph，后面的部分前面补一个“：”（和 Problem.located 一样的写法）。"""
    message = str(problem.get("message") or "")
    paragraph = problem.get("paragraph")
    if not isinstance(paragraph, int) or isinstance(paragraph, bool):
        return None, message
    found = PLACE.match(message)
    if found and int(found.group(1)) == paragraph:
        item = int(found.group(2)) if found.group(2) else None
        return (paragraph, item), message[found.end():]
    return (paragraph, None), "：" + message


def same_problems(problems: Sequence[ProblemRecord]) -> list[Said]:
    """把同样的问题合起来，按每一条第一个问题在 problems 里的顺序给出。"""
    groups: dict[object, list[int]] = {}
    parts: list[tuple[Place | None, str]] = []
    for number, problem in enumerate(problems):
        place, tail = split_place(problem)
        parts.append((place, tail))
        key: object = number if place is None else (
            str(problem.get("kind") or ""), tail, *(hashable(problem.get(name)) for name in SHOWN_FIELDS))
        groups.setdefault(key, []).append(number)
    said = []
    for members in groups.values():
        places = sorted({place for place in (parts[number][0] for number in members) if place is not None},
                        key=lambda place: (place[0], -1 if place[1] is None else place[1]))
        said.append(Said(tuple(members), tuple(places), parts[members[0]][1]))
    return said


def hashable(value: object) -> object:
    """字段的值 → 能当字典键的样子（列表变元组；别的不认识的写成文字）。"""
    if isinstance(value, list):
        return tuple(hashable(item) for item in value)
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return repr(value)


def places_text(places: Sequence[Place]) -> str:
    """排好的地方 → “第 1–3、5 段”“第 2 段第 1–3 项”“第 1 段、第 2 段第 1、2 项”。
    整段的地方连成一串写段落号；列表项按段落写项的号。"""
    pieces: list[str] = []
    paragraphs: list[int] = []
    position = 0
    while position < len(places):
        paragraph, item = places[position]
        if item is None:
            paragraphs.append(paragraph)
            position += 1
            continue
        if paragraphs:
            pieces.append(f"第 {numbers_text(paragraphs)} 段")
            paragraphs = []
        items = []
        while position < len(places) and places[position][0] == paragraph and places[position][1] is not None:
            items.append(int(places[position][1] or 0))
            position += 1
        pieces.append(f"第 {paragraph} 段第 {numbers_text(items)} 项")
    if paragraphs:
        pieces.append(f"第 {numbers_text(paragraphs)} 段")
    return "、".join(pieces)


def numbers_text(numbers: Sequence[int]) -> str:
    """[1, 2, 3, 5] → “1–3、5”：连着的至少 RANGE_FROM 个写成范围，其余一个一个列。"""
    runs: list[list[int]] = []
    for number in numbers:
        if runs and number == runs[-1][-1] + 1:
            runs[-1].append(number)
        else:
            runs.append([number])
    pieces = []
    for run in runs:
        if len(run) >= RANGE_FROM:
            pieces.append(f"{run[0]}–{run[-1]}")
        else:
            pieces += [str(number) for number in run]
    return "、".join(pieces)
