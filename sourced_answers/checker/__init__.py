"""引用核对：纯逻辑，不做任何 I/O。输入是回答文本和资料列表，输出是 Report（问题、没用到的资料、每个句子的结果）。

按一件事一个模块拆开（从下往上）：
  types         Source、Claim、Problem、ClaimCheck、Report 和问题的种类（不导入本项目的任何东西）
  citations     引用标记的各种写法
  lines         一行是什么：标题、列表项的记号和缩进、句末标点、引出列表的一行
  structure     回答的结构：段落、列表项、句子，引出列表的一行把引用传给哪些项
  locating      在原文里找到句子（证据的位置、修正、审阅页用）
  markup        照抄进回答的提示词标签（<source id=…>）
  places        每个问题标出哪几句（凭 Problem.claim，不按文字去对）
  tokens        内容词和语言
  numerals      数的各种写法（中文数字、序数、日期、年份、分数……）
  quantities    数量（值、单位、位置）
  alignment     对齐：一句话的每一段对上了所引资料的哪几个字、哪几段找不到
  source_index  一条资料的索引（倒排索引、对齐用的字和窗口、数量）
  indexes       一组资料的索引，最近用过的索引和同一组资料上比较结果的缓存
  features      句子和一条资料的比较：重合度、证据，以及支持分的特征
  citation_rules  引用和结构的确定的规则：编号存在、抄了提示词标签、每段有引用、没被引用的资料
  completeness  回答本身完不完整：被长度上限截断了、同一段同一句一字不差地重复
  polarity      否定的写法，什么地方不是在断言
  opposites     反义词表
  edges         同一处：对上的一段前后紧挨着的几个字，是不是确实是同一处
  slots         照抄资料、只换了一处：说反了、反义词
  names         换了名字
  number_rule   数字的规则：同一处换了数、所引资料里找不到的数
  evidence      对齐的结果写进每一句的核对结果（evidence、unmatched，位置在回答和资料里）
  score         支持分（权重在 support_model.json，由 bench/fit_support_score.py 拟合；英文的在 support_model_en.json，
                由 bench/fit_english_support.py 拟合）
  support_rule  怎样判断一句话有没有依据（--rule、--threshold）
  calibration   一句话用哪一份支持分模型（英文句子引英文资料时用英文的）
  rules         把上面这些组合成问题
  risky         有风险的句子：资料里一字不差地找不到的数字、名称、否定说法（--judge-ask risky 多问这些句子）
  reading       一种读法：每条规则读的都是读者看到的文字（Seen：记号、看不见的字符去掉，数字和繁体统一），记着原文的位置
  text          是不是汉字、引用一句话、字二元组、引用标记的写法（别的层也用，只写在这里）
  unicode_ranges  控制和格式字符、组合附加符号的码位范围（由 unicodedata 生成的数据）
  thinking      模型的思考过程：把回复拆成思考和回答的那一条规则（<think>…</think>、落单的 </think>、没结束的 <think>）
  terminal      终端控制序列整个去掉（核对、终端输出、审阅页共用的一条规则）
别的模块只用这里导出的名字。只用标准库，不导入本项目别的任何东西（有测试）。

只有轻的几个模块（types、text、terminal、score、support_rule）在导入这个包时就导入：设置、参数解析、帮助、
输出要的只是它们。别的名字在第一次用到时才导入（__getattr__，LATER），--help、--version 不为整个核对付启动的时间，
--serve、--mcp 也等到真的核对时才付（tests/test_startup.py）。
"""
import importlib
from typing import TYPE_CHECKING

from sourced_answers.checker.score import CHINESE, ENGLISH, ENGLISH_MODEL_FILE, MODEL_FILE, SupportModel, support_model
from sourced_answers.checker.support_rule import DEFAULT_RULE, RULES, TUTORIAL_THRESHOLD, SupportRule
from sourced_answers.checker.terminal import TerminalFilter, strip_terminal, stripped_positions
from sourced_answers.checker.text import (
    LINE_UNSAFE_CLASS,
    MARKS_CLASS,
    bigram_similarity,
    char_bigrams,
    char_width,
    count_chinese,
    display_width,
    format_citations,
    has_chinese,
    in_word,
    one_line,
    quote,
)
from sourced_answers.checker.types import PROBLEM_KINDS, Claim, ClaimCheck, Problem, Report, Source

