"""第二意见（--judge 模型）：默认只问支持分拿不准的句子，由评判模型两个方向都能改结论。

字面核对有上限：换了一个词、一个事实的句子字面几乎一样，换个说法讲同一件事又可能字面不像。支持分很高或很低的句子，
在 CiteCheck 上几乎不会错，问了也是白花时间；支持分落在询问区间（support_model.json 的 judge_band，由
bench/fit_support_score.py 模拟评判模型选出；英文句子引英文资料时用英文模型的区间，见 checker/calibration.py）
里的句子才问：
  · 评判模型说“是”：撤掉这句的 weak_support（它就是来清除字面核对的误报的）；
  · 说“否”：这句换成 judge_unsupported（原来的 weak_support 不重复列出）；
  · 答非所问：结论不变。
跨语言的句子字面核对判断不了，总是问；“是”撤掉 cross_language，“否”换成 judge_unsupported。
确定的规则（编号不存在、没有引用、数字对不上）评判模型撤不掉，这些句子也不问。哪些结论评判模型能改、哪些总要问，
是问题种类的表（checker 的 PROBLEM_KINDS：judge_may_decide、undecided、certain）说的，这里不按名字认。
问哪些句子是 --judge-ask 的设置：
  band（默认）只问上面这些；risky 另外问支持分放过了、却有所引资料里一字不差地找不到的数字、名称或否定说法的句子
  （checker/risky.py；支持分有把握地标出的句子不多问：问了只可能撤掉一个该有的标记）；all（--judge-all）问每一个
  带引用的句子，每一句都由评判模型决定。bench/evaluate_judge_choice.py 衡量每一种问多少句、盖住多少漏报。
--threshold 换了切点时，询问区间跟着挪；--rule tutorial 的结论不看支持分，能判断的句子都问。
一字不差的句子（引用也一样）只问一次，意见用在每一句上；改哪个问题凭问题的 claim（它在 report.claims 里的下标）。

评判模型的意见只从它最后的回答里读：思考过程按 checker 的那一条规则去掉（<think>…</think>、落单的 </think> 之前的一切、
没有结束的 <think> 之后的一切），思考里说了什么都不算。回答开头要是“是/否”“yes/no”（带不带标点、加粗、引号、
“答案：”都行）；后面又说了相反的意见（“是……不是”“是的。不支持”“Yes … not supported”“Yes and no”），
或者开头说“是”、后面说“不支持”“not supported”：两个意见都说了，算“没有意见”（这句按字面核对的结论，不改）。
别的回答也都算“没有意见”：拿不准时不改结论，比改错了好。
Bespoke-MiniCheck（Ollama 上的 bespoke-minicheck）按它训练时的格式问：一条用户消息
“Document: …\\nClaim: …”，不加我们的说明，它回答 Yes 或 No。

这里只有纯逻辑和并发调度：真正发请求的函数由调用方传进来。
"""
import contextvars
import re
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import Any

from sourced_answers.checker import (
    CHINESE,
    DEFAULT_RULE,
    ClaimCheck,
    Problem,
    Report,
    Risk,
    Source,
    SourceTerms,
    SupportRule,
    format_citations,
    kind_of,
    quote,
    risks_in,
    seen,
    support_model,
    without_citations,
    without_thinking,
)
from sourced_answers.core.settings import DEFAULT_RATE, JUDGE_DEFAULTS, MODEL_DEFAULTS, TokenRate
from sourced_answers.model.messages import Message
from sourced_answers.model.prompts import judge_messages

