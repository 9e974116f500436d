"""服务里费时的那一步（搜索、请模型回答、核对）放到一个守护线程里做，事件循环只等它的结果。

不用 asyncio.to_thread、anyio.to_thread：它们的线程不是守护线程，事件循环关闭时、解释器退出时都要等每个线程做完。
一个卡在秘塔或模型服务上的请求（对方不回应，读超时要一分半钟，还会重试）就能让 Ctrl-C、SIGTERM、SIGHUP、MCP 客户端关掉
标准输入之后的退出拖上几分钟。守护线程不拖住退出：服务停下时，还没做完的那一步就不要了。
"""
import asyncio
import contextvars
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from sourced_answers.servers.openai_protocol import RequestProblem

T = TypeVar("T")


async def in_background(call: Callable[..., T], *args: Any) -> T:
    """在一个新的守护线程里调用 call(*args)，返回它的结果（或抛出它的异常）。等它的任务被取消时线程照样做完，
    结果没人要就扔掉。"""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()
    context = contextvars.copy_context()

    def settle(result: Any, error: BaseException | None) -> None:
        if done.done():  # 等它的请求已经取消了
            return
        if error is None:
            done.set_result(result)
        else:
            done.set_exception(error)

    def report(result: Any, error: BaseException | None) -> None:
        try:
            loop.call_soon_threadsafe(settle, result, error)
        except RuntimeError:  # 事件循环已经关了（服务停了）：没有人等这个结果
            pass

    def work() -> None:
        try:
            result = context.run(call, *args)
        except BaseException as error:  # noqa: BLE001  原样交给等它的任务
            report(None, error)
        else:
            report(result, None)

    threading.Thread(target=work, name=getattr(call, "__name__", "work"), daemon=True).start()
    return await done


@dataclass
class Gate:
    """同时回答的请求不超过 concurrency 个，另外最多排 queue 个；再来的马上回 503。"""
    concurrency: int
    queue: int

    def __post_init__(self) -> None:
        self.admitted = 0
        self.slots = asyncio.Semaphore(self.concurrency)

    def enter(self) -> None:
        if self.admitted >= self.concurrency + self.queue:
            raise RequestProblem(503, f"服务忙：正在回答 {self.concurrency} 个问题，还有 {self.queue} 个在排队，"
                                      "请稍后再试", "server_error", "busy")
        self.admitted += 1

    def leave(self) -> None:
        self.admitted -= 1
