"""在原文里找到句子：修正（改引用标记的位置）、审阅页（标出哪几句）和聊天窗口的 annotations 都用它。
句子是 structure.analyse 切出来的同一份；全部是线性时间。"""
from functools import lru_cache

from sourced_answers.checker.citations import marks_after
from sourced_answers.checker.structure import analyse, analysed
from sourced_answers.checker.terminal import strip_terminal
from sourced_answers.checker.thinking import think_spans
from sourced_answers.checker.types import Claim

Span = tuple[int, int]


def masked(answer: str) -> str:
    """<think>…</think> 里的内容换成同样长度的 \\0：在原文里找句子时不会找进思考过程。"""
    pieces = []
    position = 0
    for start, end in think_spans(answer):
        pieces += [answer[position:start], "\0" * (end - start)]
        position = end
    pieces.append(answer[position:])
    return "".join(pieces)


class Locator:
    """按顺序在原文里找句子：句子的正文（去掉引用后的文字）在原文里一字不差，只是引用标记的写法可能不同。"""

    def __init__(self, answer: str) -> None:
        self.text = masked(answer)
        self.cursor = 0

    def find(self, body: str) -> Span | None:
        """正文的位置 (start, end)；找不到时为 None。"""
        start = self.text.find(body, self.cursor)
        if start < 0:
            return None
        self.cursor = start + len(body)
        return start, start + len(body)

    def marks_after(self, end: int) -> Span | None:
        """紧跟在句子后面的引用标记的位置（也认行尾“……。[2]”的写法）；没有时为 None。"""
        return marks_after(self.text, end)


Located = list[tuple[Claim, Span | None]]


def claims_with_positions(answer: str) -> Located:
    """回答里每个句子和它在原文里的位置：[(claim, (start, end) 或 None)]。和核对用的是同一份句子切分。
    位置是在 strip_terminal(answer) 里的（核对读句子之前先去掉终端控制序列）：调用方也在去掉之后的回答上取位置。"""
    return list(zip(analyse(answer).claims, claim_spans(answer), strict=True))


@lru_cache(maxsize=8)
def claim_spans(answer: str) -> tuple[Span | None, ...]:
    """analysed(answer).claims 里每个句子在 strip_terminal(answer) 里的位置（只读的缓存：核对、证据的位置、提示
    --fix 都要同一个回答的这一份）。"""
    locator = Locator(strip_terminal(answer))
    return tuple(locator.find(claim.body) for claim in analysed(answer).claims)
