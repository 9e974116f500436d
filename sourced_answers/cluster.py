"""python -m sourced_answers.cluster：在 Dask 集群上整批核对（命令行在 cli/cluster_command.py，
任务在 batch/cluster.py）。"""
from sourced_answers.cli.launch import guard_startup, run

guard_startup(__name__)  # 最先做：导入期间按 Ctrl-C 也安静地结束

from sourced_answers.cli.cluster_command import main

__all__ = ["main"]

if __name__ == "__main__":
    run(main)
