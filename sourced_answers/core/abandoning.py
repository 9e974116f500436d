"""客户端走了，就不再为它付费：服务（--serve）在每个请求开始时放一个“走了”的标记（threading.Event），
秘塔和模型服务的客户端在每一步要花钱的请求之前看一眼（stop_if_gone）：搜索、读一页、请模型回答（流式时每收到
一段也看）、修正的改写、评判。标记放在 contextvars 里：请求在守护线程里做（servers/background.py 复制了上下文），
一路上不用多传一个参数；命令行、Dask 任务、Python API 没有这个标记，stop_if_gone 什么也不做。
"""
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from sourced_answers.core.errors import ServiceError


class ClientGone(ServiceError):
    """提问的客户端已经断开：这个请求到此为止，后面要花钱的步骤都不做了。"""


_gone: ContextVar[threading.Event | None] = ContextVar("client_gone", default=None)


@contextmanager
def watched(gone: threading.Event) -> Iterator[None]:
    """在这个上下文里（和从它复制出去的线程里），gone 一设上，stop_if_gone 就抛 ClientGone。"""
    token = _gone.set(gone)
    try:
        yield
    finally:
        _gone.reset(token)


def stop_if_gone() -> None:
    """要付费的一步之前调用：提问的客户端已经走了就抛 ClientGone。"""
    gone = _gone.get()
    if gone is not None and gone.is_set():
        raise ClientGone("提问的客户端已经断开：这个请求没有做完，之后要付费的步骤（搜索、读取、请模型回答）都没有做")
