"""按输入的顺序，一边读一边核对：--verify 的 --jobs N。

  · 每一行读到就开始处理：一个进程时读一行核对一行；几个进程时，读到的行攒成批交给工作进程，输入停下来
    （tail -f 那样的流）时不等批满，过一会儿就把已经读到的交出去——读到的记录最多等大约一秒就有结论；
  · 输出永远按输入的顺序，和一个进程时一字不差；同时在路上的批数有上限，内存不随输入变大；
  · 输入读到坏行（解不了码、太长）时，前面的行照样全部处理完、交出结果，然后报这个错——几个进程时也一样；
  · 工作进程被系统结束（比如内存不够）时，已经交出的结果保留，其余的报 WorkerDied（退出码 3），不会一直等下去；
  · 输入不多、来得也不快时，根本不开进程（开进程要半秒多）。

工作进程是全新启动的 Python（不继承本进程的线程和锁），每个一条套接字：主进程把一批交给空闲的进程，从套接字
收回结果；一个进程死了，它的套接字就读到结尾。没有后台线程、队列和信号量，所以主进程随时可以结束它们（Ctrl-C、
输出被关掉、出错）而不会卡在往一个没人读的管道里写。工作进程各在自己的会话里：终端的 Ctrl-C 只发给主进程，
由它结束工作进程，工作进程不会各自打出一段报错堆栈——连它们还在导入模块的时候也不会。主进程没了，工作进程
读到套接字的结尾，自己结束。
"""
import os
import queue
import signal
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from sourced_answers.core.errors import ServiceError, WorkerDied
from sourced_answers.core.network import os_error_text

if TYPE_CHECKING:  # 子进程、套接字和管道只在真的开进程时导入：核对几条记录（大多数 --verify）不开进程
    import subprocess
    from multiprocessing.connection import Connection

# 每个进程一次拿这么多行；同时在路上的批数最多是进程数的这么多倍
BATCH = 32
WINDOW_PER_JOB = 4
# 输入停下来这么久，就把攒着的不满一批的行先交出去
PAUSE = 0.05

Item = TypeVar("Item")
Result = TypeVar("Result")
Work = Callable[[list[Any], Any], list[Any]]


def serve(connection: "Connection") -> None:
    """工作进程：收一批 (work, 一批, argument)，回 ("ok", 结果) 或 ("error", 异常)；收到 None 或管道断了就结束。"""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        try:
            message = connection.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        work, batch, argument = message
        try:
            reply: tuple[str, Any] = ("ok", work(batch, argument))
        except Exception as error:  # noqa: BLE001  出错的那一批由主进程按顺序报出来
            reply = ("error", error)
        try:
            connection.send(reply)
        except OSError:
            return
        except Exception as error:  # noqa: BLE001  结果或异常传不回去（不能序列化）：至少说清是什么
            connection.send(("error", RuntimeError(f"工作进程的结果传不回来：{type(error).__name__}")))


def read_ahead(items: Iterable[Item], box: "queue.Queue[tuple[str, Any]]") -> None:
    """读输入的线程：每读到一项放进 box；读完放 ("end", None)，读出错放 ("error", 异常)。"""
    try:
        for item in items:
            box.put(("item", item))
    except Exception as error:  # noqa: BLE001  读输入出的错（坏行、读不了）交给主线程，在前面的结果之后再报
        box.put(("error", error))
        return
    box.put(("end", None))


class Worker:
    """一个工作进程和通向它的管道；busy 是它手上那一批的序号。"""

    def __init__(self, process: "subprocess.Popen[bytes]", connection: "Connection") -> None:
        self.process = process
        self.connection = connection
        self.busy: int | None = None


