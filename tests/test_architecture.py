"""代码的形状：分层的子包（低层不导入高层）、没有循环导入（TYPE_CHECKING 和函数里的导入也算）、每个模块不超过
400 行、核对只用标准库、包不导入顶层文件也不导入模拟服务、包外的代码只用 checker 导出的名字。"""
import ast
import functools
from pathlib import Path

import pytest

import sourced_answers.checker as checker

ROOT = Path(__file__).resolve().parent.parent
TOP_LEVEL = ["answer_with_sources.py", "metaso_search.py", "fake_metaso.py"]
# 包里的层，从低到高：每一层只导入它自己和比它低的层。包的根上是入口的门（__main__、cluster、local_model、quickstart），
# 在最高一层
LAYERS = ["checker", "core", "search", "model", "steps", "outputs", "batch", "api", "servers", "cli"]
DOOR = len(LAYERS)


def module_name(path):
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def project_modules():
    paths = sorted((ROOT / "sourced_answers").rglob("*.py")) + [ROOT / name for name in TOP_LEVEL]
    return {module_name(path): path for path in paths}


@functools.cache
def imports_of(path, name=None):
    """(模块名, 导入的名字) —— 文件里任何地方的导入，包括 if TYPE_CHECKING: 和函数里的；相对导入（from ..cli import x）
    按 name（这个文件的模块名）换成绝对的名字；importlib.import_module("…")、__import__("…") 这样写着常量名字的
    动态导入也算。每个文件只读一次（这里的十几个测试都要读一遍整个包）。"""
    return tuple(imports_in(path.read_text(encoding="utf-8"), name or module_name(path), path.name == "__init__.py"))


def imports_in(source, name, package=False):
    """imports_of 的本体：source 是模块 name 的源代码（package：它是一个包的 __init__）。"""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            module = absolute(node.module, node.level, name, package)
            found += [(module, alias.name) for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(alias.name, None) for alias in node.names]
        elif isinstance(node, ast.Call) and called(node) in DYNAMIC_IMPORTS and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                anchor = next((keyword.value.value for keyword in node.keywords if keyword.arg == "package"
                               and isinstance(keyword.value, ast.Constant)), None)
                dots = len(first.value) - len(first.value.lstrip("."))
                module = first.value if not dots else \
                    absolute(first.value[dots:] or None, dots, anchor or name, anchor is not None or package)
                found.append((module, None))
    return found


# 写着常量名字的动态导入：importlib.import_module("x")、import_module("x")、__import__("x")、importlib.__import__("x")
DYNAMIC_IMPORTS = {"import_module", "__import__"}


def called(node):
    function = node.func
    return function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", None)


def absolute(module, level, name, package):
    """相对导入的模块 → 绝对的名字。level 个点：从这个模块所在的包往上 level - 1 层（包的 __init__ 自己就是那个包）。"""
    if not level:
        return module or ""
    parts = name.split(".") if package else name.split(".")[:-1]
    base = parts[:len(parts) - (level - 1)] if level > 1 else parts
    return ".".join(base + ([module] if module else []))


def import_graph():
    """模块 → 它导入的本项目的模块（新的一份：测试可以往里加箭头）。"""
    return dict(project_import_graph())


@functools.cache
def project_import_graph():
    modules = project_modules()
    graph = {}
    for name, path in modules.items():
        targets = set()
        for module, imported in imports_of(path, name):
            for candidate in (module, f"{module}.{imported}"):
                if candidate in modules and candidate != name:
                    targets.add(candidate)
        graph[name] = targets
    return graph