# 同时向评判模型发几个请求：本机模型一次只算一个，多了只是排队
CONCURRENCY = 2
# 评判不支持时，引用评判模型的回答最多占这么多列
REPLY_WIDTH = 40
# 问评判模型：messages → 回复文字（出错时抛异常，由调用方决定怎么报）
JudgeAsk = Callable[[list[Message]], str]
# 回答开头的意见。中文“是的”“不支持”后面紧跟汉字，不能要求词边界；英文要（免得 “nothing” 算作 no）。
# “不”只在后面是这几个字（或者不是汉字）时算“否”：“不过”“不确定”不是意见；“是”后面跟着“否”“不”时是在问（“是否”“是不是”）
YES = re.compile(r"(?:是|对|支持)(?![否不])|(?:yes|y|true|supported|correct)\b", re.IGNORECASE)
NO = re.compile(r"否|不(?:完全|能够?)?(?:支持|正确|符合|成立|一致|准确|属实)|不(?:是|对)|不(?![\u3400-\u9fff])"
                r"|没有(?:(?:足够的?)?(?:支持|依据|根据|证据))?(?!问题|错)"
                r"|(?:no|n|false|not(?:\s+(?:fully\s+|entirely\s+)?supported)?|unsupported|incorrect)\b", re.IGNORECASE)
# 意见前后可以有的装饰（空白、加粗、引号、括号、冒号、引用符号），和开头的标签（“答案：”“Answer:”）
DECORATION = " \t\r\n*_`\"'“”‘’「」【】[]()（）:：>#-"
DECORATED = f"[{re.escape(DECORATION)}]*"
LEAD = re.compile(f"{DECORATED}(?:(?:(?:最终)?(?:答案|回答|结论|判断|判定)(?:是)?|(?:final\\s+)?(?:answer|verdict))"
                  f"\\s*[:：]{DECORATED})?", re.IGNORECASE)
# 意见后面的话按这些拆成小句；一个小句整个就是相反的意见（“不是”“not supported”“是的”）时，两个意见都说了
CLAUSE_BREAK = re.compile(r"[。．.！!？?；;，,、\n…]+|\s-+\s|\b(?:and|but|or|however|though)\b"
                          r"|但是?|不过|然而|可是|而且|或者?", re.IGNORECASE)
YES_CLAUSE = re.compile(r"是|是的|对|对的|正确|支持|成立|属实|yes|yep|yeah|true|correct|supported|right", re.IGNORECASE)
NO_CLAUSE = re.compile(r"否|不|不是|不对|错|错误|不正确|不支持|不完全支持|不成立|不属实|没有"
                       r"|no|nope|false|incorrect|wrong|not|not supported|not fully supported|unsupported",
                       re.IGNORECASE)
# 说“是”之后又在哪里否认了支持：也是两个意见都说了
DENIED = re.compile(r"不(?:完全|能|能够)?支持|无法支持|没有支持|并不支持|并非|未能?支持|不成立|不属实|\bunsupported\b"
                    r"|(?:没有|缺乏|缺少|找不到|并无|毫无|无)(?:足够的?|任何)?(?:依据|根据|证据|出处)"
                    r"|\bno\s+(?:\w+\s+)?(?:evidence|basis|support)\b"
                    r"|\bnot\s+(?:\w+\s+)?supported\b|\b(?:does|do|is|are)(?:n't|\s+not)\s+(?:\w+\s+)?support",
                    re.IGNORECASE)
# 支持分放过了的句子（--judge-ask risky 只在这些里面多问有风险的）；评判模型也能改它们的结论
PASSED = ("supported", "too_short")


@dataclass
class JudgeCall:
    """问了评判模型一次：句子、引用的资料、原样的回复、解析出的意见（True 支持 / False 不支持 / None 没有意见）、
    这句话的支持分（跨语言时为 None）。"""
    paragraph: int
    sentence: str
    citations: list[int]
    reply: str
    verdict: bool | None
    seconds: float
    score: float | None = None
    risks: list[Risk] = field(default_factory=list)  # 因为有风险才问的（--judge-ask risky）：资料里找不到的那几段

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Verdicts:
    """评判之后的全部问题、每一次询问，以及支持分有把握、没有问的句子数。"""
    problems: list[Problem]
    calls: list[JudgeCall]
    skipped: int


