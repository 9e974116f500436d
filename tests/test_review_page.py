"""审阅页（--html）：转义、只做 http(s) 链接、CSP、JSON Lines 一页多段、不跟随符号链接、写不出来时的错误；
以及在真实的无头 Chromium 里打开：能从 file:// 加载、截图不是空白、标出的句子和资料各有一个元素、
带恶意标记的网页改不了 document.title。没有 Chromium 时跳过浏览器测试（CI 里一定装了，没装就算失败）。"""
import json
import os
import re
import shutil
import subprocess
import unicodedata
import zlib
from html.parser import HTMLParser
from pathlib import Path

import pytest

from fake_metaso import NAS_PAGES
from sourced_answers.checker import (
    PROBLEM_KINDS,
    Source,
    SourceIndexes,
    claim_words,
    compare,
    read_claim,
    support_model,
)
from sourced_answers.core.masking import REDACTED
from sourced_answers.outputs.review_page import render_page
from tests.support import GOOD_ANSWER, INVENTED, WRONG_NUMBER, cli_env, run_cli

NAS = [{"title": p["title"], "link": f"https://nas.example/{i}", "text": p["text"]} for i, p in enumerate(NAS_PAGES)]
HOSTILE_TITLE = '<script>document.title="pwned"</script>资料'
HOSTILE_TEXT = '正文<img src=x onerror="document.title=\'pwned\'"><svg onload="document.title=\'pwned\'">结束'
HOSTILE = {
    "question": "<b>问题</b><script>document.title='pwned'</script>",
    "model": "<img src=x onerror=alert(1)>",
    "answer": GOOD_ANSWER + "\n\n<script>document.title='pwned'</script>群晖的 NAS 系统比威联通稳定得多 [4]。",
    "sources": NAS[:3] + [{"title": HOSTILE_TITLE, "link": "javascript:document.title='pwned'", "text": HOSTILE_TEXT}],
}


def write_input(tmp_path, *records):
    path = tmp_path / "saved.jsonl"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n", encoding="utf-8")
    return str(path)


def review(tmp_path, *records, extra=()):
    page = tmp_path / "review.html"
    result = run_cli("--verify", write_input(tmp_path, *records), "--html", str(page), *extra, env=cli_env())
    return result, page


class Elements(HTMLParser):
    """数元素：按 class、按标签，并取出 <title>。"""

    def __init__(self):
        super().__init__()
        self.classes = []
        self.tags = []
        self.title = ""
        self.in_title = False

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.classes.append((tag, dict(attrs).get("class") or ""))
        self.in_title = tag == "title"

    def handle_endtag(self, tag):
        self.in_title = False

    def handle_data(self, data):
        if self.in_title:
            self.title += data

    def count(self, css):
        return sum(1 for _, classes in self.classes if set(css.split()) <= set(classes.split()))


def parse(text):
    elements = Elements()
    elements.feed(text)
    return elements


class Reading(HTMLParser):
    """按文档顺序读出回答里的句子和原因：[["claim", class, 文字]、["reason", id, 文字]，或者同样的问题在别处写的
    ["same", 链到的原因, 文字]]。"""
    VOID = {"br", "img", "hr", "meta", "input", "wbr"}

    def __init__(self):
        super().__init__()
        self.items = []
        self.depth = 0

    def handle_starttag(self, tag, attrs):
        if tag in self.VOID:
            return
        if self.depth:
            self.depth += 1
            return
        attrs = dict(attrs)
        css = (attrs.get("class") or "").split()
        if tag == "span" and "claim" in css:
            self.items.append(["claim", " ".join(css), ""])
            self.depth = 1
        elif tag == "div" and "reason" in css and "same" in css:
            self.items.append(["same", None, ""])
            self.depth = 1
        elif tag == "div" and "reason" in css:
            self.items.append(["reason", attrs.get("id"), ""])
            self.depth = 1

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag):
        if self.depth and tag not in self.VOID:
            self.depth -= 1

    def handle_data(self, data):
        if self.depth:
            self.items[-1][2] += data


class SameLinks(HTMLParser):
    """“同第 N 段”那几行链到的原因（按文档顺序）。"""

    def __init__(self):
        super().__init__()
        self.targets = []
        self.inside = 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "div" and {"reason", "same"} <= set((attrs.get("class") or "").split()):
            self.inside = 1
        elif self.inside and tag == "a":
            self.targets.append(attrs["href"].removeprefix("#"))
            self.inside = 0


def same_links(text):
    parser = SameLinks()
    parser.feed(text)
    return parser.targets


def reading(text):
    parser = Reading()
    parser.feed(text)
    return parser.items


def sentence_above(items, position):
    """第 position 项（一个原因）上面最近的那一句。"""
    for kind, css, text in reversed(items[:position]):
        if kind == "claim":
            return css, text
    return None


def problems_of(tmp_path, record):
    result = run_cli("--verify", write_input(tmp_path, record), "--json", env=cli_env())
    return json.loads(result.stdout)["problems"]


# 七个问题，五种：引了不存在的编号、一段三行都没有引用、两个一样的列表项没有引用、引错了资料、数字不符、编出来的一句
MANY_PROBLEMS = {
    "question": "家用 NAS 怎么选", "model": "demo", "sources": NAS,
    "answer": ("家用 NAS 至少选两盘位，方便做 RAID1 镜像 [1]。需要转码 4K 视频时选带核显的 Intel 型号 [2]。\n\n"
               "RAID5 至少两块盘就能容忍一块盘损坏 [2]。" + INVENTED + "\n\n"
               "第一行没有引用。\n第二行也没有引用。\n第三行还是没有。\n\n"
               "- NAS 两盘位\n- NAS 两盘位\n\n"
               "远程访问优先使用 VPN 或 Tailscale [9]。"),
}


# ---------- 页面本身 ----------

