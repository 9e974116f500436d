"""文档里从程序来的部分不会过时：docs/reference.md 的参数、环境变量、退出码表和 README、docs 里取自
support_model.json 的数字都由 sourced_answers/cli/reference_doc.py 生成，这里在内存里重新生成一遍、和文件比较
（参数表以前是手写的，漂移过一次）。"""
import argparse
import re

import pytest

from sourced_answers.checker import PROBLEM_KINDS, Kind
from sourced_answers.cli import reference_doc
from sourced_answers.cli.parser import build_parser
from sourced_answers.cli.reference_doc import DOCUMENTS, REGENERATE, regenerate, split_default
from sourced_answers.core.errors import EXIT_MEANINGS, ExitCode
from tests.support import HERE


def marker_names(name: str) -> list[str]:
    return [match.group("name") for match in reference_doc.MARKED.finditer((HERE / name).read_text(encoding="utf-8"))]


@pytest.mark.parametrize("name", DOCUMENTS)
def test_the_generated_parts_of_the_docs_are_up_to_date(name):
    text = (HERE / name).read_text(encoding="utf-8")
    assert regenerate(text) == text, f"{name} 里生成的部分过时了：运行 {REGENERATE} 重新生成（再提交改过的文档）"


def test_the_reference_has_a_table_for_every_option_group_in_the_order_of_help():
    groups = [f"{reference_doc.GROUP_PREFIX}{group.title}" for group in reference_doc.groups_of(build_parser())]
    names = marker_names("docs/reference.md")
    assert [name for name in names if name in groups] == groups
    assert {reference_doc.CLUSTER, "环境变量", "退出码"} <= set(names)


def test_every_mention_of_the_cut_band_and_seed_is_generated():
    """新写进文档的切点、询问区间、种子也要放在标记里，不然下次拟合后就过时了。"""
    figures = {**reference_doc.figure_parts(), **reference_doc.english_parts()}
    for name in ("README.md", *(path.relative_to(HERE).as_posix() for path in (HERE / "docs").glob("*.md"))):
        outside = reference_doc.MARKED.sub("", (HERE / name).read_text(encoding="utf-8"))
        for figure in ("切点", "询问区间", "种子", "英文切点", "英文询问区间"):
            assert figures[figure] not in outside, f"{name} 里的 {figures[figure]} 没有放在“{figure}”的标记里"


@pytest.mark.parametrize("figure, written", [("密钥上限", "{} 个字符"), ("搜索缓存", "搜索 {}"), ("网页缓存", "网页 {}"),
                                             ("默认读取", "默认 {}）、`--size"), ("默认条数", "搜索条数，默认 {}")])
def test_every_mention_of_a_default_in_the_docs_is_generated(figure, written):
    """写进 README 和文档的默认值（密钥上限、缓存时长、读几个网页、搜几条）放在标记里：改了设置，文档跟着变。"""
    value = reference_doc.default_parts()[figure]
    for name in ("README.md", *(path.relative_to(HERE).as_posix() for path in (HERE / "docs").glob("*.md"))):
        outside = reference_doc.MARKED.sub("", (HERE / name).read_text(encoding="utf-8"))
        assert written.format(value) not in outside, f"{name} 里的 {written.format(value)} 没有放在“{figure}”的标记里"


def test_every_document_with_markers_is_regenerated():
    marked = {path.relative_to(HERE).as_posix() for path in [HERE / "README.md", *(HERE / "docs").glob("*.md")]
              if "<!-- 生成：" in path.read_text(encoding="utf-8")}
    assert marked == set(DOCUMENTS)


def test_regenerating_replaces_only_what_is_between_the_markers():
    text = ("手写的开头\n<!-- 生成：表 -->\n旧的表\n<!-- /生成：表 -->\n切点是 <!-- 生成：切点 -->0.5<!-- /生成：切点 -->。\n")
    fresh = regenerate(text, {"表": "| 新 |", "切点": "0.173"})
    assert fresh == ("手写的开头\n<!-- 生成：表 -->\n| 新 |\n<!-- /生成：表 -->\n"
                     "切点是 <!-- 生成：切点 -->0.173<!-- /生成：切点 -->。\n")
    assert regenerate(fresh, {"表": "| 新 |", "切点": "0.173"}) == fresh


@pytest.mark.parametrize("text, problem", [("<!-- 生成：不认识 -->x<!-- /生成：不认识 -->", "不认识的标记"),
                                           ("<!-- 生成：切点 -->0.173", "没有成对")])
def test_a_wrong_marker_is_an_error_not_a_silent_skip(text, problem):
    with pytest.raises(ValueError, match=problem):
        regenerate(text, {"切点": "0.173"})


