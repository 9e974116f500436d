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


class TerminalFilter:
    """去掉控制序列的状态机。保留换行和制表符，其余 C0/C1 控制字符、转义序列和双向控制符都去掉。"""

    def __init__(self) -> None:
        self.state = "text"

    def feed(self, text: str) -> str:
        if self.state == "text" and not CONTROL.search(text):
            return text  # 绝大多数文字：没有控制字符，不必逐字走状态机
        kept = []
        for char in text:
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
                    kept.append(char)
                elif code < 0x20 or 0x7f <= code < 0xa0 or char in BIDI_CONTROLS:
                    continue
                else:
                    kept.append(char)
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
                if 0x40 <= code <= 0x7e:
                    self.state = "text"
                elif not 0x20 <= code < 0x40:
                    self.state = "text"  # 坏掉的序列：丢掉到这里为止
            elif state == "string":
                # OSC、DCS 等字符串：到 BEL 或 ESC \ 为止；没有结尾的（网页、模型给的半截）到行尾为止。
                # 不然它后面的一切——来源、核对结论、出错的说明——都会被当成这个字符串吞掉
                if char == "\x07" or char == "\x9c":
                    self.state = "text"
                elif char == "\n":
                    self.state = "text"
                    kept.append(char)
                elif char == ESC:
                    self.state = "string_escape"
            elif state == "string_escape":
                self.state = "text" if char == "\\" else "string"
        return "".join(kept)


def strip_terminal(text: str) -> str:
    """整段文字去掉终端控制序列、控制字符（换行和制表符留着）和双向控制符。没有这些字符的文字原样返回。"""
    if not CONTROL.search(text):
        return text
    return TerminalFilter().feed(text)
