"""有出处的回答：answer_with_sources.py 用到的各个部分。版本号只在这里写一处（pyproject.toml 和 --version 都读它）。"""
__version__ = "0.6.0"
