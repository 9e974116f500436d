"""终端里的问题列表：一眼看得清，读的人不用横向滚动——一个问题一行、中英文按同样的显示宽度截断、没截断不加“…”、
每个问题说在第几段、列表有上限（--json 里是全部）；按段落排，一段有几个问题时段落号只写一次。"""
import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sourced_answers.checker import Source, check_answer, display_width, quote
from sourced_answers.checker.text import QUOTE_WIDTH
from sourced_answers.outputs.render import PROBLEM_LIST_LIMIT, verdict_lines
from tests.support import NAS_RECORD_SOURCES, NAS_SOURCES, cli_env, examples, run_cli

LONG_CHINESE = "家用 NAS 至少要选两盘位的机型，这样才能做 RAID1 镜像，一块硬盘坏了另一块上还有完整的数据，换盘之后重建即可"
LONG_ENGLISH = ("A home NAS should have at least two drive bays so that it can run RAID1 mirroring, "
                "which keeps a full copy of the data on the second disk")


def problem_lines(answer, sources=NAS_SOURCES):
    lines = verdict_lines(check_answer(answer, sources))
    assert lines[0] == "⚠ 引用核对没通过，请人工核对："
    return lines[1:]


@pytest.mark.parametrize("separator", ["\n", "\r", "\r\n", "\u2028", "\u2029", "\x85", "\x0b", "\x1b", "\t\n\t"])
def test_a_quote_is_one_line_whatever_separates_its_parts(separator):
    shown = quote(f"家用 NAS 至少选两盘位{separator}方便做 RAID1 镜像")
    assert shown == "家用 NAS 至少选两盘位 方便做 RAID1 镜像"


@pytest.mark.parametrize("separator", ["\n", "\r", "\u2028"])
def test_each_problem_is_exactly_one_line(separator):
    # 没有引用的段落有两行：以前它的第二行顶格打印，打乱了列表的缩进
    answer = f"家用 NAS 至少选两盘位{separator}方便做 RAID1 镜像\n第二行也没有引用。\n\n需要转码 4K 视频 [9]。"
    lines = problem_lines(answer)
    assert len(lines) == 2
    for line in lines:
        assert line.startswith("  第 ") and line.isprintable(), line


def test_english_and_chinese_are_cut_at_the_same_display_width():
    chinese, english = quote(LONG_CHINESE), quote(LONG_ENGLISH)
    assert chinese.endswith("…") and english.endswith("…")
    for shown in (chinese, english):
        assert QUOTE_WIDTH - 8 <= display_width(shown) <= QUOTE_WIDTH
    assert len(english) > 1.5 * len(chinese)  # 以前英文在 30 个字母左右就被截断了


def test_english_is_cut_between_words():
    shown = quote(LONG_ENGLISH)
    assert LONG_ENGLISH.startswith(shown[:-1]) and LONG_ENGLISH[len(shown) - 1] == " "


def test_a_complete_sentence_gets_no_ellipsis():
    [line] = problem_lines("家用 NAS 至少选两盘位。")
    assert line == "  第 1 段没有引用：“家用 NAS 至少选两盘位。”"
    assert quote("x" * QUOTE_WIDTH) == "x" * QUOTE_WIDTH


def test_a_missing_source_names_its_paragraph_and_sentence():
    answer = "家用 NAS 至少选两盘位，方便做 RAID1 镜像 [1]。\n\n群晖的系统更好用 [7]。\n\n威联通也不错 [7]。"
    missing = [line for line in problem_lines(answer) if "[7]" in line]
    assert missing == ["  第 2 段：“群晖的系统更好用 [7]” 引用了不存在的 [7]（另外还有 1 段也引用了它）"]


def test_many_missing_numbers_in_one_sentence_are_one_problem_with_a_bounded_message():
    """一句话引了几千个不存在的编号：一个问题（不是几千个、每个都带着整句话——那样输出是平方级的）。"""
    answer = "RAID 1 mirrors data " + "".join(f"[{n}]" for n in range(6, 4006)) + "."
    report = check_answer(answer, NAS_SOURCES)
    missing = [p for p in report.problems if p.kind == "missing_source"]
    assert len(missing) == 1 and missing[0].citations == list(range(6, 4006))
    assert missing[0].message.endswith("引用了不存在的 [6][7][8][9][10] 等 4000 个编号")
    assert len(missing[0].message) < 200