def test_the_check_command_names_the_stale_document_and_how_to_regenerate(tmp_path, monkeypatch):
    for name in DOCUMENTS:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text((HERE / name).read_text(encoding="utf-8"), encoding="utf-8")
    stale = (tmp_path / "docs/reference.md").read_text(encoding="utf-8").replace("| 130 |", "| 131 |")
    (tmp_path / "docs/reference.md").write_text(stale, encoding="utf-8")
    monkeypatch.setattr(reference_doc, "ROOT", tmp_path)
    said: list[str] = []
    assert reference_doc.main(["--check"], said.append) == ExitCode.FAILED
    assert "docs/reference.md" in said[0] and REGENERATE in said[0]
    assert reference_doc.main([], said.append) == ExitCode.PASSED
    assert "| 130 |" in (tmp_path / "docs/reference.md").read_text(encoding="utf-8")
    assert reference_doc.main(["--check"], said.append) == ExitCode.PASSED


def test_the_default_said_in_help_is_split_off():
    assert split_default("搜索结果条数（默认 5）") == ("搜索结果条数", "5")
    assert split_default("边生成边显示回答（默认：输出到终端时开启）") == ("边生成边显示回答", "输出到终端时开启")
    assert split_default("阈值（默认：score 时 0.173（切点）；tutorial 时 0.35）") == \
        ("阈值", "score 时 0.173（切点）；tutorial 时 0.35")
    # 括号不是从“（默认”开始的那一对：不拆
    assert split_default("score（默认）看支持分；tutorial 用原教程的规则（字二元组）")[1] is None


def test_a_number_the_help_calls_the_default_is_the_parsers_default():
    """帮助里写的“默认 N”（表里拿掉它、换成真正的默认值）和解析器的默认值一样。"""
    checked = 0
    for action in build_parser()._actions:
        default = action.default
        if isinstance(default, int | float) and not isinstance(default, bool):
            shown = f"{default:g}" if isinstance(default, float) else str(default)
            said = re.findall(r"默认 ([\d.]+)", action.help or "")
            assert said == [shown], action.option_strings
            checked += 1
    assert checked >= 7


def test_the_table_shows_the_parsers_own_defaults():
    rows = {action.option_strings[-1]: reference_doc.described(action)[1]
            for action in build_parser()._actions if action.option_strings}
    assert rows["--size"] == "5" and rows["--cache-search-hours"] == "24" and rows["--rule"] == "`score`"
    assert rows["--demo"] == "关" and rows["--help"] == "—"
    assert rows["--max-tokens"].startswith("1024")  # 解析器不定（None）：用帮助末尾说的


def test_every_exit_code_says_what_it_means_in_the_order_of_the_enum():
    assert list(EXIT_MEANINGS) == list(ExitCode)
    assert all(meaning.brief and meaning.detail for meaning in EXIT_MEANINGS.values())


def test_help_ends_with_every_exit_code():
    epilog = build_parser().epilog or ""
    assert all(f"{code.value} {meaning.brief}" in epilog for code, meaning in EXIT_MEANINGS.items())


# 文字里的一个退出码：数字后面紧跟着它的意思（“0 核对通过”“130 被打断”），不是“第 2 段”“3 秒”这样的数
EXIT_CODE_SAID = re.compile(r"(?<![\d.])(" + "|".join(str(code.value) for code in ExitCode)
                            + r")\s?(?=[\u4e00-\u9fff（(])(?![段秒个次条行页列核项分天倍])")
# 别的程序自己的退出码（不是本程序的）：这些清单照写
OTHER_PROGRAMS = {"docs/serving.md": "在页面上看到了回答"}  # bench/openwebui_check.py


def hand_written_exit_code_lists(text: str) -> list[str]:
    """生成的标记之外，说到“退出码”、接着列出四个以上退出码和它们意思的那一段（到句号或空行为止）。"""
    outside = reference_doc.MARKED.sub("", text)
    found = []
    for match in re.finditer("退出码", outside):
        sentence = re.split(r"。|\n\s*\n", outside[match.end():match.end() + 300])[0]
        if len(set(EXIT_CODE_SAID.findall(sentence))) >= 4:
            found.append(sentence.strip()[:80])
    return found


def test_no_document_lists_the_exit_codes_by_hand():
    """全部的退出码只由 EXIT_MEANINGS 生成（--help 末尾、参考里的表、README 的一句、reliability.md 的数字）；
    手抄的清单会和它走散（以前 README、入口文件、reliability.md、usage.md 各抄了一份）：写成链接或者放进标记里。"""
    paths = [HERE / "README.md", *(HERE / "docs").glob("*.md"), *HERE.glob("*.py"),
             *(HERE / "sourced_answers").rglob("*.py")]
    for path in paths:
        name = path.relative_to(HERE).as_posix()
        lists = [found for found in hand_written_exit_code_lists(path.read_text(encoding="utf-8"))
                 if OTHER_PROGRAMS.get(name, "\0") not in found]
        assert lists == [], (f"{name} 里手抄了退出码的清单：{lists}（改成指向 docs/reference.md#退出码 的链接，"
                             f"或者放进“退出码一览”“退出码数字”的标记里，由 {REGENERATE} 生成）")


@pytest.mark.parametrize("text", [
    "退出码：0 核对通过，1 没通过（请人工核对），2 用法或配置有误，3 服务出错，4 程序自己的错误，130 被打断。",
    "退出码只有 0 通过、1 没通过、2 用法或配置、3 服务、4 程序自己的错误、130 被打断；每个入口都一样",
    "退出码：0 核对通过 · 1 有回答但没通过核对 · 2 用法、配置或输入错误 · 3 服务出错\n· 130 被中断",
])
def test_a_hand_written_exit_code_list_is_found(text):
    assert hand_written_exit_code_lists(f"开头的话。\n{text}\n") != []