if TYPE_CHECKING:
    from sourced_answers.checker.calibration import calibration_of
    from sourced_answers.checker.citation_rules import structure_problems
    from sourced_answers.checker.citations import citation_marks, citations_in, strip_citation_marks, without_citations
    from sourced_answers.checker.completeness import repeated_problems, truncated_problem
    from sourced_answers.checker.features import FEATURES, compare
    from sourced_answers.checker.indexes import SourceIndexes, written_sentences
    from sourced_answers.checker.locating import Located, Locator, Span, claims_with_positions
    from sourced_answers.checker.places import checked_positions, problem_places
    from sourced_answers.checker.quantities import numbers_in
    from sourced_answers.checker.reading import read_claim, seen
    from sourced_answers.checker.risky import Risk, SourceTerms, risks_in
    from sourced_answers.checker.rules import (
        assess,
        check,
        check_answer,
        check_claim,
        cites_existing,
        conclude,
        empty_report,
        support,
        support_of,
    )
    from sourced_answers.checker.structure import Structure, Unit, analyse, checked_indexes
    from sourced_answers.checker.thinking import Reply, ThinkFilter, split_reply, strip_think, without_thinking
    from sourced_answers.checker.tokens import claim_words, language_of, token_set, tokens_with_spans, too_short

# 第一次用到时才导入的名字 → 它所在的模块
LATER = {
    "calibration_of": "calibration",
    "structure_problems": "citation_rules",
    "citation_marks": "citations",
    "citations_in": "citations",
    "strip_citation_marks": "citations",
    "without_citations": "citations",
    "compare": "features",
    "repeated_problems": "completeness",
    "truncated_problem": "completeness",
    "FEATURES": "features",
    "checked_positions": "places",
    "problem_places": "places",
    "numbers_in": "quantities",
    "read_claim": "reading",
    "seen": "reading",
    "Risk": "risky",
    "risks_in": "risky",
    "SourceTerms": "risky",
    "assess": "rules",
    "check": "rules",
    "check_answer": "rules",
    "check_claim": "rules",
    "cites_existing": "rules",
    "conclude": "rules",
    "empty_report": "rules",
    "support": "rules",
    "support_of": "rules",
    "SourceIndexes": "indexes",
    "written_sentences": "indexes",
    "analyse": "structure",
    "checked_indexes": "structure",
    "claims_with_positions": "locating",
    "Located": "locating",
    "Locator": "locating",
    "Span": "locating",
    "Structure": "structure",
    "Unit": "structure",
    "Reply": "thinking",
    "split_reply": "thinking",
    "strip_think": "thinking",
    "ThinkFilter": "thinking",
    "without_thinking": "thinking",
    "claim_words": "tokens",
    "language_of": "tokens",
    "token_set": "tokens",
    "tokens_with_spans": "tokens",
    "too_short": "tokens",
}


def __getattr__(name: str) -> object:
    """LATER 里的名字：导入它的模块，记在这个包上（以后不再经过这里）。"""
    module = LATER.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "analyse", "assess", "bigram_similarity", "calibration_of", "char_bigrams", "char_width", "check", "check_answer",
    "check_claim", "checked_indexes", "checked_positions", "CHINESE", "citation_marks", "citations_in",
    "cites_existing", "Claim", "claim_words", "ClaimCheck", "claims_with_positions", "compare", "conclude",
    "count_chinese", "DEFAULT_RULE", "display_width", "empty_report", "ENGLISH", "ENGLISH_MODEL_FILE", "FEATURES",
    "format_citations", "has_chinese", "in_word", "language_of", "LINE_UNSAFE_CLASS", "Located", "Locator",
    "MARKS_CLASS", "MODEL_FILE", "numbers_in", "one_line", "Problem", "PROBLEM_KINDS", "problem_places", "quote",
    "read_claim", "repeated_problems", "Reply", "Report", "Risk", "risks_in", "RULES", "seen", "Source",
    "SourceIndexes", "SourceTerms", "Span", "split_reply", "strip_citation_marks", "strip_terminal", "strip_think",
    "stripped_positions", "Structure", "structure_problems", "support", "support_model", "support_of", "SupportModel",
    "SupportRule", "TerminalFilter", "ThinkFilter", "token_set", "tokens_with_spans", "too_short",
    "truncated_problem", "TUTORIAL_THRESHOLD", "Unit", "without_citations", "without_thinking", "written_sentences",
]
