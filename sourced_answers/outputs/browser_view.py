"""浏览器怎么读原样交给它的 HTML，CommonMark 和 marked 把段落里的哪些 HTML 原样交给浏览器（sealing.py 用）。

浏览器：注释到 -->（<!--> 和 <!---> 是空的），<? 和 <! 开始的伪注释到第一个 >，<script> 这类元素里的文字到它的结束标签
（<script> 里还有两层“转义”），其余的开始、结束标签。段落：行内代码里的不算，只有 CommonMark 认得的完整的标签、注释、
<? … ?>、<!X … >、<![CDATA[ … ]]> 原样交出；没结束的 <!-- 在 marked 里是注释。每段文字只往后找一遍：工作量和长度成正比。
"""
import re
from dataclasses import dataclass, field

# 浏览器里内容是纯文字的元素：里面的标签不算，直到它的结束标签
RAW_TEXT = frozenset(("script", "style", "textarea", "title", "xmp", "noscript", "iframe", "noembed", "noframes"))
# 浏览器读原样的 HTML：注释或伪注释（<? <!X <![CDATA[）的开头、一个开始标签或结束标签
BROWSER_TOKEN = re.compile(r"(?P<comment><!--)|(?P<bogus><[?!])|"
                           r"<(?P<close>/)?(?P<name>[A-Za-z][A-Za-z0-9-]*)(?P<rest>(?:\s[^<>]*)?)>")
# 段落里：反斜杠转义、一串反引号、一个 <
PARAGRAPH_TOKEN = re.compile(r"(?P<escaped>\\[!-/:-@\[-`{-~])|(?P<code>`+)|<")
# CommonMark 原样交出的行内 HTML（markdown-it 的写法）：开始标签、结束标签、注释、<? … ?>、<!X … >、CDATA
ATTRIBUTE = r"""(?:\s+[A-Za-z_:][A-Za-z0-9_.:-]*(?:\s*=\s*(?:[^"'=<>`\x00-\x20]+|'[^']*'|"[^"]*"))?)"""
RAW_TAG = re.compile(rf"<[A-Za-z][A-Za-z0-9-]*{ATTRIBUTE}*\s*/?>|</[A-Za-z][A-Za-z0-9-]*\s*>")
# 行内标签最多看这么长（引号里的属性可以很长；只看一段，整段的工作量才和长度成正比）
TAG_WINDOW = 4096
LOOSE_TAG = re.compile(r"<([A-Za-z][A-Za-z0-9-]*)(?:\s[^<>]*)?>")
BACKTICKS = re.compile(r"`+")
EMPTY_COMMENT = re.compile(r"-?>")
VOID = frozenset("area base br col embed hr img input keygen link meta param source track wbr".split())
SCRIPT_TOKEN = re.compile(r"</script(?=[\s/>])|--+>|<!--|<script(?=[\s/>])")


@dataclass
class Browser:
    """浏览器读到这里时还开着的：注释、伪注释、内容是纯文字的元素（它的名字，<script> 里几层转义）、开着的元素。
    浏览器只读原样交给它的 HTML，所以段落里转义过的 --> 结束不了开着的注释。
    marked：段落里没结束的 <!-- 按 marked 读成注释（和段落的其余部分原样交出）；否则按 CommonMark 读成文字。"""
    marked: bool
    comment: bool = False
    bogus: bool = False
    raw_text: str = ""
    script_escape: int = 0
    elements: list[str] = field(default_factory=list)


class Next:
    """text 里 needle 在某个位置之后第一次出现的地方。问的位置只增不减：记着上一次的答案，整段只找一遍。"""

    def __init__(self, text: str, needle: str) -> None:
        self.text, self.needle, self.found = text, needle, -2

    def after(self, position: int) -> int:
        if self.found != -1 and self.found < position:
            self.found = self.text.find(self.needle, position)
        return self.found


class CommentEnds:
    """CommonMark（markdown-it）的行内注释：<!-- 之后一段一段地读——不是 - 的字、“-”加一个不是 - 的字、
    “--”加一个不是 > 的字——读到正好是 --> 的地方才结束，所以 <!-- x ---> 不是注释。从哪里开始读，结尾就是确定的：
    从后往前把每个位置的结尾算一遍（和长度成正比），每个 <!-- 查一下。"""

    def __init__(self, text: str) -> None:
        size = len(text)
        self.ends = [-1] * (size + 3)
        for index in range(size - 1, -1, -1):
            if text.startswith("-->", index):
                self.ends[index] = index
            elif text[index] != "-":
                self.ends[index] = self.ends[index + 1]
            elif index + 1 < size and text[index + 1] != "-":
                self.ends[index] = self.ends[index + 2]
            elif index + 2 < size and text[index + 2] != ">":
                self.ends[index] = self.ends[index + 3]

    def end(self, body: int) -> int:
        """从 body 开始读的注释里 --> 的位置（读不到时是 -1）。"""
        return self.ends[body] if body < len(self.ends) else -1


