"""python -m sourced_answers.quickstart：quickstart.sh 的第二半（在 cli/quickstart_command.py）。"""
import sourced_answers  # 只导入标准库的 _signal、os：启动期间的 Ctrl-C 由它接住

if __name__ == "__main__":  # 最先做：在导入本项目别的模块之前
    sourced_answers.catch_signals_while_starting()

from sourced_answers.cli.launch import run
from sourced_answers.cli.quickstart_command import main

__all__ = ["main"]

if __name__ == "__main__":
    run(main)