@pytest.mark.parametrize("text", [
    "退出码：<!-- 生成：退出码一览 -->0 核对通过；1 没通过；2 用法；3 服务；4 程序；130 被中断<!-- /生成：退出码一览 -->。",
    "退出码：全部通过 0，有没通过的 1（用了 `--fix` 时按修正后的结论），有出错的 3。",
    "没通过时退出码 1；第 2 段、第 3 段没有引用，4 秒之后重试。",
])
def test_generated_lists_and_single_codes_are_not_hand_written_lists(text):
    assert hand_written_exit_code_lists(text) == []


def test_every_option_has_chinese_help():
    for command in (build_parser(), reference_doc.cluster_command.build_parser()):
        for action in command._actions:
            if isinstance(action, argparse._SubParsersAction):
                continue
            assert action.help and re.search(r"[\u4e00-\u9fff]", action.help), action.option_strings


def test_the_python_api_keyword_table_lists_exactly_what_the_functions_accept():
    """docs/reference.md 的“Python API 的关键字”一行一个关键字，和 answer_question、verify_answer 真收的一样：
    表和函数读的是同一份声明（core/settings.py 的 option），这里从两头各看一次。"""
    from answer_with_sources import answer_question, verify_answer
    from sourced_answers.core.errors import UsageError
    from sourced_answers.core.settings import ANSWER_KEYWORDS
    text = (HERE / "docs/reference.md").read_text(encoding="utf-8")
    body = next(found.group("body") for found in reference_doc.MARKED.finditer(text)
                if found.group("name") == reference_doc.API_KEYWORDS)
    rows = {row.split("`")[1]: row for row in body.strip().splitlines()[2:]}
    assert set(rows) == {declared.name for declared in ANSWER_KEYWORDS}
    for declared in ANSWER_KEYWORDS:  # 每一个都收（这里没有秘塔的密钥：过了关键字的检查，停在读密钥那一步）
        with pytest.raises(UsageError) as raised:
            answer_question("家用 NAS 怎么选", environ={}, **{declared.name: declared.unset})
        assert "METASO_API_KEY" in str(raised.value), declared.name
        if "`verify_answer`" in rows[declared.name]:
            assert verify_answer("RAID1 是镜像 [1]。", [{"text": "RAID1 是镜像。"}], environ={},
                                 **{declared.name: declared.unset}).exit_code in (0, 1)
        else:
            with pytest.raises(UsageError, match=f"verify_answer 不接受 {declared.name}"):
                verify_answer("RAID1 是镜像 [1]。", [{"text": "RAID1 是镜像。"}], **{declared.name: declared.unset})
    with pytest.raises(UsageError, match="answer_question 不接受 json"):
        answer_question("家用 NAS 怎么选", environ={}, json=True)


def test_the_readme_is_short_and_carries_one_dated_set_of_figures():
    """README 是给新来的人看的：不超过 120 行，只有一个日期（最新那组实测数字旁边的）；以前的测量放在
    docs/performance.md 的“历史”里。"""
    readme = (HERE / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 120
    assert len(re.findall(r"\b20\d\d-\d\d-\d\d\b|20\d\d 年", readme)) == 1
    assert "## 历史" in (HERE / "docs" / "performance.md").read_text(encoding="utf-8")


def test_no_file_cites_a_tracker_number():
    """读的人手里没有问题单：说明、注释和测试写出原因，不写问题单的编号。"""
    cited = re.compile(r"\bissues? ?#?\d+|问题单 ?#?\d+", re.IGNORECASE)
    paths = [HERE / "README.md", *(HERE / "docs").glob("*.md"), *HERE.glob("*.py"), HERE / "quickstart.sh",
             *(HERE / "sourced_answers").rglob("*.py"), *(HERE / "tests").glob("*.py"), *(HERE / "bench").glob("*.py")]
    found = [f"{path.relative_to(HERE)}: {match.group(0)}" for path in paths
             for match in cited.finditer(path.read_text(encoding="utf-8"))]
    assert found == []


def test_a_newly_registered_problem_kind_gets_a_row_with_what_it_means(monkeypatch):
    """问题的种类表取自 checker 的 PROBLEM_KINDS：新登记的一种自动多一行，后面各步怎样对待它也写在这一行里。"""
    date = Kind("日期不符", "sentence", certain=False, judge_may_decide=True, fix_may_recite=False, undecided=True,
                meaning="句子里的日期和所引资料说的不是同一天")
    monkeypatch.setitem(PROBLEM_KINDS, "date_mismatch", date)
    rows = reference_doc.kinds_table().splitlines()
    assert "| `date_mismatch` | 日期不符 | 一句话 | — | 总问 | — | 句子里的日期和所引资料说的不是同一天 |" in rows
    assert rows[2].startswith("| `missing_source` | 编号不存在 | 一句话 | 是 | 撤不掉 | 是 |")
