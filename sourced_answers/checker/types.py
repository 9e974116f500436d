"""核对用到的数据类型：资料、句子、问题、报告。这个模块不导入本项目的任何东西，别的模块都可以放心用它。

问题的种类（kind）只在 PROBLEM_KINDS 这一处定义：文字输出、--eval 的表和文档都从这里取名字。
"""
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# 问题的种类 → 简短的中文名（--eval 的表头、汇总里用）。顺序就是表格里列的顺序
PROBLEM_KINDS: dict[str, str] = {
    "missing_source": "编号不存在",
    "uncited_paragraph": "没有引用",
    "copied_markup": "抄了提示词标记",
    "weak_support": "对不上",
    "number_mismatch": "数字不符",
    "polarity_mismatch": "说反了",
    "opposite_mismatch": "反义词",
    "name_mismatch": "名称不符",
    "cross_language": "跨语言",
    "empty_answer": "空回答",
    "truncated": "被截断",
    "repeated": "重复",
    "title_only": "只是标题",
    "judge_unsupported": "评判不支持",
}


@dataclass
class Source:
    """一条资料。read：正文来自读取接口（False：用的是搜索摘要；None：不知道）；cached：来自本地缓存。"""
    text: str
    title: str = ""
    link: str = ""
    date: str = ""
    read: bool | None = None
    cached: bool | None = None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "Source":
        """记录里的一条资料（字段类型已经检查过）。"""
        def flag(name: str) -> bool | None:
            value = data.get(name)
            return value if isinstance(value, bool) else None
        return cls(text=data.get("text") or "", title=data.get("title") or "", link=data.get("link") or "",
                   date=data.get("date") or "", read=flag("read"), cached=flag("cached"))


@dataclass
class Claim:
    """一个要核对的句子：原文（已统一引用写法）、去掉引用后的文字、依据的资料编号。
    inherited：引用是从引出列表的那一行继承来的；shared：句子自己没写引用，用的是它所在段落（列表项）的引用；
    context：以冒号结尾、引出列表的那一句（“要看这几点 [1]：”）后面列出的每一项：它连同它引出的列表一起判，
    自己、或者连同其中任何一项能通过就通过（一项编造的内容由那一项自己被标出，不在引出行上再标一次）。"""
    paragraph: int
    text: str
    body: str
    citations: list[int]
    inherited: bool = False
    shared: bool = False
    context: tuple[str, ...] = ()

    def copy(self) -> "Claim":
        """一份新的（引用的列表也是新的）：比 dataclasses.replace 快得多，一个长回答里这样的句子成千上万。"""
        copied = object.__new__(Claim)
        copied.__dict__.update(self.__dict__)
        copied.citations = list(self.citations)
        return copied


@dataclass
class Problem:
    """核对发现的一个问题。message 是给人看的中文说明；score 是这句话的支持分（有的话）。

    claim：这个问题说的那一句在 Report.claims（也就是 --json 的 claims）里的下标，修正、审阅页、评判都凭它找句子，
    不再按文字去对。说一句话的问题都有它（对不上、数字不符、跨语言、评判不支持，以及点名了一句的编号不存在、
    抄了标签）；没有引用的句子不在 claims 里，所以说它们的问题为 None：整块没有引用（uncited_paragraph）
    按 paragraph 和块的顺序定位，抄在没有引用的句子里的标签按 paragraph 定位；空回答为 None。"""
    kind: str
    message: str
    paragraph: int | None = None
    sentence: str | None = None
    citations: list[int] | None = None
    overlap: float | None = None
    evidence: str | None = None
    better_source: int | None = None
    score: float | None = None
    claim: int | None = None

    @classmethod
    def from_json(cls, data: object) -> "Problem":
        """记录里的一个问题（--json 的 problems 里的一项）；类型不对的字段当作没有。"""
        if not isinstance(data, Mapping):
            return cls("", "")

        def whole(name: str) -> int | None:
            value = data.get(name)
            return value if isinstance(value, int) and not isinstance(value, bool) else None
        citations = data.get("citations")
        numbers = [n for n in citations if isinstance(n, int) and not isinstance(n, bool)] \
            if isinstance(citations, list) else None
        sentence = data.get("sentence")
        return cls(str(data.get("kind") or ""), str(data.get("message") or ""), whole("paragraph"),
                   sentence if isinstance(sentence, str) else None, numbers, claim=whole("claim"))

    def to_dict(self) -> dict[str, Any]:
        return dict(vars(self))  # 字段都是简单的值（比 asdict 的深拷贝快得多：一个回答可能有上万个问题）

    def located(self) -> str:
        """message 前面加上它在第几段。同一个句子在几段里出现时 message 是共用的，所以段落号不写在 message 里；
        没有引用的段落自己就以“第 N 段”开头，不重复。"""
        place = f"第 {self.paragraph} 段"
        if self.paragraph is None or self.message.startswith(place):
            return self.message
        return f"{place}：{self.message}"


@dataclass
class ClaimCheck:
    """一个带引用的句子的核对结果（--json 的 claims 里的一项）。

    score：支持分，0 到 1，所引资料里最能支持它的那一条给出的分（跨语言、所引的编号不存在时为 None）；
    overlap：重合度（--rule tutorial 时是原教程的字二元组重合度）；source：给出这个分的资料编号；
    status：supported（通过）、too_short（太短，不判支持分）或问题的种类；
    certain：确定的规则（数字对不上）也标出了这句话——评判模型不问它，也撤不掉它；
    calibration：支持分用的是哪一份模型，zh（中文）或 en（英文句子引英文资料时），没有支持分时为 None；
    contradicts：它照抄了所引资料的一段、却在同一处说反了（确定的规则 polarity_mismatch，评判模型不问它）；
    evidence：它的哪几段对上了哪条资料的哪几个字，unmatched：哪几段在所引资料里找不到（checker/evidence.py：
    位置是在 answer 和资料 text 里的 Unicode 码位数）。"""
    paragraph: int
    sentence: str
    citations: list[int]
    score: float | None
    overlap: float | None
    source: int | None
    status: str
    certain: bool = False
    calibration: str | None = None
    contradicts: bool = False
    evidence: list[dict[str, Any]] = field(default_factory=list)
    unmatched: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return dict(vars(self))  # 字段都是简单的值（比 asdict 的深拷贝快得多：一个回答可能有上万个问题）


@dataclass
class Report:
    """一个回答的核对结果：问题、没被引用的资料编号、引用过的编号、每个带引用的句子。"""
    problems: list[Problem] = field(default_factory=list)
    unused: list[int] = field(default_factory=list)
    cited: set[int] = field(default_factory=set)
    claims: list[ClaimCheck] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.problems
