"""导入完之后 Ctrl-C、SIGTERM（和走它那条路的 SIGHUP）的接法：记下“收到过”，再抛 KeyboardInterrupt。

KeyboardInterrupt 要是正好落在主线程里某个对象的 __del__ 里（Dask 的 Future、asyncio 收尾时常有），Python 会把它吞掉，
只在标准错误上打一段英文的“Exception ignored in …”，程序照样往下做，好像没按过 Ctrl-C。所以：记下的那一笔不会丢，
做事的循环在下一步之前看 stop_if_interrupted（Dask 每收一块结果），入口在 main 返回之后也再看一次（launch.run）；
被吞掉的那个 KeyboardInterrupt 不打印那段英文（quiet_unraisable）。只用标准库：入口一开始就装它。
"""
import sys
from types import FrameType
from typing import Any

RECEIVED: list[int] = []  # 收到过的信号（只增不减：一次运行里按过 Ctrl-C 就是按过）


def interrupt(signum: int, frame: FrameType | None) -> None:
    """信号处理：记下，再抛 KeyboardInterrupt（和 signal.default_int_handler 一样，只是多记一笔）。"""
    RECEIVED.append(signum)
    raise KeyboardInterrupt


def interrupted() -> bool:
    return bool(RECEIVED)


def stop_if_interrupted() -> None:
    """按过 Ctrl-C（它的 KeyboardInterrupt 被哪个 __del__ 吞掉了）：现在再抛一次，收尾照做。"""
    if RECEIVED:
        raise KeyboardInterrupt


def quiet_unraisable(unraisable: Any) -> None:
    """sys.unraisablehook：被吞掉的 KeyboardInterrupt 已经记下了，不打印英文的报错堆栈；别的照 Python 默认的办法说。"""
    if isinstance(unraisable.exc_value, KeyboardInterrupt):
        return
    sys.__unraisablehook__(unraisable)
