"""python -m sourced_answers.cluster：在 Dask 集群上整批核对（命令行在 cli/cluster_command.py，
任务在 batch/dask_job.py）。"""
import sourced_answers  # 只导入标准库的 _signal、os：启动期间的 Ctrl-C 由它接住

if __name__ == "__main__":  # 最先做：在导入本项目别的模块之前
    sourced_answers.catch_signals_while_starting()

from sourced_answers.cli.cluster_command import main
from sourced_answers.cli.launch import run

__all__ = ["main"]

if __name__ == "__main__":
    run(main)
