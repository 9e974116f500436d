"""照抄进回答的提示词标记：提示词用 <source id="编号" …> 和 </source> 把每条资料包起来（prompts.py），
有的小模型（自带的 SmolLM2 回答中文问题时就这样）把这些标签抄进回答，而不是在句末写 [编号]。

标签不算引用：抄了标签的段落照样算没有引用。这里只是把这件事说清楚，每段报一次。只看带 id 的开标签和闭标签，
讲 HTML 的回答里 <source src="a.mp4"> 这样的标签不算；代码块和标题里的不看（它们不在句子里）。全部是线性时间。
"""
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from sourced_answers.checker.text import format_citations, quote
from sourced_answers.checker.types import Claim, Problem

# 有界的量词、没有嵌套：在一长串 “<source id=” 上也是线性的（每个 “<” 最多往后看几十个字）
MARKUP = re.compile(r"[<＜][ \t]{0,3}(/?)[ \t]{0,3}source(?![A-Za-z0-9_-])"
                    r"(?:[ \t]{1,3}id[ \t]{0,3}=[ \t]{0,3}[\"'“”‘’]?[ \t]{0,3}([0-9０-９]{1,40}))?",
                    re.IGNORECASE)
# 一个完整的尖括号标签（去掉它们之后句子里还剩什么）；[^<>] 遇到下一个“<”就停，每个“<”最多往后看 300 个字
WHOLE_TAG = re.compile(r"[<＜][^<>＜＞\n]{0,300}[>＞]")


def copied_tags(text: str) -> list[int | None]:
    """text 里照抄的提示词标签：开标签给出它的编号，闭标签是 None。"""
    found: list[int | None] = []
    for match in MARKUP.finditer(text):
        closing, digits = match.group(1), match.group(2)
        if digits:
            found.append(int(digits[:30]))  # int() 也认全角数字；超长的只会是乱码
        elif closing:
            found.append(None)
    return found


@dataclass
class CopiedTags:
    """一段里照抄的标签：第一个有标签的句子（在句子列表里的位置）、一共几处、标签里的编号（按出现顺序，不重复）。"""
    first: int
    count: int = 0
    numbers: dict[int, None] = field(default_factory=dict)


def copied_tags_by_paragraph(claims: Sequence[Claim]) -> dict[int, CopiedTags]:
    """段落 → 这一段照抄的标签。核对由它报问题，审阅页由它找到那一句（问题点名的就是 first 那一句）。"""
    found: dict[int, CopiedTags] = {}
    for position, claim in enumerate(claims):
        if "source" not in claim.text.lower():
            continue  # 绝大多数句子：不用跑正则
        tags = copied_tags(claim.text)
        if not tags:
            continue
        paragraph = found.setdefault(claim.paragraph, CopiedTags(position))
        paragraph.count += len(tags)
        paragraph.numbers.update(dict.fromkeys(n for n in tags if n is not None))
    return found


def copied_markup_problems(claims: Sequence[Claim], source_count: int,
                           indexes: Sequence[int | None]) -> list[Problem]:
    """每个抄了提示词标签的段落一个问题：第一个有标签的句子、一共几处、标签里的编号。
    indexes：每个句子在 Report.claims 里的下标（structure.checked_indexes），那一句没有引用时为 None。"""
    problems = []
    for paragraph, tagged in copied_tags_by_paragraph(claims).items():
        claim = claims[tagged.first]
        numbers = list(tagged.numbers)
        problems.append(Problem("copied_markup", copied_markup_message(claim.text, numbers, tagged.count, source_count),
                                paragraph=paragraph, sentence=claim.text, citations=numbers,
                                claim=indexes[tagged.first]))
    return problems


def copied_markup_message(sentence: str, numbers: list[int], count: int, source_count: int) -> str:
    """说清楚发生了什么、该怎么写。句子里除了标签什么也没有时不再引用它（免得同一个标签说两遍）。"""
    tag = f'<source id="{numbers[0]}">' if numbers else "</source>"
    times = f"（本段共 {count} 处）" if count > 1 else ""
    existing = [n for n in numbers if 1 <= n <= source_count]
    example = format_citations(existing[:2]) if existing else "[1]"
    said = "" if not WHOLE_TAG.sub("", sentence).strip() else f"“{quote(sentence)}” "
    return f"{said}照抄了提示词里包资料用的标签 {tag}{times}：标签不算引用，引用要写在句末的方括号里，如 {example}"
