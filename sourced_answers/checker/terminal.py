"""终端和控制序列：整个去掉，一条规则给核对、终端输出和审阅页共用。

网页标题、正文和模型输出里可能带 ANSI 转义（颜色 ESC[31m、清屏 ESC[2J）、OSC 8 链接、回车、双向文本控制符。
只去掉 ESC 这一个字会留下“[2J”“[31m”这样的半截，被当成文字核对（“[2J”里的数字 2 在资料里找不到）。
TerminalFilter 按片段接收文字（流式输出时一个转义序列可能被切在两个片段之间），按状态机把整个序列去掉；
strip_terminal 是一次处理整段文字的写法，核对在读任何一句话之前先用它。只用标准库。
"""
import re

from sourced_answers.checker.text import BIDI_CONTROLS

ESC = "\x1b"
# 会被去掉的字符：C0/C1 控制字符（除了换行和制表符）、DEL、双向控制符。不含这些的文字原样通过
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f" + "".join(sorted(BIDI_CONTROLS)) + "]")


# 一个 OSC、DCS 这类字符串序列最多这么长；更长还没有结束的，不当作序列（当作文字）
MAX_STRING = 4096


class TerminalFilter:
    """去掉控制序列的状态机。保留换行和制表符，其余 C0/C1 控制字符、转义序列和双向控制符都去掉。

    OSC、DCS 这类字符串序列（ESC ]、ESC P……到 BEL 或 ESC \\ 为止）整个去掉；没有结束的（到了行尾、到了全文末尾、
    或者长过 MAX_STRING 还没有结尾）不是一个序列，只去掉开头的 ESC ] 这样的引导，里面的文字照样是文字：不然一个
    没结束的 ESC ] 就能把一句编造的话藏起来，核对不到，用 JSON、聊天窗口的人却看得见。所以字符串的内容先留着，
    等知道它是不是序列再决定（流式输出时也一样：留着的那一段最多 MAX_STRING 个字）。
    每个留下的字都记着它在送进来的全部文字里是第几个字（positions：去掉之后的文字对回原文）。"""

    def __init__(self) -> None:
        self.state = "text"
        self.pending: list[tuple[str, int]] = []  # 还没有结束的字符串序列的内容（字和它的位置）
        self.offset = 0  # 送进来的文字一共有几个字

    def feed(self, text: str) -> str:
        if self.state == "text" and not CONTROL.search(text):
            self.offset += len(text)
            return text  # 绝大多数文字：没有控制字符，不必逐字走状态机
        return "".join(char for char, _ in self.feed_positions(text))

    def feed_positions(self, text: str) -> list[tuple[str, int]]:
        """同 feed，每个留下的字带着它的位置。"""
        start = self.offset
        self.offset += len(text)
        if self.state == "text" and not CONTROL.search(text):
            return [(char, start + index) for index, char in enumerate(text)]
        kept: list[tuple[str, int]] = []
        for index, char in enumerate(text):
            self.step(char, start + index, kept)
        return kept

    def finish(self) -> str:
        """文字结束了：还留着的字符串序列没有结尾，它的内容是文字。"""
        return "".join(char for char, _ in self.release())

    def release(self) -> list[tuple[str, int]]:
        """留着的字符串内容原来不是序列：当作文字交出去（其中的控制字符照样去掉）。"""
        held = [(char, index) for char, index in self.pending if not CONTROL.match(char)]
        self.pending = []
        self.state = "text"
        return held

    def step(self, char: str, index: int, kept: list[tuple[str, int]]) -> None:
        code = ord(char)
        state = self.state
        if state == "text":
            if char == ESC:
                self.state = "escape"
            elif char == "\x9b":
                self.state = "csi"
            elif char in ("\x9d", "\x90", "\x98", "\x9e", "\x9f"):
                self.state = "string"
            elif char in "\n\t":
                kept.append((char, index))
            elif code < 0x20 or 0x7f <= code < 0xa0 or char in BIDI_CONTROLS:
                return
            else:
                kept.append((char, index))
        elif state == "escape":
            if char == "[":
                self.state = "csi"
            elif char in "]PX^_":
                self.state = "string"
            elif 0x20 <= code < 0x30:
                self.state = "escape"  # 中间字节，后面还有一个结尾字节
            else:
                self.state = "text"
        elif state == "csi":
            if 0x40 <= code <= 0x7e or not 0x20 <= code < 0x40:
                self.state = "text"  # 结尾字节；或者坏掉的序列：丢掉到这里为止
        elif state == "string":
            if char == "\x07" or char == "\x9c":
                self.pending = []
                self.state = "text"  # 有结尾：整个是一个序列，去掉
            elif char == ESC:
                self.state = "string_escape"
            elif char == "\n" or len(self.pending) >= MAX_STRING:
                kept.extend(self.release())  # 到了行尾还没有结尾：不是序列，内容是文字
                self.step(char, index, kept)
            else:
                self.pending.append((char, index))
        elif state == "string_escape":
            if char == "\\":
                self.pending = []
                self.state = "text"  # ESC \\ 结尾
            else:
                kept.extend(self.release())  # 没有结尾就来了别的转义：前面的内容是文字，这个 ESC 另起一个序列
                self.state = "escape"
                self.step(char, index, kept)


def strip_terminal(text: str) -> str:
    """整段文字去掉终端控制序列、控制字符（换行和制表符留着）和双向控制符。没有这些字符的文字原样返回。"""
    if not CONTROL.search(text):
        return text
    terminal = TerminalFilter()
    return terminal.feed(text) + terminal.finish()


def stripped_positions(text: str) -> list[int] | None:
    """strip_terminal(text) 的每个字在 text 里是第几个字；text 里没有要去掉的字符时为 None（位置不变）。"""
    if not CONTROL.search(text):
        return None
    terminal = TerminalFilter()
    kept = terminal.feed_positions(text) + terminal.release()
    return [index for _, index in kept]
