"""照抄进回答的提示词标签：自带的小模型回答中文问题时会把提示词里的 <source id="6" …> 抄进回答，
以前只报“没有引用”。现在另报一个 copied_markup，说清楚发生了什么；标签本身不算引用。"""
import json

from sourced_answers.checker import PROBLEM_KINDS, check_answer
from sourced_answers.model.prompts import build_messages
from sourced_answers.outputs.render import verdict_lines
from tests.support import GOOD_ANSWER, NAS_RECORD_SOURCES, NAS_SOURCES, cli_env, run_cli

COPIED = ('<source id="2" title="RAID1 和 RAID5 的区别" date="日期未知">\n'
          "RAID5 至少三块盘，可以容忍一块盘损坏。\n</source>\n\n"
          "家用 NAS 至少选两盘位，方便做 RAID1 镜像 [1]。")


def kinds(answer):
    return [problem.kind for problem in check_answer(answer, NAS_SOURCES).problems]


def test_the_kind_is_listed_with_a_chinese_name():
    assert PROBLEM_KINDS["copied_markup"].label == "抄了提示词标记"


def test_copied_source_tags_are_named_for_what_they_are():
    problems = check_answer(COPIED, NAS_SOURCES).problems
    [copied] = [p for p in problems if p.kind == "copied_markup"]
    assert copied.paragraph == 1 and copied.citations == [2]
    assert '<source id="2">' in copied.message and "（本段共 2 处）" in copied.message
    assert "标签不算引用" in copied.message and copied.message.endswith("如 [2]")
    # 标签不是引用：这一段照样没有引用，第 2 条资料照样没被引用
    assert "uncited_paragraph" in kinds(COPIED)
    assert 2 in check_answer(COPIED, NAS_SOURCES).unused


def test_the_problem_line_says_where_and_quotes_one_line():
    answer = "家用 NAS 至少选两盘位 [1]。\n\nRAID5 至少三块盘\u2028<source id=\"2\">可以容忍一块盘损坏。</source>"
    lines = verdict_lines(check_answer(answer, NAS_SOURCES))
    # 第 2 段既没有引用、又抄了标签：段落号只写一次，下面一个问题一行
    at = lines.index("  第 2 段有 2 个问题：")
    [line] = [line for line in lines if "照抄" in line]
    assert lines.index(line) > at
    assert line.startswith('    · “RAID5 至少三块盘 <source id="2">可以容忍一块盘损坏” 照抄了')
    assert line.isprintable()


def test_the_exact_markup_of_our_prompt_is_recognised():
    prompt = build_messages("家用 NAS 怎么选", NAS_SOURCES)[1]["content"]
    answer = prompt.split("\n\n", 1)[1]  # 模型把资料块原样抄了一遍
    assert kinds(answer).count("copied_markup") >= 1
    english = build_messages("How to choose a NAS", NAS_SOURCES)[1]["content"]
    assert "copied_markup" in kinds(english)


def test_one_problem_per_paragraph_however_many_tags():
    answer = " ".join(f'<source id="{n}">第 {n} 句。</source>' for n in range(1, 6)) + "\n\n" + '</source>'
    problems = [p for p in check_answer(answer, NAS_SOURCES).problems if p.kind == "copied_markup"]
    assert [p.paragraph for p in problems] == [1, 2]
    assert problems[0].citations == [1, 2, 3, 4, 5] and "（本段共 10 处）" in problems[0].message
    assert problems[1].citations == []
    assert problems[1].message == "照抄了提示词里包资料用的标签 </source>：标签不算引用，引用要写在句末的方括号里，如 [1]"


def test_a_tag_for_a_source_that_does_not_exist_suggests_no_such_number():
    # 自带的模型照着提示词的格式续写，编出了第 6、7 条资料
    [copied] = [p for p in check_answer('<source id="6" title="家用 NAS 设议">', NAS_SOURCES).problems
                if p.kind == "copied_markup"]
    assert copied.citations == [6] and copied.message.endswith("如 [1]") and "[6]" not in copied.message


def test_spellings_the_models_use():
    for tag in ("<source id=6>", "< source id = '6' >", "<SOURCE ID=\"6\">", "＜source id=\"6\"＞", "</ source >"):
        assert "copied_markup" in kinds(f"家用 NAS 至少选两盘位 {tag} [1]。"), tag


def test_html_source_elements_and_plain_words_are_not_markup():
    for text in ('视频要写成 <source src="a.mp4" type="video/mp4"> [1]。', "open source 的系统 [1]。",
                 "<sources> 和 <source-map> [1]。", "资料来源（source）是第 1 条 [1]。"):
        assert "copied_markup" not in kinds(text), text
    assert "copied_markup" not in kinds('```html\n<source id="1">\n```\n\n' + GOOD_ANSWER)
    assert "copied_markup" not in kinds(GOOD_ANSWER)


def test_a_model_that_copies_tags_fails_the_check_with_the_documented_code(tmp_path):
    path = tmp_path / "copied.json"
    path.write_text(json.dumps({"answer": COPIED, "sources": NAS_RECORD_SOURCES}, ensure_ascii=False))
    text = run_cli("--verify", str(path), env=cli_env())
    assert text.returncode == 1
    assert '照抄了提示词里包资料用的标签 <source id="2">' in text.stdout
    saved = run_cli("--verify", str(path), "--json", env=cli_env())
    assert saved.returncode == 1
    assert "copied_markup" in [p["kind"] for p in json.loads(saved.stdout)["problems"]]


def test_the_review_page_flags_the_sentence_with_the_copied_tag(tmp_path):
    path = tmp_path / "copied.json"
    path.write_text(json.dumps({"answer": COPIED, "sources": NAS_RECORD_SOURCES}, ensure_ascii=False))
    page = tmp_path / "review.html"
    assert run_cli("--verify", str(path), "--html", str(page), env=cli_env()).returncode == 1
    html = page.read_text(encoding="utf-8")
    assert "照抄了提示词里包资料用的标签 &lt;source id=&quot;2&quot;&gt;" in html


def test_every_problem_kind_is_documented():
    from tests.support import HERE
    usage = (HERE / "docs" / "reference.md").read_text(encoding="utf-8")  # JSON 格式一节列出每一种
    checker = (HERE / "docs" / "checker.md").read_text(encoding="utf-8")
    for kind in PROBLEM_KINDS:
        assert f"`{kind}`" in usage, kind
    assert "copied_markup" in checker