def test_everything_from_pages_and_the_model_is_escaped(tmp_path):
    result, page = review(tmp_path, HOSTILE)
    assert result.returncode == 1, result.stderr
    text = page.read_text(encoding="utf-8")
    elements = parse(text)
    assert "script" not in elements.tags and "img" not in elements.tags and "svg" not in elements.tags
    assert "&lt;script&gt;document.title=&quot;pwned&quot;&lt;/script&gt;资料" in text
    assert "onerror=&quot;document.title" in text


def test_only_http_links_become_links(tmp_path):
    _, page = review(tmp_path, HOSTILE)
    text = page.read_text(encoding="utf-8")
    assert 'href="https://nas.example/0"' in text
    assert 'href="javascript:' not in text and "javascript:document.title=&#x27;pwned&#x27;" in text


def test_page_forbids_scripts_and_outside_resources(tmp_path):
    _, page = review(tmp_path, {"answer": GOOD_ANSWER, "sources": NAS})
    text = page.read_text(encoding="utf-8")
    assert "Content-Security-Policy" in text and "default-src 'none'" in text and "script-src 'none'" in text
    assert "<link" not in text and "src=" not in text and "@import" not in text and "url(" not in text


def test_verdict_is_in_words_not_colour_alone(tmp_path):
    _, good = review(tmp_path, {"answer": GOOD_ANSWER, "sources": NAS})
    assert "✓ 引用核对通过" in good.read_text(encoding="utf-8")
    _, bad = review(tmp_path, {"answer": INVENTED, "sources": NAS})
    assert "⚠ 引用核对没通过：1 个问题" in bad.read_text(encoding="utf-8")


def test_flagged_sentence_shows_reason_overlap_and_links_to_highlighted_evidence(tmp_path):
    answer = "RAID5 至少两块盘就能容忍一块盘损坏 [2]。"
    _, page = review(tmp_path, {"answer": answer, "sources": NAS})
    text = page.read_text(encoding="utf-8")
    elements = parse(text)
    assert elements.count("claim flagged") == 1 and elements.count("source") == 5
    assert "在同一处说的是“三块”" in text and "（重合度 " in text
    assert '<a href="#ev-1">RAID5 至少三块盘' in text and '<mark id="ev-1">RAID5 至少三块盘' in text


def test_every_link_to_a_reason_or_evidence_has_one_target(tmp_path):
    """被标出的句子链接到它的“为什么”，证据链接到资料里的高亮：每个 #id 都有且只有一个元素。"""
    import re
    answer = "RAID5 至少两块盘就能容忍一块盘损坏 [2]。\n\n群晖的 NAS 系统比威联通稳定得多，适合所有家庭 [1]。"
    _, page = review(tmp_path, {"answer": answer, "sources": NAS})
    text = page.read_text(encoding="utf-8")
    ids = re.findall(r'\bid="([^"]+)"', text)
    assert len(ids) == len(set(ids))
    links = set(re.findall(r'href="#([^"]+)"', text))
    assert {"why-0", "ev-1"} <= links and links <= set(ids)


def test_identical_uncited_items_are_explained_once_naming_every_item(tmp_path):
    """三个一样的、没有引用的列表项是三个问题（--json 里三项），页面上说一次：每项都标出来，原因只在第一项下面，
    说出所有的项；另外两项下面一行“同第 2 段第 1 项”链到它。整段没有引用的段落：每一句都标出来，原因只写一次。"""
    answer = ("家用 NAS 至少选两盘位 [1]。\n\n- NAS 两盘位\n- NAS 两盘位\n- NAS 两盘位\n\n"
              "第一句没有引用。第二句也没有。")
    result, page = review(tmp_path, {"answer": answer, "sources": NAS})
    problems = problems_of(tmp_path, {"answer": answer, "sources": NAS})
    assert [p["kind"] for p in problems].count("uncited_paragraph") == 4
    text = page.read_text(encoding="utf-8")
    assert parse(text).count("claim flagged") == 5
    items = reading(text)
    reasons = [words for kind, _, words in items if kind == "reason"]
    assert reasons == ["⚠ 没有引用（第 2 段第 1–3 项）：“- NAS 两盘位”", "⚠ 没有引用：“第一句没有引用。第二句也没有。”"]
    assert [words for kind, _, words in items if kind == "same"] == ["⚠ 没有引用：同第 2 段第 1 项"] * 2
    first_item = next(anchor for kind, anchor, _ in items if kind == "reason")
    assert same_links(text) == [first_item] * 2


def test_identical_problems_in_several_paragraphs_are_explained_once(tmp_path):
    """打转的回答：四段一样的、对不上资料的话。原因写一次（说出第 1–4 段），并排的对照也只放一次；
    别的三段下面一行“同第 1 段”。"""
    looping = "\n\n".join(["群晖的 NAS 系统比威联通稳定得多，适合所有家庭 [1]。"] * 4)
    _, page = review(tmp_path, {"answer": looping, "sources": NAS})
    text = page.read_text(encoding="utf-8")
    items = reading(text)
    [reason, repeated] = [words for kind, _, words in items if kind == "reason"]
    assert reason.startswith("⚠ 对不上（第 1–4 段）：“群晖的 NAS 系统比威联通稳定得多，适合所有家庭 [1]” 和资料 [1]")
    # 同一段话写了四遍（repeated）：原因写在第二遍下面
    assert repeated.startswith("⚠ 重复：和前面的第 1 段一字不差，这段话一共写了 4 遍（第 1–4 段）")
    assert [kind for kind, _, _ in items] == ["claim", "reason", "claim", "reason", "same", "claim", "same", "claim",
                                              "same"]
    assert text.count('<div class="compare">') == 1


def test_a_better_source_is_linked(tmp_path):
    _, page = review(tmp_path, {"answer": "需要转码 4K 视频时选带核显的 Intel 型号 [2]。", "sources": NAS})
    text = page.read_text(encoding="utf-8")
    assert "重合度只有 0%" in text and '可能更合适的资料：<a href="#src-1">[1]</a>' in text


