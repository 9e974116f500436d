"""文档里从程序来的部分由这里生成，不手写：docs/reference.md 的参数表（读参数解析器本身）、Python API 的关键字表
（设置里的声明，含义取自同名参数的帮助）、环境变量表（core/environment.py）、退出码表和 README、docs 里列出全部
退出码的地方（core/errors.py 的 EXIT_MEANINGS）、问题的种类表（checker 的 PROBLEM_KINDS），以及 README 和 docs
里取自 support_model.json 的数字（切点、询问区间、拟合的设置）和 support_model_en.json 的数字（英文的切点、询问区间、
拟合的设置、交叉验证的结果和取舍表）。

生成的部分夹在一对标记之间，标记外面手写的文字原样保留。一张表的标记各占一行，一个数字的就在句子里：

  <!-- 生成：退出码 -->
  | 退出码 | 含义 |
  ……
  <!-- /生成：退出码 -->
  低于 <!-- 生成：切点 -->0.173<!-- /生成：切点 --> 就标出

  python -m sourced_answers.cli.reference_doc           # 重新生成，改写过时的文档
  python -m sourced_answers.cli.reference_doc --check   # 只比较：有过时的就列出来，退出码 1

tests/test_reference_doc.py 在内存里重新生成一遍、和文件比较，过时了就失败。
"""
import argparse
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path

from sourced_answers.checker import (
    ENGLISH,
    ENGLISH_MODEL_FILE,
    MODEL_FILE,
    PROBLEM_KINDS,
    Kind,
    SupportRule,
    support_model,
)
from sourced_answers.cli import cluster_command, parser
from sourced_answers.cli.arguments import ChineseArgumentParser, ChineseHelpFormatter, InRange, add_standard_flags
from sourced_answers.core.environment import VARIABLES
from sourced_answers.core.errors import EXIT_MEANINGS, AppError, ExitCode
from sourced_answers.core.settings import ANSWER_KEYWORDS, MAX_KEY_LENGTH, SEARCH_DEFAULTS, VERIFY_KEYWORDS

ROOT = Path(__file__).resolve().parents[2]
# 有生成部分的文档（相对 ROOT）
DOCUMENTS = ("README.md", "docs/reference.md", "docs/checker.md", "docs/usage.md", "docs/reliability.md")
MARKED = re.compile(r"<!-- 生成：(?P<name>[^>]+?) -->(?P<body>.*?)<!-- /生成：(?P=name) -->", re.DOTALL)
OPENING = re.compile(r"<!-- 生成：([^>]+?) -->")
# 主命令的参数分组：标记名是“参数 分组标题”；python -m sourced_answers.cluster 的参数是一张表
GROUP_PREFIX = "参数 "
CLUSTER = "参数 python -m sourced_answers.cluster"
API_KEYWORDS = "Python API 的关键字"
REGENERATE = "python -m sourced_answers.cli.reference_doc"


# ---------- 参数表 ----------

def markdown(text: str) -> str:
    """帮助文字放进表格：命令（python -m …）、参数名和登记过的环境变量名写成代码，竖线转义。"""
    names = "|".join(re.escape(variable.name) for variable in VARIABLES)
    pieces = re.split(r"(python -m [\w.]+(?: --?[\w-]+)*)", text)  # 奇数位置是命令，整条写成代码
    for index, piece in enumerate(pieces):
        if index % 2:
            pieces[index] = f"`{piece}`"
        else:
            pieces[index] = re.sub(rf"(?<![\w$-])(--[a-z][a-z-]*|{names})(?![\w])", r"`\1`", piece)
    return "".join(pieces).replace("|", "\\|")


def shown_default(action: argparse.Action) -> str | None:
    """解析器里真正的默认值怎样写；None 表示解析器不定（None），由后面的代码决定。"""
    default = action.default
    if default is None:
        return None
    if default is argparse.SUPPRESS:
        return "—"
    if default == ():  # 可以给几次的参数（--docs）：没给就是一个也没有
        return "—"
    if default is False:
        return "关"
    if isinstance(default, float):
        return f"{default:g}"
    if isinstance(default, str):
        return f"`{default}`"
    return str(default)


def closing_bracket(text: str, start: int) -> int:
    """text[start] 的“（”和哪一个“）”成对（找不到时 -1）。"""
    depth = 0
    for index in range(start, len(text)):
        depth += {"（": 1, "）": -1}.get(text[index], 0)
        if depth == 0:
            return index
    return -1


