"""回答一个问题的经过：付费之前的检查 → 搜集资料 → 请模型回答 → 核对（修正、第二意见）。

命令行的 run_question、OpenAI 兼容的服务、MCP 服务都调用这里的 answer：步骤只写在这一处。输出（文字、JSON、审阅页、
流式显示）是调用方的事：answer 只把模型边生成边给出的文字交给 show（思考过程不给），最后返回核对过的结果和记录。
"""
import time
from collections.abc import Callable
from dataclasses import dataclass

from sourced_answers.checker import Reply, Source, ThinkFilter, split_reply
from sourced_answers.core.errors import ModelError
from sourced_answers.core.retrying import Deadline
from sourced_answers.core.settings import EXCERPTS, JudgeSettings, ModelSettings, Settings
from sourced_answers.model.endpoints import chat_url
from sourced_answers.model.messages import ChatResult, Message
from sourced_answers.model.model_client import chat
from sourced_answers.model.preflight import check_before_paying
from sourced_answers.model.prompts import answer_prompt
from sourced_answers.outputs.records import Record, checked_record
from sourced_answers.outputs.render import REASONING_ABOVE
from sourced_answers.search.backend import Shared
from sourced_answers.search.gather import SourceSession
from sourced_answers.steps.check_steps import Checked, answer_of, check_and_fix, check_reply, judge_asker, rewriter
from sourced_answers.steps.excerpts import excerpt_answer

Log = Callable[[str], None]
Show = Callable[[str], None]
INCOMPLETE = "\n\n（回答不完整）\n"


@dataclass
class Answered:
    """回答了一个问题：核对（和修正、评判）之后的结果、--json 的那条记录、模型服务的回复、用到的资料，
    这次缓存省下了什么（没省时为 None）和搜索用的问题（对话里的追问接上了上文；里面的密钥去掉了）。"""
    checked: Checked
    record: Record
    result: ChatResult
    sources: list[Source]
    savings: str | None
    query: str = ""
    key_cut: str | None = None  # 搜索的文字里去掉了密钥时说的那句话（masking.KEY_CUT）

    @property
    def exit_code(self) -> int:
        return self.checked.exit_code


def answer(settings: Settings, log: Log, show: Show | None = None, shared: Shared | None = None) -> Answered:
    """按 settings 回答 settings.run.question。show：流式时边生成边交给它的文字（没有就等整个回答）。
    shared：服务里各个请求共用、开到服务停止的东西（--demo 的演示服务：来源链接在服务运行时能打开）；没有就临时开。
    出错时抛本程序的错误（AppError 的子类，带退出码）；付费之前先确认模型服务和模型都能用。"""
    run, model = settings.run, settings.model
    question = run.question or ""
    query = run.query or question  # 对话里的追问：搜索的是接上了上文的问题
    excerpting = model.name == EXCERPTS
    # 0. 付费之前：模型服务在、模型都下载了（地址和密钥的格式在建设置时已经检查过）；摘录不请模型，只查评判模型
    deadline = run.deadline()  # 预检的时间也算在 --timeout 里
    check_before_paying(model, [model.name], settings.judge, deadline)
    # 1. 搜集资料：从设置里的搜索后端（秘塔……）搜索，读取前几条的正文
    with SourceSession(settings.search, log, deadline, run.secrets, shared) as session:
        sources = session.gather(query)
        query = session.searched  # 问题里的密钥去掉了的话，去掉之后的文字
    # 2. 请模型回答（摘录：从资料里摘出最相关的几句原话）
    if excerpting:
        reply, result = excerpted(question, sources, show, log)
    else:
        messages, note = answer_prompt(question, sources, model.max_tokens, model.context_window, model.token_rate,
                                       model.prompt_budget, run.history)
        if note:
            log(note)
        reply, result = ask_model(messages, model, show, deadline, log)
    # 3. 核对；--fix 修正，--judge 请评判模型再看一遍（模型没有给出回答、只有没结束的思考时不核对）
    judge = judge_asker(settings.judge, model, deadline)
    if excerpting:  # 摘录没有思考过程；一句也没摘到时核对一个空的回答（不通过）。修正只改引用标记
        checked = check_and_fix(reply.answer, sources, settings.check, None, log, judge)
        checked.label = f"（{EXCERPTS_NOTE}）" if reply.answer else ""
    else:
        checked = check_reply(reply, model.name, sources, settings.check,
                              rewriter(question, sources, model, deadline, log), log, judge, result.truncated)
    # 服务报告的、实际回答的模型（可能和请求的名字不一样），回答是否被 --max-tokens 截断（和 --eval 的记录一样），
    # 没有结束的思考（不核对，但花钱得到的文字不丢）
    about = {"served_model": result.served_model, "truncated": result.truncated,
             "unfinished_reasoning": checked.unfinished}
    record = checked_record(checked, question, model.name, about)
    return Answered(checked, record, result, sources, session.savings(), query, session.key_cut)


