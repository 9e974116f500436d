"""写到终端（或管道）之前的两道关：遮掉密钥、去掉终端控制序列。

网页标题、链接、正文和模型输出里可能带 ANSI 转义、OSC 8 链接、回车、双向文本控制符，
直接打印会改颜色、伪造链接、覆盖已经显示的内容。SafeWriter 按片段接收文字（流式输出时
一个转义序列或一个密钥可能被切在两个片段之间），一律按状态机处理，不会漏过半截。
JSON 输出不经过去控制符这一道（json.dumps 会把控制字符写成 \\u001b），保持和收到的内容一致，
但密钥照样遮掉。
"""

import errno
from collections.abc import Iterable
from typing import Protocol

from sourced_answers.checker import TerminalFilter
from sourced_answers.core.errors import OutputClosed, OutputFailed
from sourced_answers.core.masking import held_secret_length, mask
from sourced_answers.core.network import os_error_text
from sourced_answers.core.strings import SURROGATE


class TextStream(Protocol):
    """能写文字的流（sys.stdout、io.StringIO……）。"""

    def write(self, text: str, /) -> object: ...

    def flush(self) -> object: ...


class Output(TextStream, Protocol):
    """程序往下传的输出：写、冲刷，还能问是不是终端（决定要不要边生成边显示）。"""

    def isatty(self) -> bool: ...


class SafeWriter:
    """包住一个输出流：写进来的文字先遮掉密钥，再（可选）去掉控制序列；写不进去时变成本程序的错误。

    一个密钥可能被切在两次 write 之间，所以末尾可能是密钥开头的一小段（夹着看不见的字符也算）会先留着，
    等下一次 write 或 finish（flush 不放出它）。
    读不懂的字节（终端编码不对时的“代理”字符）换成 �，免得编码时出错。quiet：写不进去时什么也不做
    （给标准错误用：连报错的地方都没有了，只能安静）。
    """

    def __init__(self, stream: TextStream | None, secrets: Iterable[str] = (), terminal_safe: bool = True,
                 name: str = "标准输出", quiet: bool = False) -> None:
        self.stream = stream
        self.secrets = [s for s in secrets if s]
        self.filter = TerminalFilter() if terminal_safe else None
        self.held = ""
        self.name = name
        self.quiet = quiet
        self.closed = stream is None

    def write(self, text: str) -> int:
        # 先去掉控制序列、再遮密钥：密钥中间夹一个转义序列或双向控制符，去掉之后就是完整的密钥，要在这之后才找得到
        if self.filter:
            text = self.filter.feed(text)
        text = mask(self.held + text, self.secrets)
        keep = held_secret_length(text, self.secrets)
        self.held = text[len(text) - keep:] if keep else ""
        text = text[:len(text) - keep] if keep else text
        if text:
            self._send(SURROGATE.sub("\ufffd", text))
        return len(text)

    def flush(self) -> None:
        """把已经写出的冲刷出去。末尾可能是半个密钥的那一小段照样留着：流式输出每一小段都冲刷，
        那一段放出去的话，密钥就被切成两半、各自躲过遮挡（finish 才放出它）。"""
        self._send(None)

    def finish(self) -> None:
        """最后一次：没有结尾的字符串序列的内容（是文字）、留着的那一小段（已经确定不是密钥）也写出去，再冲刷。"""
        if self.filter:
            rest = self.filter.finish()
            if rest:
                self.held = mask(self.held + rest, self.secrets)
        if self.held:
            held, self.held = self.held, ""
            self._send(SURROGATE.sub("\ufffd", held))
        self._send(None)

    def _send(self, text: str | None) -> None:
        """写一段（None 表示冲刷）。管道断了、流被关掉 → OutputClosed；别的系统错误 → OutputFailed。"""
        if self.closed:
            if self.quiet:
                return
            raise OutputClosed("")
        try:
            if self.stream is None:
                raise ValueError("没有输出流")
            if text is None:
                self.stream.flush()
            else:
                self.stream.write(text)
        except (BrokenPipeError, ValueError):  # ValueError：对已经关闭的文件读写
            self.closed = True
            if not self.quiet:
                raise OutputClosed("") from None
        except OSError as error:
            self.closed = True
            if self.quiet:
                return
            if error.errno == errno.EPIPE:
                raise OutputClosed("") from None
            raise OutputFailed(f"写不进{self.name}：{os_error_text(error)}") from None

    def isatty(self) -> bool:
        isatty = getattr(self.stream, "isatty", None)
        try:
            return bool(isatty and isatty())
        except (ValueError, OSError):
            return False
