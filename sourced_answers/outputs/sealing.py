"""聊天窗口把回答当 Markdown（和其中的 HTML）显示：回答里没有结束的代码块、HTML 注释或标签会把后面的来源和
核对结论整个吞进去（藏进注释、代码块、折叠起来的 <details>、style="display:none" 的 <div>……）。

seal(text) 读一遍 text，给出接在它后面、让之后的文字回到正文的几行。只拼字符串。

要同时顾到两层读法：Markdown 先把文字分成块（代码块、HTML 块、段落），HTML 块和段落里完整的标签原样交给浏览器，
浏览器再按自己的规矩读（注释、<script> 里的文字、开着的元素）。所以这里跟着两样东西读：
  · Markdown 的块：行首 ``` 或 ~~~ 的代码块（到同样的字符、不短于开头的一行）；HTML 块——<script、<style、<textarea、
    <pre（到结束标签那一行），<!--、<?、<!X、<![CDATA[（到 -->、?>、>、]]> 那一行），块级标签（到空行）；
  · 浏览器：没结束的注释（<!-- 到 -->）和伪注释（<? <!X 到 >），开着的元素（空元素 <br> 这类除外）。
    段落里没结束的 <!-- 在 CommonMark 里是文字，在 marked（Open WebUI 用的）里却是注释：两种都当作要结束。
结尾是：先一行结束代码块，再一行原样交给浏览器的 HTML——以 <!-- --> 开头（它本身就开始一个 HTML 块，也结束任何
注释和伪注释），带上还开着的 HTML 块的结尾和每个开着的元素的结束标签（最里面的先）。代码块里、行内代码（`…`）里的
标签不算。<plaintext> 之后的一切都是纯文字，任何结尾都关不掉它：这样的回答只能靠聊天窗口自己的净化去掉它。
"""
import re
from dataclasses import dataclass, field

from sourced_answers.outputs.browser_view import Browser, read_browser, read_paragraph

QUOTE = re.compile(r" {0,3}> ?")
QUOTED = -1
# 列表标记和它后面的 1–4 个空格（五个以上时只算一个：其余是列表项里缩进的代码块）
LIST_ITEM = re.compile(r" {0,3}(?:[-+*]|\d{1,9}[.)])(?: {1,4}(?! )| (?= {4})|$)")
HEADING_OR_RULE = re.compile(r" {0,3}(?:#{1,6}(?:\s|$)|(?:[-*_][ \t]*){3,}$|=+[ \t]*$)")
INDENTED = re.compile(r"(?: {4}| {0,3}\t)")
FENCE = re.compile(r"( {0,3})(`{3,}|~{3,})(.*)")
# Markdown 的 HTML 块：第 1 种（到结束标签那一行），第 2–5 种（到结尾的写法那一行），第 6 种（块级标签，到空行）
RAW_END = "</…>"
RAW_ENDS = ("</script>", "</pre>", "</style>", "</textarea>")
RAW_BLOCK = re.compile(r" {0,3}<(script|style|textarea|pre)(?=[\s>]|$)", re.IGNORECASE)
MARKED_BLOCKS = ((re.compile(r" {0,3}<!--"), "-->"), (re.compile(r" {0,3}<\?"), "?>"),
                 (re.compile(r" {0,3}<!\[CDATA\["), "]]>"), (re.compile(r" {0,3}<![A-Za-z]"), ">"))
BLOCK_TAGS = frozenset((
    "address article aside base basefont blockquote body caption center col colgroup dd details dialog dir div dl "
    "dt fieldset figcaption figure footer form frame frameset h1 h2 h3 h4 h5 h6 head header hr html iframe legend li "
    "link main menu menuitem nav noframes ol optgroup option p param search section summary table tbody td tfoot th "
    "thead title tr track ul").split())
LONE_TAG = re.compile(r" {0,3}</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>\s*")
TAG_BLOCK = re.compile(r" {0,3}</?([A-Za-z][A-Za-z0-9-]*)(?=[\s>]|/>|$)")
# 一行原样交给浏览器的 HTML 的开头：它开始一个 Markdown 的 HTML 块，在浏览器里结束注释和伪注释，自己什么也不显示
RESET = "<!-- -->"


