"""资料从哪里来的接口：一个搜索后端要提供什么，以及所有后端的登记表。

一个后端只做两件事：search 按问题给出排好序的结果（Hit：标题、链接、日期、摘要），read 给出一条结果的正文。
搜集资料的其余步骤（读哪几条、并发、读失败改用摘要、挑段落、编号）在 gather.py 里，所有后端共用；
付费之前的检查、核对、--fix、--html、--json 和各个门（命令行、--serve、--mcp、Python API、--eval）都只经过 gather.py，
不知道资料来自哪个后端。

加一个后端：写一个模块（一个类，满足 Backend），在选它的设置的声明上写 option(…, selects=SourceBackend(…))
（core/settings.py），命令行的参数在 cli/parser.py 里一行帮助，再加它的测试：BACKENDS 由声明生成。
后端的模块只在用到时才导入（--help 和别的后端不为它付导入的时间，它的可选依赖也只在用到时才需要）。
"""
import importlib
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from sourced_answers.core.retrying import Deadline
from sourced_answers.core.settings import METASO_BACKEND, OPTIONS, SearchSettings, SourceBackend

Log = Callable[[str], None]


@dataclass(frozen=True)
class Hit:
    """一条搜索结果。text：后端已经有了正文（比如本地文档的一段），gather 就不再 read 它；None：要读才有。"""
    title: str
    link: str
    snippet: str
    date: str = ""
    text: str | None = None


class Backend(Protocol):
    """一个搜索后端。name 是登记的名字（缓存的键、设置里都用它），label 是说给用户听的名字（“秘塔”“本地文档”），
    unit 是一条结果的叫法（“网页”“段落”）。search、read 出错时抛 core.errors.SourceError 的子类（带退出码 3）；
    read 返回 (正文, 缓存里存了多少秒或 None)，search 返回 (结果, 缓存里存了多少秒或 None)。"""
    name: str
    label: str
    unit: str

    def search(self, question: str, size: int) -> tuple[list[Hit], float | None]: ...

    def read(self, hit: Hit, limit: int) -> tuple[str, float | None]: ...

    def savings(self) -> str | None: ...

    def close(self) -> None: ...


class Shared:
    """服务（--serve、--mcp）开着的这段时间里各个请求共用的东西：--demo 的演示服务、打开的本地文档索引。
    每样东西按名字只做一次，服务停止时一起关掉；一次回答用完就关的由后端自己开、自己关。可以当上下文管理器用。"""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.running: dict[str, Any] = {}

    def get(self, name: str, make: Callable[[], Any]) -> Any:
        with self.lock:
            if name not in self.running:
                self.running[name] = make()
            return self.running[name]

    def close(self) -> None:
        with self.lock:
            for thing in self.running.values():
                thing.close()
            self.running.clear()

    def __enter__(self) -> "Shared":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# 一个后端的登记：模块、类、说给用户听的名字（core/settings.py 的 SourceBackend）
Registration = SourceBackend

# 登记的名字 → 它的后端：秘塔，加上每个写着 selects 的设置选的那一个（--docs 的本地文档）。
# 类的构造参数：(SearchSettings, Log, Deadline, Shared | None)
BACKENDS: dict[str, Registration] = {
    METASO_BACKEND.name: METASO_BACKEND,
    **{item.selects.name: item.selects for item in OPTIONS if item.selects is not None},
}


def open_backend(search: SearchSettings, log: Log, deadline: Deadline, shared: Shared | None = None) -> Backend:
    """按设置里的名字打开后端（名字在建设置时已经检查过：只会是 BACKENDS 里有的）。"""
    registered = BACKENDS[search.backend]
    backend: Backend = getattr(importlib.import_module(registered.module), registered.cls)(search, log, deadline,
                                                                                           shared)
    return backend
