"""第 3、4 步：核对一个回答；用了 --fix 时再修正，用了 --judge 时再请评判模型看支持分拿不准的句子。
还有第 2 步的收尾（answer_of、check_reply）：模型的回复按 checker 的思考规则拆开，回答拿去核对；
回复停在没有结束的思考里、思考之外什么也没有时，那段文字标明了保留下来，不核对，退出码 3（模型没有给出回答）。

回答问题、--verify 和 --eval 走的是同一段代码。请模型改写、请评判模型的函数在这里按配置做好，
出错时怎么办也在这里决定：改写出错只保留上一版；评判出错报出评判模型的名字（退出码 3）。

修正（steps.rewrite）、评判（steps.judge）和提示词（model.prompts）只有 --fix、--judge、请模型改写时才用：
在那时才导入，--verify 核对一条记录不必为它们付启动的时间（tests/test_startup.py）。
"""
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sourced_answers.checker import (
    Reply,
    Report,
    Source,
    SourceIndexes,
    SupportRule,
    analyse,
    check_answer,
    empty_report,
    split_reply,
    truncated_problem,
)
from sourced_answers.core.collection import fewer_collections
from sourced_answers.core.errors import ExitCode, ModelError
from sourced_answers.core.retrying import Deadline
from sourced_answers.core.settings import (
    DEFAULT_RATE,
    JUDGE_ASK,
    MODEL_DEFAULTS,
    CheckSettings,
    JudgeSettings,
    ModelSettings,
    TokenRate,
)
from sourced_answers.core.strings import literal
from sourced_answers.model.messages import ChatResult, Message
from sourced_answers.steps.repair import NOTHING_FIXABLE, Fixable, Repair, Rewriter, repairable

if TYPE_CHECKING:
    from sourced_answers.steps.judge import JudgeAsk, JudgeCall

Log = Callable[[str], None]


@dataclass
class Fixed:
    """--fix 的结果：修正前后的回答、改了什么、修正前的核对结果（--eval 比较修正前后）和修正用了几秒。"""
    original: str
    answer: str
    repairs: list[Repair]
    before: Report
    seconds: float = 0.0


@dataclass
class Judged:
    """--judge 的结果：评判模型的名字、地址、每一次询问、支持分有把握而没有问的句子数；
    评判模型出错时 error 是说明（回答照样输出）。"""
    model: str
    url: str
    calls: "list[JudgeCall]"
    skipped: int = 0
    error: str | None = None


@dataclass(frozen=True)
class Judge:
    """--judge 的评判模型：它的设置（名字、地址、问哪些句子）、问它的函数，和提示词按多大的上下文窗口缩短资料。"""
    settings: JudgeSettings
    ask: "JudgeAsk"
    window: int = MODEL_DEFAULTS.context_window
    rate: TokenRate = DEFAULT_RATE


@dataclass
class Checked:
    """核对（和修正、评判）之后的回答。fixable：没用 --fix 时能确定性修正的处数（结论后面提示一句）。
    unfinished：模型回复里没有结束的思考（没有时为 None），标明了显示、保存，不核对；
    no_answer：模型没有给出回答时的说明（这时只有 unfinished，退出码 3）；
    label：回答不是模型写的时，显示在它前面的一句说明（摘录）。"""
    answer: str
    report: Report
    fix: Fixed | None = None
    fixable: Fixable = NOTHING_FIXABLE
    judged: Judged | None = None
    sources: list[Source] = field(default_factory=list)
    unfinished: str | None = None
    no_answer: str | None = None
    label: str = ""

    @property
    def step_error(self) -> str | None:
        """可选的一步（评判）出错时的说明；回答照样输出，退出码是 3。"""
        return self.judged.error if self.judged else None

    @property
    def exit_code(self) -> ExitCode:
        if self.step_error or self.no_answer:
            return ExitCode.SERVICE
        return ExitCode.PASSED if self.report.passed else ExitCode.FAILED


def check_and_fix(answer: str, sources: Sequence[Source], check: CheckSettings, rewrite: Rewriter | None = None,
                  log: Log = lambda message: None, judge: Judge | None = None, truncated: bool = False) -> Checked:
    """核对；check.fix 时修正（rewrite 为 None 时只做确定性修正）；judge 不为 None 时请评判模型。
    truncated：回答到了长度上限被截断了（模型服务说的，或者保存的记录写着）：半个回答不是核对过的回答，
    多一个 truncated 问题，修正之后也留着（修正补不上没写完的部分）。
    核对和修正期间少做垃圾回收（core/collection.py）：每道门都经过这里。"""
    indexes = SourceIndexes(sources)  # 每条资料的索引只建一次，核对和修正都用它
    rule = check.support_rule
    with fewer_collections():
        report = check_answer(answer, sources, rule, indexes)
        fix = None
        fixable = NOTHING_FIXABLE
        if check.fix:
            from sourced_answers.steps.rewrite import fix_answer

            rounds = check.fix_rounds if rewrite else 0
            started = time.monotonic()
            fixed, fixed_report, repairs = fix_answer(answer, sources, rule, rounds, rewrite, log, indexes)
            fix = Fixed(answer, fixed, repairs, report, time.monotonic() - started)
            answer, report = fixed, fixed_report
        elif not report.passed:
            fixable = repairable(answer, sources, rule, report, indexes)
    judged = judge_report(report, sources, rule, judge, log) if judge else None
    if truncated:
        report.problems.append(truncated_problem(answer, analyse(answer)))
    return Checked(answer, report, fix, fixable, judged, list(sources))