def test_json_lines_give_one_page_with_a_section_per_answer(tmp_path):
    result, page = review(tmp_path, {"answer": GOOD_ANSWER, "sources": NAS}, {"answer": INVENTED, "sources": NAS})
    elements = parse(page.read_text(encoding="utf-8"))
    assert result.returncode == 1
    assert sum(1 for tag, css in elements.classes if tag == "section" and "answer-block" in css) == 2
    assert elements.count("source") == 10 and elements.count("claim flagged") == 1


def test_repairs_are_listed_with_fix(tmp_path):
    result, page = review(tmp_path, {"answer": "需要转码 4K 视频时选带核显的 Intel 型号 [2]。", "sources": NAS},
                          extra=("--fix",))
    text = page.read_text(encoding="utf-8")
    assert result.returncode == 0 and "<h2>已修正</h2>" in text and "改引" in text


def test_a_symlink_at_the_path_is_neither_followed_nor_replaced(tmp_path):
    precious = tmp_path / "precious.txt"
    precious.write_text("别动我", encoding="utf-8")
    link = tmp_path / "review.html"
    link.symlink_to(precious)
    result = run_cli("--verify", write_input(tmp_path, {"answer": GOOD_ANSWER, "sources": NAS}), "--html", str(link),
                     env=cli_env())
    assert result.returncode == 2 and "符号链接" in result.stderr and result.stdout == ""
    assert precious.read_text(encoding="utf-8") == "别动我"
    assert link.is_symlink()


def test_failure_to_write_is_exit_2_and_the_answer_is_still_printed(tmp_path, monkeypatch):
    from sourced_answers.core import output_files
    path = write_input(tmp_path, {"answer": GOOD_ANSWER, "sources": NAS})
    page = tmp_path / "review.html"
    real_replace = output_files.os.replace

    def disk_full_at_the_end(source, target):  # 开始前试写时能写，真正写的时候失败（比如磁盘这时满了）
        if str(target) == str(page):
            raise OSError(28, "No space left on device")
        real_replace(source, target)

    monkeypatch.setattr(output_files.os, "replace", disk_full_at_the_end)
    result = run_cli("--verify", path, "--html", str(page), env=cli_env())
    assert result.returncode == 2
    assert result.stdout.startswith(GOOD_ANSWER) and "✓ 引用核对通过" in result.stdout
    assert "✗ 写不了审阅页" in result.stderr and "磁盘已满" in result.stderr and not page.exists()


def test_a_directory_that_cannot_be_written_is_found_before_any_work(tmp_path):
    path = write_input(tmp_path, {"answer": GOOD_ANSWER, "sources": NAS})
    # 目录在、却写不进去（连 root 也不行）：开始前试着写一下就知道
    result = run_cli("--verify", path, "--html", "/proc/self/review.html", env=cli_env())
    assert result.returncode == 2 and result.stdout == ""
    assert "✗ 写不了审阅页" in result.stderr and "写不进去" in result.stderr


def test_question_run_writes_the_page(model_server, tmp_path):
    page = tmp_path / "run.html"
    env = cli_env(None, model_server, ANS_MODEL="wrong-source")
    result = run_cli("--demo", "家用 NAS 怎么选", "--html", str(page), env=env)
    text = page.read_text(encoding="utf-8")
    assert result.returncode == 1 and "模型：wrong-source" in text and "家用 NAS 怎么选" in text
    assert parse(text).count("claim flagged") == 1


def test_html_with_eval_is_a_usage_error(tmp_path):
    result = run_cli("--eval", "questions.txt", "--html", str(tmp_path / "x.html"), env=cli_env())
    assert result.returncode == 2 and "--html" in result.stderr


# ---------- 原因：写在哪里、写几次、写什么 ----------

def test_each_reason_stands_right_under_its_sentence(tmp_path):
    """原因不另列一处：每个原因紧跟在它说的那一句后面（中间没有别的句子），整段的问题跟在那一段的最后一行后面。"""
    problems = problems_of(tmp_path, MANY_PROBLEMS)
    _, page = review(tmp_path, MANY_PROBLEMS)
    text = page.read_text(encoding="utf-8")
    items = reading(text)
    reasons = [(position, item) for position, item in enumerate(items) if item[0] == "reason"]
    assert len(problems) == 7 and len(reasons) == 6  # 两个一样的列表项说一次
    for position, _ in (item for item in enumerate(items) if item[1][0] == "same"):
        assert "flagged" in sentence_above(items, position)[0]
    for position, (_, anchor, _) in reasons:
        problem = problems[int(anchor.removeprefix("why-"))]
        css, sentence = sentence_above(items, position)
        assert "flagged" in css
        if problem["kind"] == "missing_source":
            assert sentence == "远程访问优先使用 VPN 或 Tailscale"
        elif problem["kind"] == "uncited_paragraph" and "\n" in problem["sentence"]:
            assert sentence == problem["sentence"].split("\n")[-1].rstrip("。")  # 那一段的最后一行
        else:
            assert sentence in problem["sentence"]
    assert "为什么被标出" not in text and "被标出的句子" not in text


def test_a_paragraph_without_citations_has_one_reason_however_many_lines(tmp_path):
    record = {"answer": "家用 NAS 至少选两盘位 [1]。\n\n第一行没有引用。\n第二行也没有引用。\n第三行还是没有。",
              "sources": NAS}
    _, page = review(tmp_path, record)
    text = page.read_text(encoding="utf-8")
    items = reading(text)
    assert [kind for kind, _, _ in items] == ["claim", "claim", "claim", "claim", "reason"]
    assert all("flagged" in css for _, css, _ in items[1:4])
    assert items[4][2] == "⚠ 没有引用：“第一行没有引用。 第二行也没有引用。 第三行还是没有。”"


