"""outputs/chat.py：聊天窗口、智能体看到的回答——Markdown 的来源链接、遮不住的结论、没有命令行的提示、
指向每个 [n] 的 annotations。用真的 CommonMark 渲染器（markdown-it-py）看显示出来的样子。"""
import re

import html5lib
import pytest
from markdown_it import MarkdownIt

from sourced_answers.checker import Source, split_reply
from sourced_answers.core.settings import CHECK_DEFAULTS
from sourced_answers.outputs.chat import chat_reply
from sourced_answers.outputs.render import AGENT, CHAT, markdown_source
from sourced_answers.steps.check_steps import check_reply
from tests.support import GOOD_ANSWER, NAS_SOURCES, UNCITED_ANSWER

RENDER = MarkdownIt("commonmark", {"html": True})
LINKED = [Source(title=source.title, text=source.text, link=f"https://example.com/nas/{n}")
          for n, source in enumerate(NAS_SOURCES, 1)]


def checked(answer, sources=LINKED):
    return check_reply(split_reply(answer), "qwen3", sources, CHECK_DEFAULTS)


def pointed(reply):
    return [(reply.content[a["url_citation"]["start_index"]:a["url_citation"]["end_index"]], a["url_citation"]["url"])
            for a in reply.annotations]


def links_in(markdown):
    tree = html5lib.parse(RENDER.render(markdown), namespaceHTMLElements=False)
    return [(a.get("href"), "".join(a.itertext())) for a in tree.iter("a")]


def visible_text(markdown):
    tree = html5lib.parse(RENDER.render(markdown), namespaceHTMLElements=False)
    hidden = {"details", "pre", "script", "style", "textarea", "template"}  # 行内代码看得见，代码块不算正文
    parents = {child: parent for parent in tree.iter() for child in parent}

    def shown(element):
        while element is not None:
            if element.tag in hidden or element.get("hidden") is not None:
                return False
            element = parents.get(element)
        return True
    pieces = []
    for element in tree.iter():
        if isinstance(element.tag, str) and shown(element):
            pieces.append(element.text or "")
            pieces += [child.tail or "" for child in element]
    return "".join(pieces)


# ---------- annotations ----------

def test_every_citation_mark_gets_one_annotation_per_number_pointing_exactly_at_it():
    answer = "RAID1 是镜像 [2]。两盘位够用 [1][2]。远程访问要小心【3】。备份要三份 [4, 5]。"
    reply = chat_reply(checked(answer))
    marks = [text for text, _ in pointed(reply)]
    in_answer = [(text, url) for (text, url), a in zip(pointed(reply), reply.annotations, strict=True)
                 if a["url_citation"]["start_index"] < len(answer)]
    assert sorted(text for text, _ in in_answer) == sorted(["[2]", "[1]", "[2]", "【3】", "[4, 5]", "[4, 5]"])
    assert all(url.startswith("https://example.com/nas/") for _, url in pointed(reply))
    assert marks.count("[1]") == 1 and marks.count("1.") == 1  # 回答里一次，来源列表里一次（列表项的编号）


def test_annotations_are_ordered_by_source_number_so_first_arrival_numbering_matches():
    reply = chat_reply(checked("远程访问要小心 [3]。两盘位够用 [1]。"))
    urls = list(dict.fromkeys(url for _, url in pointed(reply)))
    assert urls == [f"https://example.com/nas/{n}" for n in range(1, 6)]  # 没被引用的 [2] [4] [5] 也在，按编号


def test_a_number_without_a_source_gets_no_annotation():
    reply = chat_reply(checked("两盘位够用 [9]。"))
    assert "[9]" not in [text for text, _ in pointed(reply)]


def test_annotations_count_from_the_start_of_the_streamed_reply():
    answer = checked(GOOD_ANSWER)
    streamed = GOOD_ANSWER + "\n\n"
    whole = chat_reply(answer)
    tail = chat_reply(answer, streamed=streamed)
    assert streamed + tail.content == whole.content
    assert tail.annotations == whole.annotations


def test_positions_are_measured_after_the_text_is_masked():
    def shown(text):
        return text.replace("秘密钥匙", "***")

    reply = chat_reply(checked("秘密钥匙之外，两盘位够用 [1]。"), shown=shown)
    assert "秘密钥匙" not in reply.content
    assert ("[1]", "https://example.com/nas/1") in pointed(reply)


# ---------- 来源：Markdown 链接，（未被引用）在链接外面 ----------

def test_each_source_is_a_markdown_link_to_its_own_url_with_the_unused_mark_outside():
    reply = chat_reply(checked(GOOD_ANSWER))
    links = links_in(reply.content)
    assert links == [(f"https://example.com/nas/{n}", source.title) for n, source in enumerate(NAS_SOURCES, 1)]
    assert f"[{NAS_SOURCES[3].title}](https://example.com/nas/4)（未被引用）" in reply.content


