"""--docs 的各种格式变成段落：Markdown、纯文本、HTML（只要看得见的字）、.docx（标准库读 zip 里的 XML）、PDF（pypdf）。

一个文件先变成一串块（Block：起止行、文字、是不是标题），再把同一个标题下相邻的块合成不超过 PASSAGE_CHARS 个字的段落
（Passage），段落不跨标题。行号：Markdown、文本、HTML 是源文件的行；.docx 是第几个段落（Word 里没有行）；
PDF 按页，不按行（start、end 是页码，page 为真）。
"""
import io
import re
import sys
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from html.parser import HTMLParser
from xml.etree import ElementTree

# 一段最多这么多个字：够放下一两个完整的段落，又让排序落在具体的地方，而不是整篇文件
PASSAGE_CHARS = 700
# .docx 里的 word/document.xml 最多这么大（解压后）：防压缩炸弹
MAX_DOCX_XML = 64 * 1024 * 1024
PYPDF_REQUIREMENT = "pypdf>=4.0"


@dataclass(frozen=True)
class Block:
    start: int
    end: int
    text: str
    heading: bool = False


@dataclass(frozen=True)
class Passage:
    """一段：起止行（PDF 是起止页）、它所在的标题（没有时为空）、文字。"""
    start: int
    end: int
    heading: str
    text: str
    page: bool = False


class Unreadable(ValueError):
    """文件的内容读不出来（坏的 .docx、PDF 之类）：说明是中文的。"""


def pdf_install_command() -> str:
    """装上 pypdf 的那一条命令：用运行本程序的这个 Python 装，装在哪种环境里都对。"""
    return f"{sys.executable} -m pip install '{PYPDF_REQUIREMENT}'"


HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def markdown_blocks(text: str) -> list[Block]:
    """Markdown：# 开头的是标题（代码块里的不算），空行分开段落；下一行是 === 的也是标题。"""
    blocks: list[Block] = []
    lines = text.splitlines()
    start, current = 0, list[str]()
    fence = ""

    def flush(end: int) -> None:
        nonlocal current
        if current and "".join(current).strip():
            blocks.append(Block(start, end, "\n".join(current).strip()))
        current = []

    for number, line in enumerate(lines, 1):
        marker = FENCE.match(line)
        if fence:
            current.append(line)
            if marker and marker.group(1)[0] == fence:
                fence = ""
            continue
        if marker:
            if not current:
                start = number
            current.append(line)
            fence = marker.group(1)[0]
            continue
        heading = HEADING.match(line)
        if heading:
            flush(number - 1)
            blocks.append(Block(number, number, heading.group(2), heading=True))
        elif re.fullmatch(r" {0,3}=+\s*", line) and len(current) == 1:
            blocks.append(Block(start, number, current[0].strip(), heading=True))
            current = []
        elif not line.strip():
            flush(number - 1)
        else:
            if not current:
                start = number
            current.append(line)
    flush(len(lines))
    return blocks


def text_blocks(text: str) -> list[Block]:
    """纯文本：空行分开段落，没有标题。"""
    blocks: list[Block] = []
    start, current = 0, list[str]()
    lines = text.splitlines()
    for number, line in enumerate([*lines, ""], 1):
        if line.strip():
            if not current:
                start = number
            current.append(line)
        elif current:
            blocks.append(Block(start, number - 1, "\n".join(current).strip()))
            current = []
    return blocks


class VisibleText(HTMLParser):
    """HTML 里看得见的字：不要 head、script、style、template 里的；块级标签分开段落，h1–h6 是标题。"""
    HIDDEN = {"head", "script", "style", "template", "noscript", "svg", "title"}
    BLOCKS = {"p", "div", "li", "ul", "ol", "tr", "table", "pre", "section", "article", "blockquote", "br", "hr",
              "dd", "dt", "main", "header", "footer", "nav", "aside", "figure", "form", "body"}
    HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[Block] = []
        self.hidden = 0
        self.parts: list[str] = []
        self.start = 0
        self.in_heading = False

    def flush(self) -> None:
        text = re.sub(r"\s+", " ", "".join(self.parts)).strip()
        if text:
            self.blocks.append(Block(self.start, self.getpos()[0], text, heading=self.in_heading))
        self.parts = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.HIDDEN:
            self.hidden += 1
        elif tag in self.BLOCKS or tag in self.HEADINGS:
            self.flush()
            self.in_heading = tag in self.HEADINGS

    def handle_endtag(self, tag: str) -> None:
        if tag in self.HIDDEN:
            self.hidden = max(0, self.hidden - 1)
        elif tag in self.BLOCKS or tag in self.HEADINGS:
            self.flush()
            self.in_heading = False

    def handle_data(self, data: str) -> None:
        if self.hidden:
            return
        if not self.parts or not "".join(self.parts).strip():
            self.start = self.getpos()[0] + data[:len(data) - len(data.lstrip())].count("\n")
        self.parts.append(data)


