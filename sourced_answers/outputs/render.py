"""文字输出：来源列表、修正了什么、评判模型的汇总、核对结论。只拼字符串，打印由调用方做。"""
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sourced_answers.checker import (
    PROBLEM_KINDS,
    Problem,
    Report,
    Source,
    citations_in,
    format_citations,
    kind_of,
    quote,
    without_citations,
)
from sourced_answers.outputs.same_problems import Said, same_problems
from sourced_answers.outputs.summary import kind_count
from sourced_answers.steps.check_steps import Checked
from sourced_answers.steps.repair import NOTHING_FIXABLE, Fixable, Repair

if TYPE_CHECKING:  # 只是类型：评判的模块只有 --judge 时才导入
    from sourced_answers.steps.judge import JudgeCall

# 文字输出最多说这么多条（同样的问题合成一条；一个打转的回答能有几十上百个不同的问题）；--json 和 --html 里是全部
PROBLEM_LIST_LIMIT = 10
# “所引资料里最接近的一句”最多占这么多列
EVIDENCE_WIDTH = 100
# “已修正”里引用的句子最多占这么多列
REPAIR_WIDTH = 40
# 流式显示时落单的 </think> 到了：之前显示的是思考过程
# （标记写在反引号里：聊天窗口把裸的 <think> 当成标签或者自己的“思考”折叠块）
REASONING_ABOVE = "（以上是模型的思考过程，不是回答，不核对：它后面写了 `</think>`。回答从这里开始）"
# 没有结束的思考：保留下来给人看，标明它不是回答
UNFINISHED_NOTE = "（以下是没有结束的思考过程：模型写了 `<think>`，没有写 `</think>`。它不是回答，没有核对）"


@dataclass(frozen=True)
class Reader:
    """谁读这段文字。终端：链接原样写、提示命令行的参数（--fix、--judge、--json）。聊天窗口和智能体把文字当
    Markdown 显示，命令行的参数对它们没有意义：来源写成 Markdown 链接，列不下的问题指向回应里的结构化结果。"""
    markdown: bool
    all_problems_at: str
    command_hints: bool