def test_one_reason_per_problem_said_on_a_page_of_several_answers(tmp_path):
    """每个回答各说各的：两个回答里一样的列表项不合成一个原因（锚点也各有前缀）。"""
    second = {"answer": GOOD_ANSWER + "\n\n- NAS 两盘位\n- NAS 两盘位", "sources": NAS}
    expected = len(problems_of(tmp_path, MANY_PROBLEMS)) + len(problems_of(tmp_path, second))
    _, page = review(tmp_path, MANY_PROBLEMS, second)
    elements = parse(page.read_text(encoding="utf-8"))
    assert expected == 9 and elements.count("reason") == 9  # 每个问题一个：说它的原因，或者“同第 N 段”
    assert elements.count("reason same") == 2


def test_every_reason_names_its_problem_in_chinese(tmp_path):
    problems = problems_of(tmp_path, MANY_PROBLEMS)
    _, page = review(tmp_path, MANY_PROBLEMS)
    for _, anchor, text in (item for item in reading(page.read_text(encoding="utf-8")) if item[0] == "reason"):
        problem = problems[int(anchor.removeprefix("why-"))]
        name = PROBLEM_KINDS[problem["kind"]].label
        assert text.startswith((f"⚠ {name}：", f"⚠ {name}（第 "))
        # 说明去掉开头的地方和种类名（以前是“没有引用：第 3 段没有引用：……”，同样的字说了两遍）
        said = re.sub(r"^第 \d+ 段(第 \d+ 项)?", "", " ".join(problem["message"].split("\n")))
        said = said.removeprefix(name).removeprefix("：")
        assert said in text and f"：{name}：" not in text and "没有引用：第 " not in text


def test_no_figure_is_printed_twice(tmp_path):
    """“重合度只有 14%（重合度 14%）”：说明里写了重合度就不再补一遍；句子旁边已经显示的支持分，原因里不再写。"""
    _, page = review(tmp_path, MANY_PROBLEMS)
    text = page.read_text(encoding="utf-8")
    reasons = [text for kind, _, text in reading(text) if kind == "reason"]
    assert len(reasons) == 6
    for reason in reasons:
        own = reason.split("可能更合适的资料")[0]  # 更合适的资料有它自己的数字
        assert own.count("重合度") <= 1
        percentages = re.findall(r"\d+%", own)
        assert len(percentages) == len(set(percentages))
    unmarked = re.sub(r"</?mark[^>]*>", "", text)  # 句子里标出的找不到的字不算
    badge = re.search(r'RAID5 至少两块盘就能容忍一块盘损坏</a></span><span class="score[^"]*"[^>]*>([\d.]+)<', unmarked)
    assert badge and f"支持分 {badge.group(1)}" not in text
    assert "重合度 82%" in text  # 数字不符：说明里没有重合度，补上（说明别的部分对得上）


def test_a_suggested_source_shows_its_own_figures(tmp_path):
    """“可能应引用 [1]”后面的数字是这句话和 [1] 的，由核对的同一套函数算出来，不是所引的 [2] 的 0%。"""
    record = {"answer": "需要转码 4K 视频时选带核显的 Intel 型号 [2]。", "sources": NAS}
    [problem] = problems_of(tmp_path, record)
    assert problem["better_source"] == 1 and problem["overlap"] == 0
    body = "需要转码 4K 视频时选带核显的 Intel 型号"
    claim = read_claim(body)
    support = compare(claim, claim_words(claim.text), SourceIndexes([Source.from_json(s) for s in NAS])(1), 1)
    expected = f"重合度 {support.overlap:.0%}，支持分 {support_model().score(support.features):.2f}"
    assert support.overlap > 0.5
    _, page = review(tmp_path, record)
    [reason] = [text for kind, _, text in reading(page.read_text(encoding="utf-8")) if kind == "reason"]
    assert f"可能更合适的资料：[1]（这句话和它的{expected}）" in reason


def test_the_page_title_is_never_shown_as_evidence(tmp_path):
    [problem] = problems_of(tmp_path, {"answer": INVENTED, "sources": NAS})
    assert problem["evidence"] == NAS[0]["title"]  # 核对时标题也算资料的一句，编出来的话和它最像
    _, page = review(tmp_path, {"answer": INVENTED, "sources": NAS})
    text = page.read_text(encoding="utf-8")
    [reason] = [text for kind, _, text in reading(text) if kind == "reason"]
    assert "所引资料的正文里没有找到和这句话相近的一句" in reason and NAS[0]["title"] not in reason
    assert "<mark id=" not in text  # 资料里没有高亮的证据句（资料找不到的字照样标出来：mark class="gap"）


def test_evidence_in_the_second_cited_source_is_highlighted_there(tmp_path):
    _, page = review(tmp_path, {"answer": "RAID5 至少两块盘就能容忍一块盘损坏 [1][2]。", "sources": NAS})
    text = page.read_text(encoding="utf-8")
    [target] = re.findall(r'所引资料里最接近的一句：<a href="#([^"]+)">', text)
    source = text[text.index('id="src-2"'):text.index('id="src-3"')]
    assert f'<mark id="{target}">RAID5 至少三块盘' in source


def test_a_problem_of_a_kind_the_page_does_not_know_is_still_explained():
    """别处新加的问题种类：页面照样写出它的说明，凭它的 claim 标在那一句上；对不上任何一句的问题（空回答之类）列在回答后面。"""
    record = {"answer": "NAS 至少选两盘位 [1]。", "sources": NAS, "problems": [
        {"kind": "some_new_kind", "message": "这一句照抄了网页上的标记", "paragraph": 1, "sentence": "NAS 至少选两盘位 [1]",
         "claim": 0},
        {"kind": "another_new_kind", "message": "整个回答有别的问题"},
    ]}
    text = render_page([record], "2025-01-01 08:00")
    items = reading(text)
    assert [kind for kind, _, _ in items] == ["claim", "reason", "reason"]
    assert items[1][2] == "⚠ 其他问题：这一句照抄了网页上的标记" and "flagged" in items[0][1]
    assert items[2][2] == "⚠ 其他问题：整个回答有别的问题"
    assert text.index("不属于某一句的问题") < text.index("整个回答有别的问题")


