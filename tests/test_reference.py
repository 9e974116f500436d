"""docs/reference.md 的参数表和程序的参数一致：同样的分组、同样的参数，默认值对得上（参数表是手写的，以前漂移过一次）。"""
import argparse
import re

from sourced_answers.cli.parser import build_parser
from tests.support import HERE

REFERENCE = HERE / "docs" / "reference.md"


def documented_groups() -> dict[str, list[tuple[list[str], str]]]:
    """参考里“## 参数”一节：分组标题 → [(这一行写的参数, 默认值一栏)]。"""
    text = REFERENCE.read_text(encoding="utf-8")
    section = text[text.index("\n## 参数\n"):text.index("\n## ", text.index("\n## 参数\n") + 1)]
    groups: dict[str, list[tuple[list[str], str]]] = {}
    current = None
    for line in section.splitlines():
        if line.startswith("### "):
            current = line[4:].strip()
            groups[current] = []
        elif line.startswith("| `") and current is not None:
            cells = [cell.strip() for cell in line.strip("|").split(" | ")]
            flags = re.findall(r"`(-[-\w]+|问题)", cells[0])
            groups[current].append((flags, cells[-1]))
    return groups


def parser_groups() -> dict[str, list[argparse.Action]]:
    parser = build_parser()
    return {group.title or "": list(group._group_actions) for group in parser._action_groups if group._group_actions}


def test_the_reference_has_the_same_groups_and_options_as_the_parser():
    documented = documented_groups()
    actual = parser_groups()
    assert list(documented) == list(actual)
    for title, actions in actual.items():
        wanted = sorted(option for action in actions for option in (action.option_strings or ["问题"]))
        written = sorted(flag for flags, _ in documented[title] for flag in flags)
        # --stream 写成 `--stream` / `--no-stream` 一行
        assert written == wanted, title


def test_the_documented_defaults_match_the_parser():
    documented = {flag: default for rows in documented_groups().values() for flags, default in rows for flag in flags}
    checked = 0
    for actions in parser_groups().values():
        for action in actions:
            if action.option_strings and isinstance(action.default, int | float) and \
                    not isinstance(action.default, bool):
                shown = f"{action.default:g}" if isinstance(action.default, float) else str(action.default)
                assert documented[action.option_strings[-1]].startswith(shown), action.option_strings
                checked += 1
            elif action.option_strings and action.default is False:
                assert documented[action.option_strings[-1]] == "关", action.option_strings
                checked += 1
    assert checked >= 15


def test_every_exit_code_says_what_it_means_in_the_order_of_the_enum():
    from sourced_answers.core.errors import EXIT_MEANINGS, ExitCode
    assert list(EXIT_MEANINGS) == list(ExitCode)
    assert all(meaning.brief and meaning.detail for meaning in EXIT_MEANINGS.values())
