"""python -m sourced_answers.quickstart：quickstart.sh 的第二半（在 cli/quickstart.py）。"""
from sourced_answers.cli.launch import guard_startup, run

guard_startup(__name__)  # 最先做：导入期间按 Ctrl-C 也安静地结束

from sourced_answers.cli.quickstart import main

__all__ = ["main"]

if __name__ == "__main__":
    run(main)
