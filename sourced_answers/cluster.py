"""python -m sourced_answers.cluster：在 Dask 集群上整批核对（命令行在 cli/cluster_command.py，
任务在 batch/dask_job.py）。"""
import _signal  # signal 下面的 C 模块：解释器启动时就已经载入（见下面的说明）
import os


def interrupted_while_starting(signum: int, frame: object) -> None:
    """还在导入本项目的模块时收到 Ctrl-C、SIGTERM 或 SIGHUP：一行“已中断”，退出码 130，没有报错堆栈。
    只用解释器启动时就载入了的标准库（这时本项目的模块一个也还没有导入；import signal 还要现做几个枚举类，
    那零点几毫秒里按 Ctrl-C 又是报错堆栈，所以用它下面的 _signal）。导入完之后由 cli/launch.py 的 run 接手。"""
    try:
        os.write(2, "\n已中断\n".encode())
    finally:
        os._exit(130)


if __name__ == "__main__":  # 最先做：在导入本项目的任何模块之前
    _signal.signal(_signal.SIGINT, interrupted_while_starting)
    _signal.signal(_signal.SIGTERM, interrupted_while_starting)
    if hasattr(_signal, "SIGHUP") and _signal.getsignal(_signal.SIGHUP) != _signal.SIG_IGN:  # nohup、Windows 除外
        _signal.signal(_signal.SIGHUP, interrupted_while_starting)

from sourced_answers.cli.cluster_command import main
from sourced_answers.cli.launch import run

__all__ = ["main"]

if __name__ == "__main__":
    run(main)
