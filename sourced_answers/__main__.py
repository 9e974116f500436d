"""python -m sourced_answers：和 answer-with-sources 命令一样。"""
import sourced_answers  # 只导入标准库的 _signal、os：启动期间的 Ctrl-C 由它接住

if __name__ == "__main__":  # 最先做：在导入本项目别的模块之前
    sourced_answers.catch_signals_while_starting()

from sourced_answers.cli.command import main

if __name__ == "__main__":
    main()
