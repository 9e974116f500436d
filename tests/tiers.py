"""两层测试（docs/development.md）：没标 slow 的是快的一层，只有纯逻辑和本进程里的运行——不起进程、不连网络、
不睡。conftest.py 的自动夹具在快的测试里换上下面这几处：谁起了进程、连了网络（绑端口、连接）、睡了，就抛出
NotInFastTier，测试结束时再整个失败一次（产品代码可能把那个错误当成普通的失败接住了），说明该怎么办。

本进程里的模拟秘塔、脚本模型服务、--demo 的演示服务不占端口（tests/loopback.py），用它们的测试照样是快的。
测试开始之前就在的线程（别的测试留下的、pytest-xdist 自己的）不受限制：只管这个测试和它起的线程。
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

import pytest

ADVICE = "快的测试只做纯逻辑和本进程里的运行；真要这样做的测试标上 @pytest.mark.slow（见 docs/development.md）"


class NotInFastTier(RuntimeError):
    """快的测试做了只有慢的测试才能做的事。"""


@contextmanager
def in_process_only() -> Iterator[list[str]]:
    """在这段时间里起进程、连网络、睡都抛出 NotInFastTier；交出记下的每一次（测试结束时据此失败）。"""
    done: list[str] = []
    earlier = {thread.ident for thread in threading.enumerate()} - {threading.get_ident()}

    def refuse(what: str) -> None:
        if threading.get_ident() in earlier:
            return
        done.append(what)
        raise NotInFastTier(f"{what}：{ADVICE}")

    def guarded(what: str, original: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            refuse(what)
            return original(*args, **kwargs)
        return call

    def sleep(seconds: float) -> None:
        if seconds > 0:
            refuse(f"睡了 {seconds:g} 秒（time.sleep）")
        original_sleep(seconds)

    original_sleep = time.sleep
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(time, "sleep", sleep)
        for name in ("connect", "connect_ex", "bind"):
            patch.setattr(socket.socket, name, guarded(f"套接字的 {name}（网络）", getattr(socket.socket, name)))
        patch.setattr(subprocess.Popen, "_execute_child",
                      guarded("起了子进程（subprocess）", subprocess.Popen._execute_child))
        patch.setattr(multiprocessing.util, "spawnv_passfds",
                      guarded("起了子进程（multiprocessing）", multiprocessing.util.spawnv_passfds))
        for name in ("fork", "system", "posix_spawn", "posix_spawnp"):
            if hasattr(os, name):
                patch.setattr(os, name, guarded(f"起了子进程（os.{name}）", getattr(os, name)))
        yield done