def html_blocks(text: str) -> list[Block]:
    parser = VisibleText()
    parser.feed(text)
    parser.close()
    parser.flush()
    return parser.blocks


WORD = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
HEADING_STYLE = re.compile(r"(?i)^(heading|title|标题)\s*\d*$|^\d$")


def docx_blocks(data: bytes) -> list[Block]:
    """.docx：word/document.xml 里的段落（w:p），样式是标题的（Heading1、标题 1、中文版 Word 的 1……）是标题。
    Word 文件里从不需要 DTD：有 <!DOCTYPE、<!ENTITY 的不解析（实体炸弹）。"""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            info = archive.getinfo("word/document.xml")
            if info.file_size > MAX_DOCX_XML:
                raise Unreadable("正文解压后太大")
            with archive.open(info) as member:
                xml = member.read(MAX_DOCX_XML + 1)
    except (zipfile.BadZipFile, KeyError, OSError, RuntimeError, EOFError) as error:
        raise Unreadable("不是完好的 .docx（Word 文档）") from error
    if len(xml) > MAX_DOCX_XML:
        raise Unreadable("正文解压后太大")
    if b"<!DOCTYPE" in xml or b"<!ENTITY" in xml:
        raise Unreadable("正文里有 DTD 或实体定义，Word 文档不该有，没有解析")
    try:
        document = ElementTree.fromstring(xml)
    except ElementTree.ParseError as error:
        raise Unreadable("正文的 XML 坏了") from error
    blocks = []
    for number, paragraph in enumerate(document.iter(f"{WORD}p"), 1):
        text = "".join(node.text or "" for node in paragraph.iter(f"{WORD}t")).strip()
        if not text:
            continue
        style = paragraph.find(f"{WORD}pPr/{WORD}pStyle")
        outline = paragraph.find(f"{WORD}pPr/{WORD}outlineLvl")
        name = style.get(f"{WORD}val", "") if style is not None else ""
        blocks.append(Block(number, number, text, heading=bool(HEADING_STYLE.match(name)) or outline is not None))
    return blocks


def pdf_pages(data: bytes) -> list[str]:
    """PDF 每一页的文字（pypdf；调用前已经确认装了它）。"""
    import logging

    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # 它对不规范的 PDF 的英文警告不是给用户看的
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise Unreadable("PDF 加了密码")
        return [page.extract_text() or "" for page in reader.pages]
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, RecursionError) as error:
        if isinstance(error, Unreadable):
            raise
        raise Unreadable("PDF 读不出文字（文件坏了或格式不规范）") from error


def split_long(block: Block, limit: int) -> list[Block]:
    """比一段还长的块：按行切开，一行就超长的按字切。"""
    if len(block.text) <= limit:
        return [block]
    pieces: list[Block] = []
    lines = block.text.split("\n")
    line_number = block.start
    current: list[str] = []
    first = block.start
    for offset, line in enumerate(lines):
        number = min(block.start + offset, block.end)
        while len(line) > limit:
            if current:
                pieces.append(Block(first, line_number, "\n".join(current)))
                current = []
            pieces.append(Block(number, number, line[:limit]))
            line = line[limit:]
        if current and len("\n".join(current)) + len(line) + 1 > limit:
            pieces.append(Block(first, line_number, "\n".join(current)))
            current = []
        if not current:
            first = number
        current.append(line)
        line_number = number
    if current and "".join(current).strip():
        pieces.append(Block(first, line_number, "\n".join(current)))
    return pieces


def passages(blocks: list[Block], limit: int = PASSAGE_CHARS, heading: str = "", page: bool = False) -> list[Passage]:
    """相邻的块合成段落，每段最多 limit 个字，不跨标题。"""
    result: list[Passage] = []
    current: list[Block] = []

    def flush() -> None:
        nonlocal current
        if current:
            result.append(Passage(current[0].start, current[-1].end, heading,
                                  "\n\n".join(item.text for item in current), page))
        current = []

    for block in blocks:
        if block.heading:
            flush()
            heading = block.text
            continue
        for piece in split_long(block, limit):
            if current and sum(len(item.text) + 2 for item in current) + len(piece.text) > limit:
                flush()
            current.append(piece)
    flush()
    return result


def document_passages(kind: str, data: bytes, decode: Callable[[bytes], str]) -> list[Passage]:
    """一个文件的全部段落。decode：把字节变成文字（docs_files.decode）；二进制、坏文件抛 ValueError 的子类。"""
    if kind == "pdf":
        return [Passage(number, number, item.heading, item.text, page=True)
                for number, text in enumerate(pdf_pages(data), 1)
                for item in passages(text_blocks(text), heading=f"第 {number} 页")]
    if kind == "docx":
        return passages(docx_blocks(data))
    text = decode(data)
    if kind == "markdown":
        return passages(markdown_blocks(text))
    if kind == "html":
        return passages(html_blocks(text))
    return passages(text_blocks(text))

