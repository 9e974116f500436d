"""核对规则：把结构、资料索引、比较、支持分和数量组合成问题列表。

确定的规则：
  1. 引用的编号必须存在（1…资料条数）——missing_source；
  2. 每个段落、每个列表项都要有引用（列表项可以继承引出它的那一行的引用）——uncited_paragraph；
  3. 句子里的数字在所引资料里找不到，或者资料里和它最接近的一句用同一个单位说了别的数——number_mismatch；
  4. 句子和所引资料不是同一种语言，字面核对判断不了——cross_language（不是判成了错：交给评判模型或人）；
  5. 空的回答（或者只有短标题、代码块，没有一句可以核对的话）——empty_answer，从不通过；
  6. 回答里照抄了提示词包资料用的 <source id=…> 标签（标签不算引用）——copied_markup；
  7. 中文句子照抄了所引资料、却在同一处说反了、换成反义词、换了名字（slots.py）——polarity_mismatch、opposite_mismatch、
     name_mismatch，说明里写出两边的说法；
学来的判断：
  8. 每个带引用的句子有一个支持分（score.py；英文句子引英文资料时用英文的模型，见 calibration.py）；低于切点就是
     weak_support。--rule tutorial 改用原教程的规则（句子的字二元组在所引资料里出现的比例不低于 0.35）。
每种问题对后面各步的意思（确定不确定、评判模型能不能改、--fix 改不改引）在 types.PROBLEM_KINDS 里；一句话的结论由
flagged 按那张表记下。另外列出从没被引用的资料。整个核对对回答和资料的长度是线性的。
"""
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from sourced_answers.checker.alignment import EMPTY, Alignment, align
from sourced_answers.checker.calibration import calibration_of
from sourced_answers.checker.citation_rules import decoration_problem, structure_problems
from sourced_answers.checker.completeness import repeated_problems
from sourced_answers.checker.evidence import aligned_spans, located
from sourced_answers.checker.features import Support, compare, tutorial_overlap
from sourced_answers.checker.indexes import SourceIndexes
from sourced_answers.checker.number_rule import check_numbers, not_found, number_message
from sourced_answers.checker.quantities import Known, quantity_spans
from sourced_answers.checker.reading import Reading, read_claim
from sourced_answers.checker.score import CHINESE, SupportModel, support_model
from sourced_answers.checker.slots import Contradiction, contradictions
from sourced_answers.checker.structure import checked_indexes
from sourced_answers.checker.support_rule import DEFAULT_RULE, RULES, TUTORIAL_THRESHOLD, SupportRule
from sourced_answers.checker.terminal import strip_terminal
from sourced_answers.checker.text import format_citations, quote
from sourced_answers.checker.thinking import Reply, split_reply
from sourced_answers.checker.tokens import LANGUAGE_NAMES, ClaimWords, claim_words, language_of, too_short
from sourced_answers.checker.types import Claim, ClaimCheck, Problem, Report, Source, kind_of

# 另一条资料的支持分至少高出这么多，才建议“可能应引用 [k]”
BETTER_MARGIN = 0.2
# “这几个字在资料里找不到：‘某一段’”里，每一段最多占这么多列，最多列出这么多段
NOVEL_WIDTH = 40
NAMED_SPANS = 3