def test_the_time_is_labelled(tmp_path):
    _, page = review(tmp_path, {"answer": GOOD_ANSWER, "sources": NAS})
    assert re.search(r"生成时间：\d{4}-\d{2}-\d{2} \d{2}:\d{2}", page.read_text(encoding="utf-8"))


def test_stderr_says_where_the_page_was_written_after_verify(tmp_path):
    result, page = review(tmp_path, {"answer": GOOD_ANSWER, "sources": NAS})
    assert result.returncode == 0 and page.exists()
    assert result.stderr.splitlines().count(f"审阅页已写到 {page}") == 1


def test_stderr_says_where_the_page_was_written_after_a_question_without_showing_the_key(model_server, tmp_path):
    key = "sk-MODEL-CANARY-0123456789"
    model_server.required_key = key
    page = tmp_path / f"{key}.html"
    env = cli_env(None, model_server, ANS_MODEL="good", ANS_API_KEY=key)
    result = run_cli("--demo", "家用 NAS 怎么选", "--html", str(page), env=env)
    assert result.returncode == 0, result.stderr
    assert page.exists() and key not in result.stderr + result.stdout
    assert result.stderr.splitlines().count(f"审阅页已写到 {tmp_path}/{REDACTED}.html") == 1


# ---------- 真实的浏览器 ----------

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def has_chinese_font():
    try:
        listed = subprocess.run(["fc-list", ":lang=zh"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    return bool(listed.strip())


@pytest.fixture
def browser(tmp_path):
    if not CHROMIUM or not has_chinese_font():
        if os.environ.get("CI"):
            pytest.fail("CI 里没有装 Chromium 或中文字体（quickstart.sh --test 会装 Debian 的 chromium、fonts-noto-cjk）")
        pytest.skip("没有 Chromium 或中文字体")

    def run(page, *args):
        command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                   "--disable-background-networking", "--disable-component-update", "--disable-sync",
                   f"--user-data-dir={tmp_path / 'profile'}", *args, page.resolve().as_uri()]
        return subprocess.run(command, capture_output=True, text=True, timeout=90, stdin=subprocess.DEVNULL)
    return run


def png_is_blank(path):
    """全是同一种颜色就算空白。"""
    return len(set(pixels(path))) <= 3


def pixels(path):
    """解出 PNG 的像素数据（不用第三方库）。"""
    data = Path(path).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    position = 8
    chunks = []
    while position < len(data):
        length = int.from_bytes(data[position:position + 4], "big")
        kind = data[position + 4:position + 8]
        if kind == b"IDAT":
            chunks.append(data[position + 8:position + 8 + length])
        position += 12 + length
    return zlib.decompress(b"".join(chunks))


@pytest.mark.slow
def test_page_loads_from_file_and_is_not_blank(tmp_path, browser):
    _, page = review(tmp_path, {"answer": "需要转码 4K 视频时选带核显的 Intel 型号 [2]。", "sources": NAS})
    shot = tmp_path / "shot.png"
    result = browser(page, f"--screenshot={shot}", "--window-size=1000,1400")
    assert shot.exists(), result.stderr[-800:]
    assert not png_is_blank(shot)


@pytest.mark.slow
def test_dom_has_one_marked_element_per_flagged_sentence_and_per_source(tmp_path, browser):
    record = {"answer": GOOD_ANSWER + "\n\n" + INVENTED + "\n\n转码 4K 视频时选带核显的 Intel 型号 [2]。",
              "sources": NAS}
    _, page = review(tmp_path, record)
    dom = browser(page, "--dump-dom")
    elements = parse(dom.stdout)
    assert elements.count("claim flagged") == 2
    assert elements.count("claim ok") == 5
    assert elements.count("source") == len(NAS)
    # 浏览器读出来的顺序里，每个原因紧跟在它那一句后面
    items = reading(dom.stdout)
    reasons = [position for position, item in enumerate(items) if item[0] == "reason"]
    assert [items[position - 1][2] for position in reasons] == [INVENTED.removesuffix(" [1]。"),
                                                                 "转码 4K 视频时选带核显的 Intel 型号"]
    assert "可能更合适的资料：[1]" in items[reasons[1]][2]


@pytest.mark.slow
def test_chinese_text_is_drawn_with_real_glyphs(tmp_path, browser):
    """两页只差问题里的几个汉字：有中文字体时截图不一样；没有时汉字都画成一样的方块，截图一模一样。"""
    shots = []
    for question in ("家用存储怎么选", "办公网络哪家强"):
        page = tmp_path / f"{len(shots)}.html"
        page.write_text(render_page([{"question": question, "answer": GOOD_ANSWER, "sources": NAS[:1]}],
                                    "2025-01-01 08:00"), encoding="utf-8")
        shot = tmp_path / f"{len(shots)}.png"
        result = browser(page, f"--screenshot={shot}", "--window-size=800,300")
        assert shot.exists(), result.stderr[-800:]
        shots.append(pixels(shot))
    assert shots[0] != shots[1]


@pytest.mark.slow
def test_hostile_markup_cannot_change_the_title(tmp_path, browser):
    _, page = review(tmp_path, HOSTILE)
    dom = browser(page, "--dump-dom")
    title = parse(dom.stdout).title
    assert title and "pwned" != title and title.startswith("<b>问题</b>")


def test_same_words_with_a_different_citation_are_two_sentences(tmp_path):
    """同一段里两句话一字不差、引用不同：[2] 引对了，[4] 引错了。只有引 [4] 的那句被标出，原因写在它下面。"""
    sentence = "RAID5 至少三块盘，可以容忍一块盘损坏"
    record = {"question": "q", "sources": NAS, "answer": f"{sentence} [2]。{sentence} [4]。"}
    problems = problems_of(tmp_path, record)
    # 同一句话写了两遍，这本身也是一个问题（repeated），记在第二句上
    assert [(p["kind"], p["citations"]) for p in problems] == [("repeated", [4]), ("weak_support", [4])]
    _, page = review(tmp_path, record)
    items = reading(page.read_text(encoding="utf-8"))
    claims = [(position, item) for position, item in enumerate(items) if item[0] == "claim"]
    reasons = [position for position, item in enumerate(items) if item[0] == "reason"]
    assert len(claims) == 2 and len(reasons) == 2
    (first, (_, first_css, _)), (second, (_, second_css, _)) = claims
    assert "flagged" not in first_css and "flagged" in second_css
    assert second < reasons[0]


def test_bidi_and_control_characters_do_not_reach_the_page(tmp_path):
    record = {"question": "q", "sources": [{"title": "标题\u202e反过来", "text": "RAID5 至少三块盘\u2066。"}],
              "answer": "RAID5 至少三块盘\u202e\x07 [1]。"}
    _, page = review(tmp_path, record)
    text = page.read_text(encoding="utf-8")
    assert not any(char in text for char in "\u202e\u2066\x07")


def test_of_two_identical_sentences_the_one_cited_wrong_is_the_one_flagged(tmp_path):
    """一段里两句一字不差，先写的那句引错了 [4]、后一句引对了 [2]：问题的 claim 指着 [4] 那一句，
    审阅页只标它、原因写在它下面，引对的那句照样通过。"""
    sentence = "RAID5 至少三块盘，可以容忍一块盘损坏"
    record = {"question": "q", "sources": NAS, "answer": f"{sentence} [4]。{sentence} [2]。"}
    data = json.loads(run_cli("--verify", write_input(tmp_path, record), "--json", env=cli_env()).stdout)
    [problem] = [p for p in data["problems"] if p["kind"] != "repeated"]
    assert problem["kind"] == "weak_support" and problem["claim"] == 0
    assert data["claims"][0]["citations"] == [4] and data["claims"][1]["status"] == "supported"
    # 第二句引对了，但同一句话写了两遍：它带着 repeated（审阅页上标它、原因是“写了 2 遍”）
    assert [(p["kind"], p["claim"]) for p in data["problems"] if p["kind"] == "repeated"] == [("repeated", 1)]
    _, page = review(tmp_path, record)
    items = reading(page.read_text(encoding="utf-8"))
    assert [(kind, "flagged" in css) for kind, css, _ in items] == [("claim", True), ("reason", False),
                                                                    ("claim", True), ("reason", False)]


def test_a_copied_tag_is_flagged_on_the_sentence_it_names_not_on_its_twin(tmp_path):
    """两句都抄了标签、文字一样，引用不同：问题点名的是第一句（引 [2][4] 的），就标那一句。
    以前按（段落、文字、标签里的编号 [2]）去对，标到了引 [2] 的另一句上。"""
    tagged = '<source id="2">RAID5 至少三块盘'
    record = {"question": "q", "sources": NAS, "answer": f"{tagged} [2][4]。\n{tagged} [2]。"}
    [problem] = [p for p in problems_of(tmp_path, record) if p["kind"] == "copied_markup"]
    assert problem["sentence"] == f"{tagged} [2][4]" and problem["claim"] == 0
    _, page = review(tmp_path, record)
    items = reading(page.read_text(encoding="utf-8"))
    # 第二句（同一句话的第二遍）另带一个 repeated
    assert [(kind, "flagged" in css) for kind, css, _ in items] == [("claim", True), ("reason", False),
                                                                    ("claim", True), ("reason", False)]


def test_each_of_two_identical_sentences_shows_its_own_score(tmp_path):
    """一句引了不存在的 [7]（没有支持分）、一样的一句引 [2]（有）：分数显示在引 [2] 的那一句旁边。"""
    sentence = "需要转码 4K 视频时选带核显的 Intel 型号"
    record = {"question": "q", "sources": NAS, "answer": f"{sentence} [7]。{sentence} [2]。"}
    _, page = review(tmp_path, record)
    text = re.sub(r"</?mark[^>]*>", "", page.read_text(encoding="utf-8"))  # 句子里标出的找不到的字不算
    first, second = text.split(f"{sentence}</a></span>")[1:3]
    assert not first.startswith('<span class="score') and second.startswith('<span class="score low"')


# ---------- 没有空格的长串也折行：页面不比窗口宽（手机上横向滚动就看不到旁边的资料） ----------

LONG_WORD = "NAS" * 1000  # 3000 个字母，中间没有一个可以折行的地方
LONG_URL = "https://nas.example/" + "a1b2c3" * 500
LONG_RECORD = {
    "question": "家用NAS怎么选" + LONG_WORD,
    "model": "qwen2.5:" + "1" * 3000,
    "answer": (GOOD_ANSWER + "\n\n" + LONG_WORD + "。[1]\n\n" + "RAID1" * 600 + " [9]。\n\n"
               + LONG_URL + " 是群晖的官网 [4]。"),
    "sources": [{"title": "T" * 3000, "link": LONG_URL, "date": "2" * 3000, "text": "y" * 3000 + "\n\n" + NAS[0]["text"]},
                *NAS[1:]],
}
# 在真实的浏览器里量：每个页面放进一个给定宽度的 iframe（无头 Chromium 的窗口最窄 500 像素，
# iframe 就是这个页面的窗口），量它的 scrollWidth 和 clientWidth，以及里面能横向滚动的框
MEASURE = """<script>
window.addEventListener("load", () => {
  const result = {};
  for (const frame of document.querySelectorAll("iframe")) {
    const doc = frame.contentDocument, root = doc.documentElement;
    const scrolls = [...doc.querySelectorAll("*")].filter(e => e.scrollWidth > e.clientWidth + 1
        && getComputedStyle(e).overflowX !== "visible").map(e => e.tagName + "." + e.className);
    const sticksOut = [...doc.querySelectorAll("body *")].filter(
        e => e.getBoundingClientRect().right > root.clientWidth + 1).map(e => e.tagName + "." + e.className);
    result[frame.dataset.width] = {scroll: root.scrollWidth, client: root.clientWidth,
                                   window: frame.contentWindow.innerWidth, scrolls, sticksOut};
  }
  document.body.dataset.measured = JSON.stringify(result);
});
</script>"""
WIDTHS = (800, 375)


def measured_widths(browser, tmp_path, page, script=MEASURE, widths=WIDTHS):
    """在 800 和 375 像素宽（widths）的窗口里打开审阅页（去掉禁止脚本的 CSP，好让量的脚本能跑；样式原样），
    用 script 量（默认量宽度）。"""
    import html
    text = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page.read_text(encoding="utf-8"))
    frames = "".join(f'<iframe data-width="{width}" style="width:{width}px;height:900px;border:0;display:block" '
                     f'srcdoc="{html.escape(text, quote=True)}"></iframe>' for width in widths)
    harness = tmp_path / "measure.html"
    harness.write_text(f"<!DOCTYPE html><html><body style=\"margin:0\">{frames}{script}</body></html>",
                       encoding="utf-8")
    dom = browser(harness, "--window-size=1200,1000", "--virtual-time-budget=5000", "--dump-dom")
    found = re.search(r'data-measured="([^"]*)"', dom.stdout)
    assert found, dom.stderr[-800:]
    return json.loads(html.unescape(found.group(1)))


