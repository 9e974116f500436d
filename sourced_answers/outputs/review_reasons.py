"""审阅页上每一句话旁边放什么：它被标出的原因（同样的问题说一次、紧跟在那一句下面）、支持分、证据（资料里最像的一句）。"""
import html
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeGuard

from sourced_answers.checker import (
    Kind,
    Problem,
    Source,
    SourceIndexes,
    Structure,
    calibration_of,
    checked_positions,
    claim_words,
    compare,
    kind_of,
    problem_places,
    read_claim,
    strip_terminal,
    support_model,
    without_citations,
    written_sentences,
)
from sourced_answers.outputs.records import Record
from sourced_answers.outputs.same_problems import Said, places_text, same_problems, split_place

ProblemRecord = dict[str, Any]


def kind_in(problem: ProblemRecord) -> Kind:
    """记录里一个问题的种类的意思（种类不认识、不是文字时是 UNKNOWN_KIND）。"""
    return kind_of(str(problem.get("kind") or ""))


def escape(text: str | None) -> str:
    """转义成 HTML；终端控制序列整个去掉、控制字符和双向控制符去掉（和核对、终端输出是同一条规则：
    它们能让页面上显示的顺序和实际内容不一样，只去掉 ESC 又会留下“[2J”这样的半截）。"""
    return html.escape(strip_terminal(text or ""), quote=True)


def one_line(text: str) -> str:
    """转义，换行换成空格：原因插在回答中间，回答按空行分段，原因里不能有换行；
    整段没有引用的说明里引着那一段的几行，那几行就在它上面，连成一行读就够了。"""
    return escape(" ".join(text.split("\n")))


def flags_by_claim(record: Record, structure: Structure) -> dict[int, list[int]]:
    """每个句子（在 structure.claims 里的位置）标着哪几个问题（在 record["problems"] 里的下标）。
    凭问题带着的 claim（指进 record["claims"]）找句子，不按文字去对；规矩写在 checker.problem_places，
    模型改写说明“为什么改这一句”时用的也是它。structure 要是 record["answer"] 拆出来的。"""
    return problem_places(structure, [Problem.from_json(problem) for problem in record.get("problems") or []])


@dataclass
class Placement:
    """原因写在哪里。under：句子下标 → 写在它下面的原因（问题下标）；same：句子下标 → 写在它下面的“同第 N 段”
    （和别处说过的是同样的问题，链到那里的原因）；unplaced：没有对上任何句子、写在最后的原因；
    told_by：问题下标 → 说它的那个原因（同样的问题都指向同一个）。"""
    under: dict[int, list[int]]
    same: dict[int, list[int]]
    unplaced: list[int]
    told_by: dict[int, int]


def place_reasons(problems: Sequence[ProblemRecord], flags: dict[int, list[int]], said: Sequence[Said]) -> Placement:
    """每个问题的原因只写一次：句子的问题写在它标出的第一句下面，整段没有引用写在那一段的最后一句下面
    （一段有几行时不是每行一份）。同样的问题（said，same_problems 合起来的）只在页面上最早的那一处写原因，
    说出所有的地方；别的地方只写一行“同第 N 段”，链到那个原因。"""
    place: dict[int, int] = {}
    for index, numbers in flags.items():
        for number in numbers:
            known = place.get(number)
            whole_paragraph = kind_in(problems[number]).about == "block"
            if known is None or (index > known if whole_paragraph else index < known):
                place[number] = index
    placement = Placement({}, {}, [], {})
    for item in said:
        placed = [number for number in item.members if number in place]
        teller = min(placed, key=lambda number: (place[number], number)) if placed else item.first
        placement.told_by.update(dict.fromkeys(item.members, teller))
        if teller in place:
            placement.under.setdefault(place[teller], []).append(teller)
        else:
            placement.unplaced.append(teller)
        for number in placed:
            if number != teller and place[number] != place[teller]:
                placement.same.setdefault(place[number], []).append(number)
    for numbers in (*placement.under.values(), *placement.same.values(), placement.unplaced):
        numbers.sort()
    return placement


def with_block(gap: str, block: str) -> str:
    """把原因（一个块）放进两句之间的文字 gap（已经是 HTML）：放在上一句的句末标点、引用之后，
    换行之前；这个块本身就另起一行，所以它后面那个单独的换行不再要（空行是段落的分界，留着）。"""
    if not block:
        return gap
    newline = gap.find("\n")
    if newline < 0:
        return gap + block
    if gap.startswith("\n\n", newline):
        return gap[:newline] + block + gap[newline:]
    return gap[:newline] + block + gap[newline + 1:]


