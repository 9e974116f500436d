"""代码的形状：没有循环导入（TYPE_CHECKING 和函数里的导入也算）、每个模块不超过 500 行、核对的基本类型不依赖别的模块、
包外的代码只用 checker 导出的名字。"""
import ast
from pathlib import Path

import sourced_answers.checker as checker

ROOT = Path(__file__).resolve().parent.parent
TOP_LEVEL = ["answer_with_sources.py", "metaso_search.py", "fake_metaso.py"]


def module_name(path):
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def project_modules():
    paths = sorted((ROOT / "sourced_answers").rglob("*.py")) + [ROOT / name for name in TOP_LEVEL]
    return {module_name(path): path for path in paths}


def imports_of(path):
    """(模块名, 导入的名字) —— 文件里任何地方的导入，包括 if TYPE_CHECKING: 和函数里的。"""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found += [(node.module, alias.name) for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(alias.name, None) for alias in node.names]
    return found


def import_graph():
    modules = project_modules()
    graph = {}
    for name, path in modules.items():
        targets = set()
        for module, imported in imports_of(path):
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


def test_no_module_of_the_package_is_over_500_lines():
    long = {name: len(path.read_text(encoding="utf-8").splitlines())
            for name, path in project_modules().items() if name.startswith("sourced_answers")}
    assert {name: lines for name, lines in long.items() if lines > 500} == {}


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
