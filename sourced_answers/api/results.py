"""API 返回的结果：--json 的那条记录，加上终端上看到的那段文字（回答、来源、结论）和退出码。"""
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sourced_answers.checker import strip_terminal
from sourced_answers.core.masking import mask, mask_data
from sourced_answers.outputs.chat import chat_reply
from sourced_answers.outputs.records import Record
from sourced_answers.outputs.render import AGENT, render_result
from sourced_answers.steps.check_steps import Checked


@dataclass(frozen=True)
class Result:
    """一个核对过的回答。record 就是 --json（或 --verify --json）打印的那个 dict；text 是终端上显示的回答、
    编号的来源和结论那一行；exit_code 和命令行的一样（0 通过、1 没通过、3 没有回答）；markdown 是给聊天窗口、
    智能体显示的同一个结果（来源是 Markdown 链接，回答里没结束的代码块、注释、标签在来源之前结束，没有命令行的
    提示）。密钥已经遮掉。"""
    record: Record
    text: str
    exit_code: int
    markdown: str = ""

    @property
    def passed(self) -> bool:
        return bool(self.record["passed"])

    @property
    def answer(self) -> str:
        return str(self.record["answer"])

    @property
    def problems(self) -> list[dict[str, Any]]:
        return list(self.record["problems"])

    @property
    def claims(self) -> list[dict[str, Any]]:
        return list(self.record["claims"])

    @property
    def unused(self) -> list[int]:
        return list(self.record["unused"])

    @property
    def sources(self) -> list[dict[str, Any]]:
        return list(self.record["sources"])

    @property
    def verdict(self) -> str:
        """结论那一段（“✓ 引用核对通过”或“⚠ 引用核对没通过……”和问题列表）。"""
        return self.text.rstrip().split("\n\n")[-1]


def result_of(checked: Checked, record: Record, secrets: Sequence[str], truncated_at: int | None = None,
              demo_served: bool = False) -> Result:
    """核对的结果 → Result（在数据上遮掉密钥：调用方拿去打印、编码都不会露出密钥）。truncated_at：回答到了这个
    长度上限被截断了（markdown 里说清楚）；demo_served：来源是服务开着的 --demo 虚构页面。"""
    # text 是给人看、给终端打印的：和终端输出一样整个去掉控制序列（网页标题、模型的回答里可能带着 ESC]52 这样
    # 写剪贴板、清屏的序列，print(result.text) 就会执行它们）；record 保持收到的内容（编码成 JSON 时控制字符会转义）
    def shown(text: str) -> str:
        return mask(strip_terminal(text), secrets)

    markdown = chat_reply(checked, None, truncated_at, AGENT, shown, demo_served).content
    return Result(mask_data(record, secrets), shown(render_result(checked)), checked.exit_code, markdown)