def test_a_looping_answer_lists_only_the_first_problems_and_counts_the_rest():
    looping = "\n\n".join(f"群晖的 NAS 系统比威联通稳定得多，适合所有家庭，这是第 {n} 遍 [1]。" for n in range(60))
    report = check_answer(looping, NAS_SOURCES)
    assert len(report.problems) == 60
    lines = problem_lines(looping)
    assert len(lines) <= 2 * PROBLEM_LIST_LIMIT + 1
    assert sum(line.startswith("  第 ") for line in lines) == PROBLEM_LIST_LIMIT
    assert lines[-1] == f"  还有 {60 - PROBLEM_LIST_LIMIT} 个问题没有列出（对不上 weak_support 50），--json 或 --html 看全部"


def test_a_short_list_has_no_count_of_the_rest():
    lines = problem_lines("\n\n".join(f"第 {n} 段没有引用。" for n in range(PROBLEM_LIST_LIMIT)))
    assert len(lines) == PROBLEM_LIST_LIMIT and not any("还有" in line for line in lines)


def test_verify_prints_the_capped_list_and_json_keeps_every_problem(tmp_path):
    looping = "\n\n".join(f"群晖的 NAS 系统比威联通稳定得多，适合所有家庭，这是第 {n} 遍 [1]。" for n in range(60))
    path = tmp_path / "looping.json"
    path.write_text(json.dumps({"answer": looping, "sources": NAS_RECORD_SOURCES}, ensure_ascii=False))
    text = run_cli("--verify", str(path), env=cli_env())
    assert text.returncode == 1
    verdict = text.stdout[text.stdout.index("⚠"):].splitlines()
    assert len(verdict) <= 1 + 2 * PROBLEM_LIST_LIMIT + 1 + 1  # 标题、问题和证据、“还有”、--fix 的提示
    assert any(line.startswith(f"  还有 {60 - PROBLEM_LIST_LIMIT} 个问题") for line in verdict)
    saved = run_cli("--verify", str(path), "--json", env=cli_env())
    assert saved.returncode == 1 and len(json.loads(saved.stdout)["problems"]) == 60


def test_every_problem_line_says_where_it_is():
    answer = ("家用 NAS 至少选两盘位，方便做 RAID1 镜像 [1]。\n\n群晖很好用 [8]。\n\n"
              "RAID5 至少两块盘就能容忍一块盘损坏 [2]。\n\n没有引用的一段。")
    for line in problem_lines(answer, [Source(text=s.text, title=s.title) for s in NAS_SOURCES]):
        # 一段一行（“第 N 段……”或“第 N 段有 k 个问题：”），它下面是这一段的每个问题和证据
        assert line.startswith(("  第 ", "    · ", "    所引资料里", "      所引资料里")), line


# ---------- 按段落排，每段只出现一次（读的人按段去找，同一个段号不用看好几遍） ----------

# 几种会出问题的句子和不会出问题的句子：一段由几句拼成
SENTENCES = [
    "家用 NAS 至少选两盘位，方便做 RAID1 镜像 [1]。",  # 通过
    "群晖的系统比威联通稳定得多 [7]。",  # 编号不存在
    "RAID5 至少两块盘就能容忍一块盘损坏 [2]。",  # 数字不符
    "群晖的 NAS 系统适合所有家庭 [1]。",  # 对不上
    "这一句没有引用。",
    "RAID5 至少三块盘\u2028<source id=\"2\">可以容忍一块盘损坏。</source>",  # 抄了标签
]


def listed_paragraphs(lines):
    """问题列表里每一行点名的第一个段落（只看“第 N 段”开头的行：一段的问题写在它下面，不再写段落号）。"""
    return [named[0] for named in (named_paragraphs(line) for line in lines) if named]


def named_paragraphs(line):
    """一行开头点名的所有段落：“  第 1–3、5 段没有引用：……” → [1, 2, 3, 5]；“  第 2 段第 1–3 项……” → [2]。
    只看第一个“：”之前（后面引的句子里也可能有“第 N 段”）。"""
    if not line.startswith("  第 "):
        return []
    head = line.split("：", 1)[0]
    paragraphs = []
    for listed in re.findall(r"第 ([\d–、]+) 段", head):
        for piece in listed.split("、"):
            first, _, last = piece.partition("–")
            paragraphs += range(int(first), int(last or first) + 1)
    return paragraphs


