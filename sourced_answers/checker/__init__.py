"""引用核对：纯逻辑，不做任何 I/O。输入是回答文本和资料列表，输出是 Report（问题、没用到的资料、每个句子的结果）。

按一件事一个模块拆开（从下往上）：
  types         Source、Claim、Problem、ClaimCheck、Report 和问题的种类（不导入本项目的任何东西）
  citations     引用标记的各种写法
  lines         一行是什么：标题、列表项的记号和缩进、句末标点、引出列表的一行
  structure     回答的结构：段落、列表项、句子，引出列表的一行把引用传给哪些项
  locating      在原文里找到句子（修正、审阅页用）
  markup        照抄进回答的提示词标签（<source id=…>）
  places        每个问题标出哪几句（凭 Problem.claim，不按文字去对）
  tokens        内容词和语言
  quantities    数量（数字、中文数字、单位）
  source_index  每条资料的索引
  features      句子和一条资料的比较：重合度、证据，以及支持分的特征
  citation_rules  引用和结构的确定的规则：编号存在、抄了提示词标签、每段有引用、没被引用的资料
  polarity      句子和资料在同一处说反了（不能容忍 / 可以容忍）
  score         支持分（权重在 support_model.json，由 bench/fit_support_score.py 拟合；英文的在 support_model_en.json，
                由 bench/fit_english_support.py 拟合）
  calibration   一句话用哪一份支持分模型（英文句子引英文资料时用英文的）
  rules         把上面这些组合成问题
  risky         有风险的句子：资料里一字不差地找不到的数字、名称、否定说法（--judge-ask risky 多问这些句子）
  reading       一种读法：每条规则读的都是读者看到的文字（Seen：记号、看不见的字符去掉，数字和繁体统一），记着原文的位置
  text          是不是汉字、引用一句话、字二元组、引用标记的写法（别的层也用，只写在这里）
  unicode_ranges  控制和格式字符、组合附加符号的码位范围（由 unicodedata 生成的数据）
  thinking      模型的思考过程：把回复拆成思考和回答的那一条规则（<think>…</think>、落单的 </think>、没结束的 <think>）
  terminal      终端控制序列整个去掉（核对、终端输出、审阅页共用的一条规则）
别的模块只用这里导出的名字。只用标准库，不导入本项目别的任何东西（有测试）。
"""
from sourced_answers.checker.calibration import calibration_of
from sourced_answers.checker.citation_rules import structure_problems
from sourced_answers.checker.citations import citation_marks, citations_in, strip_citation_marks, without_citations
from sourced_answers.checker.features import FEATURES, compare
from sourced_answers.checker.locating import Located, Locator, Span, claims_with_positions
from sourced_answers.checker.places import checked_positions, problem_places
from sourced_answers.checker.quantities import numbers_in
from sourced_answers.checker.reading import read_claim, seen
from sourced_answers.checker.risky import Risk, SourceTerms, risks_in
from sourced_answers.checker.rules import (
    DEFAULT_RULE,
    RULES,
    TUTORIAL_THRESHOLD,
    SupportRule,
    assess,
    check,
    check_answer,
    check_claim,
    cites_existing,
    conclude,
    empty_report,
    support,
)
from sourced_answers.checker.score import CHINESE, ENGLISH, ENGLISH_MODEL_FILE, MODEL_FILE, SupportModel, support_model
from sourced_answers.checker.source_index import SourceIndexes, written_sentences
from sourced_answers.checker.structure import Structure, Unit, analyse, checked_indexes
from sourced_answers.checker.terminal import TerminalFilter, strip_terminal
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
    one_line,
    quote,
)
from sourced_answers.checker.thinking import Reply, ThinkFilter, split_reply, strip_think, without_thinking
from sourced_answers.checker.tokens import claim_words, token_set, tokens_with_spans, too_short
from sourced_answers.checker.types import PROBLEM_KINDS, Claim, ClaimCheck, Problem, Report, Source

__all__ = [
    "LINE_UNSAFE_CLASS", "MARKS_CLASS", "bigram_similarity", "char_bigrams", "char_width", "count_chinese",
    "display_width", "format_citations", "has_chinese", "one_line", "quote", "TerminalFilter", "strip_terminal",
    "Reply", "ThinkFilter", "split_reply", "strip_think", "without_thinking", "CHINESE", "Claim", "ClaimCheck",
    "DEFAULT_RULE", "ENGLISH", "ENGLISH_MODEL_FILE", "FEATURES", "Located", "Locator", "MODEL_FILE", "PROBLEM_KINDS",
    "Problem", "RULES", "Report", "Risk", "Source", "SourceIndexes", "SourceTerms", "Span", "Structure",
    "SupportModel", "SupportRule", "TUTORIAL_THRESHOLD", "Unit", "analyse", "assess", "calibration_of", "check",
    "check_answer", "check_claim", "checked_indexes", "checked_positions", "citation_marks", "citations_in",
    "cites_existing", "claim_words", "claims_with_positions", "compare", "conclude", "empty_report", "numbers_in",
    "problem_places", "risks_in", "strip_citation_marks", "structure_problems", "support", "support_model",
    "token_set", "tokens_with_spans", "too_short", "without_citations", "written_sentences", "read_claim", "seen",
]