TERMINAL = Reader(markdown=False, all_problems_at="--json 或 --html 看全部", command_hints=True)
CHAT = Reader(markdown=True, all_problems_at="全部问题在回应的 verification.problems 里", command_hints=False)
AGENT = Reader(markdown=True, all_problems_at="全部问题在结构化结果的 problems 里", command_hints=False)
# 照字面显示的文字里要转义的字符（CommonMark 的反斜杠转义认所有 ASCII 标点；只转义行中间会改变显示的那些：
# HTML、实体、行内代码、强调、删除线、公式、表格；方括号只在不是 [n] 引用时转义，聊天窗口照样把 [n] 显示成来源）
MARKDOWN_SPECIAL = str.maketrans({char: "\\" + char for char in "\\`*<>&|~$"})
# 方括号（[n] 引用除外），和不在词中间的下划线（max_tokens 里的下划线不会变成强调，不转义）
BRACKET = re.compile(r"(\[\d{1,40}\])|[\[\]]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
# 行首会变成标题、列表、引用、分隔线的写法
BLOCK_START = re.compile(r"^(?=[#>+=-])|^(\d+)(?=[.)])")
# 链接地址里不能原样出现的字符：空白、尖括号、引号、反斜杠换成 %XX，括号转义（不配对的括号会提前结束链接）
LINK_URL_SPECIAL = str.maketrans({" ": "%20", "<": "%3C", ">": "%3E", '"': "%22", "\\": "%5C",
                                  "(": "\\(", ")": "\\)"})


def source_lines(sources: Sequence[Source], unused: Sequence[int], reader: Reader = TERMINAL) -> list[str]:
    """“来源：”和每条资料一行：[n] 标题 链接（没被引用的在行末标明）。读者按 Markdown 显示时写成
    n. [标题](链接)（见 list_number）：标明写在链接外面，点开的是原来的地址。"""
    lines = ["来源："]
    unused_numbers = set(unused)
    for number, source in enumerate(sources, 1):
        mark = "（未被引用）" if number in unused_numbers else ""
        # 标题和链接来自网页或 --verify 的输入：各种分行符（换行、U+2028……）合成空格，一条资料只占一行，伪造不出
        # 一行结论；终端控制序列由打印时的 SafeWriter 整个去掉（先换成空格的话，会剩下“[2J”这样的半截）
        title, link = " ".join(source.title.split()), " ".join(source.link.split())
        shown = markdown_source(title, link) if reader.markdown else " ".join(f"{title} {link}".split())
        lines.append(f"{list_number(number, reader)} {shown}{mark}")
    return lines


def list_number(number: int, reader: Reader = TERMINAL) -> str:
    """来源列表一行开头的编号：终端上是 [n]；Markdown 里是有序列表的 n.，每个客户端都显示成编号。
    不写 [n]：聊天窗口收到了来源（annotations）时，会把裸的 [n] 换成第 n 条来源的标题（Open WebUI 的来源按钮），
    列表里就成了“标题 标题”、编号没了；也不写 \\[n\\]：Open WebUI 把
    \\[…\\] 当成 LaTeX 公式，方括号没了。"""
    return f"{number}." if reader.markdown else f"[{number}]"


def markdown_source(title: str, link: str) -> str:
    """[标题](链接)。只有 http、https 的地址写成链接（javascript: 之类不给点）；别的地址写在行内代码里。"""
    text = markdown_text(title or link or "（没有标题）")
    if link.lower().startswith(("http://", "https://")):
        return f"[{text}]({link.translate(LINK_URL_SPECIAL)})"
    if not link:
        return text
    return f"{text} {code_span(link)}"


def code_span(text: str) -> str:
    """行内代码：用比 text 里最长的一串反引号还多一个的反引号包起来。"""
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    return f"{fence} {text} {fence}"


def verdict_lines(report: Report, fixable: Fixable = NOTHING_FIXABLE, limit: int = PROBLEM_LIST_LIMIT,
                  reader: Reader = TERMINAL) -> list[str]:
    """核对结论。同样的问题只说一次、说出它所有的地方（same_problems：“第 1–10 段没有引用：……”）。
    按段落排（同一段里先说整段的，再按句子的顺序）；只在一段里的问题，每段只出现一次：一段只有一个问题时一行
    “第 N 段：……”，有几个时先一行“第 N 段有 k 个问题：”，下面每个问题一行。最多说 limit 条，
    其余的按种类说一共几个问题。终端的读者还会看到可以用的参数（--fix 能修几处，跨语言的句子可以 --judge）。"""
    if report.passed:
        return ["✓ 引用核对通过"]
    problems = by_paragraph(report.problems)
    said = in_order(same_problems([problem.to_dict() for problem in problems]))
    lines = ["⚠ 引用核对没通过，请人工核对："]
    for paragraph, group in grouped(said[:limit]):
        if paragraph is None or len(group) == 1:
            for item in group:
                lines += problem_lines(problems[item.first], item.text(), "  ")
            continue
        lines.append(f"  第 {paragraph} 段有 {sum(len(item.members) for item in group)} 个问题：")
        for item in group:
            lines += problem_lines(problems[item.first], "· " + item.text_in(paragraph), "    ")
    rest = [problems[number] for item in said[limit:] for number in item.members]
    if rest:
        lines.append(f"  还有 {len(rest)} 个问题没有列出（{kind_counts(rest)}），{reader.all_problems_at}")
    # 字面核对判断不了的（跨语言）：说出是哪一种
    undecided = dict.fromkeys(kind_of(problem.kind).label for problem in problems if kind_of(problem.kind).undecided)
    if reader.command_hints and undecided:
        lines.append(f"{'、'.join(undecided)}引用的句子可以加 --judge 请评判模型看")
    if reader.command_hints and fixable.count:
        some = f"至少 {fixable.count}" if fixable.more else f"其中 {fixable.count}"
        lines.append(f"可以加 --fix 自动修正{some} 处引用（只改引用标记，不改一个字的正文）")
    return lines


def by_paragraph(problems: Sequence[Problem]) -> list[Problem]:
    """按段落排好：不属于某一段的（空回答）在最前；同一段里先是整段的问题（没有 claim），再按句子的顺序，
    其余按原来的顺序（稳定排序）。"""
    def key(problem: Problem) -> tuple[int, int]:
        paragraph = -1 if problem.paragraph is None else problem.paragraph
        return paragraph, -1 if problem.claim is None else problem.claim
    return sorted(problems, key=key)


def in_order(said: Sequence[Said]) -> list[Said]:
    """说的顺序：按第一个地方的段落；同一段里先是只在这一段的问题（它们写在一起），再是从这一段开始、
    也在别的段落的问题（各占一行）。不属于某一段的在最前。"""
    def key(item: Said) -> tuple[int, bool, int]:
        paragraph = item.places[0][0] if item.places else -1
        return paragraph, only_in(item) is None, item.first
    return sorted(said, key=key)


def only_in(item: Said) -> int | None:
    """只在一段里（一个地方、同一段的几项，或者同一个地方的几处）的条目：那一段的段落号；
    在几段里、不属于某一段的：None。"""
    paragraphs = {paragraph for paragraph, _ in item.places}
    return paragraphs.pop() if len(paragraphs) == 1 else None


def grouped(said: Sequence[Said]) -> list[tuple[int | None, list[Said]]]:
    """排好的条目分组：只在一段里的，同一段的在一组；在几段里的各自一组。"""
    groups: list[tuple[int | None, list[Said]]] = []
    for item in said:
        paragraph = only_in(item)
        if paragraph is not None and groups and groups[-1][0] == paragraph:
            groups[-1][1].append(item)
        else:
            groups.append((paragraph, [item]))
    return groups


def problem_lines(problem: Problem, text: str, indent: str) -> list[str]:
    """一个问题：一行说明（带支持分），有证据时下面缩进一行所引资料里最接近的一句。"""
    score = f"（支持分 {problem.score:.2f}）" if problem.score is not None else ""
    lines = [f"{indent}{text}{score}"]
    if problem.evidence:
        lines.append(f"{indent}  所引资料里最接近的一句：{quote(problem.evidence, EVIDENCE_WIDTH)}")
    return lines


def kind_counts(problems: Sequence[Problem]) -> str:
    """“对不上 weak_support 40、没有引用 uncited_paragraph 3”：按 PROBLEM_KINDS 的顺序，不认识的种类只有 id。"""
    counts = Counter(problem.kind for problem in problems)
    order = [kind for kind in PROBLEM_KINDS if kind in counts] + [kind for kind in counts if kind not in PROBLEM_KINDS]
    return "、".join(kind_count(kind, counts[kind]) for kind in order)


def percent(value: float | None) -> str:
    return "—" if value is None else f"{value:.0%}"


def score_text(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def repair_lines(repairs: Sequence[Repair]) -> list[str]:
    lines = ["已修正："]
    for repair in repairs:
        where = f"第 {repair.paragraph} 段：" if repair.paragraph else ""
        before = repair.before or ""
        after = repair.after or ""
        if repair.kind == "recite":
            old = format_citations(citations_in(before))
            new = format_citations(citations_in(after))
            lines.append(f"  {where}{old}→{new}“{quote(without_citations(before), REPAIR_WIDTH)}”"
                         f"（重合度 {percent(repair.overlap_before)} → {percent(repair.overlap_after)}，"
                         f"支持分 {score_text(repair.score_before)} → {score_text(repair.score_after)}）")
        elif repair.kind == "add_citation":
            new = format_citations(citations_in(after))
            lines.append(f"  {where}补上 {new}“{quote(without_citations(before), REPAIR_WIDTH)}”"
                         f"（重合度 {percent(repair.overlap_after)}，支持分 {score_text(repair.score_after)}）")
        elif repair.kind == "rewrite":
            lines.append(f"  {where}重写“{quote(before, REPAIR_WIDTH)}”→“{quote(after, REPAIR_WIDTH)}”")
        else:
            lines.append(f"  {where}删去“{quote(before, REPAIR_WIDTH)}”")
    return lines


def judge_summary(model: str, calls: "Sequence[JudgeCall]", skipped: int = 0) -> str:
    said = [call.verdict for call in calls]
    saved = f"；支持分有把握的 {skipped} 句没有问" if skipped else ""
    risky = sum(bool(call.risks) for call in calls)
    why = f"（其中 {risky} 句支持分放过了，但有资料里找不到的数字、名称或否定）" if risky else ""
    return (f"评判模型：{model}（问了 {len(calls)} 句{why}：支持 {said.count(True)}，不支持 {said.count(False)}，"
            f"没有意见 {said.count(None)}{saved}）")


def answer_parts(checked: Checked, answer_shown: bool = False) -> list[str]:
    """模型写的部分：回答（流式时已经显示过，不再给）、标明了的没结束的思考、（流式而且 --fix 改了时）修正后的回答。"""
    fix = checked.fix
    parts = [] if answer_shown or not checked.answer else [checked.answer]
    if parts and checked.label:
        parts.insert(0, checked.label)
    if checked.unfinished:
        parts.append(f"{UNFINISHED_NOTE}\n{checked.unfinished}")
    if answer_shown and fix and fix.answer != fix.original:
        parts.append("修正后的回答：\n" + checked.answer)
    return parts


def report_parts(checked: Checked, reader: Reader = TERMINAL, notes: Sequence[str] = (),
                 sources_note: str = "") -> list[str]:
    """程序写的部分：来源列表、（--fix 时）改了什么、（--judge 时）评判汇总、notes（比如回答被截断了）、核对结论
    （模型没有给出回答时是这句说明）。sources_note：来源列表最后的一句说明（比如 --demo 的页面是虚构的）。
    读者按 Markdown 显示时，这些块里转引的网页、回答的文字都转义过，
    缩进的行写成列表：它们改变不了显示的样子。"""
    fix = checked.fix
    blocks = [source_lines(checked.sources, checked.report.unused, reader)] + ([[sources_note]] if sources_note else [])
    if fix and fix.repairs:
        blocks.append(repair_lines(fix.repairs))
    if checked.judged and checked.judged.error:
        blocks.append([f"评判模型 {checked.judged.model} 出错，这一步没有做完：{checked.judged.error}"])
    elif checked.judged:
        blocks.append([judge_summary(checked.judged.model, checked.judged.calls, checked.judged.skipped)])
    blocks += [[note] for note in notes]
    if checked.no_answer:
        blocks.append([f"✗ {checked.no_answer}，没有可以核对的回答"])
    else:
        blocks.append(verdict_lines(checked.report, checked.fixable, reader=reader))
    if not reader.markdown:
        parts = ["\n".join(block) for block in blocks]
        if sources_note:  # 终端上说明紧跟在来源列表下面
            parts[:2] = [parts[0] + "\n" + parts[1]]
        return parts
    sources, *rest = blocks
    return [markdown_sources(sources)] + [markdown_list(block) for block in rest]


def markdown_sources(lines: Sequence[str]) -> str:
    """来源那一块 → Markdown：“来源：”一段，下面每条资料一项有序列表（行已经是“n. [标题](链接)”）。"""
    head, *items = lines
    return "\n\n".join([head, "\n".join(items)]) if items else head


def markdown_list(lines: Sequence[str]) -> str:
    """一块终端上的文字 → Markdown：没有缩进的行是段落，缩进的行（每两格一层）是列表的一项，开头的“· ”不要了。
    每行整行转义，照字面显示。"""
    out: list[str] = []
    listing = False
    for line in lines:
        text = markdown_text(line.strip().removeprefix("· "))
        depth = (len(line) - len(line.lstrip(" "))) // 2
        if depth:
            if not listing:
                out.append("")
            out.append("  " * max(depth - 1, 0) + "- " + text)
            listing = True
        else:
            if out:
                out.append("")
            out.append(text)
            listing = False
    return "\n".join(out)


def markdown_text(text: str) -> str:
    """照字面显示的一行：HTML、行内代码、强调、不是 [n] 的方括号都转义，行首的“1.”“-”“#”“>”不会变成
    列表、标题、引用。"""
    text = BRACKET.sub(lambda found: found.group(1) or "\\" + found.group(), text.translate(MARKDOWN_SPECIAL))
    return BLOCK_START.sub(lambda found: (found.group(1) or "") + "\\", text, count=1)


# --demo 的来源：说清楚它们是虚构的（终端：程序结束时演示服务就关了；服务：开到服务停止）
DEMO_SOURCES = "（--demo：这些来源是内置的虚构页面，不是真的网页；链接在程序结束后打不开）"
DEMO_SOURCES_SERVED = "（演示：这些来源是内置的虚构页面，不是真的网页；链接在服务运行时能打开）"


def render_result(checked: Checked, answer_shown: bool = False, demo: bool = False) -> str:
    """终端上看到的结果：回答（流式时已经打印过）、标明了的没结束的思考、来源列表、（--fix 时）改了什么、
    （--judge 时）评判汇总、核对结论（模型没有给出回答时是这句说明）。demo：来源是 --demo 的虚构页面。"""
    note = DEMO_SOURCES if demo else ""
    return "\n\n".join(answer_parts(checked, answer_shown) + report_parts(checked, sources_note=note)) + "\n"
