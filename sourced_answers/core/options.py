"""用户能给的设置：命令行的一个参数，也是 Python API（answer_question、verify_answer）的一个关键字。

每一个只声明一次：在设置的字段上写成 option(…)（core/settings.py）。字段名（或 name=…）就是关键字，下划线换成
连字符、前面加 -- 就是命令行的参数；字段的类型、默认值就是它的类型、默认值；within / choices 是能取的值。
从这一处读它的有：命令行的解析器（类型和范围，cli/arguments.py）、把值放进设置的 fill（api/config.py，命令行和
Python API 走同一段）、Python API 检查关键字的 accepted、文档里的关键字表（cli/reference_doc.py），和服务的
请求（serve=True：--serve 的请求体里同名的字段；mcp=…：--mcp 的工具参数；core/settings.py 的 with_request）。
设置之间的关系（at_most：--read 不能大于 --size）也写在声明上，每个入口都由 check_relations 查，说明里用那个入口
的写法说出是哪个设置。
"""
import inspect
import math
import os
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, TypeVar

from sourced_answers.core.errors import UsageError
from sourced_answers.core.strings import literal

METADATA = "option"
Stage = TypeVar("Stage")


@dataclass(frozen=True)
class Range:
    """数值的范围：文字或数字转成 convert（int 或 float），检查在 low…high 之间。"""
    low: float
    high: float
    convert: Callable[[str], Any] = int
    unit: str = ""

    @staticmethod
    def shown(value: float) -> str:
        return f"{value:g}" if isinstance(value, float) else shown_integer(value)

    def text(self) -> str:
        """“1–100”、“0–87600 小时”这样的说法。"""
        return f"{self.shown(self.low)}–{self.shown(self.high)}" + (f" {self.unit}" if self.unit else "")

    def kind(self) -> str:
        return "整数" if self.convert is int else "数字"

    def check_json(self, value: object) -> Any:
        """请求里的值（JSON 的数：不收文字、true，整数也不收 2.0）→ 检查过的数。不行时抛 ValueError
        （中文，接在字段名后面）。"""
        number: Any = plain(value)
        whole = isinstance(number, int) and not isinstance(number, bool)
        if not (whole or (self.convert is float and isinstance(number, float))) \
                or not self.low <= number <= self.high:
            unit = f"（{self.unit}）" if self.unit else ""
            raise ValueError(f"应是 {self.shown(self.low)} 到 {self.shown(self.high)} 之间的{self.kind()}{unit}，"
                             f"收到 {shown_value(number)}")
        return self.convert(number)

    def check(self, value: object) -> Any:
        """值（命令行上的文字，或 Python 的数字）→ 检查过的数。不行时抛 ValueError，说明是中文的。"""
        kind = self.kind()
        number: Any = plain(value)
        if isinstance(number, str):
            try:
                number = self.convert(number)
            except ValueError:
                raise ValueError(f"“{literal(number)}”不是{kind}") from None
        whole = isinstance(number, int) and not isinstance(number, bool)
        if not whole and not (self.convert is float and isinstance(number, float)):
            raise ValueError(f"“{shown_value(number)}”不是{kind}")
        # 先比较再转换：Python 的整数和小数比较大小是精确的，很大的整数转成小数却会溢出（threshold=10**400）
        if not self.low <= number <= self.high:
            raise ValueError(f"应在 {self.shown(self.low)} 到 {self.shown(self.high)} {self.unit}之间，"
                             f"收到 {self.shown(number)}")
        return self.convert(number)


def plain(value: object) -> object:
    """调用方给的 str、int、float 的子类换成同一个值的 str、int、float（调用内置类型自己的方法）：检查它、
    在说明里写出它、往下传它，都不会再调用子类改写过的 __str__、__int__、__float__、__eq__、strip……
    ——它们可能抛出任何错误。"""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    return value


def shown_integer(value: int) -> str:
    """说明里的整数：很大的写成“约 10^400”（几百位的数没法读；超过四千多位时 Python 连 str() 都拒绝）。"""
    if abs(value) < 10**18:
        return str(value)
    return f"约 {'-' if value < 0 else ''}10^{round(abs(value).bit_length() * math.log10(2))}"


