"""每个入口共用的参数解析约定：中文的用法和报错，数值参数在解析时就检查范围。

报错不打印 argparse 的英文说明，而是抛 UsageError（退出码 2），由入口统一打印。主命令（cli.py）、
python -m sourced_answers.cluster 和 python -m sourced_answers.local_model 都用这里的类。
"""
import argparse
import re
import sys
from collections.abc import Callable, Iterable
from typing import Any, NoReturn

from sourced_answers import __version__
from sourced_answers.core.errors import UsageError
from sourced_answers.core.safe_output import TextStream


class ChineseHelpFormatter(argparse.HelpFormatter):
    def add_usage(self, usage: str | None, actions: Iterable[argparse.Action],
                  groups: Iterable[Any], prefix: str | None = None) -> None:
        super().add_usage(usage, actions, groups, prefix or "用法：")


# argparse 的英文报错 → 中文（按顺序替换；“argument X: ”前缀最后换）
ARGPARSE_MESSAGES = [
    (r"the following arguments are required: (.*)", r"缺少参数：\1"),
    (r"unrecognized arguments: (.*)", r"不认识的参数：\1"),
    (r"ambiguous option: (\S+) could match (.*)", r"参数 \1 有歧义，可能是 \2，请写全"),
    (r"expected one argument", "需要一个取值"),
    (r"expected at most one argument", "最多只能有一个取值"),
    (r"expected at least one argument", "至少需要一个取值"),
    (r"expected (\d+) arguments?", r"需要 \1 个取值"),
    (r"invalid choice: (.*) \(choose from (.*)\)", r"取值 \1 无效（可以是：\2）"),
    (r"ignored explicit argument (.*)", r"这个开关不带取值（收到 \1）"),
    (r"not allowed with argument (.*)", r"不能和 \1 一起用"),
    (r"one of the arguments (.*) is required", r"\1 之中必须给出一个"),
    (r"invalid (\S+) value: (.*)", r"取值 \2 无效"),
    (r"^argument (\S+): ", r"参数 \1："),
]


def chinese_message(message: str) -> str:
    for pattern, replacement in ARGPARSE_MESSAGES:
        message = re.sub(pattern, replacement, message)
    return message


class ChineseArgumentParser(argparse.ArgumentParser):
    """参数错误时抛 UsageError（中文说明，退出码 2），不打印英文报错；-h 的帮助写到 output（默认标准输出）。"""

    output: TextStream | None = None

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{chinese_message(message)}（{self.prog} -h 查看用法）")

    def print_help(self, file: Any = None) -> None:
        super().print_help(self.output or file)


class InRange:
    """argparse 的 type：把文字转成 convert（int 或 float），并检查在 low…high 之间，出错时给中文说明。
    范围留在对象上，参考文档的表从这里读（cli/reference_doc.py）。"""

    def __init__(self, low: float, high: float, convert: Callable[[str], Any] = int, unit: str = "") -> None:
        self.low, self.high, self.convert, self.unit = low, high, convert, unit

    @staticmethod
    def shown(value: float) -> str:
        return f"{value:g}" if isinstance(value, float) else str(value)

    def text(self) -> str:
        """“1–100”、“0–87600 小时”这样的说法。"""
        return f"{self.shown(self.low)}–{self.shown(self.high)}" + (f" {self.unit}" if self.unit else "")

    def __call__(self, text: str) -> Any:
        kind = "整数" if self.convert is int else "数字"
        try:
            value = self.convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"“{text}”不是{kind}") from None
        if not self.low <= value <= self.high:
            raise argparse.ArgumentTypeError(f"应在 {self.shown(self.low)} 到 {self.shown(self.high)} {self.unit}之间，"
                                             f"收到 {self.shown(value)}")
        return value


def in_range(low: float, high: float, convert: Callable[[str], Any] = int, unit: str = "") -> InRange:
    return InRange(low, high, convert, unit)


class ShowVersion(argparse.Action):
    """--version：把“程序名 版本号”写到帮助写的地方，然后结束（退出码 0）。"""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        stream = getattr(parser, "output", None)
        text = f"{parser.prog} {__version__}\n"
        if stream is not None:
            stream.write(text)
        else:
            parser._print_message(text, sys.stdout)  # 和 -h 一样写到标准输出
        parser.exit(0)
