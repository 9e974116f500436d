"""几个 pytest-xdist 进程共用的东西：一次测试会话只做一次（重新拟合、装一份本项目）、只起一个（真实的 llama.cpp）。

不靠 xdist_group 把用它们的测试放进同一个进程（pytest 9.2 起那样的分组会悄悄失效，测试照样通过，只是每个进程
都做一遍、起一个）：第一个要用的进程在文件锁里做出来、写下结果，别的进程读同一份。

服务由起它的进程负责（llama.cpp 的子进程在它的父进程结束时跟着结束）：别的进程用完了，在自己的会话结束时退出
登记；起它的进程在会话的最后（所有夹具都拆完之后）等登记的进程都退出了（或者已经不在了），再关掉它。
不用 xdist 时只有一个进程，它自己起、自己关。
"""
import fcntl
import json
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

# 起服务的进程在会话最后最多等别的进程这么久（它们还在跑用这个服务的测试）
WAIT_FOR_USERS_SECONDS = 900
CHECK_SECONDS = 0.2


def session_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """这次测试会话的几个进程共用的目录：xdist 时是各进程的 basetemp（…/pytest-N/popen-gw0）的上一层，
    否则就是 basetemp。"""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@contextmanager
def locked(path: Path) -> Iterator[None]:
    with open(path, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def once(folder: Path, name: str, make: Callable[[], Any]) -> Any:
    """make() 的结果（要能写成 JSON）：这次会话里第一个要它的进程算出来写下，别的进程等它写完读同一份。
    make 抛出的（比如 pytest.skip）原样抛出，什么也不写：下一个要它的进程再试。"""
    done = folder / f"{name}.json"
    with locked(folder / f"{name}.lock"):
        if done.exists():
            return json.loads(done.read_text(encoding="utf-8"))
        value = make()
        done.write_text(json.dumps(value, ensure_ascii=False), encoding="utf-8")
        return value


@dataclass(frozen=True)
class Service:
    """共用的服务：地址和请求里用的模型名（和 LocalModelServer 的这两个字段一样）。"""
    url: str
    model: str


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# 这个进程起的服务：名字 → (状态文件所在的目录, 关掉它的办法)
_owned: dict[str, tuple[Path, Callable[[], None]]] = {}


def use(folder: Path, name: str, start: Callable[[], tuple[Service, Callable[[], None]]]) -> Service:
    """登记这个进程在用服务 name，交出它；还没有（或者起它的进程已经不在了）就由这个进程起一个：
    start() 交出 (服务, 关掉它的办法)。用完时调用 release。"""
    state_file = folder / f"{name}.json"
    me = os.getpid()
    with locked(folder / f"{name}.lock"):
        state = json.loads(state_file.read_text(encoding="utf-8")) if state_file.exists() else None
        if state is None or not alive(state["owner"]):
            service, stop = start()
            _owned[name] = (folder, stop)
            state = {"owner": me, "url": service.url, "model": service.model, "users": []}
        if me not in state["users"]:
            state["users"].append(me)
        state_file.write_text(json.dumps(state), encoding="utf-8")
        return Service(state["url"], state["model"])


def release(folder: Path, name: str) -> None:
    """这个进程不再用服务 name 了（会话结束时）。"""
    state_file = folder / f"{name}.json"
    with locked(folder / f"{name}.lock"):
        if state_file.exists():
            state = json.loads(state_file.read_text(encoding="utf-8"))
            state["users"] = [pid for pid in state["users"] if pid != os.getpid()]
            state_file.write_text(json.dumps(state), encoding="utf-8")


def stop_owned() -> None:
    """会话的最后：这个进程起的每个服务，等别的进程都不用了再关掉（最多等 WAIT_FOR_USERS_SECONDS 秒）。"""
    for name, (folder, stop) in list(_owned.items()):
        state_file = folder / f"{name}.json"
        deadline = time.monotonic() + WAIT_FOR_USERS_SECONDS
        while True:
            with locked(folder / f"{name}.lock"):
                state = json.loads(state_file.read_text(encoding="utf-8"))
                users = [pid for pid in state["users"] if pid != os.getpid() and alive(pid)]
                if not users or time.monotonic() > deadline:
                    stop()
                    state_file.unlink()
                    break
            time.sleep(CHECK_SECONDS)  # 别的进程还在跑用它的测试：过一会儿再看
        del _owned[name]