def as_open_webui_shows(markdown, sources):
    """Open WebUI（0.12.4）收到了来源时怎样显示一段 Markdown，照它随包发布的源码：utils/marked/citation-extension.ts
    把裸的 [n]、[1, 2] 认成引用，Markdown/SourceToken.svelte 和 Source.svelte 显示成一个按钮，按钮上是第 n 条来源的
    标题（不是编号）；utils/marked/katex-extension.ts 把 \\[…\\] 当成公式，方括号不显示。这里把 [n] 换成“〔标题〕”、
    \\[…\\] 换成里面的字，再交给 CommonMark 渲染：[(列表项的编号, 看得见的文字)]。"""
    def chip(found):
        return "".join(f"〔{sources[int(n) - 1].title}〕" for n in found.group(1).split(","))
    shown = re.sub(r"\\\[(.+?)\\\]", r"\1", markdown)
    shown = re.sub(r"(?<!\\)\[(\d+(?:,\s*\d+)*)\](?!\()", chip, shown)
    tree = html5lib.parse(RENDER.render(shown), namespaceHTMLElements=False)
    items = []
    for listing in (element for element in tree.iter() if element.tag in ("ol", "ul")):
        first = int(listing.get("start") or 1) if listing.tag == "ol" else None
        for offset, item in enumerate(listing.findall("li")):
            items.append((None if first is None else first + offset, "".join(item.itertext()).strip()))
    return items


def test_in_open_webui_each_source_shows_its_number_and_its_title_once():
    """以前来源列表的一项“[1] [标题](链接)”在 Open WebUI 里是一个写着标题的来源按钮、后面再一个标题的链接：
    标题出现两次，编号没了。来源写成有序列表的一项“1. [标题](链接)”：编号是列表的编号，标题只有一次，是链接。"""
    reply = chat_reply(checked("远程访问要小心 [3]。两盘位够用 [1]。"))
    sources = reply.content[reply.content.index("来源："):reply.content.index("✓")]
    unused = {2, 4, 5}
    assert as_open_webui_shows(sources, LINKED) == [
        (n, source.title + ("（未被引用）" if n in unused else "")) for n, source in enumerate(LINKED, 1)]
    assert links_in(sources) == [(source.link, source.title) for source in LINKED]


@pytest.mark.parametrize(("title", "link"), [
    ("RAID [重要] *必读* <b>", "https://example.com/a_(b)"),
    ("](javascript:alert(1))", "https://example.com/q?x=1&y=<2>"),
    ("反斜杠 \\ 和 `代码`", "https://example.com/有 空格"),
])
def test_a_hostile_title_or_link_cannot_change_where_the_link_goes(title, link):
    [(href, text)] = links_in(markdown_source(title, link))
    assert text == title
    assert href.startswith("https://example.com/")
    assert "javascript" not in href


def test_a_link_that_is_not_http_is_not_clickable():
    assert links_in(markdown_source("标题", "javascript:alert(1)")) == []
    assert "javascript:alert(1)" in visible_text(markdown_source("标题", "javascript:alert(1)"))


# ---------- 结论：遮不住、没有命令行的提示 ----------

@pytest.mark.parametrize("ending", ["\n\n<!-- 下面都藏起来", "\n\n```\n没结束的代码", "\n\n<details>\n\n收起来的",
                                    '<div style="display:none">', "\n\n<script>"])
def test_an_answer_left_open_cannot_hide_the_sources_or_the_verdict(ending):
    reply = chat_reply(checked(GOOD_ANSWER + ending))
    text = visible_text(reply.content)
    assert "来源：" in text and "引用核对" in text
    assert "程序在上面替它结束了" in text


def test_a_quoted_claim_with_markup_is_shown_literally_in_the_verdict():
    answer = "两盘位够用，<!-- 其实不够 [1]。\n\n**群晖**比威联通稳定得多 [1]。"
    reply = chat_reply(checked(answer))
    text = visible_text(reply.content)
    assert "⚠ 引用核对没通过" in text and "群晖" in text.split("⚠", 1)[1]


def test_chat_verdicts_point_to_the_structured_result_instead_of_command_line_flags():
    many = "\n\n".join(f"第 {n} 段没有出处。" for n in range(15))
    for reader, where in ((CHAT, "verification.problems"), (AGENT, "结构化结果的 problems")):
        reply = chat_reply(checked(many), reader=reader)
        assert where in reply.content
        assert "--" not in reply.content.split("来源：", 1)[1]


def test_the_fix_hint_is_left_out_of_chat_replies():
    reply = chat_reply(checked(UNCITED_ANSWER))
    assert "--fix" not in reply.content and "⚠ 引用核对没通过" in reply.content


def test_problems_are_a_markdown_list_one_item_each():
    reply = chat_reply(checked("两盘位够用。\n\n远程访问要小心。"))
    html = RENDER.render(reply.content)
    assert html.count("<li>") >= 5 + 2  # 五条来源，两个问题


def test_a_cut_off_answer_says_so_before_the_verdict():
    reply = chat_reply(checked(GOOD_ANSWER), truncated_at=256)
    assert "⚠ 回答到了长度上限（max_tokens 256）被截断了" in reply.content
    assert reply.content.index("被截断了") < reply.content.index("引用核对通过")