def split_default(help_text: str) -> tuple[str, str | None]:
    """帮助文字末尾的“（默认 …）”拆出来：(前面的说明, 默认值的说法)；没有时第二项是 None。"""
    start = help_text.rfind("（默认")
    if start < 0 or closing_bracket(help_text, start) != len(help_text) - 1:
        return help_text, None
    return help_text[:start], help_text[start + 3:-1].lstrip(" ：")


def described(action: argparse.Action) -> tuple[str, str]:
    """(含义, 默认值) 两栏。解析器定了默认值时用它（帮助里同样的“（默认 …）”不再重复）；
    没定时（None）用帮助末尾说的默认值。"""
    help_text = action.help or ""
    real = shown_default(action)
    rest, said = split_default(help_text)
    if action.required:
        return help_text, "必须给出"
    if real is None:
        return (rest, markdown(said)) if said else (help_text, "—")
    if said is not None and said.strip("`") == real.strip("`"):
        return rest, real
    return help_text, real


def option_cell(action: argparse.Action, formatter: argparse.HelpFormatter) -> str:
    if not action.option_strings:
        return f"`{action.metavar or action.dest}`"
    value = "" if action.nargs == 0 else " " + formatter._format_args(action, action.dest.upper())
    return " / ".join(f"`{option}{value}`" for option in action.option_strings)


def range_cell(action: argparse.Action) -> str:
    if isinstance(action.type, InRange):
        return action.type.text()
    if action.choices:
        return "、".join(f"`{choice}`" for choice in action.choices)
    return "—"


def option_table(actions: list[argparse.Action], formatter: argparse.HelpFormatter) -> str:
    rows = ["| 参数 | 含义 | 取值 | 默认值 |", "|---|---|---|---|"]
    for action in actions:
        meaning, default = described(action)
        rows.append(f"| {option_cell(action, formatter)} | {markdown(meaning)} | {range_cell(action)} | {default} |")
    return "\n".join(rows)


def groups_of(command: argparse.ArgumentParser) -> list[argparse._ArgumentGroup]:
    return [group for group in command._action_groups if group._group_actions]


def group_section(group: argparse._ArgumentGroup, formatter: argparse.HelpFormatter) -> str:
    """一个分组：标题、分组的说明（有的话）和参数表。"""
    parts = [f"### {group.title}"]
    if group.description:
        parts.append(markdown(group.description))
    parts.append(option_table(group._group_actions, formatter))
    return "\n\n".join(parts)


def flag_parts() -> dict[str, str]:
    main = parser.build_parser()
    cluster = cluster_command.build_parser()
    parts = {f"{GROUP_PREFIX}{group.title}": group_section(group, main._get_formatter()) for group in groups_of(main)}
    every = [action for group in groups_of(cluster) for action in group._group_actions]
    parts[CLUSTER] = option_table(every, cluster._get_formatter())
    return parts


# ---------- Python API 的关键字 ----------

KIND_NAMES = {int: "整数", float: "数字", str: "文字", bool: "`True` / `False`", tuple: "路径，或路径的列表"}


def keyword_table() -> str:
    """answer_question、verify_answer 的关键字：取自设置里的声明（core/settings.py 的 option），含义和默认值就是
    同名参数在 --help 里的（命令行和 Python API 建的是同一份设置）。"""
    keywords = {declared.name: declared for declared in ANSWER_KEYWORDS}
    missing = set(keywords) - {action.dest for action in parser.build_parser()._actions}
    if missing:
        raise ValueError(f"设置里声明了、解析器里没有的参数：{'、'.join(sorted(missing))}")
    rows = ["| 关键字 | 类型 | 取值 | 默认值 | 用在 | 含义（同名的命令行参数） |", "|---|---|---|---|---|---|"]
    for action in parser.build_parser()._actions:  # 和 --help 一样的顺序
        declared = keywords.get(action.dest)
        if declared is None:
            continue
        meaning, default = described(action)
        if declared.kind is bool and declared.unset is not None:
            default = f"`{declared.unset}`"
        kind = KIND_NAMES[declared.kind] + ("，或 `None`" if declared.unset is None and declared.kind is not bool
                                            else "")
        used = "`answer_question`" + ("、`verify_answer`、`verify_record`" if declared in VERIFY_KEYWORDS else "")
        used += "；`--serve` 的请求体" if declared.serve else ""
        used += "；`--mcp` 的 `answer_question`" if declared.mcp else ""
        rows.append(f"| `{declared.name}` | {kind} | {range_cell(action)} | {default} | {used} | "
                    f"{markdown(meaning)}（`{declared.flag}`） |")
    return "\n".join(rows)


# ---------- 环境变量、退出码 ----------