def cycles(graph):
    """强连通分量里多于一个模块的（就是循环导入）。"""
    order, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        order[node] = low[node] = len(order)
        stack.append(node)
        on_stack.add(node)
        for target in graph[node]:
            if target not in order:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], order[target])
        if low[node] == order[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in graph:
        if node not in order:
            visit(node)
    return found


def test_there_are_no_import_cycles():
    assert cycles(import_graph()) == []


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_module_of_the_package_is_over_400_lines():
    long = {name: len(path.read_text(encoding="utf-8").splitlines())
            for name, path in project_modules().items() if name.startswith("sourced_answers")}
    assert {name: lines for name, lines in long.items() if lines > 400} == {}


def layer_of(module):
    """包里一个模块在第几层（sourced_answers 本身只有版本号，算最低）；包外的顶层文件是 None。"""
    parts = module.split(".")
    if parts[0] != "sourced_answers":
        return None
    if len(parts) == 1:
        return -1
    return LAYERS.index(parts[1]) if parts[1] in LAYERS else DOOR


def arrows_against_the_layers(graph):
    """(从, 到)：导入了比自己高的层，或者包导入了顶层文件。"""
    wrong = []
    for source, targets in graph.items():
        mine = layer_of(source)
        if mine is None:
            continue
        for target in targets:
            theirs = layer_of(target)
            if theirs is None or theirs > mine:
                wrong.append((source, target))
    return sorted(wrong)


def test_every_module_of_the_package_is_in_a_layer_or_a_door():
    for name in project_modules():
        parts = name.split(".")
        if parts[0] == "sourced_answers" and len(parts) > 2:
            assert parts[1] in LAYERS, f"{name} 不在任何一层里"


def test_no_import_points_up_the_layers_or_out_of_the_package():
    assert arrows_against_the_layers(import_graph()) == []


def test_the_layer_check_finds_an_arrow_that_points_up():
    graph = {"sourced_answers.checker.rules": {"sourced_answers.core.strings"},
             "sourced_answers.core.strings": {"sourced_answers.checker"},
             "sourced_answers.search.gather": {"fake_metaso"}}
    assert arrows_against_the_layers(graph) == [("sourced_answers.checker.rules", "sourced_answers.core.strings"),
                                                ("sourced_answers.search.gather", "fake_metaso")]


UPWARD = {
    "相对导入": "from ..cli import run",
    "相对导入，引入模块": "from ..cli.run import main",
    "函数里的相对导入": "def later():\n    from ...sourced_answers.cli import run\n",
    "importlib.import_module": "import importlib\nimportlib.import_module('sourced_answers.cli.run')",
    "import_module 的相对名字": "from importlib import import_module\nimport_module('..cli.run', package='sourced_answers.core')",
    "__import__": "__import__('sourced_answers.servers.openai_app')",
    "TYPE_CHECKING 里": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from sourced_answers.api import answering\n",
}


@pytest.mark.parametrize("source", UPWARD.values(), ids=UPWARD.keys())
def test_every_kind_of_import_that_points_up_is_found(source):
    """core/strings.py 里写上一句往上导入的代码：每一种写法都被层的检查找出来。"""
    modules = project_modules()
    graph = import_graph()
    found = set()
    for module, imported in imports_in(source, "sourced_answers.core.strings"):
        for candidate in (module, f"{module}.{imported}"):
            if candidate in modules:
                found.add(candidate)
    graph["sourced_answers.core.strings"] = graph["sourced_answers.core.strings"] | found
    assert [arrow for arrow in arrows_against_the_layers(graph) if arrow[0] == "sourced_answers.core.strings"], source


def test_relative_imports_resolve_against_the_module_and_its_package():
    assert absolute("cli", 2, "sourced_answers.core.strings", False) == "sourced_answers.cli"
    assert absolute(None, 1, "sourced_answers.core.strings", False) == "sourced_answers.core"
    assert absolute("strings", 1, "sourced_answers.core", True) == "sourced_answers.core.strings"
    assert absolute("run", 1, "sourced_answers.cli", True) == "sourced_answers.cli.run"


def test_ruff_bans_relative_imports():
    """ruff 的 TID252 也不许相对导入（写出来的那一刻就报，不用等测试）。"""
    import tomllib
    settings = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["ruff"]["lint"]
    assert "TID" in settings["select"] and settings["flake8-tidy-imports"]["ban-relative-imports"] == "all"


def test_the_checker_imports_only_the_standard_library_and_itself():
    import sys
    for name, path in project_modules().items():
        if not name.startswith("sourced_answers.checker"):
            continue
        for module, _ in imports_of(path):
            top = module.split(".")[0]
            assert module.startswith("sourced_answers.checker") or top in sys.stdlib_module_names, \
                f"{name} 导入了 {module}"


def test_core_types_import_nothing_of_the_project():
    modules = project_modules()
    imported = {module for module, _ in imports_of(modules["sourced_answers.checker.types"])}
    assert not {module for module in imported if module.split(".")[0] in {"sourced_answers", *TOP_LEVEL}}


def test_outside_the_checker_only_its_public_names_are_used():
    public = set(checker.__all__)
    for name, path in project_modules().items():
        if name.startswith("sourced_answers.checker"):
            continue
        for module, imported in imports_of(path):
            if module.startswith("sourced_answers.checker"):
                assert module == "sourced_answers.checker", f"{name} 直接导入了 {module}"
                assert imported in public, f"{name} 用了没有导出的 {imported}"


def test_the_checker_exports_only_what_the_rest_of_the_project_uses():
    """checker 的公开名字就是别的层（和 bench/、顶层文件）真在用的那些：测试要用内部的名字时从子模块导入。"""
    used = set()
    paths = list(project_modules().items()) + [(f"bench.{path.stem}", path) for path in (ROOT / "bench").glob("*.py")]
    for name, path in paths:
        if not name.startswith("sourced_answers.checker"):
            used |= {imported for module, imported in imports_of(path) if module == "sourced_answers.checker"}
    assert sorted(set(checker.__all__) - used) == []


def test_no_module_outside_the_checker_hands_on_its_names_under_a_second_address():
    """同一个函数只从一个地方导入：包里别的模块的 __all__ 里没有从 checker 拿来的名字（以前 core/strings.py 转出 21 个）。
    顶层的 answer_with_sources.py 不算：教程的五个测试从它导入 check、support（test_check.py）。"""
    for name, path in project_modules().items():
        if name.startswith("sourced_answers.checker") or not name.startswith("sourced_answers"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        exported = {element.value for node in tree.body if isinstance(node, ast.Assign)
                    and any(getattr(target, "id", None) == "__all__" for target in node.targets)
                    for element in getattr(node.value, "elts", []) if isinstance(element, ast.Constant)}
        from_checker = {imported for module, imported in imports_of(path) if module.startswith("sourced_answers.checker")}
        assert exported & from_checker == set(), name


def test_the_module_map_in_the_development_docs_matches_the_tree():
    """docs/development.md 的分层表：每个子包里的每个模块都在表里，表里的每个模块都在。"""
    import re
    text = (ROOT / "docs" / "development.md").read_text(encoding="utf-8")
    listed, layer = set(), None
    for line in text.splitlines():
        row = re.match(r"\| (?:(\d+) `(\w+)/`)? *\| `(\w+)` \|", line)
        if row:
            layer = row.group(2) or layer
            listed.add(f"sourced_answers.{layer}.{row.group(3)}")
    in_tree = {name for name in project_modules()
               if name.count(".") == 2 and name.split(".")[1] in LAYERS}
    assert listed == in_tree
    assert [re.search(r"\| (\d+) `(\w+)/`", line).group(2)
            for line in text.splitlines() if re.match(r"\| \d+ `\w+/`", line)] == LAYERS



def test_each_package_docstring_names_its_layer_and_points_at_the_module_map():
    """子包的说明不自己列模块（改名以后会过时）：写它是第几层、做什么，模块一览指向上面那张有测试的表；
    说明里提到的英文小写名字都得是这个子包里真有的模块。"""
    import re
    for number, layer in enumerate(LAYERS, start=1):
        doc = ast.get_docstring(ast.parse((ROOT / "sourced_answers" / layer / "__init__.py").read_text("utf-8")))
        assert doc and "docs/development.md 的模块地图" in doc, layer
        assert layer == "checker" or doc.startswith(f"第 {number} 层："), layer
        modules = {path.stem for path in (ROOT / "sourced_answers" / layer).glob("*.py")}
        named = set(re.findall(r"(?<![\w./-])([a-z][a-z_]+)(?![\w./-])", doc)) - set(LAYERS) - {"python"}
        assert named <= modules, (layer, named - modules)

# 核对一条保存下来的记录（--jobs 的工作进程、Dask 任务）时不该加载的：HTTP 客户端、缓存、Dask、进度条
HEAVY = ("requests", "urllib3", "http.client", "sqlite3", "tqdm", "dask", "distributed",
         "sourced_answers.model.model_client", "sourced_answers.model.preflight", "sourced_answers.search.source_cache",
         "sourced_answers.search.metaso_client")
CHECK_ONE_RECORD = """
import json, sys
from sourced_answers.batch.dask_job import check_block
from sourced_answers.batch.verification import Options, check_batch, verify_record
from sourced_answers.core.settings import CheckSettings
record = {"answer": "RAID1 用两块盘互为镜像 [1]。", "sources": [{"text": "RAID1 用两块盘互为镜像，一块坏了数据还在。"}]}
verify_record(record, fix=True)
check_batch([(1, json.dumps(record, ensure_ascii=False))], Options("记录", CheckSettings(fix=True), True, False, False))
path = sys.argv[1]
open(path, "w", encoding="utf-8").write(json.dumps(record, ensure_ascii=False) + "\\n")
results, summary = check_block((path, 0, 10 ** 6, 10 ** 6), 0, CheckSettings(fix=True), ())
assert summary["records"] == 1, summary
print(" ".join(name for name in HEAVY if name in sys.modules))
"""


@pytest.mark.slow
def test_checking_a_saved_record_loads_no_http_client_cache_dask_or_progress_bar(tmp_path):
    import subprocess
    import sys
    code = f"HEAVY = {HEAVY!r}\n" + CHECK_ONE_RECORD
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "one.jsonl")], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [], f"核对一条记录时加载了：{done.stdout}"