@pytest.mark.slow
@pytest.mark.parametrize("extra", [(), ("--fix",)])
def test_long_unbroken_text_wraps_and_the_page_is_no_wider_than_the_window(tmp_path, browser, extra):
    result, page = review(tmp_path, LONG_RECORD, {**LONG_RECORD, "question": LONG_URL}, extra=extra)
    assert result.returncode == 1 and page.exists(), result.stderr
    for width, seen in measured_widths(browser, tmp_path, page).items():
        assert seen["window"] == int(width)
        assert seen["scroll"] <= seen["client"], (width, seen)  # 整页不能横着滚
        assert seen["scrolls"] == [] and seen["sticksOut"] == [], (width, seen)  # 也没有哪一块被挤出去、要横着滚


def test_the_page_wraps_anywhere_and_sizes_to_the_device():
    page = render_page([LONG_RECORD], "2025-01-01 08:00")
    assert "overflow-wrap:anywhere" in page
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in page


# ---------- 手机宽的屏幕上，标签和支持分不从中间折断 ----------

# 每个标签（读取了全文、只有搜索摘要、未被引用、来自缓存）和支持分：它的字落在几行上
BADGES = """<script>
window.addEventListener("load", () => {
  const result = {};
  for (const frame of document.querySelectorAll("iframe")) {
    const doc = frame.contentDocument;
    const badges = [...doc.querySelectorAll(".tag, .score")];
    const broken = badges.filter(badge => {
      const range = doc.createRange();
      range.selectNodeContents(badge);
      const lines = new Set([...range.getClientRects()].map(rect => Math.round(rect.bottom)));
      return lines.size > 1 || badge.getClientRects().length > 1;
    }).map(badge => badge.textContent);
    result[frame.dataset.width] = {badges: badges.length, broken};
  }
  document.body.dataset.measured = JSON.stringify(result);
});
</script>"""
PHONE_WIDTHS = (320, 360, 375, 390, 414)
# 有支持分、有各种标签的一页：390 像素宽时，第 4 条资料的“只有搜索摘要”落在标题那一行的末尾（以前被折成两半）
BADGE_RECORD = {
    "question": "家用 NAS 怎么选", "model": "qwen2.5:1.5b",
    "answer": GOOD_ANSWER + "\n\n" + WRONG_NUMBER + "\n\n群晖的 NAS 系统比威联通稳定得多 [4]。",
    "sources": [dict(source, read=number % 2 == 0, cached=number == 1) for number, source in enumerate(NAS)],
}


