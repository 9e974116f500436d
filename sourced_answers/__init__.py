"""有出处的回答：answer_with_sources.py 用到的各个部分。版本号只在这里写一处（pyproject.toml 和 --version 都读它）。

给别的 Python 程序用的两个函数在顶层的 answer_with_sources 模块里（见 docs/serving.md 的“Python API”）：
from answer_with_sources import answer_question, verify_answer。
"""
__version__ = "0.6.0"
