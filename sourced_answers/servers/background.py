"""服务里费时的那一步（搜索、请模型回答、核对）放到一个守护线程里做，事件循环只等它的结果；进门的规矩（Gate），
和回答优先（AnswersFirst：聊天程序的后台任务等正在做的回答）。

不用 asyncio.to_thread、anyio.to_thread：它们的线程不是守护线程，事件循环关闭时、解释器退出时都要等每个线程做完。
一个卡在秘塔或模型服务上的请求（对方不回应，读超时要一分半钟，还会重试）就能让 Ctrl-C、SIGTERM、SIGHUP、MCP 客户端关掉
标准输入之后的退出拖上几分钟。守护线程不拖住退出：服务停下时，还没做完的那一步就不要了。
"""
import asyncio
import contextvars
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from typing import Any, TypeVar

from sourced_answers.core.abandoning import stop_if_gone, watched
from sourced_answers.servers.openai_protocol import RequestProblem

T = TypeVar("T")


async def in_background(call: Callable[..., T], *args: Any) -> T:
    """在一个新的守护线程里调用 call(*args)，返回它的结果（或抛出它的异常）。等它的任务被取消时（MCP 客户端取消了
    这次调用、服务要停了）线程不等它，结果没人要就扔掉；线程里之后要付费的步骤都不做了（core.abandoning：取消时
    设上这个线程的“走了”的标记，搜索、读取、请模型回答、评判之前都看它）。"""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()
    context = contextvars.copy_context()
    abandoned = threading.Event()

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

    def watched_call() -> T:
        with watched(abandoned):
            return call(*args)

    def work() -> None:
        try:
            result = context.run(watched_call)
        except BaseException as error:  # noqa: BLE001  原样交给等它的任务
            report(None, error)
        else:
            report(result, None)

    threading.Thread(target=work, name=getattr(call, "__name__", "work"), daemon=True).start()
    try:
        return await done
    except asyncio.CancelledError:
        abandoned.set()
        raise


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


# 后台任务最多等这么多秒就照样去问模型（不会饿死），而且最多等它的请求剩下的时间的一半（另一半留给模型回答它）。
# 够长：这台机器上小模型回答一个问题十几秒，一个接一个地问也很少连着占满一分钟；
# 够短：Open WebUI 0.12.4 默认不给请求设时限（AIOHTTP_CLIENT_TIMEOUT 没设置），以前的版本是 300 秒，
# 本服务每个请求默认也是 300 秒（--timeout）：等 60 秒再问模型，离这些时限都远。
TASK_WAIT_SECONDS = 60.0
# 在等的后台任务多久看一眼提问的客户端走没走（走了就不再等，也不问模型）
GONE_CHECK_SECONDS = 0.25


class AnswersFirst:
    """回答优先。本地只有一个模型、一次只回答一个请求时，聊天程序的后台任务（Open WebUI 起标题、打标签、猜后续问题）
    先到了模型那里，正在做的回答就要排在它后面，多等它的整个用时。所以后台任务等到没有回答在做（进了门在排队的、
    在搜索、读网页、请模型回答、核对的都算），也没有别的后台任务在问模型，才去问模型；等得太久（TASK_WAIT_SECONDS，
    最多请求剩下的时间的一半）就照样去问。等的时候提问的客户端走了，它就不再等，也不问模型（core.abandoning）。

    只在事件循环里用，不跨线程：回答从进门（answer_started）算到后台线程里那一步真的做完（answer_finished），
    见 openai_app.Service.admit。"""

    def __init__(self, limit: float | None = None) -> None:
        self.limit = TASK_WAIT_SECONDS if limit is None else limit
        self.answering = 0  # 在做（和进了门在排队）的回答
        self.asking = 0  # 正在问模型的后台任务
        self.waiting = 0  # 在等的后台任务
        self.changed = asyncio.Event()  # 上面三个数变了就设上（然后换一个新的）：在等的后台任务再看一眼

    def answer_started(self) -> None:
        self.answering += 1

    def answer_finished(self) -> None:
        self.answering -= 1
        self.notify()

    def notify(self) -> None:
        self.changed.set()
        self.changed = asyncio.Event()

    def busy(self) -> bool:
        return self.answering > 0 or self.asking > 0

    @asynccontextmanager
    async def task_turn(self, time_left: float | None) -> AsyncIterator[float]:
        """等到轮到这个后台任务问模型（见类的说明），给出等了几秒（不用等是 0）；在这个 with 里它算作正在问模型。
        time_left：它的请求还剩几秒（None 是不限）。等的时候客户端走了：抛 ClientGone。"""
        loop = asyncio.get_running_loop()
        started = loop.time()
        bound = self.limit if time_left is None else min(self.limit, time_left / 2)
        waited = self.busy()
        self.waiting += 1
        self.notify()
        try:
            while self.busy() and loop.time() - started < bound:
                stop_if_gone()
                left = bound - (loop.time() - started)
                with suppress(TimeoutError):
                    await asyncio.wait_for(self.changed.wait(), min(left, GONE_CHECK_SECONDS))
            stop_if_gone()
        finally:
            self.waiting -= 1
            self.notify()
        self.asking += 1
        try:
            yield loop.time() - started if waited else 0.0
        finally:
            self.asking -= 1
            self.notify()