def read_paragraph(text: str, state: Browser) -> None:
    """Markdown 的一个段落（可以有几行）：从左往右找行内代码和原样交给浏览器的 HTML（CommonMark 认得的完整的
    标签、注释、<? … ?>、<!X … >、<![CDATA[ … ]]>），只把后者交给浏览器；其余的文字是转义过的，浏览器里什么也
    不开、不关。没结束的 <!-- 在 CommonMark 里只是文字，marked 却把它和段落的其余部分原样交出去。
    每种结尾、每种长度的反引号串都只往后找一遍：整段的工作量和它的长度成正比。"""
    ends = {needle: Next(text, needle) for needle in ("-->", "?>", "]]>", ">")}
    comments = None if state.marked or "<!--" not in text else CommentEnds(text)
    runs: dict[int, list[int]] = {}
    for run in BACKTICKS.finditer(text):
        runs.setdefault(len(run.group()), []).append(run.start())
    next_run: dict[int, int] = {}
    position = 0
    while True:
        found = PARAGRAPH_TOKEN.search(text, position)
        if not found:
            return
        position = found.end()
        if found.group("escaped"):
            continue
        if found.group("code"):
            # 行内代码到下一串同样长的反引号为止；没有的话这串反引号只是文字
            # （找的是整串的反引号：结尾那串前面可以有反斜杠，行内代码里反斜杠不转义）
            length = len(found.group("code"))
            starts = runs.get(length, [])
            index = next_run.get(length, 0)
            while index < len(starts) and starts[index] <= found.start():
                index += 1
            next_run[length] = index
            if index < len(starts):
                position = starts[index] + length
            continue
        start = found.start()
        end = raw_html_end(text, start, ends, comments)
        if end > 0:
            read_browser(text[start:end], state)
            position = end
        elif state.marked and text.startswith("<!--", start):
            read_browser(text[start:], state)
            return
        else:
            loose = LOOSE_TAG.match(text, start)
            if loose and loose.group(1).lower() not in RAW_TEXT:
                # 写不成 CommonMark 的开始标签（比如引号里的属性太长）：多补一个结束标签无害，就当它开着
                read_browser(loose.group(), state)


def raw_html_end(text: str, start: int, ends: dict[str, Next], comments: "CommentEnds | None") -> int:
    """text[start] 是 <：它开始的、原样交给浏览器的行内 HTML 在哪里结束（不是这样的 HTML 时是 -1）。
    comments：按 CommonMark（markdown-it）的规矩找注释的结尾；None 时按 marked 的，第一个 --> 就是。"""
    if text.startswith("<!--", start):
        empty = EMPTY_COMMENT.match(text, start + 4)
        if empty:
            return empty.end()
        if comments is not None:
            end = comments.end(start + 4)
            return end + 3 if end >= 0 else -1
        needle, after = "-->", start + 4
    elif text.startswith("<?", start):
        needle, after = "?>", start + 2
    elif text.startswith("<![CDATA[", start):
        needle, after = "]]>", start + 9
    elif text.startswith("<!", start) and text[start + 2:start + 3].isalpha():
        needle, after = ">", start + 2
    else:
        tag = RAW_TAG.match(text[start:start + TAG_WINDOW])
        return start + tag.end() if tag else -1
    end = ends[needle].after(after)
    return end + len(needle) if end >= 0 else -1


def read_browser(html: str, state: Browser) -> None:
    """浏览器读到的一段原样的 HTML：注释到 -->（<!--> 和 <!---> 是空的），<? 和 <! 开始的伪注释到第一个 >，
    <script> 这类元素里的文字到它的结束标签，其余的开始和结束标签。"""
    lowered = html.lower()  # 只算一次：标签名不分大小写
    position = 0
    while position < len(html):
        ending = pending_end(html, lowered, position, state)
        if ending is not None:
            if ending < 0:
                return
            position = ending
            continue
        found = BROWSER_TOKEN.search(html, position)
        if not found:
            return
        position = found.end()
        if found.group("comment"):
            empty = EMPTY_COMMENT.match(html, found.end())
            if empty:
                position = empty.end()
            else:
                state.comment = True
            continue
        if found.group("bogus"):
            state.bogus = True
            continue
        name = found.group("name").lower()
        if found.group("close"):
            # 只去掉它自己：浏览器里它上面的元素也随它结束，可它们也可能早已被 Markdown 的 </li>、</blockquote>
            # 结束了，这个结束标签对不上号；多补几个结束标签无害（对不上的，浏览器不理），少补一个就遮住了后面
            if name in state.elements:
                del state.elements[len(state.elements) - 1 - state.elements[::-1].index(name)]
        elif name not in VOID and not found.group("rest").rstrip().endswith("/"):
            state.elements.append(name)
            if name in RAW_TEXT:
                state.raw_text = name


def pending_end(html: str, lowered: str, position: int, state: Browser) -> int | None:
    """浏览器正在注释、伪注释或纯文字的元素里时：它在这段里结束之后的位置（-1：这段里没有结束）；
    不在它们里面时是 None。"""
    if state.comment:
        found = html.find("-->", position)
        if found < 0:
            return -1
        state.comment = False
        return found + 3
    if state.bogus:
        found = html.find(">", position)
        if found < 0:
            return -1
        state.bogus = False
        return found + 1
    if state.raw_text == "script":
        return script_end(lowered, position, state)
    if state.raw_text:
        found = lowered.find(f"</{state.raw_text}", position)
        if found < 0:
            return -1
        state.raw_text = ""
        return found
    return None


def script_end(lowered: str, position: int, state: Browser) -> int:
    """<script> 里的文字：<!-- 之后是“转义”的，其中的 <script 又进一层，那时 </script 只退回一层、--> 退回最外面。
    返回 </script 的位置（-1：这段里没有结束）。lowered 是小写的那段 HTML。"""
    while True:
        found = SCRIPT_TOKEN.search(lowered, position)
        if not found:
            return -1
        token, position = found.group(), found.end()
        if token == "</script":
            if state.script_escape < 2:
                state.raw_text, state.script_escape = "", 0
                return found.start()
            state.script_escape = 1
        elif token.endswith(">"):  # -->（也包括 <!--> 里的那两个 -）
            state.script_escape = 0
        elif token == "<!--":
            state.script_escape = max(state.script_escape, 1)
            position = found.start() + 2  # <!--> 的 --> 从这两个 - 开始
        elif token == "<script" and state.script_escape == 1:
            state.script_escape = 2