EXCERPTS_NOTE = "摘录：下面每一句都是资料的原话，按和问题的相关程度挑出来的，不是模型写的回答"
NO_EXCERPTS = "资料里没有找到回答这个问题的句子"


def excerpted(question: str, sources: list[Source], show: Show | None, log: Log) -> tuple[Reply, ChatResult]:
    """摘录（steps/excerpts.py）当作回答：说清楚它是摘录；一句也挑不出来时说资料里没有，回答是空的（不通过）。"""
    started = time.monotonic()
    text = excerpt_answer(question, sources)
    if not text:
        log(NO_EXCERPTS)
    if show is not None and text:
        show(f"（{EXCERPTS_NOTE}）\n\n{text}\n\n")
    result = ChatResult(text, "stop", None, time.monotonic() - started, served_model=EXCERPTS)
    return split_reply(text), result


def ask_model(messages: list[Message], model: ModelSettings, show: Show | None, deadline: Deadline,
              log: Log) -> tuple[Reply, ChatResult]:
    """请模型回答，返回 (按思考的规则拆开的回复, 模型服务的回复)。show 不是 None 时边收边交给它回答的文字
    （思考过程不给；落单的 </think> 到了才知道之前给出的是思考过程，这时给出一句说明）。"""
    log(f"请模型 {model.name} 回答（{chat_url(model.url)}）…")
    shown = ThinkFilter()
    started = [False]  # 回答已经给出了字（开头的空白不给）
    # 给出的字末尾的空白先留着，后面还有字时才给：回答本身两头去掉了空白（split_reply），流式给出的要和它一字不差
    held = [""]

    def visible_piece(piece: str) -> None:
        assert show is not None
        lone_closes = shown.lone_closes
        visible = shown.feed(piece)
        if shown.lone_closes != lone_closes and started[0]:
            show(f"\n\n{REASONING_ABOVE}\n\n")  # 已经给出的是思考过程：后面才是回答
            started[0] = False
            held[0] = ""
        give(visible)

    def give(visible: str) -> None:
        assert show is not None
        if not started[0]:
            visible = visible.lstrip()
            started[0] = bool(visible)
        if not visible:
            return
        text = held[0] + visible
        kept = text.rstrip()
        held[0] = text[len(kept):]
        if kept:
            show(kept)

    try:
        result = chat(messages, model, deadline, stream=show is not None,
                      on_text=visible_piece if show is not None else None, on_retry=lambda message: log(f"  {message}"))
    except ModelError as error:
        if show is not None and error.partial:
            show(INCOMPLETE)
        raise
    if show is not None:
        give(shown.finish())
        show("\n\n" if started[0] else "")
    return answer_of(result, model.name, model.max_tokens, log), result


def answer_task(settings: Settings, messages: list[Message]) -> ChatResult:
    """聊天程序自己的后台任务（起标题、打标签、猜后续问题……）：原样交给回答的模型，不搜索、不核对——它们不是
    用户的问题，没有资料可引，也不该花一次搜索的钱。付费之前的检查照做（模型服务在、模型有）。"""
    model = settings.model
    deadline = settings.run.deadline()
    check_before_paying(model, [model.name], JudgeSettings(), deadline)  # 后台任务不请评判模型
    return chat(messages, model, deadline)