@dataclass
class Assessment:
    """一个带引用的句子和它所引的每条资料比较之后的一切（还没有下结论）。

    supports：每条所引资料各一个比较结果（跨语言时为空）；closest：重合度最高的那一条，它最接近的一句是证据；
    number_problem：数字对不上时的说明；cross_language：句子和所引资料不是同一种语言；
    calibration：支持分用哪一份模型（calibration.py：英文句子引英文资料时是英文的）。"""
    claim: Claim
    numbers: list[int]
    words: ClaimWords
    reading: Reading
    supports: list[Support] = field(default_factory=list)
    closest: Support | None = None
    eligible: bool = True
    number_problem: str | None = None
    number_swapped: bool = False  # 数字的问题是同一处换了数（比支持分低更具体，先报它）
    cross_language: str | None = None
    calibration: str = CHINESE
    alignment: Alignment = EMPTY  # 句子（连同引出的列表项）对到所引资料上（alignment.py）
    contradictions: list[Contradiction] = field(default_factory=list)  # 同一处说反了、反义词、名字（slots.py）
    title_of: int | None = None  # 这句话只是第几条资料的标题（不是一句回答）
    own_alignment: Alignment = EMPTY  # 句子自己（不连同引出的列表项）对到所引资料上：说明、证据、数字都读它

    def scores(self, model: SupportModel) -> list[float]:
        return [model.score(support.features) for support in self.supports]


def support_of(body: Reading, words: ClaimWords, number: int, index_of: SourceIndexes) -> Support:
    """句子和第 number 条资料的比较结果。同一组资料上同样的句子只比一次（回答常常整句重复，修正时还要再核对几遍）。"""
    key = (body.original, number)
    if key not in index_of.memo:
        index_of.memo[key] = compare(body, words, index_of(number), number)
    found: Support = index_of.memo[key]
    return found


def cited_label(claim: Claim, numbers: list[int]) -> str:
    where = "（继承自上文）" if claim.inherited else "（本段的引用）" if claim.shared else ""
    return format_citations(numbers) + where


def assess(claim: Claim, index_of: SourceIndexes) -> Assessment:
    """比较一个句子和它引用的每条资料（编号都存在）：重合度、特征、数字、语言。
    同一组资料上一字不差的句子（引用也一样）只比较一次：回答常常整句重复，修正时还要再核对几遍。"""
    key = ("assess", claim.text, tuple(claim.citations), claim.inherited, claim.shared, claim.context)
    if key not in index_of.memo:
        index_of.memo[key] = assess_once(claim, index_of)
    found: Assessment = index_of.memo[key]
    return found


def known_quantities(numbers: Sequence[int], index_of: SourceIndexes) -> Known:
    """所引的几条资料里的全部数量：一条资料就用它索引里的；几条一起的，同一组编号只合并一次。"""
    if len(numbers) == 1:
        return index_of(numbers[0]).quantities
    key = ("known", tuple(sorted(numbers)))
    if key not in index_of.memo:
        index_of.memo[key] = Known(q for n in numbers for q in index_of(n).quantities.quantities)
    found: Known = index_of.memo[key]
    return found


def assess_once(claim: Claim, index_of: SourceIndexes) -> Assessment:
    numbers = list(dict.fromkeys(claim.citations))
    own = read_claim(claim.body)  # 每条规则读的都是这一份（reading.py）；说明里引用的是原文
    text = own.text
    # 引出列表的那一句（“要看这几点 [1]：”）连同它列出的一项一起判支持分（check_claim 挑最好的一种）；数字只看它自己
    reading = read_claim(f"{claim.body} {claim.context[0]}") if claim.context and claim.context[0] else own
    words = claim_words(reading.text)
    # 太短的句子（内容不到 MIN_CONTENT 个字）、只有虚词的句子（没有一个内容词）都不按支持分判：后者的“重合度”无从谈起
    eligible = not too_short(reading.text) and bool(words.distinct)
    found = Assessment(claim, numbers, words, reading, eligible=eligible)
    cited = cited_label(claim, numbers)
    spans = quantity_spans(text, claim=True, single=True)  # 连同“一块”“一个”（同一处比数时要用）
    claimed = {quantity for quantity, _ in quantity_spans(text, claim=True)} if spans else set()
    # 资料里的数量只在句子里有数字时才读（大多数句子没有）
    known = known_quantities(numbers, index_of) if spans else Known()
    language = language_of(text)
    if language and all(index_of(n).languages and language not in index_of(n).languages for n in numbers):
        # 字面重合说明不了什么：只比数值（三块 = three），其余交给人（终端的结论提示可以 --judge）
        missing = sorted({value for value, _ in claimed} - known.values)
        if missing:
            found.number_problem = not_found(quote(claim.text), missing, cited)
        source_name = LANGUAGE_NAMES[index_of(numbers[0]).language or ""]
        found.cross_language = (f"“{quote(claim.text)}” 引用的资料 {cited} 是{source_name}、句子是"
                                f"{LANGUAGE_NAMES[language]}，字面核对无法判断，请人工核对")
        return found
    # 引出列表的那一句（“[2] RAID 说明：”）可以只是标题：它引出的列表项才是回答
    found.title_of = None if claim.context else index_of.title_number(text)
    found.calibration = calibration_of(reading.text, [index_of(n) for n in numbers])
    found.supports = [support_of(reading, words, n, index_of) for n in numbers]
    found.closest = max(found.supports, key=lambda support: support.overlap)
    found.alignment = found.supports[0].alignment if len(found.supports) == 1 else \
        alignment_of(reading, words.distinct, numbers, index_of)
    mine = found.alignment if reading is own else alignment_of(own, claim_words(own.text).distinct, numbers, index_of)
    found.own_alignment = mine
    found.contradictions = contradictions(own.text, mine, index_of)
    if spans:
        finding = check_numbers(own, mine, numbers, known, index_of, claimed, spans)
        if finding:
            found.number_swapped = bool(finding.swapped)
            found.number_problem = number_message(quote(claim.text), own, finding, cited,
                                                  cited_label(claim, []), index_of)
    return found


