"""第二意见（--judge 模型）：请一个模型逐句判断“所引资料是否完全支持这句话”。

字面核对看不出意思：换了一个词、一个事实的句子字面几乎一样。评判模型只在字面核对放过的带引用句子上补充意见：
它说“否”时加一个 judge_unsupported 问题；它不能撤销字面核对已经标出的问题（在 CiteCheck 上量过，
见 docs/checker.md）。回答解析得很宽：是/否、yes/no，带不带标点、前面有没有 <think>；别的都算“没有意见”。

这里只有纯逻辑和并发调度：真正发请求的函数由调用方传进来。
"""
import re
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import Any

from sourced_answers.checker import Claim, Problem, Report, Source, analyse, without_citations
from sourced_answers.model_client import Message
from sourced_answers.prompts import judge_messages
from sourced_answers.text import format_citations, truncate
from sourced_answers.thinking import without_thinking

# 同时向评判模型发几个请求：本机模型一次只算一个，多了只是排队
CONCURRENCY = 2
# 问评判模型：messages → 回复文字（出错时抛异常，由调用方决定怎么报）
JudgeAsk = Callable[[list[Message]], str]
# 中文“是的”“不支持”后面紧跟汉字，不能要求词边界；英文要（免得 “nothing” 算作 no）
YES = re.compile(r"^(?:(?:是|对|支持)(?!否)|(?:yes|y|true|supported)\b)", re.IGNORECASE)
NO = re.compile(r"^(?:否|不|没有|(?:no|n|false|not|unsupported)\b)", re.IGNORECASE)


@dataclass
class JudgeCall:
    """问了评判模型一次：句子、引用的资料、原样的回复、解析出的意见（True 支持 / False 不支持 / None 没有意见）。"""
    paragraph: int
    sentence: str
    citations: list[int]
    reply: str
    verdict: bool | None
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def parse_verdict(reply: str | None) -> bool | None:
    """“是。”“否”“Yes.”“**No**”“<think>…</think>是” → True / False；其余 → None（没有意见）。"""
    text = without_thinking(reply or "")
    text = re.sub(r"^[\s*_`\"'“”‘’「」【】\[\]()（）:：>-]+", "", text)
    if NO.match(text):
        return False
    if YES.match(text):
        return True
    return None


def claims_to_judge(answer: str, sources: Sequence[Source], report: Report) -> list[tuple[Claim, list[int]]]:
    """字面核对放过的带引用句子，以及字面核对判断不了的跨语言句子：[(句子, 引用编号)]。"""
    claims = analyse(answer).claims
    flagged = {(p.paragraph, p.sentence) for p in report.problems if p.kind != "cross_language"}
    wanted: list[tuple[Claim, list[int]]] = []
    for claim in claims:
        numbers = list(dict.fromkeys(claim.citations))
        if not numbers or not all(1 <= n <= len(sources) for n in numbers):
            continue
        if (claim.paragraph, claim.text) in flagged or len(without_citations(claim.body)) < 4:
            continue
        wanted.append((claim, numbers))
    return wanted


def judge_answer(answer: str, sources: Sequence[Source], report: Report, ask: JudgeAsk,
                 concurrency: int = CONCURRENCY) -> tuple[list[Problem], list[JudgeCall]]:
    """逐句问评判模型。ask(messages) 返回回复文字（出错时抛异常，由调用方决定怎么报）。
    返回 (评判之后的全部问题, [JudgeCall])：它说“否”的句子加一个 judge_unsupported；跨语言的句子（cross_language）
    它说“是”就撤掉这个问题，说“否”就换成 judge_unsupported，没有意见就留着。字面核对的其他问题它撤不掉。"""
    wanted = claims_to_judge(answer, sources, report)

    def one(item: tuple[Claim, list[int]]) -> JudgeCall:
        claim, numbers = item
        source_text = "\n\n".join(sources[n - 1].text for n in numbers)
        started = time.monotonic()
        reply = ask(judge_messages(claim.body, source_text))
        return JudgeCall(claim.paragraph, claim.text, numbers, reply, parse_verdict(reply),
                         round(time.monotonic() - started, 3))

    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        futures = [pool.submit(one, item) for item in wanted]
        try:
            calls = [future.result() for future in futures]
        except BaseException:
            for future in futures:
                future.cancel()  # 评判模型出错了：还没开始的询问不再发
            raise
    decided = {(call.paragraph, call.sentence) for call in calls if call.verdict is not None}
    problems = [p for p in report.problems
                if not (p.kind == "cross_language" and (p.paragraph, p.sentence) in decided)]
    problems += [Problem("judge_unsupported",
                         f"评判模型认为资料 {format_citations(call.citations)} 不完全支持"
                         f"“{truncate(call.sentence, 40)}”（它的回答：{truncate(call.reply.strip(), 20)}）",
                         call.paragraph, call.sentence, call.citations)
                 for call in calls if call.verdict is False]
    return problems, calls