def judge_report(report: Report, sources: Sequence[Source], rule: SupportRule, judge: Judge, log: Log) -> Judged:
    """请评判模型看一遍（改写 report.problems）。评判是可选的一步：它出错不能丢掉已经核对过的回答，
    回答照样输出，退出码 3 说明出了什么事。"""
    from sourced_answers.steps.judge import judge_answer

    settings = judge.settings
    name = settings.name or ""
    log(f"请评判模型 {name} 看{JUDGE_ASK[settings.ask]}…")
    try:
        verdicts = judge_answer(sources, report, judge.ask, name, settings.ask, rule, judge.window, judge.rate)
    except ModelError as error:
        return Judged(name, settings.url, [], 0, str(error))
    report.problems = verdicts.problems
    return Judged(name, settings.url, verdicts.calls, verdicts.skipped)


def answer_of(result: ChatResult, model: str, max_tokens: int, log: Log) -> Reply:
    """第 2 步的收尾：模型的回复按思考的规则拆开。被长度上限截断时说一句（回答照样核对）；停在没有结束的思考里时
    也说一句（那段文字保留下来，见 check_reply）；什么也没有（或者只有结束了的思考）时是 ModelError（退出码 3）。"""
    if result.truncated:
        log(f"⚠ 回答达到长度上限（--max-tokens {max_tokens}）被截断了")
    reply = split_reply(result.text)
    if reply.unfinished is not None and result.truncated:
        log("  思考还没结束就到了上限：加大 --max-tokens，或者换一个不“思考”的模型")
    if not reply.answer and not reply.unfinished:
        thought = "：只有思考过程，没有回答" if reply.state != "none" else ""
        raise ModelError(f"模型 {model} 返回了空回答{thought}")
    if reply.answer and reply.unfinished:
        log(f"⚠ 模型 {model} 的回复最后停在没有结束的思考里（有 <think>，没有 </think>）：之前的回答照样核对，"
            "没结束的思考另外标明了输出，不核对")
    return reply


def check_reply(reply: Reply, model: str, sources: Sequence[Source], check: CheckSettings,
                rewrite: Rewriter | None = None, log: Log = lambda message: None,
                judge: Judge | None = None, truncated: bool = False) -> Checked:
    """核对模型的一条回复：有回答就照常核对（修正、评判）。思考之外什么也没有、只有没结束的思考时，模型没有给出回答：
    那段文字不是回答（模型还没想完，里面的引用可能是它还在斟酌的），不核对、不修正、不评判，
    标明了保留下来，退出码 3。"""
    if reply.answer:
        checked = check_and_fix(reply.answer, sources, check, rewrite, log, judge, truncated)
    else:
        checked = Checked("", empty_report(reply, len(sources)), sources=list(sources),
                          no_answer=f"模型 {model} 没有给出回答：回复停在没有结束的思考里（有 <think>，没有 </think>）")
    checked.unfinished = reply.unfinished
    return checked


def judge_asker(settings: JudgeSettings, model: ModelSettings, deadline: Deadline) -> Judge | None:
    """--judge 用的评判模型（没用 --judge 时是 None）：问它的函数 messages → 回复文字，出错时的说明里带上
    评判模型的名字（退出码 3）。提示词按回答模型的上下文窗口和字数比例缩短。"""
    name = settings.name
    if not name:
        return None
    from sourced_answers.model.prompts import JUDGE_MAX_TOKENS

    # 评判模型也是一个 OpenAI 兼容服务上的模型：回答短（是 / 否和一句理由），所以 max_tokens 小
    judge_model = ModelSettings(name=name, url=settings.url, key=settings.key, max_tokens=JUDGE_MAX_TOKENS)

    def ask(messages: list[Message]) -> str:
        from sourced_answers.model.model_client import chat  # 真要问评判模型时才导入 HTTP 客户端
        try:
            result = chat(messages, judge_model, deadline)
        except ModelError as error:
            raise ModelError(f"评判模型 {name}：{error}") from None
        return result.text
    return Judge(settings, ask, model.context_window, model.token_rate)


def rewriter(question: str, sources: Sequence[Source], model: ModelSettings, deadline: Deadline,
             log: Log) -> Rewriter:
    """--fix 请模型改写用的函数：(当前回答, Report) → 改写后的回答。模型出错时返回空字符串（保留上一版）。
    改写的提示词比回答时的还长（多了当前回答和问题清单）：放不下上下文窗口时资料缩短，说明只说一次。"""
    noted: set[str] = set()

    def ask(answer: str, report: Report) -> str:
        from sourced_answers.model.prompts import rewrite_messages
        request, note = rewrite_messages(question, sources, answer, report, model.max_tokens, model.context_window,
                                         model.token_rate)
        if note and note not in noted:  # 同样的话只说一次
            noted.add(note)
            log(f"  {note}")
        from sourced_answers.model.model_client import chat  # 真要改写时才导入 HTTP 客户端
        try:
            result = chat(request, model, deadline)
        except ModelError as error:
            log(f"  修正时模型出错：{literal(error, None)}")
            return ""
        reply = split_reply(result.text)
        if reply.unfinished is not None:
            log("  改写的回复停在没有结束的思考里（有 <think>，没有 </think>）：没结束的思考不算改写")
        return reply.answer
    return ask