def alignment_of(reading: Reading, tokens: Sequence[str], numbers: Sequence[int], index_of: SourceIndexes) -> Alignment:
    """句子对到所引资料上（同一组资料上同样的句子只对一次）。"""
    key = ("align", reading.text, tuple(numbers))
    if key not in index_of.memo:
        index_of.memo[key] = align(reading.text, index_of.window(numbers, tokens))
    found: Alignment = index_of.memo[key]
    return found


def conclude(found: Assessment, index_of: SourceIndexes, rule: SupportRule,
             model: SupportModel) -> tuple[ClaimCheck, Problem | None]:
    """对一个比较过的句子下结论：先看跨语言和支持（按 rule），再看数字。"""
    claim = found.claim
    numbers = found.numbers
    where = (claim.paragraph, claim.text, numbers)
    if found.cross_language:
        if not found.number_problem and not found.eligible:
            return ClaimCheck(*where, None, None, None, "too_short"), None
        problem = Problem("number_mismatch", found.number_problem, *where) if found.number_problem \
            else Problem("cross_language", found.cross_language, *where)
        return flagged(ClaimCheck(*where, None, None, None, problem.kind), problem)
    scores = found.scores(model)
    best = max(range(len(scores)), key=lambda i: scores[i])
    score = round(scores[best], 4)
    closest = found.closest
    assert closest is not None
    evidence, overlap = closest.evidence, closest.overlap
    if rule.name == "tutorial":
        tutorial = [tutorial_overlap(found.reading.text, index_of(n)) for n in numbers]
        measured = [value for value in tutorial if value is not None]
        weak = bool(measured) and max(measured) < rule.limit(model)
        overlap = round(max(measured), 4) if measured else overlap
    else:
        weak = found.eligible and score < rule.limit(model)
    aligned, unmatched = aligned_spans(read_claim(claim.body), found.own_alignment, index_of, numbers)
    if found.title_of is not None:
        problem = Problem("title_only", f"“{quote(claim.text)}” 只是资料 [{found.title_of}] 的标题，不是一句回答",
                          *where, overlap, evidence, score=score)
        return flagged(ClaimCheck(*where, score, overlap, numbers[best], problem.kind, calibration=found.calibration,
                                  evidence=aligned, unmatched=unmatched), problem)
    # 确定的规则只留在没见过的数据上够准的地方（docs/checker.md）：同一处的矛盾只对中文句子是结论，英文句子只记在
    # contradicts 里（--judge 时要问）；英文句子的数不单独下结论，资料里找不到的数拉低英文的支持分（missing_numbers）
    chinese = found.calibration == CHINESE
    hit = found.contradictions[0] if found.contradictions and rule.name != "tutorial" and chinese else None
    number_problem = found.number_problem if chinese else None
    # 报出来的是支持分的结论时，同一句上别的确定的规则（数字、同一处的矛盾）也找到了问题，这句话照样是确定的
    also = (["number_mismatch"] if number_problem else []) + ([CONTRADICTION_KINDS[hit.kind]] if hit else [])
    check = ClaimCheck(*where, score, overlap, numbers[best], "supported" if found.eligible else "too_short",
                       certain=any(kind_of(kind).certain for kind in also), calibration=found.calibration,
                       contradicts=bool(found.contradictions),
                       evidence=aligned, unmatched=unmatched)
    if hit:
        return flagged(check, Problem(CONTRADICTION_KINDS[hit.kind], contradiction_message(found, hit, index_of),
                                      *where, overlap, evidence, score=score))
    if number_problem and found.number_swapped:
        return flagged(check, Problem("number_mismatch", number_problem, *where, overlap, evidence, score=score))
    if weak:
        better = better_source(found, index_of, scores[best], rule)
        message = weak_message(found, overlap, rule, unmatched)
        if better:
            message += f"，可能应引用 [{better}]"
        return flagged(check, Problem("weak_support", message, *where, overlap, evidence, better, score))
    if number_problem:
        return flagged(check, Problem("number_mismatch", number_problem, *where, overlap, evidence, score=score))
    return check, None