def parse_verdict(reply: str | None) -> bool | None:
    """评判模型的回复 → True（支持）/ False（不支持）/ None（没有意见），只看思考过程之后的回答（见模块说明）。
    “是。”“否”“Yes.”“**No**”“答案：否”“<think>…</think>是”“想了想，是</think>不是” → 按回答；
    “是……不是”“是的。不支持”“Yes … not supported”、没有结束的思考、答非所问 → None。"""
    text = opening_stripped(without_thinking(reply or ""))
    said = NO.match(text) or YES.match(text)
    if said is None:
        return None
    verdict = not NO.match(text)
    rest = text[said.end():]
    opposite = NO_CLAUSE if verdict else YES_CLAUSE
    clauses = (opening_stripped(clause).rstrip(DECORATION) for clause in CLAUSE_BREAK.split(rest))
    if any(opposite.fullmatch(clause) for clause in clauses) or (verdict and DENIED.search(rest)):
        return None  # 两个意见都说了
    return verdict


def opening_stripped(text: str) -> str:
    """去掉开头的装饰和标签（“**”“答案：”）。"""
    return text[LEAD.match(text).end():]  # type: ignore[union-attr]  # LEAD 什么都能匹配（全是可选的）


def asking_band(rule: SupportRule, calibration: str = CHINESE) -> tuple[float, float] | None:
    """支持分在哪个区间里的句子要问（calibration：给这句话打分的那一份模型，中文或英文）。拟合出来的区间是
    围着默认切点的；--threshold 换了切点时整个区间跟着挪过去。--rule tutorial 的结论不看支持分：返回 None，
    能判断的句子都问。"""
    if rule.name == "tutorial":
        return None
    model = support_model(calibration)
    shift = rule.limit(model) - model.cut
    low, high = model.judge_band[0] + shift, model.judge_band[1] + shift
    return max(0.0, low), high if high < 1.0 else 1.01  # 区间是左闭右开的：挪到 1 以上时连 1.0 也要包括


def decidable(status: str) -> bool:
    """评判模型能改这个结论：支持分放过了的，和问题种类的表说它能改的（支持分、跨语言给的问题）。"""
    return status in PASSED or kind_of(status).judge_may_decide


def askable(check: ClaimCheck) -> bool:
    """评判模型能改结论的句子：支持分或跨语言给的结论，确定的规则没有标出它，也不是短得没有内容。"""
    return decidable(check.status) and not check.certain and len(without_citations(check.sentence)) >= 4


def band_of(check: ClaimCheck, rule: SupportRule) -> tuple[float, float] | None:
    """这句话的询问区间：给它打分的那一份模型（中文或英文）的区间。"""
    return asking_band(rule, check.calibration or CHINESE)


def to_ask(check: ClaimCheck, band: tuple[float, float] | None, ask: str, risks: Sequence[Risk] = ()) -> bool:
    """要不要问这句（ask 是 --judge-ask 的设置；band 是给它打分的那一份模型的询问区间）：跨语言的总问；
    支持分落在询问区间里的问；risky 时支持分放过了、有风险（risks 不空）的也问；all（或 --rule tutorial
    没有区间）时能判断的都问。和资料同一处说反了的（contradicts）是确定的规则标出的，不问（askable）。"""
    if not askable(check):
        return False
    if ask == "all" or band is None or kind_of(check.status).undecided:
        return True
    if in_band(check, band):
        return True
    return ask == "risky" and check.status in PASSED and bool(risks)


def in_band(check: ClaimCheck, band: tuple[float, float]) -> bool:
    return check.status != "too_short" and check.score is not None and band[0] <= check.score < band[1]


class RiskFinder:
    """一个回答里每个句子的风险（risky.risks_in）：每条资料的 SourceTerms 只取一次。"""

    def __init__(self, sources: Sequence[Source]) -> None:
        self.sources = sources
        self.terms: dict[int, SourceTerms] = {}

    def __call__(self, check: ClaimCheck) -> list[Risk]:
        for number in check.citations:
            if number not in self.terms:
                self.terms[number] = SourceTerms(seen(self.sources[number - 1].text))
        return risks_in(seen(without_citations(check.sentence)), [self.terms[number] for number in check.citations])


def same_sentence(check: ClaimCheck | JudgeCall) -> tuple[str, tuple[int, ...]]:
    """一字不差的句子、同样的引用，只问一次。"""
    return without_citations(check.sentence), tuple(check.citations)


