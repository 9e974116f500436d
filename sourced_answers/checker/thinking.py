"""模型的“思考”：<think>…</think> 不属于回答，不显示、不核对。

ThinkFilter 按片段处理（流式输出时标签可能被切在两个片段之间）；strip_think 处理整段文字，用的是同一个过滤器。
"""
from sourced_answers.checker.text import held_prefix_length

OPEN = "<think>"
CLOSE = "</think>"


class ThinkFilter:
    """去掉 <think>…</think>。没闭合的 <think> 之后全部去掉；落单的 </think> 只去掉标签本身
    （有的模板把 <think> 放在提示里，输出里只剩 </think>）。"""

    def __init__(self) -> None:
        self.inside = False
        self.pending = ""

    def feed(self, chunk: str) -> str:
        text = self.pending + chunk
        self.pending = ""
        visible = []
        while text:
            tag = CLOSE if self.inside else OPEN
            position = text.find(tag)
            stray_close = -1 if self.inside else text.find(CLOSE)
            if stray_close >= 0 and (position < 0 or stray_close < position):
                visible.append(text[:stray_close])
                text = text[stray_close + len(CLOSE):]
                continue
            if position >= 0:
                if not self.inside:
                    visible.append(text[:position])
                text = text[position + len(tag):]
                self.inside = not self.inside
                continue
            keep = held_prefix_length(text, (tag,) if self.inside else (OPEN, CLOSE))
            if not self.inside:
                visible.append(text[:len(text) - keep])
            self.pending = text[len(text) - keep:]
            break
        return "".join(visible)

    def finish(self) -> str:
        rest = "" if self.inside else self.pending
        self.pending = ""
        return rest


def strip_think(text: str) -> str:
    """整段文字去掉 <think>…</think>（首尾空白保留）。"""
    think = ThinkFilter()
    return think.feed(text) + think.finish()


def without_thinking(text: str) -> str:
    """模型的回答：去掉思考和首尾空白。"""
    return strip_think(text).strip()


def think_spans(text: str) -> list[tuple[int, int]]:
    """<think>…</think> 的位置 [(开始, 结束)]；没闭合的 <think> 一直算到结尾。线性扫描。"""
    spans: list[tuple[int, int]] = []
    position = 0
    while True:
        start = text.find(OPEN, position)
        if start < 0:
            return spans
        end = text.find(CLOSE, start)
        if end < 0:
            spans.append((start, len(text)))
            return spans
        position = end + len(CLOSE)
        spans.append((start, position))