@dataclass
class Reading(Browser):
    """读到这里时还开着的。Markdown：代码块的围栏，开着的容器（引用块、列表项），没读完的段落，HTML 块结尾的写法
    （块级标签的块到空行：until 为 "\\n"）；浏览器的那些见 Browser。"""
    fence: str = ""
    indent: str = ""
    fence_level: int = 0
    containers: list[int] = field(default_factory=list)
    paragraph: list[str] = field(default_factory=list)
    until: str = ""
    until_level: int = 0


@dataclass(frozen=True)
class Seal:
    """接在回答后面的几行（没有要结束的时候是空的），和没结束的是什么（给说明用）。"""
    lines: list[str]
    opened: list[str]


def seal(text: str) -> Seal:
    """读一遍 text（按两种读法各一遍）：它留下什么没结束，接在后面的哪几行能把之后的文字放回正文。"""
    readings = [read_all(text, marked) for marked in (True, False)]
    first = readings[0]
    lines, opened = [], []
    # 引用块、列表项里的代码块由容器结束：在外面补一行围栏反倒会开始一个新的代码块
    if first.fence and first.fence_level == 0:
        lines.append(first.indent + first.fence)
        opened.append("代码块")
    # （<script> 里两层转义时要两个结束标签：第一个只退回一层）
    html = "".join(dict.fromkeys(f"</{state.raw_text}>" * (2 if state.script_escape == 2 else 1)
                                 for state in readings if state.raw_text))
    if first.until in ("?>", ">", "]]>"):
        html += first.until
    elif first.until == RAW_END and not html:
        html += "</pre>"  # 第 1 种 HTML 块要一个结束标签才结束；浏览器里 <pre> 已经由下面的元素结束
    marked, commonmark = (tuple(state.elements) for state in readings)
    elements = "".join(f"</{name}>" for names in dict.fromkeys((marked, commonmark)) for name in reversed(names))
    if any(state.comment for state in readings) or first.until == "-->":
        opened.append("HTML 注释")
    if any(state.bogus for state in readings) or first.until in ("?>", ">", "]]>"):
        opened.append("<? 或 <! 开头的标记")
    opened += [f"<{name}>" for name in dict.fromkeys(name for state in readings
                                                      for name in [state.raw_text, *state.elements] if name)]
    if html or elements or first.until not in ("", "\n") or any(state.comment or state.bogus for state in readings):
        lines.append(RESET + html + elements)
    return Seal(lines, opened)


def read_all(text: str, marked: bool) -> Reading:
    state = Reading(marked)
    for line in text.split("\n"):
        read_line(line, state)
    end_paragraph(state)
    return state


def read_line(line: str, state: Reading) -> None:
    line = line.expandtabs(4)  # Markdown 按四列一格算制表符的缩进
    if state.fence and state.fence_level == 0:
        if closes_fence(line, state.fence):
            state.fence = ""
        return
    matched, line = in_containers(line, state.containers)
    if matched < len(state.containers):
        if state.paragraph and line.strip() and lazy(line) and not state.fence and not state.until:
            state.paragraph.append(line)  # 段落的“懒”续行：少了 >、缩进不够也还在这一段里
            return
        close_containers(state, matched)
    if state.fence:
        if closes_fence(line, state.fence):
            state.fence = ""
        return
    if state.until and not line.strip() and state.until == "\n":
        state.until = ""  # 块级标签的 HTML 块到空行为止
        return
    if state.until:
        # HTML 块里的行原样交给浏览器
        if ends_block(line, state.until):
            state.until = ""
        read_browser(line, state)
        return
    line = open_containers(line, state)
    if not line.strip():
        end_paragraph(state)
        return
    if not state.paragraph and INDENTED.match(line):
        return  # 缩进四格的代码块：浏览器看到的是转义过的文字
    level = len(state.containers)
    if HEADING_OR_RULE.match(line):
        # 标题、分隔线（也是段落下面的 ---、===）：一行一块
        end_paragraph(state)
        state.paragraph = [line]
        end_paragraph(state)
        return
    fence = FENCE.match(line)
    if fence and not (fence.group(2)[0] == "`" and "`" in fence.group(3)):
        end_paragraph(state)
        state.fence, state.indent, state.fence_level = fence.group(2), fence.group(1), level
        state.bogus = False  # 代码块开头的 <pre> 里的 > 结束了伪注释
        return
    until = block_start(line, bool(state.paragraph))
    if until:
        end_paragraph(state)
        state.until = "" if ends_block(line, until) else until
        state.until_level = level
        read_browser(line, state)
        return
    state.paragraph.append(line)


