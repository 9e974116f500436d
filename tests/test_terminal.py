"""终端控制序列（颜色 ESC[31m、清屏 ESC[2J、OSC 8 链接……）整个去掉：核对、终端输出和审阅页用同一条规则，
在读任何一句话之前。只去掉 ESC 这一个字的话，剩下的“[2J”“[31m”会被当成文字核对（“[2J”里的数字 2 在资料里找不到）。"""
import json

import pytest

from sourced_answers.checker import DEFAULT_RULE, Source, TerminalFilter, check_answer, strip_terminal
from sourced_answers.steps.repair import fix_citations
from tests.support import cli_env, run_cli

SOURCE = Source(title="RAID 的几种级别", text="RAID1 用两块盘互为镜像，一块坏了数据还在。RAID5 至少要三块盘。")
SUPPORTED = "RAID1 用两块盘互为镜像 [1]。"

WRAPPED = [
    SUPPORTED + "\x1b[2J",                                   # 回答末尾的清屏
    "\x1b[31m" + SUPPORTED + "\x1b[0m",                      # 颜色包着一句有依据的话
    "RAID1 用两块\x1b[1m盘互为\x1b[0m镜像 [1]。",              # 序列夹在句子中间
    SUPPORTED + "\x1b]8;;http://127.0.0.1/\x07\x1b]8;;\x07",  # OSC 8 链接（空的链接文字）
    "\x9b31m" + SUPPORTED + "\x9b0m",                        # 8 位的 CSI
    SUPPORTED.replace("镜像", "镜\x1b[38;5;196m像"),          # 256 色
]


@pytest.mark.parametrize("answer", WRAPPED)
def test_a_supported_sentence_wrapped_in_terminal_sequences_passes(answer):
    report = check_answer(answer, [SOURCE])
    assert report.passed, [p.message for p in report.problems]


@pytest.mark.parametrize("answer", WRAPPED)
def test_the_checker_the_terminal_and_the_page_read_the_same_text(answer, tmp_path):
    shown = TerminalFilter().feed(answer)
    assert strip_terminal(answer) == shown and "[" not in shown.replace("[1]", "")
    saved, page = tmp_path / "saved.json", tmp_path / "page.html"
    saved.write_text(json.dumps({"answer": answer, "sources": [{"title": SOURCE.title, "text": SOURCE.text}]}),
                     encoding="utf-8")
    result = run_cli("--verify", str(saved), "--html", str(page), env=cli_env())
    assert result.returncode == 0 and "✓ 引用核对通过" in result.stdout, result.stdout + result.stderr
    html = page.read_text(encoding="utf-8")
    assert not any(left in html for left in ("[2J", "[31m", "[0m", "[1m", "\x1b", "\x9b")), html
    assert 'class="claim ok"' in html  # 那一句在页面上照样标成通过


def test_a_wrong_number_inside_colour_codes_is_still_caught():
    report = check_answer("\x1b[31mRAID5 至少要四块盘 [1]。\x1b[0m", [SOURCE])
    assert [p.kind for p in report.problems] == ["number_mismatch"]
    assert "31" not in report.problems[0].message and "四" in report.problems[0].message


def test_sequences_in_a_source_are_removed_too():
    coloured = Source(title="RAID", text="\x1b[32mRAID1 用两块盘互为镜像\x1b[0m，一块坏了数据还在。")
    assert check_answer(SUPPORTED, [coloured]).passed


def test_fix_works_on_the_text_the_checker_read():
    other = Source(title="备份", text="重要的数据要有一份离线备份，放在另一个地方。")
    answer = "\x1b[1m重要的数据要有一份离线备份，放在另一个地方 [1]。\x1b[0m"
    fixed, repairs, report = fix_citations(answer, [SOURCE, other], DEFAULT_RULE)
    assert report.passed and "[2]" in fixed and "\x1b" not in fixed, json.dumps([fixed, [r.kind for r in repairs]])


@pytest.mark.parametrize("opener", ["\x1b]0;", "\x1bP", "\x1b_", "\x1b^", "\x9d"])
def test_an_unterminated_string_sequence_cannot_hide_a_claim(opener):
    """没有结尾的 OSC、DCS……不是一个序列：只去掉开头，后面的文字照样核对（以前整行都去掉，编造的话就躲过了核对）。"""
    invented = "火星上的 NAS 可以用来煮咖啡，每天能省下 500 元电费 [1]。"
    report = check_answer(f"{SUPPORTED}\n\n{opener}{invented}", [SOURCE])
    assert not report.passed and any("火星" in (p.sentence or "") for p in report.problems)
    shown = TerminalFilter()
    pieces = [shown.feed(part) for part in (opener[:1], opener[1:] + invented[:5], invented[5:])]
    assert "火星上的 NAS" in "".join(pieces) + shown.finish()  # 终端上也看得见：同一条规则


def test_a_terminated_string_sequence_is_removed_whole_even_across_pieces():
    shown = TerminalFilter()
    text = "".join(shown.feed(part) for part in ("RAID\x1b]8;;http://127.0.0.1/", "\x1b", "\\链接\x1b]8;;\x07")) + shown.finish()
    assert text == "RAID链接"

