"""用户能给的设置只声明一次（core/settings.py 里写成 option(…) 的字段）：命令行的参数、Python API 的关键字、
放进设置的那一步都从这一处来。加一个参数 = 一个字段、解析器里一行、重新生成文档——这里的测试让另外几处跟不丢。"""
import argparse
from dataclasses import dataclass

import pytest
from anyio.from_thread import start_blocking_portal
from mcp import Client

from sourced_answers.api import config
from sourced_answers.api.config import build_settings, settings_from
from sourced_answers.api.public import answer_question
from sourced_answers.cli.arguments import InRange
from sourced_answers.cli.parser import build_parser
from sourced_answers.core import settings as settings_module
from sourced_answers.core.errors import UsageError
from sourced_answers.core.options import Range, accepted, keywords_of, option
from sourced_answers.core.settings import KEYWORDS, OPTIONS, SERVE_DEFAULTS, ModelSettings
from sourced_answers.core.strings import literal
from sourced_answers.servers import mcp_server
from sourced_answers.servers.openai_app import Service


def actions():
    return {action.dest: action for action in build_parser()._actions}


@pytest.mark.parametrize("declared", OPTIONS, ids=lambda declared: declared.name)
def test_every_declared_setting_is_a_flag_with_the_declared_type_range_and_default(declared):
    action = actions()[declared.name]
    assert declared.flag in action.option_strings
    assert action.default == declared.unset
    if declared.within is not None:
        assert isinstance(action.type, InRange)
        shape = ("low", "high", "convert", "unit")
        assert [getattr(action.type, part) for part in shape] == [getattr(declared.within, part) for part in shape]
    assert list(action.choices or ()) == list(declared.choices)
    assert (action.nargs == 0 or isinstance(action, argparse.BooleanOptionalAction)) == (declared.kind is bool)


def a_value_for(declared):
    """一个不是默认值、又合法的值（命令行上怎么写，设置里应是什么）。"""
    if declared.kind is bool:
        return None, True
    if declared.kind is tuple:  # 可以给几次的路径
        return "notes", ("notes",)
    if declared.choices:
        choice = next(choice for choice in reversed(declared.choices) if choice != declared.default)
        return choice, choice
    if declared.within is not None:
        low, high = declared.within.low, declared.within.high
        value = declared.within.convert(low if low != declared.default else high)
        return str(value), value
    return "some-model", "some-model"


# 由别的设置、环境变量决定的几个（model、judge、judge_url、local_model）在 api/config.py 里算，不是原样放进去的
COMPUTED = {"model", "judge", "judge_url", "local_model", "max_tokens"}


@pytest.mark.parametrize("declared", [item for item in OPTIONS if item.name not in COMPUTED and not item.sets],
                         ids=lambda declared: declared.name)
def test_a_flag_lands_in_its_settings_field_without_code_of_its_own(declared):
    written, expected = a_value_for(declared)
    flag = [declared.flag] if written is None else [f"{declared.flag}={written}"]
    needs = {"fix_rounds": ["--fix"], "size": ["--read=1"], "judge_ask": ["--judge=m"]}.get(declared.name, [])
    question = [] if declared.name == "mcp" else ["家用 NAS 怎么选"]
    source = [] if declared.name == "docs" else ["--demo"]  # --docs 自己就是资料的来源
    settings = build_settings(build_parser().parse_args([*question, *flag, *needs, *source]), {})
    assert getattr(getattr(settings, declared.stage), declared.field) == expected


def test_a_switch_sets_the_field_it_stands_for():
    settings = build_settings(build_parser().parse_args(["问题", "--judge", "m", "--judge-all", "--demo"]), {})
    assert settings.judge.ask == "all"
    assert KEYWORDS["judge_all"].sets == "all" and KEYWORDS["judge_ask"].switch == ("judge_all", "all")


@pytest.mark.parametrize(("keywords", "message"), [
    ({"read": 500}, "参数 --read：应在 0 到 100 之间，收到 500（caller 的关键字 read）"),
    ({"read": 2.5}, "参数 --read：“2.5”不是整数"),
    ({"read": True}, "参数 --read：“True”不是整数"),
    ({"fix": "yes"}, "参数 --fix：应是 True 或 False，收到 'yes'"),
    ({"rule": "guess"}, "参数 --rule：取值 'guess' 无效（可以是：score、tutorial）"),
    ({"model": 7}, "参数 --model：应是文字，收到 7"),
    ({"stream": True}, "caller 不接受 stream"),
])
def test_a_keyword_is_checked_like_its_flag_and_named_in_chinese(keywords, message):
    allowed = [item for item in OPTIONS if item.api]
    with pytest.raises(UsageError) as raised:
        accepted(keywords, allowed, "caller")
    assert message in str(raised.value)


