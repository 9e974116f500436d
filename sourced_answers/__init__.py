"""有出处的回答：answer_with_sources.py 用到的各个部分。版本号只在这里写一处（pyproject.toml 和 --version 都读它）。

给别的 Python 程序用的两个函数在顶层的 answer_with_sources 模块里（见 docs/serving.md 的“Python API”）：
from answer_with_sources import answer_question, verify_answer。

启动期间的 Ctrl-C 也在这里接住（catch_signals_while_starting）：每个入口（三个顶层文件、python -m 的四个、装好的
命令）在导入本项目别的模块之前调用它。它放在包的根上，是因为这是每个入口在第一行之前或紧接着就已经导入了的模块
（python -m 和装好的命令先导入包，才运行入口）：放进别的模块，要多导入一两个文件，按 Ctrl-C 会出报错堆栈的那段
时间就长那么一点（bench/benchmark_interrupt_window.py 量它）。所以这个文件只导入解释器启动时就载入了的
_signal、os（tests/test_launch.py 检查）。
"""
import _signal  # signal 下面的 C 模块：解释器启动时就已经载入（import signal 还要现做几个枚举类）
import os

__version__ = "0.6.0"


def interrupted_while_starting(signum: int, frame: object) -> None:
    """还在导入本项目的模块时收到 Ctrl-C、SIGTERM 或 SIGHUP：一行“已中断”，退出码 130，没有报错堆栈。
    只用解释器启动时就载入了的标准库（import signal 还要现做几个枚举类，那零点几毫秒里按 Ctrl-C 又是报错堆栈，
    所以用它下面的 _signal）。导入完之后由 cli/launch.py 的 run 接手。"""
    try:
        os.write(2, "\n已中断\n".encode())
    finally:
        os._exit(130)


def catch_signals_while_starting() -> None:
    """入口最先做的事：Ctrl-C、SIGTERM、SIGHUP 都交给 interrupted_while_starting。SIGHUP 被忽略时（nohup）照旧忽略，
    没有它的系统（Windows）不管。只在作为程序运行时调用：被别的 Python 程序导入时，信号归那个程序。"""
    _signal.signal(_signal.SIGINT, interrupted_while_starting)
    _signal.signal(_signal.SIGTERM, interrupted_while_starting)
    if hasattr(_signal, "SIGHUP") and _signal.getsignal(_signal.SIGHUP) != _signal.SIG_IGN:
        _signal.signal(_signal.SIGHUP, interrupted_while_starting)
