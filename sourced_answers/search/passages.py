"""从读到的网页正文里挑出和问题最相关的段落（纯逻辑，不做 I/O）。

很多网页的前几千字是导航、推荐列表和评论；直接截前 N 个字常常一句正文都拿不到。
"""
import re

from sourced_answers.checker import seen, tokens_with_spans

NAVIGATION_MARK = re.compile(r"[|｜>›»]")
LONG_BLOCK = 400


def split_blocks(text: str) -> list[str]:
    """把网页正文切成段：空行分段；太长的段再按行、按句子切开。"""
    blocks: list[str] = []
    for block in re.split(r"\n\s*\n", text):
        pieces = [block] if len(block) <= LONG_BLOCK else block.split("\n")
        for piece in pieces:
            if len(piece) <= LONG_BLOCK:
                blocks.append(piece)
            else:
                blocks += re.findall(r"[^。！？!?]*[。！？!?]?", piece)
    return [b.strip() for b in blocks if b.strip()]


def is_navigation(block: str) -> bool:
    """导航栏、推荐列表、评论区：满是分隔符、每一小段都很短。"""
    marks = len(NAVIGATION_MARK.findall(block))
    return marks >= 3 and len(block) / (marks + 1) < 40


class Passages:
    """一段正文，切好段、按和问题的相关程度排好了序：同一段正文要按不同的预算挑很多次时（提示词放不下上下文窗口、
    二分查找每条资料留多少字），切段和排序只做一次，每次挑只是按顺序往预算里放。"""

    def __init__(self, text: str, question: str) -> None:
        self.text = text
        self.blocks = split_blocks(text)
        wanted = {token for token, _, _, content in tokens_with_spans(seen(question)) if content}
        ranked = []
        for position, block in enumerate(self.blocks):
            if is_navigation(block):
                continue
            found = {token for token, _, _, _ in tokens_with_spans(seen(block))}
            ranked.append((-len(wanted & found), position))
        self.order = [position for _, position in sorted(ranked)]

    def select(self, budget: int) -> str:
        """和问题共有的内容词越多的段落越先入选，按原文顺序拼起来，总长不超过 budget 个字符。"""
        if len(self.text) <= budget:
            return self.text
        chosen: list[int] = []
        used = 0
        for position in self.order:
            cost = len(self.blocks[position]) + (2 if chosen else 0)
            if used + cost <= budget:
                chosen.append(position)
                used += cost
                if used >= budget - 2:
                    break  # 再也放不下任何一段了
        if not chosen:
            return self.text[:budget]
        return "\n\n".join(self.blocks[position] for position in sorted(chosen))


def select_passages(text: str, question: str, budget: int) -> str:
    """从网页正文里挑出和问题最相关的段落，按原文顺序拼起来，总长不超过 budget 个字符。

    网页的前几千字常常是导航和推荐列表：这些段落不占预算；和问题共有的内容词越多的段落越先入选，
    剩下的预算按原文顺序补上其他段落。"""
    if len(text) <= budget:
        return text
    return Passages(text, question).select(budget)