@pytest.mark.slow
def test_no_badge_is_broken_across_two_lines_on_a_phone(tmp_path, browser):
    result, page = review(tmp_path, BADGE_RECORD)
    assert result.returncode == 1 and page.exists(), result.stderr
    for width, seen in measured_widths(browser, tmp_path, page, BADGES, PHONE_WIDTHS).items():
        assert seen["badges"] >= 10 and seen["broken"] == [], (width, seen)


# ---------- 对齐：资料里找不到的字、对上的字，并排 ----------

ALIGNED_RECORD = {
    "question": "家用 NAS 怎么选",
    "answer": GOOD_ANSWER + "\n\nRAID5 至少三块盘，可以容忍两块盘同时损坏，还能自动修复坏道 [2]。",
    "sources": NAS,
}


def test_a_flagged_sentence_marks_the_words_the_source_does_not_have_and_the_words_it_does(tmp_path):
    result, page = review(tmp_path, ALIGNED_RECORD)
    text = page.read_text(encoding="utf-8")
    assert result.returncode == 1
    # 回答里：被标出的那一句中资料里找不到的字（和“两块”这个换了的数）标成 gap；通过的句子一个也不标
    flagged = re.search(r'<span class="claim flagged"[^>]*>(.*?)</span>', text).group(1)
    assert '<mark class="gap">' in flagged and "自动修复坏道" in re.sub(r"<[^>]+>", "", flagged)
    assert text.count('<mark class="gap">') == len(re.findall(r'<mark class="gap">', flagged)) * 2
    # 原因下面并排：回答那一边标出找不到的字，资料那一边标出对上的字，链到那条资料
    compare = re.search(r'<div class="compare">(.*?)</div></div>', text).group(1)
    assert '<mark class="gap">' in compare and '<mark class="same">' in compare
    assert '<a href="#src-2">[2]</a>' in compare
    same = re.findall(r'<mark class="same">(.*?)</mark>', compare)
    assert "RAID5 至少三块盘" in "".join(same)


