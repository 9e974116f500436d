"""引用核对：纯逻辑，不做任何 I/O。输入是回答文本和资料列表，输出是 Report（问题、没用到的资料、每个句子的结果）。

按一件事一个模块拆开，每个模块做什么见 docs/development.md 的模块地图
（tests/test_architecture.py 检查它和目录一一对应）。
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
    ASCII_LIKE_CLASS,
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
from sourced_answers.checker.types import (
    PROBLEM_KINDS,
    Claim,
    ClaimCheck,
    Kind,
    Problem,
    Report,
    Source,
    kind_of,
)

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
    "analyse", "ASCII_LIKE_CLASS", "assess", "bigram_similarity", "calibration_of", "char_bigrams", "char_width",
    "check", "check_answer", "check_claim", "checked_indexes", "checked_positions", "CHINESE", "citation_marks",
    "citations_in", "cites_existing", "Claim", "claim_words", "ClaimCheck", "claims_with_positions", "compare",
    "conclude", "count_chinese", "DEFAULT_RULE", "display_width", "empty_report", "ENGLISH", "ENGLISH_MODEL_FILE",
    "FEATURES", "format_citations", "has_chinese", "in_word", "Kind", "kind_of", "language_of", "LINE_UNSAFE_CLASS",
    "Located", "Locator", "MARKS_CLASS", "MODEL_FILE", "numbers_in", "one_line", "Problem", "PROBLEM_KINDS",
    "problem_places", "quote", "read_claim", "repeated_problems", "Reply", "Report", "Risk", "risks_in", "RULES",
    "seen", "Source", "SourceIndexes", "SourceTerms", "Span", "split_reply", "strip_citation_marks", "strip_terminal",
    "strip_think", "stripped_positions", "Structure", "structure_problems", "support", "support_model", "support_of",
    "SupportModel", "SupportRule", "TerminalFilter", "ThinkFilter", "token_set", "tokens_with_spans", "too_short",
    "truncated_problem", "TUTORIAL_THRESHOLD", "Unit", "without_citations", "without_thinking", "written_sentences",
]
