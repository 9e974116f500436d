"""客户端走了（或者取消了这次调用），就不再为它付费。做事的一方放一个“走了”的标记（threading.Event）：
--serve 在每个请求开始时放一个，连接断了就设上；servers/background.in_background 给它在守护线程里做的每一件事
再放一个，等结果的任务被取消了（MCP 客户端发来 notifications/cancelled、服务要停了）就设上；--mcp 给整个服务
放一个，客户端不再读标准输出了就设上。

秘塔和模型服务的客户端在每一步要花钱的请求之前看一眼（stop_if_gone）：搜索、读一页、请模型回答（流式时每收到
一段也看）、修正的改写、评判。标记放在 contextvars 里，一层套一层，设上任何一个都算走了：请求在守护线程里做
（复制了上下文），一路上不用多传一个参数；命令行、Dask 任务、Python API 没有这个标记，stop_if_gone 什么也不做。
stop_if_gone 放行了一步，就在每一层记下开始付费了（Watch.paid）：访问日志据此说清楚走了的客户端有没有花钱。
"""
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from sourced_answers.core.errors import ServiceError


class ClientGone(ServiceError):
    """提问的客户端已经断开，或者取消了这次调用：这个请求到此为止，后面要花钱的步骤都不做了。"""


class Watch:
    """一层标记：gone 是“走了”（放它的一方设上），paid 是在它里面已经放行过一步要付费的（stop_if_gone 记下）。"""

    def __init__(self, gone: threading.Event) -> None:
        self.gone = gone
        self.paid = False


_watches: ContextVar[tuple[Watch, ...]] = ContextVar("client_gone", default=())


@contextmanager
def watched(gone: threading.Event) -> Iterator[Watch]:
    """在这个上下文里（和从它复制出去的线程里），gone 一设上，stop_if_gone 就抛 ClientGone。
    外面已经放了的标记照样算。"""
    watch = Watch(gone)
    token = _watches.set((*_watches.get(), watch))
    try:
        yield watch
    finally:
        _watches.reset(token)


def stop_if_gone() -> None:
    """要付费的一步之前调用：提问的客户端已经走了（或者取消了这次调用）就抛 ClientGone；没走就记下开始付费了。"""
    watches = _watches.get()
    if any(watch.gone.is_set() for watch in watches):
        raise ClientGone("提问的客户端已经断开或者取消了这次调用：这个请求没有做完，之后要付费的步骤"
                         "（搜索、读取、请模型回答、评判）都没有做")
    for watch in watches:
        watch.paid = True
