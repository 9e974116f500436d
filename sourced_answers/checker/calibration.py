"""一句话用哪一种语言的支持分模型（校准）：英文句子引英文资料时用英文的，其余都用中文的。

支持分的五个特征只看字面，但英文和中文的“字面”不一样：中文按相邻两字比，英文按单词比；英文的改写、同义词、
屈折变化也多。在中文（CiteCheck）上拟合的权重和切点拿到英文上，误报翻了一倍，所以英文有自己的一份
（support_model_en.json，由 bench/fit_english_support.py 在 AttributionBench 的 dev 上拟合）。

怎么算“英文句子引英文资料”：句子按 tokens.language_of 是英文（en），而且它引用的每条资料的主要语言
（SourceIndex.language）都是英文。别的情况都用中文模型：中文句子、语言说不清的短句、引了中文或中英对照资料的
英文句子（中英对照的网页主要语言是中文，拟合中文模型的数据里就有这样的资料）。跨语言的句子没有支持分，不用模型。
"""
from collections.abc import Sequence

from sourced_answers.checker.reading import Seen
from sourced_answers.checker.score import CHINESE, ENGLISH
from sourced_answers.checker.source_index import SourceIndex
from sourced_answers.checker.tokens import language_of


def calibration_of(body: Seen, cited: Sequence[SourceIndex]) -> str:
    """句子（去掉引用后读出来的文字 body）和它所引资料的索引 → 用哪一种校准：ENGLISH 或 CHINESE。"""
    if cited and language_of(body) == "en" and all(index.language == "en" for index in cited):
        return ENGLISH
    return CHINESE