@pytest.mark.parametrize(("keywords", "message"), [
    ({"threshold": 10**400}, "参数 --threshold：应在 0 到 1 之间，收到 约 10^400（caller 的关键字 threshold）"),
    ({"timeout": -10**400}, "参数 --timeout：应在 1 到 86400 秒之间，收到 约 -10^400"),
    ({"read": 10**5000}, "参数 --read：应在 0 到 100 之间，收到 约 10^5000"),  # str() 也写不出它（四千多位以上）
    ({"model": 10**5000}, "参数 --model：应是文字，收到 约 10^5000"),
])
def test_a_huge_integer_is_out_of_range_in_chinese_not_an_overflow(keywords, message):
    """threshold=10**400 转成小数会溢出（OverflowError），几千位的整数连 str() 都写不出（英文的 ValueError）：
    它们只是超出了范围，说法和别的值一样。"""
    with pytest.raises(UsageError) as raised:
        accepted(keywords, [item for item in OPTIONS if item.api], "caller")
    assert message in str(raised.value)


class Refuses(Exception):
    """调用方的对象自己抛出的错误（不是本程序的）。"""


class Count(int):
    """改写了 __int__、__float__、__str__、__repr__ 的整数（比如带单位的数）：改写的方法都抛出。"""

    def __int__(self):
        raise Refuses("__int__")

    def __float__(self):
        raise Refuses("__float__")

    def __str__(self):
        raise Refuses("__str__")

    __repr__ = __str__


class Name(str):
    """改写了 __eq__、strip、__str__ 的文字。"""

    def __eq__(self, other):
        raise Refuses("__eq__")

    __hash__ = str.__hash__

    def strip(self, *chars):
        raise Refuses("strip")

    def __str__(self):
        raise Refuses("__str__")


class Unprintable:
    def __repr__(self):
        raise Refuses("__repr__")

    __str__ = __repr__


@pytest.mark.parametrize(("keywords", "expected"), [
    ({"read": Count(2)}, {"read": 2}), ({"threshold": Count(0)}, {"threshold": 0.0}),
    ({"rule": Name("tutorial")}, {"rule": "tutorial"}), ({"model": Name("qwen2.5:1.5b")}, {"model": "qwen2.5:1.5b"}),
])
def test_a_subclass_of_int_or_str_is_taken_by_its_value_without_calling_its_methods(keywords, expected):
    values = accepted(keywords, [item for item in OPTIONS if item.api], "caller")
    assert {name: values[name] for name in expected} == expected
    assert all(type(values[name]) is type(value) for name, value in expected.items())


@pytest.mark.parametrize(("keywords", "message"), [
    ({"read": Unprintable()}, "参数 --read：“<Unprintable>”不是整数"),
    ({"threshold": Unprintable()}, "参数 --threshold：“<Unprintable>”不是数字"),
    ({"fix": Unprintable()}, "参数 --fix：应是 True 或 False，收到 <Unprintable>"),
    ({"rule": Unprintable()}, "参数 --rule：应是文字，收到 <Unprintable>"),
    ({"fix": Count(1)}, "参数 --fix：应是 True 或 False，收到 1"),
    ({"rule": Name("guess")}, "参数 --rule：取值 'guess' 无效"),
])
def test_a_value_that_cannot_be_shown_is_still_a_usage_error_naming_the_keyword(keywords, message):
    """调用方的对象在检查、写进说明时出错（__repr__、__int__ 抛出）：仍是一个 UsageError，不是它自己的错误。"""
    with pytest.raises(UsageError) as raised:
        accepted(keywords, [item for item in OPTIONS if item.api], "caller")
    assert message in str(raised.value)


@pytest.mark.parametrize("declared", [item for item in OPTIONS if item.choices], ids=lambda declared: declared.name)
def test_a_flag_and_its_keyword_refuse_a_wrong_choice_in_the_same_words(declared):
    """--rule guess 和 rule="guess" 是同一句话（只有结尾说的是参数还是关键字）：可以取的值用顿号隔开，
    不是 argparse 的 'score', 'tutorial'。"""
    with pytest.raises(UsageError) as flag:
        build_parser("prog").parse_args(["问题", f"{declared.flag}=guess"])
    with pytest.raises(UsageError) as keyword:
        accepted({declared.name: "guess"}, [declared], "caller")
    said = f"参数 {declared.flag}：取值 'guess' 无效（可以是：{'、'.join(declared.choices)}）"
    assert str(flag.value) == said + "（prog -h 查看用法）"
    assert str(keyword.value) == said + f"（caller 的关键字 {declared.name}）"


@pytest.mark.parametrize("value", ["m" * 5000, "9" * 400], ids=["5000-letters", "400-digits"])
def test_a_long_wrong_choice_is_shortened_the_same_way_by_the_flag_and_the_keyword(value):
    """说明里写出用户给的值只用 literal（太长时从中间省略）：argparse 原样写出的 5000 个字不例外。"""
    with pytest.raises(UsageError) as flag:
        build_parser("prog").parse_args(["问题", f"--rule={value}"])
    with pytest.raises(UsageError) as keyword:
        accepted({"rule": value}, OPTIONS, "caller")
    shown = literal(repr(value))
    assert "…" in shown and len(str(flag.value)) < 400
    assert f"参数 --rule：取值 {shown} 无效" in str(flag.value) and f"参数 --rule：取值 {shown} 无效" in str(keyword.value)


