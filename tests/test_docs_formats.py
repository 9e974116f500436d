"""--docs 的格式：各种文件变成带标题和行号的段落；HTML 只要看得见的字；.docx 不解析带实体定义的 XML。"""
import io
import zipfile

import pytest

from sourced_answers.search.docs_files import NotText, decode
from sourced_answers.search.docs_formats import (
    Unreadable,
    document_passages,
    docx_blocks,
    html_blocks,
    markdown_blocks,
    passages,
)


def docx(body: str, prolog: str = "") -> bytes:
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as archive:
        archive.writestr("word/document.xml", f'<?xml version="1.0"?>{prolog}<w:document xmlns:w='
                         f'"http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>{body}'
                         "</w:body></w:document>")
    return data.getvalue()


def test_a_hash_inside_a_code_fence_is_not_a_heading():
    blocks = markdown_blocks("# 标题\n\n```bash\n# 注释\nls\n```\n\n正文")
    assert [(block.text, block.heading) for block in blocks] == \
        [("标题", True), ("```bash\n# 注释\nls\n```", False), ("正文", False)]


def test_passages_do_not_cross_headings_and_stay_under_the_limit():
    text = "# 一\n\n" + "\n\n".join("甲" * 300 for _ in range(3)) + "\n\n# 二\n\n乙"
    found = passages(markdown_blocks(text), limit=700)
    assert [(item.heading, item.start, item.end) for item in found] == [("一", 3, 5), ("一", 7, 7), ("二", 11, 11)]
    assert all(len(item.text) <= 700 for item in found)
    long_line = passages(markdown_blocks("丙" * 1500), limit=700)
    assert [len(item.text) for item in long_line] == [700, 700, 100]


def test_html_keeps_only_visible_text_with_its_source_lines():
    page = "<html>\n<head><title>T</title><style>p{}</style></head>\n<body>\n<h2>路由器</h2>\n<p>VLAN 20\n给摄像头</p>" \
           "\n<script>alert(1)</script>\n</body></html>"
    blocks = html_blocks(page)
    assert [(block.start, block.text, block.heading) for block in blocks] == \
        [(4, "路由器", True), (5, "VLAN 20 给摄像头", False)]


def test_docx_paragraphs_and_headings():
    body = ('<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>装修</w:t></w:r></w:p>'
            '<w:p><w:r><w:t>闭水试验 48 </w:t></w:r><w:r><w:t>小时</w:t></w:r></w:p>')
    found = document_passages("docx", docx(body), decode)
    assert [(item.heading, item.start, item.text) for item in found] == [("装修", 2, "闭水试验 48 小时")]


def test_a_docx_with_entity_definitions_is_not_parsed():
    bomb = '<!DOCTYPE w [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>'
    with pytest.raises(Unreadable, match="DTD"):
        docx_blocks(docx("<w:p><w:r><w:t>&b;</w:t></w:r></w:p>", bomb))
    with pytest.raises(Unreadable, match="不是完好的 .docx"):
        docx_blocks(b"PK not really")


@pytest.mark.parametrize("data, text", [
    ("笔记".encode("utf-8-sig"), "笔记"), ("笔记".encode("utf-16"), "笔记"), ("笔记".encode("gb18030"), "笔记")])
def test_encodings_utf8_with_bom_utf16_and_gb18030(data, text):
    assert decode(data) == text


def test_binary_is_not_text():
    with pytest.raises(NotText, match="NUL"):
        decode(b"\x89PNG\x00\x00")