def judge_answer(sources: Sequence[Source], report: Report, ask: JudgeAsk, model: str,
                 which: str = JUDGE_DEFAULTS.ask, rule: SupportRule = DEFAULT_RULE,
                 window: int = MODEL_DEFAULTS.context_window, rate: TokenRate = DEFAULT_RATE,
                 concurrency: int = CONCURRENCY) -> Verdicts:
    """问评判模型 report 里的句子（which 是 --judge-ask 的设置：band 只问拿不准的，risky 再加上有风险的，all 每一句），
    按它的意见改结论（见模块说明）。window：评判模型的上下文窗口，资料太长时只给最相关的段落（prompts.judge_messages）。"""
    bands = {id(check): band_of(check, rule) for check in report.claims}
    risks: dict[int, list[Risk]] = {}  # id(句子) → 它的风险（只找支持分放过了、不在区间里的句子）
    if which == "risky":
        found = RiskFinder(sources)
        risks = {id(check): found(check) for check in report.claims
                 if askable(check) and check.status in PASSED and (band := bands[id(check)]) is not None
                 and not in_band(check, band)}
    wanted = list({same_sentence(check): check for check in reversed(report.claims)
                   if to_ask(check, bands[id(check)], which, risks.get(id(check), ()))}.values())[::-1]
    asked = {same_sentence(check) for check in wanted}
    skipped = sum(askable(check) and check.status != "too_short" and same_sentence(check) not in asked
                  for check in report.claims)

    def one(check: ClaimCheck) -> JudgeCall:
        # 评判模型读的也是读出来的文字：“**不**能”问成“不能”，零宽字符、HTML 标签不进提示词
        source_text = "\n\n".join(seen(sources[n - 1].text) for n in check.citations)
        started = time.monotonic()
        reply = ask(judge_messages(model, seen(without_citations(check.sentence)), source_text, window, rate))
        return JudgeCall(check.paragraph, check.sentence, check.citations, reply, parse_verdict(reply),
                         round(time.monotonic() - started, 3), check.score, list(risks.get(id(check), ())))

    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        # 每个询问带着这一刻的上下文：--serve 的客户端走了，还没发出的询问就不再发（core.abandoning）
        futures = [pool.submit(contextvars.copy_context().run, one, check) for check in wanted]
        try:
            calls = [future.result() for future in futures]
        except BaseException:
            for future in futures:
                future.cancel()  # 评判模型出错了：还没开始的询问不再发
            raise
    return Verdicts(merged(report, calls), calls, skipped)


def merged(report: Report, calls: list[JudgeCall]) -> list[Problem]:
    """评判模型有意见的句子（同样的句子在别的段落里也算）：它的意见取代支持分和跨语言的结论，确定的规则留着；
    同时更新 report.claims 的状态。被取代的问题凭它的 claim 认出来；“不支持”的每一句各一个 judge_unsupported，
    带着那一句的下标（一段里一字不差的两句也是两个问题，和支持分给的问题一样）。"""
    said = {same_sentence(call): call for call in calls if call.verdict is not None}
    decided: dict[int, JudgeCall] = {}  # report.claims 的下标 → 评判模型对这句话的意见
    for index, check in enumerate(report.claims):
        call = said.get(same_sentence(check))
        if call is not None and askable(check):
            decided[index] = call
            check.status = "supported" if call.verdict else "judge_unsupported"
    problems = [p for p in report.problems if not (kind_of(p.kind).judge_may_decide and p.claim in decided)]
    problems += [unsupported(report.claims[index], call, index) for index, call in decided.items()
                 if call.verdict is False]
    return problems


def unsupported(check: ClaimCheck, call: JudgeCall, index: int) -> Problem:
    return Problem("judge_unsupported", f"评判模型认为资料 {format_citations(call.citations)} 不完全支持"
                   f"“{quote(check.sentence)}”（它的回答：{quote(without_thinking(call.reply), REPLY_WIDTH)}）",
                   check.paragraph, check.sentence, list(call.citations), score=call.score, claim=index)
