"""模型的“思考”：一条规则把模型的回复拆成思考过程和回答。回答、--fix 的改写、--judge 的评判、--verify 读进来的回答、
流式显示，用的都是这一条（ThinkFilter；整段文字的 split_reply、strip_think、think_spans 也是把它喂一遍）：

  · <think>…</think> 里是思考过程；
  · 落单的 </think>（前面没有 <think>）：它之前的全部文字都是思考过程——Qwen3、DeepSeek-R1 的对话模板自己在提示里
    写好了 <think>，模型的输出里只剩 </think>；
  · 没有闭合的 <think>：回复停在没有结束的思考里。它后面的文字不是回答（模型还没想完，常常是 --max-tokens 用完了），
    但也不丢掉：单独放在 Reply.unfinished 里，由调用方标明了显示、保存。

标签不分大小写，尖括号里可以有空白和属性（<THINK>、<think >、< /think>、<think type="x">），<think/> 什么也不算；
流式时标签可能被切在两个片段之间。处理的时间和文字长度成正比（不管有多少个标签）。
"""
import re
from dataclasses import dataclass

# 思考的标签：group 1 是闭合的“/”，group 2 是自闭合的“/”。空白、属性都有上限，流式时最多留这么长的一段等下一片
TAG = re.compile(r"<\s{0,8}(/?)\s{0,8}think(?:\s[^<>]{0,200})?(/?)>", re.IGNORECASE)
# 片段末尾可能是一个还没收完的标签（完整的标签已经由 TAG 找过了）：整段匹配最后一个“<”开始的尾巴
PARTIAL_TAG = re.compile(r"<\s{0,8}/?\s{0,8}(?:t(?:h(?:i(?:n(?:k(?:\s[^<>]{0,200})?/?)?)?)?)?)?", re.IGNORECASE)
LONGEST_TAG = 240  # 比 TAG 能匹配的最长标签还长一点


@dataclass(frozen=True)
class Reply:
    """按思考的规则拆开的一条回复。answer：回答（去掉首尾空白）；reasoning：结束了的思考过程（去掉首尾空白）；
    unfinished：没有闭合的 <think> 之后的文字（没有这样的 <think> 时是 None，有而后面什么也没有时是 ""）。"""
    answer: str
    reasoning: str = ""
    unfinished: str | None = None
    tagged: bool = False  # 回复里有没有思考的标签

    @property
    def state(self) -> str:
        """"none"：没有思考；"closed"：思考都结束了；"unfinished"：停在没有结束的思考里。"""
        if self.unfinished is not None:
            return "unfinished"
        return "closed" if self.tagged else "none"


