"""文字输出：来源列表、修正了什么、评判模型的汇总、核对结论。只拼字符串，打印由调用方做。"""
from collections import Counter
from collections.abc import Sequence

from sourced_answers.checker import PROBLEM_KINDS, Problem, Report, Source, citations_in, without_citations
from sourced_answers.core.text import format_citations, quote
from sourced_answers.outputs.summary import kind_count
from sourced_answers.steps.check_steps import Checked
from sourced_answers.steps.judge import JudgeCall
from sourced_answers.steps.repair import NOTHING_FIXABLE, Fixable, Repair

# 文字输出最多列这么多个问题（一个打转的回答能有几十上百个）；--json 和 --html 里是全部
PROBLEM_LIST_LIMIT = 10
# “所引资料里最接近的一句”最多占这么多列
EVIDENCE_WIDTH = 100
# “已修正”里引用的句子最多占这么多列
REPAIR_WIDTH = 40
# 流式显示时落单的 </think> 到了：之前显示的是思考过程
REASONING_ABOVE = "（以上是模型的思考过程，不是回答，不核对：它后面写了 </think>。回答从这里开始）"
# 没有结束的思考：保留下来给人看，标明它不是回答
UNFINISHED_NOTE = "（以下是没有结束的思考过程：模型写了 <think>，没有写 </think>。它不是回答，没有核对）"


def source_lines(sources: Sequence[Source], unused: Sequence[int]) -> list[str]:
    lines = ["来源："]
    unused_numbers = set(unused)
    for number, source in enumerate(sources, 1):
        mark = "（未被引用）" if number in unused_numbers else ""
        # 标题和链接来自网页或 --verify 的输入：各种分行符（换行、U+2028……）合成空格，一条资料只占一行，伪造不出
        # 一行结论；终端控制序列由打印时的 SafeWriter 整个去掉（先换成空格的话，会剩下“[2J”这样的半截）
        lines.append(" ".join(f"[{number}] {source.title} {source.link}".split()) + mark)
    return lines


def verdict_lines(report: Report, fixable: Fixable = NOTHING_FIXABLE, limit: int = PROBLEM_LIST_LIMIT) -> list[str]:
    """核对结论。问题按段落排（同一段里先说整段的，再按句子的顺序），每段只出现一次：一段只有一个问题时一行
    “第 N 段：……”，有几个时先一行“第 N 段有 k 个问题：”，下面每个问题一行。最多列 limit 个问题，
    其余的按种类说个数。"""
    if report.passed:
        return ["✓ 引用核对通过"]
    problems = by_paragraph(report.problems)
    lines = ["⚠ 引用核对没通过，请人工核对："]
    for paragraph, group in grouped(problems[:limit]):
        if paragraph is None or len(group) == 1:
            for problem in group:
                lines += problem_lines(problem, problem.located(), "  ")
            continue
        lines.append(f"  第 {paragraph} 段有 {len(group)} 个问题：")
        for problem in group:
            lines += problem_lines(problem, "· " + without_place(problem), "    ")
    if len(problems) > limit:
        lines.append(f"  还有 {len(problems) - limit} 个问题没有列出（{kind_counts(problems[limit:])}），"
                     "--json 或 --html 看全部")
    if fixable.count:
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


def grouped(problems: Sequence[Problem]) -> list[tuple[int | None, list[Problem]]]:
    """排好的问题按段落分组（每段一组，保持顺序）。"""
    groups: list[tuple[int | None, list[Problem]]] = []
    for problem in problems:
        if groups and groups[-1][0] == problem.paragraph:
            groups[-1][1].append(problem)
        else:
            groups.append((problem.paragraph, [problem]))
    return groups


def without_place(problem: Problem) -> str:
    """段落号已经写在这一组的第一行：说明里开头的“第 N 段”不再重复（“第 N 段第 2 项没有引用”留下“第 2 项……”）。"""
    place = f"第 {problem.paragraph} 段"
    message = problem.message.removeprefix(place).removeprefix("：")
    return message or problem.message


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


def judge_summary(model: str, calls: Sequence[JudgeCall], skipped: int = 0) -> str:
    said = [call.verdict for call in calls]
    saved = f"；支持分有把握的 {skipped} 句没有问" if skipped else ""
    risky = sum(bool(call.risks) for call in calls)
    why = f"（其中 {risky} 句支持分放过了，但有资料里找不到的数字、名称或否定）" if risky else ""
    return (f"评判模型：{model}（问了 {len(calls)} 句{why}：支持 {said.count(True)}，不支持 {said.count(False)}，"
            f"没有意见 {said.count(None)}{saved}）")


def render_result(checked: Checked, answer_shown: bool = False) -> str:
    """回答（流式时已经打印过）、标明了的没结束的思考、来源列表、（--fix 时）改了什么、（--judge 时）评判汇总、核对结论
    （模型没有给出回答时是这句说明）。"""
    fix = checked.fix
    parts = [] if answer_shown or not checked.answer else [checked.answer]
    if checked.unfinished:
        parts.append(f"{UNFINISHED_NOTE}\n{checked.unfinished}")
    if answer_shown and fix and fix.answer != fix.original:
        parts.append("修正后的回答：\n" + checked.answer)
    parts.append("\n".join(source_lines(checked.sources, checked.report.unused)))
    if fix and fix.repairs:
        parts.append("\n".join(repair_lines(fix.repairs)))
    if checked.judged and checked.judged.error:
        parts.append(f"评判模型 {checked.judged.model} 出错，这一步没有做完：{checked.judged.error}")
    elif checked.judged:
        parts.append(judge_summary(checked.judged.model, checked.judged.calls, checked.judged.skipped))
    if checked.no_answer:
        parts.append(f"✗ {checked.no_answer}，没有可以核对的回答")
    else:
        parts.append("\n".join(verdict_lines(checked.report, checked.fixable)))
    return "\n\n".join(parts) + "\n"
