"""每个入口共用的参数解析约定：中文的用法和报错，数值参数在解析时就检查范围。

报错不打印 argparse 的英文说明，而是抛 UsageError（退出码 2），由入口统一打印。每个入口（主命令、
python -m sourced_answers.cluster、python -m sourced_answers.local_model、metaso_search.py、fake_metaso.py）
都用这里的类，共有的参数（-h、--version、--debug；--rule、--threshold、--summary）也只在这里写一次。
"""
import argparse
import re
import sys
from collections.abc import Callable
from typing import Any, NoReturn

from sourced_answers import __version__
from sourced_answers.checker import ENGLISH, TUTORIAL_THRESHOLD, support_model
from sourced_answers.cli.help_format import ChineseHelpFormatter
from sourced_answers.core.errors import ExitCode, UsageError
from sourced_answers.core.options import Range
from sourced_answers.core.safe_output import TextStream
from sourced_answers.core.settings import CHECK_DEFAULTS, KEYWORDS
from sourced_answers.core.strings import literal

Group = argparse.ArgumentParser | argparse._ArgumentGroup

__all__ = ["ChineseArgumentParser", "ChineseHelpFormatter", "InRange", "add_rule_flags", "add_standard_flags",
           "add_summary_flag", "choices_of", "in_range", "range_of"]


def listed(items: str) -> str:
    """argparse 列出的几项（'score', 'tutorial' 或 --read, --read-timeout）→ score、tutorial：和 Python API 的说明
    （core.options）写法一样。"""
    return "、".join(item.strip("'") for item in items.split(", "))


# argparse 的英文报错 → 中文（按顺序替换；“argument X: ”前缀最后换）
ARGPARSE_MESSAGES: list[tuple[str, str | Callable[[re.Match[str]], str]]] = [
    (r"the following arguments are required: (.*)", r"缺少参数：\1"),
    (r"unrecognized arguments: (.*)", r"不认识的参数：\1"),
    (r"ambiguous option: (\S+) could match (.*)",
     lambda found: f"参数 {found[1]} 有歧义，可能是 {listed(found[2])}，请写全"),
    (r"expected one argument", "需要一个取值"),
    (r"expected at most one argument", "最多只能有一个取值"),
    (r"expected at least one argument", "至少需要一个取值"),
    (r"expected (\d+) arguments?", r"需要 \1 个取值"),
    (r"invalid choice: (.*) \(choose from (.*)\)",
     lambda found: f"取值 {literal(found[1])} 无效（可以是：{listed(found[2])}）"),
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

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._positionals.title = "参数"  # argparse 的英文组名
        self._optionals.title = "选项"

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{chinese_message(message)}（{self.prog} -h 查看用法）")

    def print_help(self, file: Any = None) -> None:
        super().print_help(self.output or file)


class InRange(Range):
    """argparse 的 type：把文字转成 convert（int 或 float），并检查在 low…high 之间，出错时给中文说明
    （core.options.Range 的检查，Python API 用的也是它）。范围留在对象上，参考文档的表从这里读
    （cli/reference_doc.py）。"""

    def __call__(self, text: str) -> Any:
        try:
            return self.check(text)
        except ValueError as problem:
            raise argparse.ArgumentTypeError(str(problem)) from None


def in_range(low: float, high: float, convert: Callable[[str], Any] = int, unit: str = "") -> InRange:
    return InRange(low, high, convert, unit)


def range_of(name: str) -> InRange:
    """设置里声明的参数（core/settings.py 的 option(within=…)）的 type：命令行和 Python API 查的是同一个范围。"""
    within = KEYWORDS[name].within
    assert within is not None, name
    return InRange(within.low, within.high, within.convert, within.unit)


def choices_of(name: str) -> list[str]:
    """设置里声明的参数（option(choices=…)）能取的值。"""
    return list(KEYWORDS[name].choices)


class AddPath(argparse.Action):
    """可以给几次的路径参数（--docs A --docs B）：每次加一个，设置里是元组（默认是空的元组，不是 None）。"""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        setattr(namespace, self.dest, (*(getattr(namespace, self.dest) or ()), values))


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
        parser.exit(ExitCode.PASSED)


# ---------- 各个入口共有的参数（每个只写在这里） ----------

def add_standard_flags(group: Group, debug: bool = True) -> None:
    """-h、--version，和（debug 时）--debug。解析器要用 add_help=False 建（这里的 -h 是中文的）。"""
    group.add_argument("-h", "--help", action="help", help="显示这段帮助并退出")
    group.add_argument("--version", action=ShowVersion, help="显示版本号并退出")
    if debug:
        group.add_argument("--debug", action="store_true",
                           help="程序内部出错（退出码 4）时显示报错堆栈（报告问题时用）")


def add_rule_flags(group: Group) -> None:
    """--rule 和 --threshold：怎样判断一句话有没有依据（回答问题、--verify、集群任务都一样）。"""
    group.add_argument("--rule", choices=choices_of("rule"), default=CHECK_DEFAULTS.rule, metavar="RULE",
                       help="怎样判断一句话有没有依据：score 看支持分；tutorial 用原教程的规则"
                            f"（句子的字二元组在所引资料里出现的比例）（默认 {CHECK_DEFAULTS.rule}）")
    group.add_argument("--threshold", type=range_of("threshold"), default=CHECK_DEFAULTS.threshold, metavar="X",
                       help="--rule 的阈值：score 时是支持分的下限（中文和英文句子都用这一个数），"
                            "tutorial 时是重合度的下限（默认：score 时是拟合时选的切点，"
                            f"中文 {support_model().cut:.3f}、英文句子引英文资料 {support_model(ENGLISH).cut:.3f}；"
                            f"tutorial 时 {TUTORIAL_THRESHOLD:g}）")


def add_summary_flag(group: Group, when: str = "核对") -> None:
    """--summary：核对一批回答结束时把汇总另存为 JSON（--verify 和集群任务的字段一样）。when：什么结束时。"""
    group.add_argument("--summary", metavar="FILE",
                       help=f"{when}结束时把汇总（条数、通过、没通过、问题种类、最慢的几条）另存为 JSON")