def flagged(check: ClaimCheck, problem: Problem) -> tuple[ClaimCheck, Problem]:
    """这句话的结论是 problem：句子的状态就是它的种类；这种问题是确定的规则给的（PROBLEM_KINDS），句子就是确定的
    （评判模型不问它）。"""
    check.status = problem.kind
    check.certain = check.certain or kind_of(problem.kind).certain
    return check, problem


# 同一处的矛盾（slots.py）→ 问题的种类
CONTRADICTION_KINDS = {"polarity": "polarity_mismatch", "opposite": "opposite_mismatch", "name": "name_mismatch"}


def contradiction_message(found: Assessment, hit: Contradiction, index_of: SourceIndexes) -> str:
    """同一处的矛盾：资料和回答各自的写法都写出来（句子这边是用户写的原文）。"""
    own = read_claim(found.claim.body)
    said = own.origin_span(*hit.claim)
    there = index_of(hit.source).written_span(hit.sentence, hit.span)
    cited = f"[{hit.source}]{cited_label(found.claim, [])}"
    text = quote(found.claim.text)
    if hit.kind == "polarity":
        return f"“{text}”：资料 {cited} 说的是“{quote(there)}”，回答写成“{quote(said)}”，意思正好相反"
    if hit.kind == "opposite":
        return f"“{text}”：资料 {cited} 说的是“{quote(there)}”，回答写成了反义词“{quote(said)}”"
    return f"“{text}”：资料 {cited} 在同一处说的是“{quote(there)}”，回答写成“{quote(said)}”"


def weak_message(found: Assessment, overlap: float, rule: SupportRule, unmatched: list[dict[str, Any]]) -> str:
    """为什么支持不了：重合度很低就说重合度；否则指出资料里找不到的那几个字（对齐之后没对上的、有内容的几段，
    最长的几段、按句子里的顺序）；都对上了就说找不到相近的说法。
    支持分不写在这里：它在 Problem.score 里，文字输出、JSON 和审阅页各自显示。"""
    text = quote(found.claim.text)
    cited = cited_label(found.claim, found.numbers)
    if overlap < TUTORIAL_THRESHOLD or rule.name == "tutorial":
        return f"“{text}” 和资料 {cited} 的重合度只有 {overlap:.0%}"
    if unmatched:
        longest = sorted(sorted(unmatched, key=lambda item: -len(item["text"]))[:NAMED_SPANS],
                         key=lambda item: item["claim_start"])
        named = "".join(f"“{quote(item['text'], NOVEL_WIDTH)}”" for item in longest)
        return f"“{text}” 里这几个字在资料 {cited} 里找不到：{named}"
    return f"“{text}” 在资料 {cited} 里找不到足够相近的说法（重合度 {overlap:.0%}）"