def in_containers(line: str, containers: list[int]) -> tuple[int, str]:
    """这一行还在几层已经开着的容器里（引用块要行首的 >，列表项要缩进到它的内容处，空行也算在列表项里），
    和去掉这些容器的标记之后剩下的文字。容器：-1 是引用块，正数是列表项内容的缩进。"""
    for matched, container in enumerate(containers):
        if container == QUOTED:
            found = QUOTE.match(line)
            if not found:
                return matched, line
            line = line[found.end():]
        elif not line.strip():
            line = ""
        elif len(line) - len(line.lstrip(" ")) >= container:
            line = line[container:]
        else:
            return matched, line
    return len(containers), line


def close_containers(state: Reading, keep: int) -> None:
    """外面 keep 层之内的容器结束了：它们里面的段落、代码块、HTML 块也结束了（浏览器里开着的注释、元素照旧；
    Markdown 写出的 </li>、</blockquote> 里的 > 结束了伪注释）。"""
    end_paragraph(state)
    del state.containers[keep:]
    if state.fence and state.fence_level > keep:
        state.fence = ""
    if state.until and state.until_level > keep:
        state.until = ""
    state.bogus = False


def open_containers(line: str, state: Reading) -> str:
    """行首新开始的引用块（>）和列表项（- 1.）：记下它们，返回剩下的文字。"""
    while True:
        quote = QUOTE.match(line)
        item = LIST_ITEM.match(line)
        if quote:
            state.containers.append(QUOTED)
            line = line[quote.end():]
        elif item and line[item.end():].strip():
            state.containers.append(item.end())
            line = line[item.end():]
        else:
            return line
        end_paragraph(state)  # 新的容器打断了段落
        state.bogus = False  # Markdown 写出的 <blockquote>、<li> 里的 > 结束了伪注释


def end_paragraph(state: Reading) -> None:
    """段落整段一起读（行内代码可以跨行）。"""
    if state.paragraph:
        state.bogus = False  # 段落开头的 <p> 里的 > 结束了浏览器里开着的伪注释
        read_paragraph("\n".join(state.paragraph), state)
        state.paragraph = []
        state.bogus = False  # 段落结尾的 </p> 也是


def lazy(line: str) -> bool:
    """这一行能不能是段落的“懒”续行：不开始任何别的块。"""
    return not (FENCE.match(line) or block_start(line, True) or LIST_ITEM.match(line) or
                HEADING_OR_RULE.match(line) or QUOTE.match(line))


def block_start(line: str, in_paragraph: bool) -> str:
    """这一行开始一个 Markdown 的 HTML 块时，块结尾的写法（块级标签的块、独占一行的标签是 "\\n"：到空行）；
    不开始时是空的。独占一行的标签（第 7 种）不能打断段落。"""
    if RAW_BLOCK.match(line):
        return RAW_END
    for start, until in MARKED_BLOCKS:
        if start.match(line):
            return until
    tag = TAG_BLOCK.match(line)
    if tag and tag.group(1).lower() in BLOCK_TAGS:
        return "\n"
    if not in_paragraph and LONE_TAG.fullmatch(line):
        return "\n"
    return ""


def ends_block(line: str, until: str) -> bool:
    """这一行结束了 HTML 块（第 1 种：四个结束标签里的任何一个，不必和开头的一样）。"""
    if until == RAW_END:
        return any(end in line.lower() for end in RAW_ENDS)
    return until != "\n" and until in line


def closes_fence(line: str, fence: str) -> bool:
    """同样的字符、不短于开头、前面最多三个空格、后面只有空白。"""
    stripped = line.strip()
    indent = len(line) - len(line.lstrip(" "))
    return indent <= 3 and len(stripped) >= len(fence) and set(stripped) == {fence[0]}
