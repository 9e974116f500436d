"""python -m sourced_answers.local_model：装、运行自带的本机模型（命令行在 cli/local_model_command.py，服务在
model/llama_server.py）。"""
import sourced_answers  # 只导入标准库的 _signal、os：启动期间的 Ctrl-C 由它接住

if __name__ == "__main__":  # 最先做：在导入本项目别的模块之前
    sourced_answers.catch_signals_while_starting()

from sourced_answers.cli.launch import run
from sourced_answers.cli.local_model_command import main

__all__ = ["main"]

if __name__ == "__main__":
    run(main)