def is_number(value: object) -> TypeGuard[float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def is_source_number(value: object, count: int) -> TypeGuard[int]:
    """记录里的一个资料编号：整数，1…count。"""
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= count


class Evidence:
    """要在资料正文里高亮的句子：(资料编号, 句子) → 锚点 id。"""

    def __init__(self, prefix: str, sources: Sequence[Record]) -> None:
        self.prefix = prefix
        self.sources = sources
        self.anchors: dict[tuple[int, str], str] = {}
        self.by_source: dict[int, list[tuple[str, str]]] = {}
        self.sentences: dict[int, set[str]] = {}  # 每条资料正文里的句子（用到时才切，每条只切一次）

    def anchor(self, source: int, sentence: str) -> str:
        key = (source, sentence)
        if key not in self.anchors:
            self.anchors[key] = f"{self.prefix}ev-{len(self.anchors) + 1}"
            self.by_source.setdefault(source, []).append((sentence, self.anchors[key]))
        return self.anchors[key]

    def find(self, numbers: Sequence[int], sentence: object) -> str | None:
        """证据句在资料里高亮处的锚点。只认所引资料正文里的句子：核对时资料的标题也算一句，
        可标题不是证据（编出来的句子常常只和标题沾边）。哪条的正文里都没有时为 None。"""
        if not isinstance(sentence, str) or not sentence:
            return None
        for number in numbers:
            source = self.sources[number - 1]
            if number not in self.sentences:
                self.sentences[number] = set(written_sentences(Source(str(source.get("text") or ""))))
            if sentence in self.sentences[number] and sentence != str(source.get("title") or "").strip():
                return self.anchor(number, sentence)
        return None

    def highlight(self, number: int, text: str) -> str:
        """资料正文，转义后把要高亮的句子包进 <mark id=…>。"""
        spots = []
        for sentence, anchor in self.by_source.get(number, []):
            start = text.find(sentence) if sentence else -1
            if start >= 0:
                spots.append((start, start + len(sentence), anchor))
        pieces = []
        position = 0
        for start, end, anchor in sorted(spots):
            if start < position:
                continue
            pieces.append(escape(text[position:start]))
            pieces.append(f'<mark id="{anchor}">{escape(text[start:end])}</mark>')
            position = end
        pieces.append(escape(text[position:]))
        return "".join(pieces)


class Reasons:
    """一个回答里每个问题的原因：种类的中文名、核对给出的说明、数字（每个只写一次）、证据、更合适的资料。
    同样的问题（same_problems）说一次：原因里写出它们所有的地方。"""

    def __init__(self, record: Record, prefix: str, evidence: Evidence) -> None:
        self.problems: list[ProblemRecord] = [p if isinstance(p, dict) else {} for p in record.get("problems") or []]
        self.sources = record.get("sources") or []
        self.prefix = prefix
        self.evidence = evidence
        self.indexes: SourceIndexes | None = None  # 要算更合适的资料时才建
        self.said = same_problems(self.problems)
        self.said_of = {number: item for item in self.said for number in item.members}
        # place 之后才知道：问题 → 说它的那个原因；写在自己那一句下面的原因
        self.told_by: dict[int, int] = {}
        self.placed: set[int] = set()

    def place(self, flags: dict[int, list[int]]) -> Placement:
        """原因写在哪里（place_reasons），并记下来：链接和原因里的地方都按它写。"""
        placement = place_reasons(self.problems, flags, self.said)
        self.told_by = placement.told_by
        self.placed = {number for numbers in placement.under.values() for number in numbers}
        return placement

    def anchor(self, number: int) -> str:
        """第 number 个问题的原因的锚点（同样的问题都是说它们的那一个原因）。"""
        return f"{self.prefix}why-{self.told_by.get(number, number)}"

    def block(self, numbers: Sequence[int], body: str | None, badge: float | None, extra: str = "",
              same: Sequence[int] = ()) -> str:
        """写在一句下面的原因（numbers：问题的下标）。body：这句去掉引用后的文字；badge：句子旁边已经显示的支持分；
        extra：原因下面再放的东西（这句话和资料里对上的那一段并排，review_alignment.py）；
        same：在别处说过的同样的问题，这里只写一行“同第 N 段”。"""
        if not numbers and not same:
            return ""
        cross = all(kind_in(self.problems[n]).undecided for n in (*numbers, *same))
        reasons = "".join(self.reason(n, body, badge) for n in numbers) + "".join(self.same_as(n) for n in same)
        return f'<div class="why{" cross" if cross else ""}">{reasons}{extra}</div>'

    def same_as(self, number: int) -> str:
        """“⚠ 对不上：同第 1 段”，链到说它的原因。"""
        kind = kind_in(self.problems[number])
        mark, css = ("？", "reason same cross") if kind.undecided else ("⚠", "reason same")
        teller = self.told_by.get(number, number)
        place = split_place(self.problems[teller])[0]
        where = f"同{places_text([place])}" if place else "同上"
        return (f'<div class="{css}"><a href="#{self.anchor(number)}"><b class="kind">{mark} '
                f'{escape(kind.label)}</b>：{where}</a></div>')

    def reason(self, number: int, body: str | None, badge: float | None) -> str:
        problem = self.problems[number]
        kind = kind_in(problem)
        message = str(problem.get("message") or "")
        mark, css = ("？", "reason cross") if kind.undecided else ("⚠", "reason")
        # 新加的问题种类这里不用改：名字和“？”取自 PROBLEM_KINDS，不认识的种类也照样显示它的说明
        name = kind.label
        said = one_line(self.said_text(number, name))
        line = f'<b class="kind">{mark} {escape(name)}</b>{self.where(number)}：{said}'
        overlap, score = problem.get("overlap"), problem.get("score")
        figures = []
        if is_number(overlap) and "重合度" not in message:  # 说明里已经写了重合度的，不再写一遍
            figures.append(f"重合度 {overlap:.0%}")
        if is_number(score) and (badge is None or f"{score:.2f}" != f"{badge:.2f}"):  # 句子旁边已经有了就不重复
            figures.append(f"支持分 {score:.2f}")
        if figures:
            line += f"（{'，'.join(figures)}）"
        cited = [n for n in problem.get("citations") or [] if is_source_number(n, len(self.sources))]
        if is_number(overlap) and cited:  # 和所引资料比较过：给出证据，或者明说没有
            target = self.evidence.find(cited, problem.get("evidence"))
            if target:
                line += f'<br>所引资料里最接近的一句：<a href="#{target}">{escape(problem["evidence"])}</a>'
            else:
                line += "<br>所引资料的正文里没有找到和这句话相近的一句"
        better = problem.get("better_source")
        if is_source_number(better, len(self.sources)):
            sentence = body if body is not None else without_citations(str(problem.get("sentence") or ""))
            line += (f'<br>可能更合适的资料：<a href="#{self.prefix}src-{better}">[{better}]</a>'
                     f"（这句话和它的{self.figures_with(better, sentence)}）")
        return f'<div class="{css}" id="{self.anchor(number)}">{line}</div>'

    def where(self, number: int) -> str:
        """原因写出的地方：同样的问题不止一处，或者这个原因没有写在它那一句下面时，是“（第 1–10 段）”；
        写在那一句下面、只有这一处时不写（就在眼前）。"""
        item = self.said_of.get(number)
        if item is None or not item.places:
            return ""
        under_its_sentence = number in self.placed
        return "" if under_its_sentence and not item.repeated else f"（{escape(item.where())}）"

    def said_text(self, number: int, name: str) -> str:
        """说明去掉开头的地方（写在种类名后面的括号里了），再去掉和种类名重复的开头：
        “第 1 段没有引用：“……””在“没有引用”后面只剩“……”。"""
        item = self.said_of.get(number)
        text = item.tail.removeprefix("：") if item else str(self.problems[number].get("message") or "")
        if text.startswith(name) and text[len(name):len(name) + 1] == "：":
            text = text[len(name) + 1:]
        return text or "（没有说明）"

    def figures_with(self, number: int, body: str) -> str:
        """这句话和第 number 条资料的重合度、支持分：用核对时的同一套函数算（建议的资料自己的数字，不是所引资料的）。"""
        if self.indexes is None:
            self.indexes = SourceIndexes([Source.from_json(source) for source in self.sources])
        index = self.indexes(number)
        reading = read_claim(body)
        support = compare(reading, claim_words(reading.text), index, number)
        model = support_model(calibration_of(reading.text, [index]))
        return f"重合度 {support.overlap:.0%}，支持分 {model.score(support.features):.2f}"


def scores_by_claim(record: Record, structure: Structure) -> dict[int, float]:
    """每个句子（在 structure.claims 里的位置）的支持分：record["claims"] 的第 k 项就是第 k 个带引用的句子
    （checker.checked_positions，和核对用的是同一个规矩）。记录的 claims 和回答对不上（项数不一样）时一个也不给。"""
    checked = record.get("claims") or []
    positions = checked_positions(structure)
    if not isinstance(checked, list) or len(checked) != len(positions):
        return {}
    return {position: float(claim["score"]) for position, claim in zip(positions, checked, strict=True)
            if isinstance(claim, dict) and is_number(claim.get("score"))}
