"""--fix 的第二步：请模型改写还没修好的句子，只接受让问题变少的改写；以及整个 --fix 的经过（fix_answer）。"""
from collections.abc import Callable, Sequence

from sourced_answers.checker import (
    Report,
    Source,
    SourceIndexes,
    SupportRule,
    analyse,
    bigram_similarity,
    check_answer,
    kind_of,
    problem_places,
    without_citations,
)
from sourced_answers.steps.hidden import fates, hiding_message, really_fixed
from sourced_answers.steps.repair import Repair, Rewriter, fix_citations


def passing_claims(report: Report) -> set[str]:
    """按支持分判过、通过了的句子：{正文}。太短、不判支持分的句子不算（它们也没有被“核对过”）。
    用来比较改写前后两版：两版的句子各是各的，下标对不上，只能比正文。"""
    return {without_citations(check.sentence) for check in report.claims if check.status == "supported"}


def rewrite_repairs(old_answer: str, old_report: Report, new_answer: str, sources: Sequence[Source]) -> list[Repair]:
    """对比前后两版：被标出的句子哪些改写成了什么、哪些删去了。原因是说这一句的问题，和审阅页一样由
    checker.problem_places 凭问题的 claim 定：引了不存在的编号只算它点名的那一句；几个问题说同一句时取说这一句本身的
    最后一个，整块没有引用排在后面。改写之后的句子和原来的哪一句对应，只能比文字（新的一版没有下标可凭）。"""
    old = analyse(old_answer)
    new_claims = analyse(new_answer).claims
    old_keys = {without_citations(c.text) for c in old.claims}
    added = [c for c in new_claims if without_citations(c.text) not in old_keys]
    new_keys = {without_citations(c.text) for c in new_claims}
    problems = old_report.problems
    places = problem_places(old, problems, spread=False)
    repairs: list[Repair] = []
    for position, claim in enumerate(old.claims):
        key = without_citations(claim.text)
        if key in new_keys or position not in places:
            continue
        about = places[position]
        own = [number for number in about if kind_of(problems[number].kind).about != "block"]
        reason = problems[(own or about)[-1]].message
        match = max(added, key=lambda c: bigram_similarity(c.body, claim.body), default=None)
        if match is not None and bigram_similarity(match.body, claim.body) >= 0.2:
            added.remove(match)
            repairs.append(Repair("rewrite", claim.paragraph, claim.text, match.text, reason))
        else:
            repairs.append(Repair("delete", claim.paragraph, claim.text, None, reason))
    return repairs


def rewrite_round(answer: str, report: Report, sources: Sequence[Source], rule: SupportRule, ask: Rewriter,
                  indexes: SourceIndexes | None = None) -> tuple[str | None, Report | None, list[Repair], str]:
    """请模型改写一轮。采用时返回 (新回答, 新 Report, [Repair], 说明)；不采用时返回 (None, None, [], 为什么)。"""
    new_answer = ask(answer, report)
    if not new_answer or not new_answer.strip():
        return None, None, [], "模型没有给出改写，保留上一版"
    new_report = check_answer(new_answer, sources, rule, indexes)
    if len(new_report.problems) >= len(report.problems):
        return None, None, [], (f"改写后仍有 {len(new_report.problems)} 个问题（之前 {len(report.problems)} 个），"
                                f"保留上一版")
    lost = passing_claims(report) - passing_claims(new_report)
    if lost:
        return None, None, [], f"改写改掉了 {len(lost)} 句原本通过的话，保留上一版"
    found = fates(answer, report, new_answer, new_report, indexes or SourceIndexes(sources))
    hiding = hiding_message(found)
    if hiding:
        return None, None, [], f"{hiding}，保留上一版"
    if not really_fixed(found):
        return None, None, [], "改写没有真的删掉或改对任何一句被标出的话（只是合并、换了说法或地方），保留上一版"
    repairs = rewrite_repairs(answer, report, new_answer, sources)
    message = f"采用改写：问题从 {len(report.problems)} 个减到 {len(new_report.problems)} 个"
    return new_answer, new_report, repairs, message


def fix_answer(answer: str, sources: Sequence[Source], rule: SupportRule, rounds: int = 0, ask: Rewriter | None = None,
               log: Callable[[str], None] = lambda message: None,
               indexes: SourceIndexes | None = None) -> tuple[str, Report, list[Repair]]:
    """--fix 的全部：先确定性修正，再最多 rounds 轮模型改写（每轮之后再做一次确定性修正）。
    返回 (回答, Report, [Repair])。"""
    indexes = indexes or SourceIndexes(sources)
    answer, repairs, report = fix_citations(answer, sources, rule, indexes=indexes)
    for number in range(1, rounds + 1):
        if report.passed or ask is None:
            break
        log(f"修正第 {number} 轮…")
        new_answer, new_report, rewritten, message = rewrite_round(answer, report, sources, rule, ask, indexes)
        log(f"  {message}")
        if new_answer is None or new_report is None:
            break  # 这一轮没有进展，再问也多半一样
        answer, report = new_answer, new_report
        repairs += rewritten
        answer, more, report = fix_citations(answer, sources, rule, report, indexes=indexes)
        repairs += more
    return answer, report, repairs
