"""两层测试（docs/development.md）：没标 slow 的是快的一层，只有纯逻辑和本进程里的运行——不起进程、不连网络、
不睡。快的测试在跑时（conftest.py 的自动夹具），谁起了进程、连了网络（绑端口、连接）、睡了，就抛出
NotInFastTier；测试结束时再整个失败一次（产品代码可能把那个错误当成普通的失败接住了），说明该怎么办。

本进程里的模拟秘塔、脚本模型服务、--demo 的演示服务不占端口（tests/loopback.py），用它们的测试照样是快的。
测试开始之前就在的线程（别的测试留下的、pytest-xdist 自己的）不受限制：只管这个测试和它起的线程。
这几处在测试进程开始时换一次（install），每个测试只开关一下：一千多个测试每个都换一遍要多花一两秒。
"""
import multiprocessing.util
import os
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

ADVICE = "快的测试只做纯逻辑和本进程里的运行；真要这样做的测试标上 @pytest.mark.slow（见 docs/development.md）"


class NotInFastTier(RuntimeError):
    """快的测试做了只有慢的测试才能做的事。"""


class _Watch:
    """正在跑的快的测试：开始之前就在的线程、记下的每一次违规。不在快的测试里时 done 是 None。"""
    earlier: frozenset[int] = frozenset()
    done: list[str] | None = None


def _refuse(what: str) -> None:
    done = _Watch.done
    if done is None or threading.get_ident() in _Watch.earlier:
        return
    done.append(what)
    raise NotInFastTier(f"{what}：{ADVICE}")


def _guarded(what: str, original: Callable[..., Any]) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        _refuse(what)
        return original(*args, **kwargs)
    call.__wrapped__ = original  # type: ignore[attr-defined]
    return call


def install() -> None:
    """换上起进程、连网络、睡的那几处（只在快的测试跑时才拦）。"""
    original_sleep = time.sleep

    def sleep(seconds: float) -> None:
        if seconds > 0:
            _refuse(f"睡了 {seconds:g} 秒（time.sleep）")
        original_sleep(seconds)

    time.sleep = sleep
    for name in ("connect", "connect_ex", "bind"):
        setattr(socket.socket, name, _guarded(f"套接字的 {name}（网络）", getattr(socket.socket, name)))
    subprocess.Popen._execute_child = _guarded(  # type: ignore[attr-defined]
        "起了子进程（subprocess）", subprocess.Popen._execute_child)  # type: ignore[attr-defined]
    multiprocessing.util.spawnv_passfds = _guarded("起了子进程（multiprocessing）", multiprocessing.util.spawnv_passfds)
    for name in ("fork", "system", "posix_spawn", "posix_spawnp"):
        if hasattr(os, name):
            setattr(os, name, _guarded(f"起了子进程（os.{name}）", getattr(os, name)))


@contextmanager
def in_process_only() -> Iterator[list[str]]:
    """在这段时间里起进程、连网络、睡都抛出 NotInFastTier；交出记下的每一次（测试结束时据此失败）。"""
    _Watch.earlier = frozenset(thread.ident for thread in threading.enumerate()
                               if thread.ident is not None and thread.ident != threading.get_ident())
    _Watch.done = done = []
    try:
        yield done
    finally:
        _Watch.done = None
