"""一次命令行运行面对的外面（像 httpie 的 context.Environment）：标准输入、输出、错误，它们是不是终端，环境变量，
程序名。命令行的 main 只收这一个对象，program 也只从它拿输出、说明、标准输入和进度条；测试建一个
MockEnvironment（tests/support.py），不去改 sys.stdout、os.environ。

写给人的都经过这里的两个 SafeWriter：out（结果）和 errors（进度、说明，log 一次写一行）。遮哪些密钥只由
secrets_to_mask 决定——环境里本程序认得的每一个，从第一行输出起，每种输出都一样。
"""
import io
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import IO, Any, TextIO

from sourced_answers.cli.launch import program_name
from sourced_answers.core.safe_output import SafeWriter
from sourced_answers.core.secrets import secrets_to_mask


def is_terminal(stream: object) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (OSError, ValueError):  # 已经关掉的流
        return False


@dataclass
class Environment:
    """stdin：标准输入的字节（None：进程自己的标准输入，用到时才打开，见 input）；stdout、stderr 是 None 时表示
    启动时就被关掉了（sys.stdout 是 None）；stderr_isatty（画不画进度条）不给时问流本身。标准输出是不是终端
    （边生成边显示）由 run_question 问输出本身。"""
    stdin: IO[bytes] | None = None
    stdout: TextIO | None = field(default_factory=lambda: sys.stdout)
    stderr: TextIO | None = field(default_factory=lambda: sys.stderr)
    environ: Mapping[str, str] = field(default_factory=lambda: os.environ)
    program_name: str = field(default_factory=program_name)  # 用法和提示里的程序名：按这个进程是怎样启动的
    stderr_isatty: bool | None = None

    def __post_init__(self) -> None:
        self.secrets = secrets_to_mask(self.environ)
        if self.stderr_isatty is None:
            self.stderr_isatty = is_terminal(self.stderr)
        self.errors = SafeWriter(self.stderr, self.secrets, name="标准错误", quiet=True)
        self.out = SafeWriter(self.stdout, self.secrets)

    def log(self, message: str) -> None:
        """一条说明：完整的一行、整条遮过密钥，马上全部写出（flush 会留着末尾像密钥开头的几个字，例如 ANS_API_KEY
        是 sk-… 时“… 21 ms”的 s——--serve 的访问日志就要等到下一个请求才写完）。"""
        self.errors.write(message + "\n")
        self.errors.finish()

    def start_output(self, json: bool, discard: bool = False) -> None:
        """知道了这次输出什么之后换上结果的输出：JSON 保持和收到的内容一致（控制字符由 json.dumps 转义），只遮密钥；
        discard：标准输出是关着的、结果写到用户指定的文件里——标准输出上的那一份没人看，丢掉。"""
        self.out = SafeWriter(io.StringIO() if discard else self.stdout, self.secrets, terminal_safe=not json)

    def progress(self, quiet: bool) -> Any:
        """画进度条的地方：只看标准错误是不是终端（标准输出接到文件、用 --json 都照样画），-q 不画。tqdm 直接写原来的
        标准错误：它要用回车把进度条画在同一行（SafeWriter 会去掉回车），里面也没有密钥。"""
        return self.stderr if self.stderr_isatty and not quiet else None

    def input(self) -> IO[bytes]:
        return self.stdin if self.stdin is not None else input_bytes()

    def stream_numbers(self) -> list[int]:
        """这次运行的标准输入、输出、错误的文件描述符（测试里的是内存里的流，没有描述符，就不算）；没有的用进程自己的
        0、1、2。要写的文件不能是它们。"""
        numbers = []
        for default, stream in enumerate((self.stdin, self.stdout, self.stderr)):
            if stream is None:
                numbers.append(default)
                continue
            try:
                numbers.append(stream.fileno())
            except (AttributeError, OSError, ValueError):
                continue
        return numbers


def input_bytes() -> IO[bytes]:
    """标准输入（启动时被关掉了就当作空的）。读的是它自己的一份（os.dup），不是 sys.stdin.buffer：--verify - --jobs N
    由一个守护线程读标准输入，Ctrl-C、SIGTERM、SIGHUP 时它正卡在 read 上、拿着那个读缓冲的锁；解释器退出时要关掉
    sys.stdin，拿不到锁就是“Fatal Python error”和退出码 -6，不是 130。自己的这一份解释器退出时不去碰它。"""
    if sys.stdin is None:
        return io.BytesIO()
    try:
        return os.fdopen(os.dup(sys.stdin.fileno()), "rb")
    except (OSError, ValueError, AttributeError):  # 0 号描述符不能用（被关掉了、不是真的文件）：还用 sys.stdin
        return sys.stdin.buffer
