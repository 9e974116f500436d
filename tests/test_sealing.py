"""outputs/sealing.py：回答里没结束的代码块、HTML 注释和标签遮不住它后面的来源和结论。

每个例子都交给真的 CommonMark 渲染器（markdown-it-py，开着 HTML），再按浏览器的规矩看一遍生成的 HTML：
结论那句话得是看得见的文字——不在注释、代码、<details>、<script>、<style>、<textarea>、hidden 的元素里。
"""

import html5lib
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from sourced_answers.outputs.sealing import seal
from tests.support import examples

VERDICT = "VERDICTMARK 引用核对通过"
# 里面的文字看不见（或者不是正文）的元素
HIDING = {"details", "pre", "code", "script", "style", "textarea", "template", "noscript", "iframe", "title", "xmp",
          "select", "object"}
RENDER = MarkdownIt("commonmark", {"html": True})


def visible(page: str) -> bool:
    """浏览器（HTML5 的解析规则，html5lib）解析 page 之后，VERDICT 是不是一段看得见的文字。"""
    tree = html5lib.parse(page, namespaceHTMLElements=False)
    parents = {child: parent for parent in tree.iter() for child in parent}
    for element in tree.iter():
        if not isinstance(element.tag, str):
            continue  # 注释
        texts = [(element.text, element)] + [(child.tail, element) for child in element]
        for text, holder in texts:
            if text and VERDICT in text and not hidden(holder, parents):
                return True
    return False


def hidden(element, parents) -> bool:
    while element is not None:
        style = (element.get("style") or "").replace(" ", "")
        if element.tag in HIDING or element.get("hidden") is not None or "display:none" in style:
            return True
        element = parents.get(element)
    return False


def verdict_visible_after(answer: str) -> bool:
    closers = "\n".join(seal(answer).lines)
    return visible(RENDER.render(answer + ("\n" + closers if closers else "") + "\n\n来源：\n\n" + VERDICT + "\n"))


SWALLOWING = {
    "行首的注释": "回答 [1]。\n\n<!--\n",
    "代码块": "配置如下 [1]：\n\n```yaml\nraid: 5",
    "更长的围栏": "例子 [1]：\n\n`````\n```\n还在代码里",
    "波浪线围栏": "例子 [1]：\n\n~~~~\n~~~\n",
    "折叠块": "回答 [1]。\n\n<details><summary>展开</summary>\n\n藏起来的",
    "隐藏的 div": '回答 [1]。<div style="display: none">',
    "hidden": "回答 [1]。\n\n<section hidden>\n\n",
    "pre 块": "<pre>\n回答 [1]",
    "script": "回答 [1]\n\n<script>\nvar a = 1;",
    "style": "回答 [1]\n\n<style>\n.x {}",
    "textarea": "回答 [1]\n\n<TEXTAREA>\n",
    "处理指令": "回答 [1]\n\n<?php echo 1;",
    "声明": "回答 [1]\n\n<!DOCTYPE html",
    "CDATA": "回答 [1]\n\n<![CDATA[ x",
    "嵌套": "回答 [1]\n\n<details>\n<div hidden>\n<details open>\n\n<!-- 最后",
    "注释里的围栏": "回答 [1]\n\n<!--\n```\n",
    "代码块里的注释": "回答 [1]\n\n```\n<!--\n",
    "结束了一半": "<details>\n<details>\n</details>\n回答 [1]",
}


def verdict_visible_without_seal(answer: str) -> bool:
    return visible(RENDER.render(answer + "\n\n来源：\n\n" + VERDICT + "\n"))


@pytest.mark.parametrize("answer", SWALLOWING.values(), ids=SWALLOWING.keys())
def test_an_answer_left_open_no_longer_hides_the_verdict(answer):
    assert not verdict_visible_without_seal(answer)  # 不补结尾时真的遮住了
    assert seal(answer).lines and verdict_visible_after(answer)


def test_an_inline_comment_left_open_is_closed_too():
    """CommonMark 把行中间没结束的 <!-- 当作文字，marked（Open WebUI 用的）却把它之后的整段当作注释。"""
    answer = "RAID5 至少三块盘 [2]。<!-- 下面的都是注释"
    assert seal(answer).opened == ["HTML 注释"] and verdict_visible_after(answer)


CLOSED = {
    "普通回答": "家用 NAS 至少选两盘位 [1]。\n\n- 第一点 [2]\n- 第二点 [3]",
    "结束了的代码块": "```\n<!--\n```\n回答 [1]",
    "行内代码里的标签": "用 `<details>` 和 `<!--` 写 [1]",
    "结束了的注释": "回答 <!-- 注 --> [1]",
    "空元素": "第一行<br>第二行<img src=x> [1]",
    "自闭合": "回答 <span/> [1]",
    "结束了的折叠块": "<details><summary>s</summary>\n\n内容 [1]\n\n</details>",
    "反引号不成对": "一个 ` 反引号 [1]",
}


@pytest.mark.parametrize("answer", CLOSED.values(), ids=CLOSED.keys())
def test_an_answer_that_closes_everything_gets_no_closers(answer):
    assert seal(answer).lines == []
    assert verdict_visible_after(answer)


def test_the_fence_is_closed_first_then_one_line_of_html_closes_the_rest_innermost_first():
    assert seal("<details>\n<div>\n\n```\ncode").lines == ["```", "<!-- --></div></details>"]
    assert seal("<section><!-- a").lines == ["<!-- --></section>"]
    assert seal("<section><!-- a").opened == ["HTML 注释", "<section>"]


TOKENS = ["```", "~~~", "````", "`", "<!--", "-->", "<details>", "</details>", "<div hidden>", "</div>", "<pre>",
          "</pre>", "<script>", "</script>", "<?", "?>", "<!X", ">", "<![CDATA[", "]]>", "<br>", "<span/>",
          "文字 [1]", "\n", "\n\n", "  ", "    ", "- ", "1. ", "> ", "# ", "\t", "<textarea>", "</textarea>",
          "<style>", "<!-->", "\\", "<plaintext-not>", "<DETAILS open>"]


@settings(max_examples=examples(300, "SEAL_EXAMPLES"), deadline=None, derandomize=True)
@given(st.lists(st.sampled_from(TOKENS), max_size=30))
def test_whatever_the_answer_leaves_open_the_verdict_is_visible(pieces):
    assert verdict_visible_after("".join(pieces))
