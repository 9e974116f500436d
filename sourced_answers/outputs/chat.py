"""聊天窗口和智能体看到的回答：Markdown 的正文（回答、来源、核对结论）和指向正文里每个 [n] 的 annotations。

  · 回答之后、来源之前先结束回答里没结束的代码块、HTML 注释和标签（sealing.seal），并说一句：
    模型写坏的 Markdown 遮不住来源和结论；
  · 结论里没有命令行的参数（render.CHAT / render.AGENT）；
  · 回答到了长度上限被截断时，结论前面说清楚；
  · 来源是有序列表的一项一条：n. [标题](链接)（render.list_number：为什么不写 [n]）；
  · annotations 是 OpenAI 的 url_citation：回答里的 content[start_index:end_index] 正好是一个引用标记（“[2]”“[1, 3]”，
    标记里的每个编号各一条），来源列表每一项开头的编号“n.”也各有一条；按编号、再按位置排：按到达的先后给来源编号的
    聊天窗口（Open WebUI）把 [n] 对到第 n 条来源。只拼字符串和数据。
"""
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sourced_answers.checker import Source, citation_marks
from sourced_answers.outputs.render import (
    CHAT,
    DEMO_SOURCES_SERVED,
    Reader,
    answer_parts,
    code_span,
    list_number,
    report_parts,
)
from sourced_answers.outputs.sealing import seal
from sourced_answers.steps.check_steps import Checked

SEALED_NOTE = "（回答写到最后还有没结束的 {what}：程序在上面替它结束了，免得遮住下面的来源和核对结论）"
Annotation = dict[str, Any]


@dataclass(frozen=True)
class ChatReply:
    """content：这次要发的文字（流式时是已经发出的回答后面的部分）；annotations 的位置按整个回答
    （已经发出的加上 content）算。"""
    content: str
    annotations: list[Annotation]


def unchanged(text: str) -> str:
    return text


def chat_reply(checked: Checked, streamed: str | None = None, truncated_at: int | None = None,
               reader: Reader = CHAT, shown: Callable[[str], str] = unchanged, demo: bool = False) -> ChatReply:
    """核对过的回答 → 聊天窗口的文字和 annotations。streamed：流式时已经发出的回答（None：不是流式，
    回答也在 content 里）。truncated_at：回答到了这个长度上限被截断了（没有截断时是 None）。
    shown：每一块文字发出之前的处理（去掉控制序列、遮掉密钥）；位置按处理之后的文字算。
    demo：来源是 --demo 的虚构页面（演示服务开到服务停止）。"""
    before = streamed or ""
    written = [shown(part) for part in answer_parts(checked, answer_shown=streamed is not None)]
    model_text = before + "\n\n".join(written)
    sealed = seal(model_text)
    if sealed.lines:
        what = "、".join(name if name[0] != "<" else code_span(name) for name in sealed.opened)
        written.append("\n".join(sealed.lines) + "\n\n" + SEALED_NOTE.format(what=what))
    notes = [f"⚠ 回答到了长度上限（max_tokens {truncated_at}）被截断了：最后一段没有写完"] \
        if truncated_at is not None else []
    note = DEMO_SOURCES_SERVED if demo else ""
    report = [shown(part) for part in report_parts(checked, reader, notes, note)]
    head = "\n\n".join(written)
    content = "\n\n".join(written + report) + "\n"
    sources_at = len(before) + len(head) + (2 if head else 0)
    whole = before + content
    marks = answer_marks(whole[:len(before) + len(head)], checked.sources) + \
        list_marks(whole, sources_at, report[0], checked.sources, reader)
    marks.sort(key=lambda mark: (mark["url_citation"]["number"], mark["url_citation"]["start_index"]))
    for mark in marks:
        del mark["url_citation"]["number"]
    return ChatReply(content, marks)


def annotation(start: int, end: int, number: int, source: Source) -> Annotation:
    return {"type": "url_citation", "url_citation": {"start_index": start, "end_index": end,
                                                     "url": source.link, "title": source.title or source.link,
                                                     "number": number}}


def answer_marks(text: str, sources: Sequence[Source]) -> list[Annotation]:
    """回答里的每个引用标记（任何写法），标记里每个存在的编号一条。"""
    found = []
    for start, end, numbers in citation_marks(text):
        for number in dict.fromkeys(numbers):
            if 1 <= number <= len(sources):
                found.append(annotation(start, end, number, sources[number - 1]))
    return found


def list_marks(whole: str, at: int, block: str, sources: Sequence[Source], reader: Reader = CHAT) -> list[Annotation]:
    """来源列表每一项开头的编号（block 是从 at 开始的那一块，每条来源一项“n. ……”，见 render.list_number）。
    聊天窗口按 annotation 到达的先后给来源编号：没被引用的资料也要有一条，编号才和我们的一样。"""
    found = []
    position = at
    for number, source in enumerate(sources, 1):
        mark = list_number(number, reader)
        start = whole.index(f"\n{mark} ", position, at + len(block)) + 1
        found.append(annotation(start, start + len(mark), number, source))
        position = start + len(mark)
    return found


def answer_in_reply(content: str) -> str:
    """聊天程序把本服务之前的回复原样放回对话里：只留回答本身，去掉补上的结尾、来源列表和结论
    （给回答的模型当上下文，那些是程序写的，不是回答）。"""
    cut = content.rfind("\n\n来源：\n")
    answer = content[:cut] if cut >= 0 else content
    sealed = answer.rfind("\n\n" + SEALED_NOTE.split("{", 1)[0])
    return (answer[:sealed] if sealed >= 0 else answer).strip()