@dataclass(frozen=True)
class Option:
    """一个用户能给的设置。声明时（option(…)）写 name、within、choices、derived、api、switch、serve、mcp、at_most、
    check；stage、field、kind、optional、default 由 keywords_of 从字段上读出来。

    derived：没给时由别的设置或环境变量决定（--model 看 ANS_MODEL，--max-tokens 看 --local-model）：解析器和
    Python API 没给时的值是 None，不是字段的默认值。api：Python API 也收它（False：只有命令行有）。
    switch：(开关的名字, 值)——另一个开关，给了它就等于这个设置取那个值（--judge-all 就是 --judge-ask all）；
    keywords_of 把开关也列成一个 Option，它的 sets 就是那个值。
    serve：--serve 的请求体里同名的字段也能改它（OpenAI 的字段：model、max_tokens）。mcp：几个字说明它是什么
    （“搜几条”）；写了就是 --mcp 的 answer_question 工具也有这个参数（参数表单用它做标题）。
    at_most：另一个设置的名字，这个设置不能大于它（read 不能大于 size）。
    check：文字的值还要怎样检查（模型名不能有换行……）：收文字，返回整理过的值，不行时抛 ValueError，说明接在
    “--model ”“model ”这样的名字后面。
    selects：给了这个设置（不空）就改从这个搜索后端拿资料（core/settings.py 的 SourceBackend，--docs 就是这样）。"""
    name: str = ""
    within: Range | None = None
    choices: tuple[str, ...] = ()
    derived: bool = False
    api: bool = True
    switch: tuple[str, str] | None = None
    serve: bool = False
    mcp: str = ""
    at_most: str = ""
    check: Callable[[str], str] | None = None
    selects: Any = None
    sets: str = ""
    stage: str = ""
    field: str = ""
    kind: type = str
    optional: bool = False
    default: Any = None

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    @property
    def unset(self) -> Any:
        """没给时的值（解析器的默认值也是它）。"""
        return None if self.derived else self.default

    def accept(self, value: object) -> Any:
        """Python API 收到的值 → 检查过的值（数字可以写成文字，和命令行一样）。不行时抛 ValueError（中文）。"""
        value = plain(value)
        if value is None and (self.optional or self.derived):
            return None
        if self.kind is bool:
            if not isinstance(value, bool):
                raise ValueError(f"应是 True 或 False，收到 {shown_value(value)}")
            return value
        if self.kind is tuple:
            return paths(value)
        if self.within is not None:
            return self.within.check(value)
        if not isinstance(value, str):
            raise ValueError(f"应是文字，收到 {shown_value(value)}")
        if self.choices and value not in self.choices:
            raise ValueError(f"取值 {shown_value(value)} 无效（可以是：{'、'.join(self.choices)}）")
        return value

    def accept_json(self, value: object) -> Any:
        """请求（--serve 的请求体、--mcp 的工具参数）里的值 → 检查过的值。和 accept 的不同只在写法：JSON 的数、
        true/false、文字各是各的类型（"2"、2.0 不是整数），文字的值还要过 check。不行时抛 ValueError（中文）。"""
        value = plain(value)
        if self.within is not None:
            return self.within.check_json(value)
        if self.kind is bool:
            if not isinstance(value, bool):
                raise ValueError(f"应是 true 或 false，收到 {shown_value(value)}")
            return value
        if not isinstance(value, str):
            raise ValueError(f"应是文字，收到 {shown_value(value)}")
        if self.choices and value not in self.choices:
            raise ValueError(f"取值 {shown_value(value)} 无效（可以是：{'、'.join(self.choices)}）")
        return self.check(value) if self.check else value


def paths(value: object) -> tuple[str, ...]:
    """可以给几个的路径（--docs）：一个路径（文字或 pathlib.Path），或者它们的列表、元组。
    不行时抛 ValueError（中文）。"""
    items = [value] if isinstance(value, (str, os.PathLike)) else value
    if not isinstance(items, (list, tuple)):  # 空的列表：一个也没给（和不给一样）
        raise ValueError(f"应是一个路径或路径的列表，收到 {shown_value(value)}")
    found = []
    for item in items:
        text = os.fspath(item) if isinstance(item, os.PathLike) else plain(item)
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"每一项应是不空的路径，收到 {shown_value(item)}")
        problem = nul_problem(text)
        if problem:
            raise ValueError(problem)
        found.append(text)
    return tuple(found)


def nul_problem(path: str) -> str | None:
    """路径里有 NUL 字符时的说明（命令行上打不出来，库函数、main(argv) 却可能收到：系统调用会拒绝它）；没有时 None。
    每个收路径的参数都用它（--verify、--eval、--html、--summary、--docs）。"""
    return f"路径“{literal(path)}”里有 NUL 字符（\\x00），文件名里不能有它" if "\x00" in path else None


