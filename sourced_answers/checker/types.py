"""核对用到的数据类型：资料、句子、问题、报告。这个模块不导入本项目的任何东西，别的模块都可以放心用它。

问题的种类（kind）只在 PROBLEM_KINDS 这一张表里定义：它的中文名，以及它对后面各步意味着什么——是不是确定的规则、
评判模型（--judge）能不能改它、--fix 会不会给它标出的句子改引、它说的是一句话、一整块还是整个回答。核对、修正、评判、
文字输出、审阅页、--eval 的表和文档（docs/reference.md 的“问题的种类”表由 cli/reference_doc.py 从这里生成）都读这张表，
不再各自按种类的名字判断。新加一种问题：在表里加一行，核对规则里给出它（checker/rules.py 或它自己的模块）。
"""
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

# 一个问题说的是什么：一句话（有的还点名资料、编号）、一整块没有引用的段落或列表项、整个回答
About = Literal["sentence", "block", "answer"]


@dataclass(frozen=True)
class Kind:
    """一种问题对后面各步的意思。

    label：简短的中文名（文字输出、审阅页、--eval 的表头、汇总）；
    about：它说的是一句话（sentence）、一整块（block：整块没有引用，原因写在块的最后一句下面，模型改写时说明取句子自己的问题）
    还是整个回答（answer：审阅页不为它把句子和资料并排对照）；
    certain：确定的规则给的——评判模型不问它标出的句子，也撤不掉它（句子的 ClaimCheck.certain 跟着它）；
    judge_may_decide：评判模型可以改这个结论：说“是”撤掉它，说“否”换成 judge_unsupported（支持分给的结论）；
    undecided：字面核对判断不了这句（不是判成了错）：评判模型总问它，审阅页用黄底和“？”，文字输出提示可以加 --judge；
    fix_may_recite：--fix 给它标出的句子改引一条能让它完全通过的资料；
    meaning：给用户的说明（docs/reference.md 的表）。"""
    label: str
    about: About
    certain: bool
    judge_may_decide: bool
    fix_may_recite: bool
    meaning: str
    undecided: bool = False

    def __post_init__(self) -> None:
        if self.certain and self.judge_may_decide:
            raise ValueError(f"{self.label}：确定的规则给的结论，评判模型改不了")
        if self.undecided and not self.judge_may_decide:
            raise ValueError(f"{self.label}：字面核对判断不了的结论要交给评判模型")


SAME_SPOT = "只对中文句子，英文句子只记在 `claims` 的 `contradicts` 里"

# 问题的种类 → 它的意思。顺序就是 --eval 的表里列的顺序、汇总里数的顺序
PROBLEM_KINDS: dict[str, Kind] = {
    "missing_source": Kind("编号不存在", "sentence", certain=True, judge_may_decide=False, fix_may_recite=True,
                           meaning="引用了不存在的编号；`paragraph`、`sentence` 是第一次引用它的地方"),
    "uncited_paragraph": Kind("没有引用", "block", certain=True, judge_may_decide=False, fix_may_recite=False,
                              meaning="段落或列表项没有引用（`--fix` 在每一句都有资料能支持时给它补上引用）"),
    "copied_markup": Kind("抄了提示词标记", "sentence", certain=True, judge_may_decide=False, fix_may_recite=False,
                          meaning="照抄了提示词里包资料用的 `<source id=\"n\">` 标签，每段一个，"
                                  "`citations` 是标签里的编号——标签不算引用"),
    "weak_support": Kind("对不上", "sentence", certain=False, judge_may_decide=True, fix_may_recite=True,
                         meaning="支持分低于切点；说明里列出资料里找不到的那几个字"),
    "number_mismatch": Kind("数字不符", "sentence", certain=True, judge_may_decide=False, fix_may_recite=True,
                            meaning="句子里的数字在所引资料里找不到，或者照抄了资料、只在同一处换了数："
                                    "“至少四块盘”对“至少三块盘”；只对中文句子"),
    "polarity_mismatch": Kind("说反了", "sentence", certain=True, judge_may_decide=False, fix_may_recite=False,
                              meaning="照抄了资料、却在同一处一边肯定一边否定：“不支持运行 Docker”对“支持运行 Docker”；"
                                      + SAME_SPOT),
    "opposite_mismatch": Kind("反义词", "sentence", certain=True, judge_may_decide=False, fix_may_recite=False,
                              meaning="同一处换成了反义词：“降低”对“提高”；" + SAME_SPOT),
    "name_mismatch": Kind("名称不符", "sentence", certain=True, judge_may_decide=False, fix_may_recite=False,
                          meaning="同一处换了一个名字：“ZeroTier”对“Tailscale”、“黄晓明”对“朱亚文”；" + SAME_SPOT),
    "cross_language": Kind("跨语言", "sentence", certain=False, judge_may_decide=True, fix_may_recite=False,
                           undecided=True, meaning="句子和资料不是同一种语言，字面核对判断不了"),
    "empty_answer": Kind("空回答", "answer", certain=True, judge_may_decide=False, fix_may_recite=False,
                         meaning="回答是空的，或者只有短标题、代码块，没有一句可以核对的话"),
    "truncated": Kind("被截断", "answer", certain=True, judge_may_decide=False, fix_may_recite=False,
                      meaning="回答到了长度上限被截断了：模型服务说 `finish_reason` 是 `length`，"
                              "或者 `--verify` 读到的记录写着 `\"truncated\": true`；说明里写出它停在哪几个字上"),
    "repeated": Kind("重复", "answer", certain=True, judge_may_decide=False, fix_may_recite=False,
                     meaning="同一段、同一句话一字不差地写了好几遍：小模型卡在循环里；每一段、每一句重复的内容报一次，"
                             "写出在哪几段、一共几遍"),
    "title_only": Kind("只是标题", "sentence", certain=True, judge_may_decide=False, fix_may_recite=False,
                       meaning="这一句只是某条资料的标题，不是回答"),
    "judge_unsupported": Kind("评判不支持", "sentence", certain=False, judge_may_decide=False, fix_may_recite=False,
                              meaning="用了 `--judge`，评判模型说所引资料不支持这句话"),
}

# 表里没有的种类（别的版本写的记录）：当作说一句话的问题，名字写“其他问题”，后面各步都不特别对待它
UNKNOWN_KIND = Kind("其他问题", "sentence", certain=False, judge_may_decide=False, fix_may_recite=False,
                    meaning="这个版本不认识的种类")


def kind_of(name: str) -> Kind:
    """一种问题的意思；表里没有的是 UNKNOWN_KIND。"""
    return PROBLEM_KINDS.get(name, UNKNOWN_KIND)


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
    certain：确定的规则（数字对不上之类，PROBLEM_KINDS 里 certain 的种类）也标出了这句话——评判模型不问它，也撤不掉它；
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