def test_keywords_not_given_are_what_the_parser_leaves_them():
    values = accepted({"read": "3", "threshold": 0.5}, [item for item in OPTIONS if item.api], "caller")
    assert values["read"] == 3 and values["threshold"] == 0.5
    assert values["size"] == 5 and values["model"] is None and values["max_tokens"] is None


def test_a_new_setting_is_one_declared_field_the_rest_reads_it():
    """加一个参数时的样子（docs/development.md 的“加一个参数”）：一个 option(…) 字段；放进设置（fill）、Python API 的
    检查（accepted）、参数和文档表的清单（keywords_of）都从它读，不用为它再写代码。"""
    from dataclasses import dataclass

    from sourced_answers.core.options import Range, fill, keywords_of, option

    @dataclass(frozen=True)
    class Sampling:
        temperature: float = option(0.0, within=Range(0.0, 2.0, float))

    declared = keywords_of(Sampling, "model")
    assert [(item.name, item.flag, item.kind, item.default) for item in declared] == \
        [("temperature", "--temperature", float, 0.0)]
    assert fill(Sampling, {"temperature": 0.7}).temperature == 0.7
    assert fill(Sampling, {}).temperature == 0.0
    assert accepted({"temperature": "1.5"}, declared, "answer_question") == {"temperature": 1.5}
    with pytest.raises(UsageError, match="参数 --temperature：应在 0 到 2 之间，收到 3"):
        accepted({"temperature": 3}, declared, "answer_question")


# ---------- 一个新的设置，每个入口都照着声明收它、拒绝它 ----------

@dataclass(frozen=True)
class WithTemperature(ModelSettings):
    """加一个模型的设置时在 core/settings.py 的 ModelSettings 里写的那一行（这里写在子类上，不改真的设置）。"""
    temperature: float = option(0.0, within=Range(0.0, 2.0, float), serve=True, mcp="随机程度")


@pytest.fixture
def temperature(monkeypatch):
    """把 WithTemperature 的声明放进各个入口读的清单（core/settings.py 在导入时从声明建的那几个），
    再让设置按它建：除此之外，入口的代码一行不改。"""
    declared = next(item for item in keywords_of(WithTemperature, "model") if item.name == "temperature")
    listings = [settings_module.OPTIONS, settings_module.ANSWER_KEYWORDS, settings_module.SERVE_OPTIONS,
                settings_module.MCP_OPTIONS]
    for listing in listings:
        listing.append(declared)
    monkeypatch.setitem(settings_module.KEYWORDS, "temperature", declared)
    monkeypatch.setattr(config, "ModelSettings", WithTemperature)
    try:
        yield declared
    finally:
        for listing in listings:
            listing.remove(declared)


def served_settings(*flags):
    return build_settings(build_parser().parse_args([*flags, "--demo"]), {}, [])


def test_a_new_setting_is_taken_and_refused_by_the_python_api_by_its_declaration(temperature):
    values = accepted({"temperature": 0.5, "demo": True}, settings_module.ANSWER_KEYWORDS, "answer_question")
    assert settings_from({**values, "question": "家用 NAS 怎么选"}, {}, []).model.temperature == 0.5
    with pytest.raises(UsageError) as raised:
        answer_question("家用 NAS 怎么选", environ={}, demo=True, temperature=5)
    assert "参数 --temperature：应在 0 到 2 之间，收到 5（answer_question 的关键字 temperature）" in str(raised.value)


def test_a_new_setting_is_a_serve_request_field_by_its_declaration(temperature):
    service = Service(served_settings("--serve", "0"), SERVE_DEFAULTS, lambda line: None)
    body = {"model": "good", "messages": [{"role": "user", "content": "家用 NAS 怎么选"}]}
    assert service.request_settings({**body, "temperature": 0.5}).model.temperature == 0.5
    assert service.request_settings(body).model.temperature == 0.0
    with pytest.raises(UsageError) as raised:
        service.request_settings({**body, "temperature": 5})
    assert "temperature 应是 0 到 2 之间的数字，收到 5" in str(raised.value)


def test_a_new_setting_is_an_mcp_argument_by_its_declaration(temperature):
    settings = served_settings("--mcp")
    with start_blocking_portal() as portal, \
            portal.wrap_async_context_manager(Client(mcp_server.build_server(settings))) as client:
        tools = {tool.name: tool for tool in portal.call(client.list_tools).tools}
        schema = tools["answer_question"].input_schema["properties"]["temperature"]
        refused = portal.call(client.call_tool, "answer_question", {"question": "家用 NAS 怎么选", "temperature": 5})
    assert schema["title"] == "随机程度"
    assert refused.is_error is True and "temperature 应是 0 到 2 之间的数字，收到 5" in refused.content[0].text
    asked = mcp_server.question_settings(settings, "家用 NAS 怎么选", {"temperature": 0.5})
    assert asked.model.temperature == 0.5