def shown_value(value: object) -> str:
    """说明里写出的、调用方给的值：repr（一行，太长时从中间省略；很大的整数见 shown_integer）。调用方自己的类的
    __repr__ 可能出错，这时只写类型名。"""
    value = plain(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return shown_integer(value)
    try:
        return literal(repr(value))
    except Exception:  # noqa: BLE001  调用方的对象：说明它的时候不能再出错
        return f"<{literal(type(value).__name__)}>"


def option(default: Any, *, name: str = "", within: Range | None = None, choices: Iterable[str] = (),
           derived: bool = False, api: bool = True, switch: tuple[str, str] | None = None, serve: bool = False,
           mcp: str = "", at_most: str = "", check: Callable[[str], str] | None = None, selects: Any = None) -> Any:
    """设置类里一个用户能给的字段：field(default=…)，再记下它是哪个参数、哪个关键字、请求里哪个字段（见 Option）。"""
    declared = Option(name, within, tuple(choices), derived, api, switch, serve, mcp, at_most, check, selects)
    return field(default=default, metadata={METADATA: declared})


def value_type(annotation: Any) -> tuple[type, bool]:
    """字段的类型 → (值的类型, 可不可以是 None)。tuple[str, ...]（可以给几个的路径）的类型是 tuple。"""
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        kinds = [kind for kind in typing.get_args(annotation) if kind is not type(None)]
        return kinds[0], len(kinds) < len(typing.get_args(annotation))
    return typing.get_origin(annotation) or annotation, False


def keywords_of(stage_class: Any, stage: str) -> list[Option]:
    """一个设置类里声明的每一个 Option（开关 switch 也算一个，类型是 bool）。stage：它在 Settings 里的名字。"""
    found = []
    for item in fields(stage_class):
        declared = item.metadata.get(METADATA)
        if declared is None:
            continue
        kind, optional = value_type(item.type)
        found.append(replace(declared, name=declared.name or item.name, stage=stage, field=item.name, kind=kind,
                             optional=optional, default=item.default))
        if declared.switch:
            switch, sets = declared.switch
            found.append(Option(switch, api=declared.api, sets=sets, stage=stage, field=item.name, kind=bool,
                                default=False))
    return found


def fill(stage_class: Callable[..., Stage], values: Mapping[str, Any], **computed: Any) -> Stage:
    """建一份设置：声明过的字段取 values 里同名的值（没给、是 None 时用字段的默认值；给了开关就是开关的值），
    computed 是由别的设置、环境变量算出来的字段（命令行和 Python API 都走这里）。"""
    given: dict[str, Any] = {}
    for item in keywords_of(stage_class, ""):
        if item.sets:  # 开关：由它改的那个字段来看它
            continue
        value = values.get(item.name)
        if item.switch and values.get(item.switch[0]):
            value = item.switch[1]
        given[item.field] = item.default if value is None else value
    return stage_class(**{**given, **computed})


def accepted(keywords: Mapping[str, object], allowed: Iterable[Option], caller: str) -> dict[str, Any]:
    """Python API 收到的关键字 → 每个声明过的名字的值（检查过；没给的是 unset）。不认识的名字、类型或范围不对，
    抛 UsageError：中文说明，说出是哪个关键字（和命令行的参数同名）。"""
    known = {item.name: item for item in allowed}
    for name in keywords:
        if name not in known:
            raise UsageError(f"{caller} 不接受 {literal(name)}：认得的关键字是 {'、'.join(known)}"
                             "（docs/reference.md 的“Python API 的关键字”）")
    values = {name: item.unset for name, item in known.items()}
    for name, value in keywords.items():
        try:
            values[name] = known[name].accept(value)
        except ValueError as problem:
            raise UsageError(f"参数 {known[name].flag}：{problem}（{caller} 的关键字 {name}）") from None
    return values


class OptionError(UsageError):
    """请求里一个设置的值不对（--serve 回 400，错误码 invalid_value）。"""
    code = "invalid_value"


def check_relations(values: Mapping[str, Any], declared: Iterable[Option], named: Callable[[Option], str]) -> None:
    """设置之间的关系（at_most：read 不能大于 size），每个入口都用它查。values：设置的名字 → 值（None：没给，不查）；
    named：这个入口的调用方怎样写一个设置（命令行 --read，请求里 read）。不行时抛 OptionError。"""
    known = {item.name: item for item in declared}
    for item in known.values():
        if not item.at_most:
            continue
        value, limit = values.get(item.name), values.get(item.at_most)
        if value is not None and limit is not None and value > limit:
            raise OptionError(f"{named(item)}（{shown_value(value)}）不能大于 "
                              f"{named(known[item.at_most])}（{shown_value(limit)}）")


def with_keywords(function: Callable[..., Any], allowed: Iterable[Option]) -> None:
    """让 help(function)、inspect.signature、编辑器的提示看得见声明过的每个关键字（名字、类型、默认值），
    换掉签名里的 **keywords：关键字仍只在设置的字段上声明一次，这里只是照着声明写出签名。"""
    signature = inspect.signature(function)
    fixed = [parameter for parameter in signature.parameters.values()
             if parameter.kind is not inspect.Parameter.VAR_KEYWORD]
    declared = [inspect.Parameter(item.name, inspect.Parameter.KEYWORD_ONLY, default=item.unset,
                                  annotation=item.kind | None if item.optional or item.unset is None else item.kind)
                for item in allowed]
    function.__signature__ = signature.replace(parameters=fixed + declared)  # type: ignore[attr-defined]