def test_an_old_record_without_alignment_still_renders(tmp_path):
    """旧版本写的记录没有 evidence、unmatched：页面照样出来，只是不标这些字。"""
    from sourced_answers.outputs.review_page import render_page
    record = {**ALIGNED_RECORD, "passed": False,
              "problems": [{"kind": "weak_support", "message": "说明", "claim": 7}],
              "claims": [{"score": 0.9} for _ in range(8)]}
    page = render_page([record], "2025-01-01 08:00")
    assert '<mark class="gap">' not in page and '<div class="compare">' not in page


@pytest.mark.slow
def test_the_side_by_side_comparison_fits_a_phone_and_a_desktop_window(tmp_path, browser):
    """1280 像素宽时回答和资料并排两栏；390 像素宽时上下排，都不比窗口宽。"""
    result, page = review(tmp_path, ALIGNED_RECORD)
    assert result.returncode == 1
    columns = """<script>
    window.addEventListener("load", () => {
      const result = {};
      for (const frame of document.querySelectorAll("iframe")) {
        const doc = frame.contentDocument, root = doc.documentElement;
        const compare = doc.querySelector(".compare");
        const halves = [...compare.children].map(e => Math.round(e.getBoundingClientRect().top));
        result[frame.dataset.width] = {scroll: root.scrollWidth, client: root.clientWidth, tops: halves,
                                       marks: doc.querySelectorAll("mark.gap, mark.same").length};
      }
      document.body.dataset.measured = JSON.stringify(result);
    });
    </script>"""
    seen = measured_widths(browser, tmp_path, page, columns, (1280, 390))
    assert seen["1280"]["tops"][0] == seen["1280"]["tops"][1]  # 并排
    assert seen["390"]["tops"][0] < seen["390"]["tops"][1]  # 上下排
    for width, figures in seen.items():
        assert figures["scroll"] <= figures["client"] and figures["marks"] >= 3, (width, figures)


# ---------- 资料那一边的摘录：截在字和单词的边上 ----------

def excerpt_of(text, matched):
    """资料 text 里对上了 matched 那几个字时，并排的资料那一边（去掉标记，只看字）。"""
    from sourced_answers.outputs.review_alignment import source_excerpt
    start = text.index(matched)
    found = source_excerpt({"evidence": [{"field": "text", "source": 1, "start": start, "end": start + len(matched)}]},
                           [{"text": text}])
    return re.sub(r"<[^>]+>", "", found[1])


def test_an_english_excerpt_is_cut_between_words_and_marked_with_an_ellipsis():
    """以前截在“spreads”中间，摘录以“…ds data and parity”开头。"""
    text = ("RAID 5 needs at least three disks. It spreads data and parity across all disks and survives the "
            "failure of one disk, and a second failure during the rebuild loses the data on every disk of the array.")
    assert excerpt_of(text, "survives the failure") == (
        "…data and parity across all disks and survives the failure of one disk, and a second failure…")


def test_a_latin_word_inside_chinese_is_not_cut_but_chinese_is_cut_at_a_character():
    # 往前 40 个字正好落在“DS224plus”的第 4 个字母上：整个词不要，从它后面开始
    filler = " 这样的两盘位机型，放在家里的书架上刚好，平时很安静，功耗也低，价格也合适，"
    text = "家用 NAS 可以先看 Synology DS224plus" + filler[:34] + "它支持 RAID1 镜像。"
    assert text.index("它支持") - 40 == text.index("DS224plus") + 3
    assert excerpt_of(text, "它支持 RAID1 镜像") == "…" + (filler[:34] + "它支持 RAID1 镜像。").lstrip()
    chinese = "家用 NAS 选购要点很多，" + "硬盘位、处理器、内存、网口、功耗和噪音都要看，" * 2 + "至少选两盘位。"
    assert excerpt_of(chinese, "至少选两盘位") == "…" + chinese[chinese.index("至少选两盘位") - 40:]


def test_an_accent_is_not_cut_off_its_letter():
    # “café”写成 e 加上组合用的尖音符：往前 40 个字正好落在尖音符上（以前摘录以一个孤零零的“\u0301”开头）
    text = "Le NAS est au cafe\u0301 du coin, pre\u0300s de la gare, et la nuit il sauvegarde les photos."
    assert text.index("il sauvegarde") - 40 == text.index("\u0301")
    shown = excerpt_of(text, "il sauvegarde les photos")
    assert shown == "…du coin, pre\u0300s de la gare, et la nuit il sauvegarde les photos."
    assert not unicodedata.combining(shown[1])


@pytest.mark.slow
def test_the_time_in_the_header_stays_on_one_line_on_a_phone_and_a_desktop(tmp_path, browser):
    """390 像素宽时“生成时间：2026-12-07 00:51”以前折成两行（日期在一行末尾、钟点在下一行开头）。"""
    result, page = review(tmp_path, BADGE_RECORD)
    assert result.returncode == 1
    lines_of_the_time = """<script>
    window.addEventListener("load", () => {
      const result = {};
      for (const frame of document.querySelectorAll("iframe")) {
        const doc = frame.contentDocument;
        const meta = doc.querySelector("header .meta");
        const walker = doc.createTreeWalker(meta, NodeFilter.SHOW_TEXT);
        const range = doc.createRange();
        let node, started = false;
        while ((node = walker.nextNode())) {
          const at = node.data.indexOf("生成时间");
          if (!started && at >= 0) { range.setStart(node, at); started = true; }
          if (started) range.setEnd(node, node.data.length);
        }
        const lines = new Set([...range.getClientRects()].map(rect => Math.round(rect.bottom)));
        result[frame.dataset.width] = {lines: lines.size, text: range.toString()};
      }
      document.body.dataset.measured = JSON.stringify(result);
    });
    </script>"""
    for width, seen in measured_widths(browser, tmp_path, page, lines_of_the_time, (1280, 390, 320)).items():
        assert re.fullmatch(r"生成时间：\d{4}-\d{2}-\d{2} \d{2}:\d{2}", seen["text"]), seen
        assert seen["lines"] == 1, (width, seen)