def better_source(found: Assessment, index_of: SourceIndexes, score: float, rule: SupportRule) -> int | None:
    """另一条资料能让这句话通过、支持分又明显更高时，返回它的编号。每条资料按它自己和这句话的语言选模型。"""
    reading, words = found.reading, found.words
    best: tuple[float, int] | None = None
    for number in index_of.candidates(words.distinct, found.numbers):
        support = support_of(reading, words, number, index_of)
        model = support_model(calibration_of(reading.text, [index_of(number)]))
        other = model.score(support.features)
        if rule.name == "tutorial":
            measured = tutorial_overlap(reading.text, index_of(number))
            passes = measured is not None and measured >= rule.limit(model)
        else:
            passes = other >= rule.limit(model)
        if passes and other >= score + BETTER_MARGIN and (best is None or other > best[0]):
            best = (other, number)
    return best[1] if best else None


def cites_existing(claim: Claim, source_count: int) -> bool:
    """句子有引用，而且引用的编号都存在（只有这样的句子才比较支持分；不存在的编号由“引用不存在”负责）。"""
    citations = claim.citations
    return bool(citations) and min(citations) >= 1 and max(citations) <= source_count


def check_claim(claim: Claim, sources: Sequence[Source], index_of: SourceIndexes,
                rule: SupportRule = DEFAULT_RULE) -> tuple[ClaimCheck, Problem | None]:
    """核对一个带引用、编号都存在的句子：它的结果和它的问题（没有问题时为 None）。
    一字不差的句子（引用也一样）在同一组资料、同一条规则下只下一次结论，别处照抄一份、换上自己的段落号。"""
    key = ("conclude", claim.text, tuple(claim.citations), claim.inherited, claim.shared, claim.context, rule)
    if key not in index_of.memo:
        index_of.memo[key] = best_reading(claim, index_of, rule)
    check, problem = index_of.memo[key]
    return at_paragraph(check, claim.paragraph), at_paragraph(problem, claim.paragraph) if problem else None


def best_reading(claim: Claim, index_of: SourceIndexes, rule: SupportRule) -> tuple[ClaimCheck, Problem | None]:
    """下结论。引出列表的那一句（有 context）有几种读法：它自己，和它连同列表里的每一项；哪一种通过就通过，
    都不通过时取支持分最高的那一种的结论。"""
    # 它自己那一种也记着它引出了列表（context 是一个空的项）：引出列表的一行可以只是资料的标题
    variants = [replace(claim, context=("",) if claim.context else ())] + \
        [replace(claim, context=(item,)) for item in claim.context]
    results = []
    for variant in variants:
        found = assess(variant, index_of)
        results.append(conclude(found, index_of, rule, support_model(found.calibration)))
    return max(results, key=lambda result: (result[1] is None, result[0].score or 0.0))


T = TypeVar("T", ClaimCheck, Problem)


def at_paragraph(found: T, paragraph: int) -> T:
    """一份新的结果或问题，段落号换成 paragraph（缓存里的那份不动）。"""
    copied = object.__new__(type(found))  # 比 copy.copy 快：一个长回答里这样的句子成千上万
    citations = list(found.citations) if found.citations is not None else None  # 缓存里那份的列表也不共用
    copied.__dict__.update(found.__dict__, paragraph=paragraph, citations=citations)
    return copied


