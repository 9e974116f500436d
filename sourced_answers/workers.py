"""按输入的顺序，一边读一边核对：--verify 的 --jobs N。

  · 每一行读到就开始处理：一个进程时读一行核对一行；几个进程时，读到的行攒成批交给工作进程，输入停下来
    （tail -f 那样的流）时不等批满，过一会儿就把已经读到的交出去——读到的记录最多等大约一秒就有结论；
  · 输出永远按输入的顺序，和一个进程时一字不差；同时在路上的批数有上限，内存不随输入变大；
  · 输入读到坏行（解不了码、太长）时，前面的行照样全部处理完、交出结果，然后报这个错——几个进程时也一样；
  · 工作进程被系统结束（比如内存不够）时，已经交出的结果保留，其余的报 WorkerDied（退出码 3），不会一直等下去；
  · 输入不多、来得也不快时，根本不开进程（开进程要半秒多）。

工作进程用 forkserver 启动（不继承本进程的线程和锁），不理会 Ctrl-C：Ctrl-C 由主进程处理，它结束工作进程。
"""
import multiprocessing
import queue
import signal
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from sourced_answers.errors import ServiceError

# 每个进程一次拿这么多行；同时在路上的批数最多是进程数的这么多倍
BATCH = 32
WINDOW_PER_JOB = 4
# 输入停下来这么久，就把攒着的不满一批的行先交出去
PAUSE = 0.05

Item = TypeVar("Item")
Result = TypeVar("Result")


class WorkerDied(ServiceError):
    """工作进程意外结束了（退出码 3）。"""


def ignore_interrupts() -> None:
    """工作进程不理会 Ctrl-C（终端把它发给整个进程组）：由主进程结束它们，不然每个进程都会打出一段报错堆栈。"""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def read_ahead(items: Iterable[Item], box: "queue.Queue[tuple[str, Any]]") -> None:
    """读输入的线程：每读到一项放进 box；读完放 ("end", None)，读出错放 ("error", 异常)。"""
    try:
        for item in items:
            box.put(("item", item))
    except Exception as error:  # noqa: BLE001  读输入出的错（坏行、读不了）交给主线程，在前面的结果之后再报
        box.put(("error", error))
        return
    box.put(("end", None))


class Workers:
    """jobs 个工作进程，第一次真的需要时才启动，几遍（检查格式、核对）共用；用完 close()。"""

    def __init__(self, jobs: int) -> None:
        self.jobs = max(1, jobs)
        self.pool: ProcessPoolExecutor | None = None

    def ordered(self, work: Callable[[list[Item], Any], list[Result]], items: Iterable[Item],
                argument: Any) -> Iterator[Result]:
        """按输入的顺序给出 work(一批, argument) 的每一个结果（见模块说明）。"""
        if self.jobs == 1:
            for item in items:  # 读一行处理一行：读出错时，前面的结果已经交出去了
                yield from work([item], argument)
            return
        box: queue.Queue[tuple[str, Any]] = queue.Queue(maxsize=self.jobs * BATCH * (WINDOW_PER_JOB + 1))
        threading.Thread(target=read_ahead, args=(items, box), daemon=True).start()
        yield from self.drain(work, box, argument)

    def drain(self, work: Callable[[list[Item], Any], list[Result]], box: "queue.Queue[tuple[str, Any]]",
              argument: Any) -> Iterator[Result]:
        pending: deque[Future[list[Result]]] = deque()
        batch: list[Item] = []
        failure: BaseException | None = None
        ended = False
        while not ended or batch or pending:
            while pending and pending[0].done():
                yield from self.result(pending.popleft())
            if ended:
                if batch:
                    pending.append(self.submit(work, batch, argument))
                    batch = []
                elif pending:
                    wait([pending[0]], timeout=1.0, return_when=FIRST_COMPLETED)
                continue
            if len(pending) >= self.jobs * WINDOW_PER_JOB:
                wait([pending[0]], timeout=1.0)
                continue
            try:
                kind, item = box.get(timeout=PAUSE if batch or pending else 1.0)
            except queue.Empty:
                kind, item = "pause", None
            if kind == "item":
                batch.append(item)
            elif kind == "error":
                failure, ended = item, True
            elif kind == "end":
                ended = True
            full = len(batch) >= BATCH
            if batch and (full or kind == "pause" or ended):
                if self.pool is None and not full and not pending:
                    # 输入不多、来得也不快：就在这个进程里处理，不开进程
                    yield from work(batch, argument)
                else:
                    pending.append(self.submit(work, batch, argument))
                batch = []
        if failure is not None:
            raise failure

    def submit(self, work: Callable[[list[Item], Any], list[Result]], batch: list[Item],
               argument: Any) -> "Future[list[Result]]":
        if self.pool is None:
            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload(["sourced_answers.verification"])
            self.pool = ProcessPoolExecutor(self.jobs, mp_context=context, initializer=ignore_interrupts)
        try:
            return self.pool.submit(work, batch, argument)
        except BrokenProcessPool:
            raise self.died() from None

    def result(self, future: "Future[list[Result]]") -> list[Result]:
        try:
            return future.result()
        except BrokenProcessPool:
            raise self.died() from None

    def died(self) -> WorkerDied:
        return WorkerDied("一个工作进程意外结束了（常见的原因是内存不够、被系统结束了）：前面已经核对的记录都已输出，"
                          "剩下的没有核对。可以减小 --jobs 再试")

    def close(self) -> None:
        """结束工作进程（包括正在干活的：Ctrl-C、出错时不等它们做完）。"""
        pool, self.pool = self.pool, None
        if pool is None:
            return
        processes = list(getattr(pool, "_processes", {}).values())  # 标准库没有公开“立刻结束”的办法
        pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            if process.is_alive():
                process.terminate()
        for process in processes:
            process.join(timeout=5)