def environment_table() -> str:
    rows = ["| 变量 | 含义 | 默认值 |", "|---|---|---|"]
    rows += [f"| `{variable.name}` | {variable.meaning} | {variable.default} |" for variable in VARIABLES]
    return "\n".join(rows)


def exit_code_table() -> str:
    rows = ["| 退出码 | 含义 |", "|---|---|"]
    rows += [f"| {code.value} | {meaning.detail} |" for code, meaning in EXIT_MEANINGS.items()]
    return "\n".join(rows)


def exit_code_parts() -> dict[str, str]:
    """退出码在文字里的两种写法：每个码和它的短说法连成一句（和 --help 末尾的一样），只有数字的一串。
    别处不再手抄这份清单（tests/test_reference_doc.py 查找手抄的）。"""
    return {"退出码一览": "；".join(f"{code.value} {meaning.brief}" for code, meaning in EXIT_MEANINGS.items()),
            "退出码数字": "、".join(str(code.value) for code in EXIT_MEANINGS)}


# ---------- 问题的种类 ----------

ABOUT_NAMES = {"sentence": "一句话", "block": "一整块", "answer": "整个回答"}


def judge_cell(kind: Kind) -> str:
    if kind.undecided:
        return "总问"
    if kind.judge_may_decide:
        return "支持分拿不准时问"
    return "撤不掉" if kind.certain else "—"


def kinds_table() -> str:
    """问题的每一种（PROBLEM_KINDS 的顺序）：它的意思，和后面各步怎样对待它。"""
    rows = ["| `kind` | 中文名 | 说的是 | 确定的规则 | 评判模型（`--judge`） | `--fix` 改引 | 含义 |",
            "|---|---|---|---|---|---|---|"]
    for name, kind in PROBLEM_KINDS.items():
        cells = [f"`{name}`", kind.label, ABOUT_NAMES[kind.about], "是" if kind.certain else "—", judge_cell(kind),
                 "是" if kind.fix_may_recite else "—", kind.meaning]
        rows.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(rows)


# ---------- support_model.json 里的数字 ----------

def figure_parts() -> dict[str, str]:
    """写在文字里的数字，格式和文档里的写法一样。"""
    model = support_model()
    fitted = json.loads(MODEL_FILE.read_text(encoding="utf-8"))["fitted_on"]
    low, high = model.judge_band
    return {
        "切点": f"{model.cut:.3f}",
        "询问区间": f"[{low:.3f}, {high:.3f})",
        "教程阈值": f"{SupportRule('tutorial').limit(model):g}",
        "拟合条数": str(fitted["rows"]),
        "折数": str(fitted["folds"]),
        "种子": str(fitted["seed"]),
        "L2": f"{fitted['l2']:g}",
        "误报目标": f"{fitted['false_alarm_target']:.1%}",
        "评判准确率": f"{fitted['judge_accuracy']:.0%}",
        "评判误报上限": f"{fitted['judge_false_alarm_limit']:.0%}",
    }


def share(value: float) -> str:
    return f"{value:.1%}"


def english_tables(data: dict) -> dict[str, str]:
    """英文模型的两张表：dev 上换模型前后的对比（交叉验证），和不同切点的取舍（默认的切点加粗）。"""
    checked, chinese = data["cross_validation"], data["chinese_model"]
    folds = data["fitted_on"]["folds"]
    comparison = ["| 怎么量 | 误报 | 召回 | 准确率 |", "|---|---|---|---|",
                  f"| 换成英文模型之前：中文模型（切点 {chinese['cut']:.3f}；它没见过这些数据） | "
                  f"{share(chinese['false_alarm'])} | {share(chinese['recall'])} | {share(chinese['accuracy'])} |",
                  f"| 英文模型，{folds} 折交叉验证（每条的分数来自没见过它的模型；± 是各折的标准差） | "
                  + " | ".join(f"{share(checked[name])} ± {share(checked[name + '_sd'])}"
                               for name in ("false_alarm", "recall", "accuracy")) + " |"]
    tradeoff = ["| 切点 | 误报 | 召回 | 准确率 |", "|---|---|---|---|"]
    for entry in data["tradeoff"]:
        cut = f"{entry['cut']:.3f}"
        if entry["recall"] >= chinese["recall"]:
            cut += "（召回不低于换模型之前）"
        cells = [cut, share(entry["false_alarm"]), share(entry["recall"]), share(entry["accuracy"])]
        if abs(entry["cut"] - data["cut"]) < 5e-4:  # 默认的切点（表里的切点只留了四位小数）
            cells = [f"**{cells[0]}（默认）**", *(f"**{cell}**" for cell in cells[1:])]
        tradeoff.append("| " + " | ".join(cells) + " |")
    return {"英文对比": "\n".join(comparison), "英文取舍": "\n".join(tradeoff)}