def check_claims(claims: list[Claim], sources: Sequence[Source], rule: SupportRule = DEFAULT_RULE,
                 indexes: SourceIndexes | None = None) -> tuple[list[ClaimCheck], list[Problem]]:
    """逐句核对带引用的句子。indexes：同一组资料已经建好的索引（核对、修正反复用同一组资料时传进来）。
    每个带引用的句子正好一个 ClaimCheck（顺序同 claims），它的问题带着这个下标（checked_indexes）。"""
    index_of = indexes or SourceIndexes(sources)
    checks: list[ClaimCheck] = []
    problems: list[Problem] = []
    for claim, index in zip(claims, checked_indexes(claims), strict=True):
        if index is None:
            continue  # 没有引用的句子由段落规则负责
        if not cites_existing(claim, len(sources)):
            valid = list(dict.fromkeys(n for n in claim.citations if 1 <= n <= len(sources)))
            checks.append(ClaimCheck(claim.paragraph, claim.text, list(dict.fromkeys(claim.citations)), None, None,
                                     valid[0] if valid else None, "missing_source"))
            continue  # 不存在的编号由“引用不存在”负责
        check, problem = decoration_problem(claim) or check_claim(claim, sources, index_of, rule)
        checks.append(check)
        if problem:
            problem.claim = index  # check_claim 给的是一份新的（缓存里那份不动）
            problems.append(problem)
    return checks, problems


def check_answer(answer: str, sources: Sequence[Source], rule: SupportRule = DEFAULT_RULE,
                 indexes: SourceIndexes | None = None) -> Report:
    """所有规则一起跑，返回 Report。空的回答（去掉思考过程后什么也没有）从不通过。
    读任何一句话之前先整个去掉终端控制序列（“[2J”这样的半截不会被当成文字核对）。"""
    original, answer = answer, strip_terminal(answer)
    reply = split_reply(answer)
    if not reply.answer:
        return empty_report(reply, len(sources))
    problems, unused, cited, structure = structure_problems(answer, len(sources))
    problems += repeated_problems(structure)  # 小模型卡在循环里：同一段、同一句一字不差地写了好几遍
    if not structure.units:  # 只有短标题、分隔线、代码块：没有一句可以核对的话，也不能算通过
        problems.append(Problem("empty_answer", "回答里只有标题、分隔线或代码块，没有一句可以核对的话"))
    checks, found = check_claims(structure.claims, sources, rule, indexes)
    located(checks, structure, answer, original)  # 证据和找不到的字在回答里的位置
    return Report(problems + found, unused, cited, checks)


# 教程里的两个函数，接口保持不变：返回中文说明的列表；support 的资料是教程里的 dict（title、text）

def check(answer: str, source_count: int) -> tuple[list[str], list[int]]:
    problems, unused, _, _ = structure_problems(answer, source_count)
    return [p.message for p in problems], unused


def support(answer: str, sources: Sequence[dict[str, Any]], threshold: float | None = None) -> list[str]:
    """自己写了引用的句子里支持不了的（按默认的支持分；threshold 是支持分的切点，默认用拟合出来的）。
    和教程一样只看自己带引用的句子；check_answer 还会拿段落的引用核对没写引用的句子。"""
    _, _, _, structure = structure_problems(answer, len(sources))
    checked = [Source.from_json(source) for source in sources]
    own = [claim for claim in structure.claims if not claim.shared]
    _, problems = check_claims(own, checked, SupportRule(RULES[0], threshold))
    return [p.message for p in problems]


def empty_report(reply: Reply, count: int) -> Report:
    """空回答的 Report（count 条资料都没被引用）。问题的说明讲清是怎么空的：停在没有结束的思考里、只有思考过程，
    还是什么也没有。"""
    return Report([Problem("empty_answer", empty_message(reply))], list(range(1, count + 1)), set())


def empty_message(reply: Reply) -> str:
    if reply.state == "unfinished" and reply.unfinished:
        return "回答里只有没有结束的思考过程（<think> 之后没有 </think>）：模型没有给出回答，思考过程不核对"
    if reply.state != "none":
        return "回答是空的（去掉思考过程之后什么也没有）"
    return "回答是空的"