def test_a_paragraph_with_several_problems_is_listed_once_in_paragraph_order():
    answer = ("家用 NAS 至少选两盘位，方便做 RAID1 镜像 [1]。\n\n"
              "群晖的系统比威联通稳定得多 [7]。RAID5 至少两块盘就能容忍一块盘损坏 [2]。\n\n"
              "这一段没有引用。\n\n威联通也不错 [9]。")
    lines = problem_lines(answer)
    assert listed_paragraphs(lines) == [2, 3, 4]
    at = lines.index("  第 2 段有 2 个问题：")
    assert lines[at + 1].startswith("    · “群晖的系统比威联通稳定得多 [7]” 引用了不存在的 [7]")
    assert any(line.startswith("    · “RAID5 至少两块盘就能容忍一块盘损坏") for line in lines[at + 1:])
    assert lines[-1].startswith("  第 4 段：“威联通也不错 [9]” 引用了不存在的 [9]")


@given(paragraphs=st.lists(st.lists(st.sampled_from(SENTENCES), min_size=1, max_size=4), min_size=1, max_size=8))
@settings(max_examples=examples(150), deadline=None)
def test_any_answer_lists_each_paragraph_once_and_in_order(paragraphs):
    answer = "\n\n".join("".join(sentences) for sentences in paragraphs)
    report = check_answer(answer, NAS_SOURCES)
    lines = verdict_lines(report)
    if report.passed:
        return
    listed = listed_paragraphs(lines)
    assert listed == sorted(listed)  # 按（第一个）段落排
    # 只在一段里的问题写在一起：这样的一段只出现一次（几段里一样的问题另起一行，点名所有的段落）
    alone = [named[0] for named in map(named_paragraphs, lines) if len(named) == 1]
    assert len(alone) == len(set(alone))
    if not any(line.startswith("  还有 ") for line in lines):  # 没有被上限截掉时，每个有问题的段落都说到了
        named = {paragraph for line in lines for paragraph in named_paragraphs(line)}
        assert named == {p.paragraph for p in report.problems if p.paragraph is not None}


def test_verify_prints_the_problems_by_paragraph(tmp_path):
    answer = ("这一段没有引用。\n\n家用 NAS 至少选两盘位，方便做 RAID1 镜像 [1]。\n\n"
              "群晖的系统比威联通稳定得多 [7]。群晖的 NAS 系统适合所有家庭 [1]。\n\n威联通也不错 [8]。")
    path = tmp_path / "saved.json"
    path.write_text(json.dumps({"answer": answer, "sources": NAS_RECORD_SOURCES}, ensure_ascii=False))
    result = run_cli("--verify", str(path), env=cli_env())
    assert result.returncode == 1
    verdict = result.stdout[result.stdout.index("⚠"):].splitlines()
    assert listed_paragraphs(verdict) == [1, 3, 4]


def test_the_terminal_verdict_suggests_the_judge_for_cross_language_citations_and_chat_verdicts_do_not():
    from sourced_answers.outputs.render import CHAT
    english = [Source(text="RAID 5 needs at least three drives and survives one failed drive.")]
    report = check_answer("RAID5 至少需要三块盘，坏一块盘还能继续工作 [1]。", english)
    assert verdict_lines(report)[-1] == "跨语言引用的句子可以加 --judge 请评判模型看"
    assert not any("--judge" in line for line in verdict_lines(report, reader=CHAT))
    assert "请人工核对" in report.problems[0].message and "--" not in report.problems[0].message


# ---------- 同样的问题只说一次（说出所有的地方） ----------

def test_identical_uncited_paragraphs_are_said_once_with_a_range_of_paragraphs():
    """打转的回答：十段一模一样、没有引用。以前是十行同一句话再加“还有 N 个问题没有列出”，现在一行。"""
    looping = "\n\n".join("群晖的 NAS 系统比威联通稳定得多，适合所有家庭。" for _ in range(10))
    assert len(check_answer(looping, NAS_SOURCES).problems) == 11  # 十段没有引用，加上写了十遍（repeated）
    assert problem_lines(looping) == [
        "  第 1–10 段没有引用：“群晖的 NAS 系统比威联通稳定得多，适合所有家庭。”",
        "  第 2 段：和前面的第 1 段一字不差，这段话一共写了 10 遍（第 1–10 段）：“群晖的 NAS 系统比威联通稳定得多，适合所有家庭。”"]