def english_parts() -> dict[str, str]:
    """英文模型（support_model_en.json）的数字和表，格式和文档里的写法一样。"""
    model = support_model(ENGLISH)
    data = json.loads(ENGLISH_MODEL_FILE.read_text(encoding="utf-8"))
    fitted = data["fitted_on"]
    low, high = model.judge_band
    return {
        "英文切点": f"{model.cut:.3f}",
        "英文询问区间": f"[{low:.3f}, {high:.3f})",
        "英文读入条数": str(fitted["rows_read"]),
        "英文拟合条数": str(fitted["rows"]),
        "英文误报目标": f"{fitted['false_alarm_target']:.0%}",
        "英文评判误报上限": f"{fitted['judge_false_alarm_limit']:.0%}",
        **english_tables(data),
    }


def duration_text(hours: float) -> str:
    """缓存的时长：整天的写成“1 天”，否则“36 小时”。"""
    return f"{hours / 24:g} 天" if hours % 24 == 0 else f"{hours:g} 小时"


def default_parts() -> dict[str, str]:
    """写在文字里的默认值（settings 里各只声明一次）。"""
    return {
        "默认读取": str(SEARCH_DEFAULTS.read),
        "默认条数": str(SEARCH_DEFAULTS.size),
        "搜索缓存": duration_text(SEARCH_DEFAULTS.cache_search_hours),
        "网页缓存": duration_text(SEARCH_DEFAULTS.cache_page_days * 24),
        "密钥上限": str(MAX_KEY_LENGTH),
    }


def generated_parts() -> dict[str, str]:
    """标记名 → 生成的内容。"""
    return {**flag_parts(), API_KEYWORDS: keyword_table(), "环境变量": environment_table(), "退出码": exit_code_table(),
            **exit_code_parts(), "问题的种类": kinds_table(),
            **figure_parts(), **english_parts(), **default_parts()}


# ---------- 改写文档 ----------

def regenerate(text: str, parts: dict[str, str] | None = None) -> str:
    """把每对标记之间的内容换成生成的；标记外面的文字不动。标记名不认识、标记没有成对时抛 ValueError。"""
    parts = generated_parts() if parts is None else parts
    opened = OPENING.findall(text)
    closed = [match.group("name") for match in MARKED.finditer(text)]
    if opened != closed:
        raise ValueError(f"没有成对的标记：{'、'.join(name for name in opened if name not in closed) or opened}")

    def replace(match: re.Match[str]) -> str:
        name = match.group("name")
        if name not in parts:
            raise ValueError(f"不认识的标记“{name}”（认识的：{'、'.join(parts)}）")
        body = f"\n{parts[name]}\n" if match.group("body").startswith("\n") else parts[name]
        return f"<!-- 生成：{name} -->{body}<!-- /生成：{name} -->"
    return MARKED.sub(replace, text)


def stale_documents(root: Path, write: bool = False) -> list[str]:
    """过时的文档（相对 root）；write 时顺便改写它们。"""
    parts = generated_parts()
    stale = []
    for name in DOCUMENTS:
        path = root / name
        text = path.read_text(encoding="utf-8")
        fresh = regenerate(text, parts)
        if fresh != text:
            stale.append(name)
            if write:
                path.write_text(fresh, encoding="utf-8")
    return stale


def main(argv: list[str] | None = None, log: Callable[[str], None] = print) -> int:
    command = ChineseArgumentParser(prog=REGENERATE, formatter_class=ChineseHelpFormatter, add_help=False,
                                    description="重新生成文档里从程序来的表和数字（标记之间的部分）。")
    command.add_argument("--check", action="store_true", help="只比较，不改文件；有过时的文档时退出码 1")
    add_standard_flags(command, debug=False)
    try:
        args = command.parse_args(argv)
        stale = stale_documents(ROOT, write=not args.check)
    except SystemExit as done:  # -h
        return int(done.code or 0) if isinstance(done.code, int | None) else ExitCode.USAGE
    except (AppError, ValueError) as error:
        log(f"✗ {error}")
        return ExitCode.USAGE
    if not stale:
        log("文档里生成的部分都是最新的")
    elif args.check:
        log(f"过时了：{'、'.join(stale)}。运行 {REGENERATE} 重新生成")
        return ExitCode.FAILED
    else:
        log(f"已重新生成：{'、'.join(stale)}")
    return ExitCode.PASSED


if __name__ == "__main__":
    sys.exit(main())
