"""python -m sourced_answers.local_model：装、运行自带的本机模型（命令行在 cli/local_model_command.py，服务在
model/local_model.py）。"""
from sourced_answers.cli.launch import guard_startup, run

guard_startup(__name__)  # 最先做：导入期间按 Ctrl-C 也安静地结束

from sourced_answers.cli.local_model_command import main

__all__ = ["main"]

if __name__ == "__main__":
    run(main)