class ThinkFilter:
    """一片一片地喂进模型的回复（feed），边收边给出回答里新出现的文字；finish 之后 reply() 是拆好的整条回复。

    落单的 </think> 让它之前的文字全部变成思考过程——包括已经从 feed 返回、显示出去了的：每遇到一次 lone_closes 加一，
    显示的一方可以据此标明“以上是思考过程”。"""

    def __init__(self) -> None:
        self.inside = False  # 在 <think> 里面
        self.pending = ""  # 片段末尾可能是半个标签：留到下一片
        self.offset = 0  # pending 的第一个字在整条回复里的位置
        self.pieces: list[tuple[str, int, int, str]] = []  # (种类 answer / reasoning / tag, 开始, 结束, 文字)
        self.boundary = 0  # pieces 的这个下标之前全是思考过程（最后一个落单的 </think> 之后）
        self.lone_closes = 0
        self.opened_at: int | None = None  # 没闭合的 <think> 在 pieces 里的下标
        self.removed = False  # 上一段回答之后去掉过思考或标签

    def add(self, kind: str, start: int, end: int, text: str) -> None:
        if end <= start:
            return
        if kind != "answer":
            self.removed = True
        elif self.removed:
            self.removed = False
            self.escape_partial_tag()
        self.pieces.append((kind, start, end, text[start - self.offset:end - self.offset]))

    def escape_partial_tag(self) -> None:
        """回答的两段之间去掉了思考：前一段要是以半个标签结尾（“<th”），和后一段接起来就可能拼出一个新标签
        （“<th<think>…</think>ink>” → “<think>”），再按规则拆一遍时它后面的话就不见了——显示出来、却没有核对。
        所以这个“<”改成全角的“＜”：回答再拆多少遍都一样，显示的和核对的是同一段文字。"""
        index = len(self.pieces) - 1
        while index >= self.boundary and self.pieces[index][0] != "answer":
            index -= 1
        if index < self.boundary:
            return
        kind, start, end, text = self.pieces[index]
        keep = held_tail(text, 0)
        if keep:
            self.pieces[index] = (kind, start, end, text[:len(text) - keep] + "＜" + text[len(text) - keep + 1:])

    def feed(self, chunk: str) -> str:
        """喂进一片，返回回答里新出现的文字（思考过程、标签、可能是半个标签的结尾都不在里面）。"""
        text = self.pending + chunk
        base = self.offset
        visible: list[str] = []
        position = 0
        for match in TAG.finditer(text):
            kind = "reasoning" if self.inside else "answer"
            self.add(kind, base + position, base + match.start(), text)
            if kind == "answer":
                visible.append(text[position:match.start()])
            self.add("tag", base + match.start(), base + match.end(), text)
            self.tag(closing=bool(match.group(1)), self_closing=bool(match.group(2)))
            position = match.end()
        keep = held_tail(text, position)
        kind = "reasoning" if self.inside else "answer"
        self.add(kind, base + position, base + len(text) - keep, text)
        if kind == "answer":
            visible.append(text[position:len(text) - keep])
        self.pending = text[len(text) - keep:]
        self.offset = base + len(text) - keep
        return "".join(visible)

    def tag(self, closing: bool, self_closing: bool) -> None:
        if self_closing:
            return  # <think/>：空的思考，什么也不改
        if not closing:
            if not self.inside:
                self.inside = True
                self.opened_at = len(self.pieces) - 1
            return  # 思考里又写了一个 <think>：还是思考
        if self.inside:
            self.inside = False
            self.opened_at = None
            return
        # 落单的 </think>：之前的一切都是思考过程（模板替模型写好了开头的 <think>）
        self.boundary = len(self.pieces)
        self.lone_closes += 1

    def finish(self) -> str:
        """回复收完了：留着的结尾不会再是标签，属于它所在的部分。返回回答里最后新出现的文字。"""
        rest = self.pending
        self.pending = ""
        kind = "reasoning" if self.inside else "answer"
        self.add(kind, self.offset, self.offset + len(rest), rest)
        self.offset += len(rest)
        return rest if kind == "answer" else ""

    def reply(self) -> Reply:
        """拆好的整条回复（finish 之后调用）。"""
        unfinished_from = len(self.pieces) if self.opened_at is None else self.opened_at
        answer, reasoning, unfinished = [], [], []
        for index, (kind, _, _, text) in enumerate(self.pieces):
            if kind == "tag":
                continue
            if index >= unfinished_from:
                unfinished.append(text)
            elif kind == "answer" and index >= self.boundary:
                answer.append(text)
            else:
                reasoning.append(text)
        return Reply("".join(answer).strip(), "".join(reasoning).strip(),
                     "".join(unfinished).strip() if self.opened_at is not None else None,
                     tagged=any(kind == "tag" for kind, *_ in self.pieces))

    def spans(self) -> list[tuple[int, int]]:
        """不属于回答的部分（思考过程和标签）在整条回复里的位置 [(开始, 结束)]，相邻的合并。"""
        spans: list[tuple[int, int]] = []
        for index, (kind, start, end, _) in enumerate(self.pieces):
            if kind == "answer" and index >= self.boundary:
                continue
            if spans and spans[-1][1] == start:
                spans[-1] = (spans[-1][0], end)
            else:
                spans.append((start, end))
        return spans


def held_tail(text: str, start: int) -> int:
    """text[start:] 的结尾有多长可能是还没收完的标签（要留到下一片再看）。
    只可能从最后一个“<”开始：标签里没有别的“<”。"""
    last = text.rfind("<", max(start, len(text) - LONGEST_TAG))
    if last < 0 or not PARTIAL_TAG.fullmatch(text, last):
        return 0
    return len(text) - last


def filtered(text: str) -> ThinkFilter:
    think = ThinkFilter()
    think.feed(text)
    think.finish()
    return think


def split_reply(text: str) -> Reply:
    """整条回复按思考的规则拆开。"""
    return filtered(text).reply()


def strip_think(text: str) -> str:
    """整段文字里的回答部分（首尾空白保留：核对时在原文里找句子，位置要对得上）。"""
    think = filtered(text)
    return "".join(piece for index, (kind, _, _, piece) in enumerate(think.pieces)
                   if kind == "answer" and index >= think.boundary and
                   (think.opened_at is None or index < think.opened_at))


def without_thinking(text: str) -> str:
    """模型的回答：去掉思考过程（结束了的和没结束的）和首尾空白。"""
    return split_reply(text).answer


def think_spans(text: str) -> list[tuple[int, int]]:
    """不属于回答的部分（思考过程和标签）的位置 [(开始, 结束)]；没闭合的 <think> 一直算到结尾。"""
    return filtered(text).spans()
