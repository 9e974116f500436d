"""--help 的排版：按显示宽度折行（一个汉字、一个全角标点占两列），只在空格处、汉字和全角标点的前后折，
ASCII 的一串（--verify、nas-long、xllamacpp==2026.10.11549、s3://）从不拆开；收尾的标点（，。）、）不放在行首，
开头的标点（（“）不放在行尾。

argparse 自己按字符个数折行（textwrap）：把 nas-long 拆成“nas-”和“long”、把“（--verify”拆成“（-”和“-verify”，
汉字多的行又比终端宽一倍。每个入口（主命令、quickstart、集群任务、local_model、metaso_search.py、fake_metaso.py）
的帮助都用这里的 ChineseHelpFormatter（经由 cli/arguments.py）。
"""
import argparse
import re
from collections.abc import Iterable
from typing import Any

from sourced_answers.checker import char_width, display_width

# 不放在行首的标点（收尾的）和不放在行尾的标点（开头的）：它们跟着旁边的那个字走
CLOSING = frozenset("，。、；：！？）」』】》〉”’…·%,.;:!?)]}")
OPENING = frozenset("（「『【《〈“‘([{")
# 用法里不再拆开的一块：(…)、[…]（嵌套的也整个算一块）或者一串非空白（和 argparse 的切法一样）
USAGE_PART = re.compile(r"\(.*?\)+(?=\s|$)|\[.*?\]+(?=\s|$)|\S+")


def pieces(text: str) -> list[tuple[str, bool]]:
    """把一段文字切成折行时不再拆开的小块：(文字, 前面是不是空格)。一串窄字符（ASCII、拉丁字母）是一块；
    每个宽字符（汉字、全角标点）自成一块，收尾的标点并进前一块，开头的标点并进后一块。"""
    result: list[tuple[str, bool]] = []
    for word in text.split():
        units: list[str] = []
        for char in word:
            wide = char_width(char) == 2
            if units and (char in CLOSING or (not wide and char_width(units[-1][-1]) != 2)
                          or units[-1][-1] in OPENING):
                units[-1] += char  # 收尾的标点、接着的窄字符、开头的标点后面的字：和前一块连在一起
            else:
                units.append(char)
        result += [(unit, index == 0) for index, unit in enumerate(units)]
    if result:
        result[0] = (result[0][0], False)
    return result


def wrap(text: str, width: int) -> list[str]:
    """按显示宽度把一段文字折成不超过 width 列的几行（空白合成一个空格）。比一行还宽的一块单独占一行，不拆开。"""
    lines: list[str] = []
    line, used = "", 0
    for unit, spaced in pieces(text):
        size = display_width(unit)
        gap = 1 if spaced and line else 0
        if line and used + gap + size > width:
            lines.append(line)
            line, used = unit, size
        else:
            line += " " * gap + unit
            used += gap + size
    if line:
        lines.append(line)
    return lines


class ChineseHelpFormatter(argparse.HelpFormatter):
    """中文的“用法：”，按显示宽度折行、对齐（见模块说明）。"""

    def add_usage(self, usage: str | None, actions: Iterable[argparse.Action],
                  groups: Iterable[Any], prefix: str | None = None) -> None:
        super().add_usage(usage, actions, groups, prefix or "用法：")

    def _format_usage(self, usage: str | None, actions: Iterable[argparse.Action], groups: Iterable[Any],
                      prefix: str | None) -> str:
        """“用法：”那几行也按显示宽度折：argparse 按字符个数算（“用法：”“问题”各少算一半），会比终端宽几列。
        先让 argparse 写出来（不折行），再把每一种用法（手写的 usage 一行一种）按参数一块一块地折：
        每种用法从新的一行开始，和第一种的程序名对齐；接着的行对齐在程序名后面，放不下最宽的一块时缩在“用法：”后面两格。"""
        prefix = "用法：" if prefix is None else prefix
        width, self._width = self._width, 1_000_000
        try:
            text = super()._format_usage(usage, actions, groups, prefix).strip("\n")
        finally:
            self._width = width
        if not text.startswith(prefix):
            return f"{text}\n\n"
        forms = [form.strip() for form in text[len(prefix):].split("\n") if form.strip()]
        lines: list[str] = []
        for index, form in enumerate(forms):
            lead = prefix if index == 0 else " " * display_width(prefix)
            lines += self._fold_usage_form(lead, form, display_width(prefix))
        return "\n".join(lines) + "\n\n"

    def _fold_usage_form(self, lead: str, form: str, prefix_width: int) -> list[str]:
        """一种用法（程序名 参数…）折成几行，每行不超过终端宽度；[…]、(…) 整块不拆开。"""
        prog = self._prog
        if not form.startswith(prog + " "):
            return [lead + form]
        head = lead + prog
        blocks = USAGE_PART.findall(form[len(prog) + 1:])
        available = self._width - self._current_indent
        indent = display_width(head) + 1
        if indent + max(map(display_width, blocks)) > available:
            indent = prefix_width + 2  # 比下一种用法的开头多缩两格，分得清是接着的行
        lines, current = [], head
        for block in blocks:
            if display_width(current) + 1 + display_width(block) > available and current.strip() != "":
                lines.append(current)
                current = " " * indent + block
            else:
                current += " " + block
        lines.append(current)
        return lines

    def _split_lines(self, text: str, width: int) -> list[str]:
        return wrap(text, width)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        return "\n".join(indent + line for line in wrap(text, max(width - len(indent), 11)))

    def add_argument(self, action: argparse.Action) -> None:
        """和 argparse 一样，只是参数那一栏的宽度按显示宽度算（“--fault 接口=故障[:次数]”里的汉字占两列）。"""
        super().add_argument(action)
        if action.help is not argparse.SUPPRESS:
            invocations = [self._format_action_invocation(action)]
            invocations += [self._format_action_invocation(sub) for sub in self._iter_indented_subactions(action)]
            self._action_max_length = max(self._action_max_length,
                                          max(map(display_width, invocations)) + self._current_indent)

    def _format_action(self, action: argparse.Action) -> str:
        """argparse 的 _format_action，对齐时按显示宽度：参数那一栏有汉字时，帮助文字照样从同一列开始。"""
        help_position = min(self._action_max_length + 2, self._max_help_position)
        help_width = max(self._width - help_position, 11)
        action_width = help_position - self._current_indent - 2
        header = self._format_action_invocation(action)
        indent_first = 0
        if not action.help:
            parts = [f"{' ' * self._current_indent}{header}\n"]
        elif display_width(header) <= action_width:
            padding = " " * (action_width - display_width(header) + 2)
            parts = [f"{' ' * self._current_indent}{header}{padding}"]
        else:
            parts = [f"{' ' * self._current_indent}{header}\n"]
            indent_first = help_position
        if action.help and action.help.strip():
            help_lines = self._split_lines(self._expand_help(action), help_width) or [""]
            parts.append(f"{' ' * indent_first}{help_lines[0]}\n")
            parts += [f"{' ' * help_position}{line}\n" for line in help_lines[1:]]
        elif not parts[0].endswith("\n"):
            parts.append("\n")
        parts += [self._format_action(sub) for sub in self._iter_indented_subactions(action)]
        return self._join_parts(parts)
