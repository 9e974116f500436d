"""本程序读的环境变量和 core/environment.py 的登记一致：代码里读的每一个都登记了，登记的每一个都真的有人读。

两种办法一起用：读代码（每一处 environ.get(…)、environ[…]、os.getenv(…) 的名字，名字是参数时看它的默认值和
每一处调用传的值），和真的跑一遍建配置的代码、记下它问了环境哪些名字。"""
import argparse
import ast
import functools
from collections.abc import Iterator

from sourced_answers.api.config import build_settings
from sourced_answers.cli.parser import build_parser
from sourced_answers.core import environment
from sourced_answers.core.environment import VARIABLES, Variable, cache_directory
from sourced_answers.core.secrets import KEY_VARIABLES, secrets_to_mask
from tests.test_architecture import project_modules

REGISTERED = {variable.name for variable in VARIABLES}
CONSTANTS = {name: value for name, value in vars(environment).items() if isinstance(value, Variable)}


def reads_environment(node: ast.AST) -> bool:
    """node 是不是“环境”：os.environ、叫 environ 的变量或参数。"""
    return (isinstance(node, ast.Name) and node.id == "environ") or \
        (isinstance(node, ast.Attribute) and node.attr == "environ")


def looked_up_keys(tree: ast.AST) -> Iterator[tuple[ast.expr, ast.FunctionDef | None]]:
    """文件里每一次读环境的键（表达式）和它所在的函数。"""
    functions: dict[ast.AST, ast.FunctionDef] = {}
    for function in ast.walk(tree):  # 外层的函数先走到，里层的后来覆盖：每个节点记下最里层的函数
        if isinstance(function, ast.FunctionDef):
            for inner in ast.walk(function):
                functions[inner] = function
    for node in ast.walk(tree):
        key = None
        if isinstance(node, ast.Call) and node.args:
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr == "get" and reads_environment(func.value):
                key = node.args[0]
            elif (isinstance(func, ast.Attribute) and func.attr == "getenv") or \
                    (isinstance(func, ast.Name) and func.id == "getenv"):
                key = node.args[0]
        elif isinstance(node, ast.Subscript) and reads_environment(node.value):
            key = node.slice
        if key is not None:
            yield key, functions.get(node)


def literal_arguments(trees: list[ast.AST], function: ast.FunctionDef, parameter: str) -> set[str]:
    """parameter 的默认值，和每一处调用 function 时给 parameter 传的字面值。"""
    arguments = function.args
    positional = [argument.arg for argument in arguments.posonlyargs + arguments.args]
    index = positional.index(parameter)
    defaults = dict(zip(positional[len(positional) - len(arguments.defaults):], arguments.defaults, strict=True))
    values = {defaults[parameter].value} if isinstance(defaults.get(parameter), ast.Constant) else set()
    for tree in trees:
        for call in ast.walk(tree):
            if not isinstance(call, ast.Call):
                continue
            callee = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", None)
            if callee != function.name:
                continue
            given = [keyword.value for keyword in call.keywords if keyword.arg == parameter]
            given += call.args[index:index + 1]
            values |= {value.value for value in given if isinstance(value, ast.Constant)}
    return values


@functools.cache
def names_read_in_code() -> tuple[frozenset[str], tuple[str, ...]]:
    """(代码读的名字, 看不出读的是哪个名字的地方)。键是登记的常量（METASO_API_KEY.name）时取它的名字；
    是别的 Variable 的 .name（在登记表上循环）时也算登记过的。"""
    modules = project_modules()  # 连登记表也读：缓存目录的规矩（cache_directory）写在它旁边
    trees = {name: ast.parse(path.read_text(encoding="utf-8")) for name, path in modules.items()}
    found: set[str] = set()
    unknown: list[str] = []
    for module, tree in trees.items():
        for key, function in looked_up_keys(tree):
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                found.add(key.value)
            elif isinstance(key, ast.Attribute) and key.attr == "name":
                holder = key.value.attr if isinstance(key.value, ast.Attribute) else getattr(key.value, "id", "")
                if holder in CONSTANTS:
                    found.add(CONSTANTS[holder].name)
            elif isinstance(key, ast.Name) and function is not None and \
                    key.id in [argument.arg for argument in function.args.args]:
                found |= literal_arguments(list(trees.values()), function, key.id)
            else:
                unknown.append(f"{module}:{key.lineno}")
    return frozenset(found), tuple(unknown)


def test_every_environment_variable_the_code_reads_is_registered():
    found, unknown = names_read_in_code()
    assert unknown == (), "这些地方读环境变量，但看不出名字：请用 core/environment.py 里登记的常量"
    assert found - REGISTERED == set(), "读了没有登记的环境变量：请在 sourced_answers/core/environment.py 里登记"


def test_every_registered_variable_is_read_somewhere():
    found = names_read_in_code()[0] | {variable.name for variable in KEY_VARIABLES}  # secrets_to_mask 在这张表上循环
    assert REGISTERED - found == set(), "登记了但没有代码读的环境变量"


def test_the_registry_has_each_name_once_with_a_meaning():
    assert len(REGISTERED) == len(VARIABLES)
    assert all(variable.meaning and variable.default for variable in VARIABLES)
    assert set(CONSTANTS.values()) == set(VARIABLES)


def test_the_documented_minimum_length_of_each_key_is_the_checked_one():
    for variable, minimum in KEY_VARIABLES.items():
        assert f"至少 {minimum} 个字符" in variable.meaning, variable.name


class RecordingEnvironment(dict):
    """记下被问到的每一个名字的环境。"""

    def __init__(self, values: dict[str, str]) -> None:
        super().__init__(values)
        self.asked: set[str] = set()

    def get(self, key, default=None):
        self.asked.add(key)
        return super().get(key, default)

    def __getitem__(self, key):
        self.asked.add(key)
        return super().__getitem__(key)

    def __contains__(self, key):
        self.asked.add(key)
        return super().__contains__(key)


def configure(arguments: list[str], values: dict[str, str]) -> set[str]:
    environ = RecordingEnvironment(values)
    args: argparse.Namespace = build_parser().parse_args(arguments)
    build_settings(args, environ)
    secrets_to_mask(environ)
    cache_directory(environ)
    return environ.asked


def test_building_the_settings_asks_only_for_registered_names_and_for_every_one():
    values = {"METASO_API_KEY": "mk-" + "x" * 30, "ANS_API_KEY": "model-key-123", "ANS_JUDGE_API_KEY": "judge-key-123",
              "ANS_MODEL": "qwen2.5:1.5b", "OLLAMA_URL": "http://127.0.0.1:9", "METASO_BASE": "http://127.0.0.1:9",
              "XDG_CACHE_HOME": "relative/so/home/is/read", "HOME": "/tmp"}
    asked = configure(["家用 NAS 怎么选"], values)
    asked |= configure(["家用 NAS 怎么选", "--judge", "m", "--judge-url", "http://127.0.0.1:8"], values)
    assert asked == REGISTERED