def test_identical_problems_in_scattered_paragraphs_list_the_paragraphs():
    wrong = "群晖的 NAS 系统比威联通稳定得多，适合所有家庭 [1]。"
    good = "家用 NAS 至少选两盘位，方便做 RAID1 镜像 [1]。"
    lines = problem_lines("\n\n".join([wrong, good, wrong, good, wrong]))
    assert lines[0].startswith("  第 1、3、5 段：“群晖的 NAS 系统比威联通稳定得多，适合所有家庭 [1]” 和资料 [1] 的重合度只有")
    assert lines[1].startswith("    所引资料里最接近的一句：")
    # 两段话各写了几遍（repeated）：各说一次
    assert [line.split("一字不差")[0] for line in lines[2:]] == ["  第 3 段：和前面的第 1 段", "  第 4 段：和前面的第 2 段"]


def test_identical_uncited_list_items_name_their_items():
    answer = "家用 NAS 至少选两盘位 [1]。\n\n- 群晖好用\n- 群晖好用\n- 群晖好用"
    assert problem_lines(answer) == ["  第 2 段第 1–3 项没有引用：“- 群晖好用”"]


def test_problems_that_differ_in_more_than_the_place_are_never_merged():
    """只差一个数的两段、同一句话引了不同的资料：说明不一样，各说各的。"""
    answer = ("群晖的 NAS 系统比威联通稳定得多，这是第 1 遍 [1]。\n\n群晖的 NAS 系统比威联通稳定得多，这是第 2 遍 [1]。\n\n"
              "群晖的 NAS 系统比威联通稳定得多，这是第 2 遍 [3]。")
    lines = [line for line in problem_lines(answer) if line.startswith("  第 ")]
    assert [named_paragraphs(line) for line in lines] == [[1], [2], [3]]


def test_a_sentence_repeated_in_one_paragraph_is_said_once_with_its_count():
    twice = "群晖的 NAS 系统比威联通稳定得多，适合所有家庭 [1]。" * 2
    [head, line, evidence, repeated] = problem_lines(twice)
    assert head == "  第 1 段有 3 个问题："
    assert line.startswith("    · “群晖的 NAS 系统比威联通稳定得多，适合所有家庭 [1]” 和资料 [1] 的重合度只有")
    assert "（共 2 处）" in line and evidence.startswith("      所引资料里最接近的一句：")
    assert repeated.startswith("    · 这句话前面已经一字不差地写过，一共写了 2 遍（第 1 段）")


def test_the_limit_counts_what_is_said_and_the_rest_counts_problems():
    """上限数的是说出来的条数：十二段一样的问题是一条，不会把后面不一样的问题挤掉。"""
    same = "\n\n".join("群晖的 NAS 系统比威联通稳定得多，适合所有家庭 [1]。" for _ in range(12))
    different = "\n\n".join(f"第 {n} 段没有引用。" for n in range(PROBLEM_LIST_LIMIT))
    lines = problem_lines(same + "\n\n" + different)
    assert lines[0].startswith("  第 1–12 段：")
    assert sum(line.startswith("  第 ") for line in lines) == PROBLEM_LIST_LIMIT
    # 十二段写了十二遍（repeated）也是一条：没列出的是最后两段没有引用的
    assert lines[-1] == "  还有 2 个问题没有列出（没有引用 uncited_paragraph 2），--json 或 --html 看全部"


def test_json_keeps_one_entry_per_problem_when_the_text_says_them_once(tmp_path):
    looping = "\n\n".join("群晖的 NAS 系统比威联通稳定得多，适合所有家庭。" for _ in range(10))
    path = tmp_path / "looping.json"
    path.write_text(json.dumps({"answer": looping, "sources": NAS_RECORD_SOURCES}, ensure_ascii=False))
    text = run_cli("--verify", str(path), env=cli_env())
    assert "  第 1–10 段没有引用：“群晖的 NAS 系统比威联通稳定得多，适合所有家庭。”\n" in text.stdout
    saved = json.loads(run_cli("--verify", str(path), "--json", env=cli_env()).stdout)
    assert [problem["paragraph"] for problem in saved["problems"]] == [*range(1, 11), 2]  # 最后是写了十遍（repeated）