class Workers:
    """jobs 个工作进程，第一次真的需要时才启动，几遍（检查格式、核对）共用；用完 close()。"""

    def __init__(self, jobs: int) -> None:
        self.jobs = max(1, jobs)
        self.pool: list[Worker] | None = None
        self.waiting: deque[tuple[int, list[Any]]] = deque()  # 交了还没有进程接手的批
        self.finished: dict[int, tuple[str, Any]] = {}
        self.counter = 0

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

    def drain(self, work: Work, box: "queue.Queue[tuple[str, Any]]", argument: Any) -> Iterator[Any]:
        pending: deque[int] = deque()  # 交出去、还没有按顺序给出结果的批的序号
        batch: list[Any] = []
        failure: BaseException | None = None
        ended = False
        while not ended or batch or pending:
            if pending:
                self.collect(work, argument, 0)
            while pending and pending[0] in self.finished:
                yield from self.outcome(pending.popleft())
            if ended:
                if batch:
                    pending.append(self.submit(work, batch, argument))
                    batch = []
                elif pending:
                    self.collect(work, argument, 1.0)
                continue
            if len(pending) >= self.jobs * WINDOW_PER_JOB:
                self.collect(work, argument, 1.0)
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

    def submit(self, work: Work, batch: list[Any], argument: Any) -> int:
        """把一批排上队，有空闲的进程就交给它；返回这一批的序号。"""
        if self.pool is None:
            self.pool = start(self.jobs)
        self.counter += 1
        self.waiting.append((self.counter, batch))
        self.dispatch(work, argument)
        return self.counter

    def dispatch(self, work: Work, argument: Any) -> None:
        for worker in self.pool or []:
            if not self.waiting:
                return
            if worker.busy is None:
                number, batch = self.waiting.popleft()
                try:
                    worker.connection.send((work, batch, argument))
                except OSError:
                    raise self.died() from None
                worker.busy = number

    def collect(self, work: Work, argument: Any, timeout: float) -> None:
        """最多等 timeout 秒，收回做完的批；有进程死了就报 WorkerDied。"""
        from multiprocessing.connection import wait

        pool = self.pool or []
        workers = {worker.connection: worker for worker in pool}
        for ready in wait(list(workers), timeout):
            worker = workers[ready]  # type: ignore[index]
            try:
                reply = worker.connection.recv()  # 一个进程死了，它的套接字读到结尾
            except (EOFError, OSError):
                raise self.died() from None
            if worker.busy is None:
                raise self.died()
            self.finished[worker.busy] = reply
            worker.busy = None
        self.dispatch(work, argument)

    def outcome(self, number: int) -> list[Any]:
        kind, value = self.finished.pop(number)
        if kind == "error":
            raise value
        return value

    def died(self) -> WorkerDied:
        return WorkerDied("一个工作进程意外结束了（常见的原因是内存不够、被系统结束了）：前面已经核对的记录都已输出，"
                          "剩下的没有核对。可以减小 --jobs 再试")

    def close(self) -> None:
        """结束工作进程（包括正在干活的：Ctrl-C、出错时不等它们做完）。"""
        pool, self.pool = self.pool, None
        self.waiting.clear()
        self.finished.clear()
        stop(pool or [])


# 工作进程的入口：先用主进程的 sys.path（从哪个目录、用哪份代码运行都一样），再听那条套接字
BOOT = ("import sys; sys.path[:0] = sys.argv[2:]; "
        "from sourced_answers.batch.workers import serve_socket; serve_socket(int(sys.argv[1]))")


def serve_socket(fd: int) -> None:
    from multiprocessing.connection import Connection
    serve(Connection(fd))


def start(jobs: int) -> list[Worker]:
    """启动 jobs 个工作进程：各在自己的会话里（终端的 Ctrl-C 只到主进程），标准输入、输出、错误都不接。"""
    import socket
    import subprocess
    from multiprocessing.connection import Connection

    paths = [path or os.getcwd() for path in sys.path]
    pool: list[Worker] = []
    try:
        for _ in range(jobs):
            ours, theirs = socket.socketpair()
            try:
                process = subprocess.Popen([sys.executable or "python3", "-c", BOOT, str(theirs.fileno()), *paths],
                                           pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL,
                                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                           start_new_session=True)
            except BaseException:
                ours.close()
                raise
            finally:
                theirs.close()
            pool.append(Worker(process, Connection(ours.detach())))
    except OSError as error:
        stop(pool)
        raise ServiceError(f"启动不了工作进程：{os_error_text(error)}") from None
    except BaseException:
        stop(pool)
        raise
    return pool


def stop(pool: list[Worker]) -> None:
    """结束这些工作进程：先请它们结束（SIGTERM），5 秒还不走就强行结束。"""
    if not pool:  # 没开过进程（输入不多）：连 subprocess 也不导入
        return
    import subprocess

    for worker in pool:
        if worker.process.poll() is None:
            worker.process.terminate()
    for worker in pool:
        try:
            worker.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            worker.process.kill()
            worker.process.wait()
        worker.connection.close()
