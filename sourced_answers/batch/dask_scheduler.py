"""Dask 调度器这一层：没给 --scheduler 时在本机起一个小集群（local_cluster），连上调度器、等 worker、
问集群有几个线程、看着任务一块一块算完（connected 和它后面的那些）。

连上以后每一种出错都在几秒之内变成一句中文的 ServiceError（退出码 3），不会卡住，也不会打出 Dask 的英文日志
和报错堆栈：
  · 连不上调度器：等 CONNECT_SECONDS 秒；
  · 调度器上没有 worker（一开始就没有，或者半路全都没了）：最多等 --wait-workers 秒（默认 WAIT_WORKERS_SECONDS）；
  · 一个 worker 死了：Dask 把它手上的块交给别的 worker 重算（同一块先后让 4 个 worker 死掉才算失败）；
  · 和调度器的连接断了（调度器被结束了）：马上停下。
Dask 自己的日志、asyncio 的“Task exception was never retrieved”和 Dask 的警告在这里关掉，加 --debug 时照常显示。

本机的小集群（local_cluster）：没给 --scheduler 时在本机起一个小 Dask 集群（调度器 + 几个 worker 进程），用完关掉。

集群跑在一个单独的子进程里，这个子进程在自己的会话里：终端的 Ctrl-C 只发给 cluster 命令本身，由它关掉集群；
Dask 的 worker 进程不会各自收到 Ctrl-C、打出英文的报错堆栈和日志。子进程的标准输出只用来告诉我们调度器的地址；
它的标准错误不接（Dask 的英文日志不混进我们的输出），加 --debug 时才接到我们的标准错误上，方便查原因。
我们关掉它的标准输入（或者我们自己没了）它就关掉集群、结束；等不到时结束它所在的整个进程组。
"""

import logging
import os
import selectors
import signal
import subprocess
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from concurrent.futures import CancelledError
from contextlib import contextmanager
from typing import Any

from sourced_answers.core.errors import SchedulerLost, ServiceError
from sourced_answers.core.interrupts import stop_if_interrupted
from sourced_answers.core.network import os_error_text
from sourced_answers.core.strings import literal

CONNECT_SECONDS = 10
WAIT_WORKERS_SECONDS = 10  # 够同一个脚本里刚起的 worker 报到（几秒），也够 nanny 把死掉的 worker 重启起来
SETTLE_SECONDS = 1.0  # worker 数这么久不再变化，就按这时的线程总数分块（同时起的几台 worker 陆续报到）
POLL_SECONDS = 0.1
CHECK_SECONDS = 1.0  # 任务在算时，每隔这么久问一次调度器还有没有 worker
ASK_SECONDS = 5.0  # 问调度器一件事最多等这么久
CLOSE_SECONDS = 3.0
QUIET = ("distributed", "tornado", "bokeh", "asyncio")


def quiet_dask_logs() -> None:
    """关掉 Dask 和它用的库的日志。distributed 给自己的几个子日志器单独设了级别（distributed.client 是 WARNING），
    只设上一层不够：每一个已有的都要设。"""
    for name in list(logging.root.manager.loggerDict):
        if any(name == prefix or name.startswith(prefix + ".") for prefix in QUIET):
            logging.getLogger(name).setLevel(logging.CRITICAL + 1)
    for prefix in QUIET:
        logging.getLogger(prefix).setLevel(logging.CRITICAL + 1)
    warnings.filterwarnings("ignore", module=r"distributed(\..*)?")


def probe(address: str) -> None:
    """先用 Dask 自己的连接试一次，最多等 CONNECT_SECONDS 秒。Client 连上一个接了连接却不按 Dask 的方式应答的服务
    （比如一个网页服务）会一直等它的应答，所以要先在这里有时限地试过。"""
    import asyncio

    from distributed.comm import connect

    async def attempt() -> None:
        comm = await connect(address, timeout=CONNECT_SECONDS)
        await comm.close()

    unreachable = (f"连不上 Dask 调度器 {address}（等了 {CONNECT_SECONDS} 秒）：请确认 dask scheduler 在运行、"
                   f"地址和端口对")
    # 自己的事件循环，不用 asyncio.run：它装的 Ctrl-C 处理只取消任务，任务恰好同时做完时这一下 Ctrl-C 就丢了
    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(asyncio.wait_for(attempt(), CONNECT_SECONDS + 1))
    except (asyncio.TimeoutError, TimeoutError):
        raise ServiceError(f"{address} 上的服务接了连接，却没有按 Dask 的方式应答（{CONNECT_SECONDS} 秒）：它不像是 "
                           f"dask scheduler，请检查地址和端口") from None
    except OSError:
        raise ServiceError(unreachable) from None
    except Exception:  # noqa: BLE001  对方回了 Dask 读不懂的东西
        raise ServiceError(f"{address} 上的服务不是 Dask 调度器（应答读不懂），请检查地址和端口") from None
    finally:
        loop.close()


@contextmanager
def interrupts_held() -> Iterator[list[int]]:
    """这一段里收到的 Ctrl-C、SIGTERM（和走 SIGTERM 那条路的 SIGHUP，见 cli/launch.py）先记下来，做完再算。
    用在打断了就收不了尾的几步上：Dask 的 Client 建到一半被打断，退出时会再等 20 秒、打出英文的报错堆栈（建它只要
    一会儿，probe 已经连上过）；结果目录最后一次写清单（终端关掉时 SIGHUP 常常连着来两个：内核发一个，shell 再转发
    一个，第二个不能把清单打断在半路）。"""
    pressed: list[int] = []
    try:
        previous = {number: signal.signal(number, lambda signum, frame: pressed.append(signum))
                    for number in (signal.SIGINT, signal.SIGTERM)}
    except ValueError:  # 不在主线程里（只有主线程收得到信号）
        yield pressed
        return
    try:
        yield pressed
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


@contextmanager
def connected(address: str) -> Iterator[Any]:
    """连上调度器，给出 Client；离开时关掉它（调度器已经没了也不等太久）。"""
    from distributed import Client
    probe(address)
    with interrupts_held() as pressed:
        try:
            client = Client(address, timeout=CONNECT_SECONDS, set_as_default=False)
        except (OSError, TimeoutError):
            client = None
    if client is None:
        if pressed:
            raise KeyboardInterrupt
        raise ServiceError(f"连不上 Dask 调度器 {address}（等了 {CONNECT_SECONDS} 秒）：请确认 dask scheduler 在运行、"
                           f"地址和端口对")
    try:
        if pressed:
            raise KeyboardInterrupt
        yield client
    finally:
        try:
            client.close(timeout=CLOSE_SECONDS)
        except Exception:  # noqa: BLE001  调度器已经没了：关不干净也只是这个客户端，进程马上就结束
            pass


def threads_of(client: Any) -> dict[str, int]:
    """每个 worker 的线程数（问调度器）。"""
    if client.status != "running":
        raise SchedulerLost("和 Dask 调度器的连接断了（调度器被结束了，或者网络断了）")
    try:
        return dict(client.nthreads(callback_timeout=ASK_SECONDS))
    except (OSError, TimeoutError):
        raise SchedulerLost("和 Dask 调度器的连接断了（调度器被结束了，或者网络断了）") from None


def cluster_threads(client: Any, address: str, wait_seconds: float, expected: int | None = None) -> dict[str, int]:
    """等到集群里有 worker，返回每个 worker 的线程数。expected：本机集群起了几个 worker（到齐就不再等）；
    真集群等 worker 数 SETTLE_SECONDS 秒不再变化。等了 wait_seconds 秒还一个 worker 也没有：ServiceError。"""
    started = time.monotonic()
    seen: dict[str, int] = {}
    changed = started
    while True:
        threads = threads_of(client)
        now = time.monotonic()
        if threads.keys() != seen.keys():
            seen, changed = threads, now
        if threads and (len(threads) >= (expected or 0) if expected else now - changed >= SETTLE_SECONDS):
            return threads
        if now - started >= wait_seconds:
            if threads:
                return threads
            raise ServiceError(f"Dask 调度器 {address} 上没有 worker（等了 {wait_seconds:g} 秒）：请在每台机器上运行 "
                               f"dask worker {address}，或者用 --wait-workers 多等一会儿")
        time.sleep(POLL_SECONDS)


class Watch:
    """任务在算时看着集群：连接断了、worker 全没了超过 wait_seconds 秒，就抛 ServiceError。"""

    def __init__(self, client: Any, address: str, wait_seconds: float) -> None:
        self.client = client
        self.address = address
        self.wait_seconds = wait_seconds
        self.last_worker = time.monotonic()
        self.next_check = 0.0

    def check(self) -> None:
        now = time.monotonic()
        if self.client.status != "running":
            threads_of(self.client)  # 抛出 SchedulerLost
        if now < self.next_check:
            return
        self.next_check = now + CHECK_SECONDS
        if threads_of(self.client):
            self.last_worker = now
        elif now - self.last_worker >= self.wait_seconds:
            raise ServiceError(f"Dask 调度器 {self.address} 上的 worker 都没了，等了 {self.wait_seconds:g} 秒也没有新的"
                               f"（worker 被结束了，或者内存不够被系统结束了）：没算完的块没有核对")


def collect(futures: dict[Any, int], watch: Watch, handle: Callable[[int, Any], None]) -> None:
    """等每一个任务算完，按算完的先后把 (编号, 结果) 交给 handle；拿到结果就放掉它（worker 不再替它占着内存）。"""
    pending = dict(futures)
    futures.clear()
    while pending:
        stop_if_interrupted()  # 按过 Ctrl-C、它却落在 Dask 的哪个 __del__ 里被吞掉了：不再等下一块
        done = [future for future in pending if future.status not in ("pending", "lost")]
        if not done:
            watch.check()
            time.sleep(POLL_SECONDS)
            continue
        for future in done:
            handle(pending.pop(future), result_of(future, watch))


def result_of(future: Any, watch: Watch) -> Any:
    """一个算完的任务的结果。取结果的时候那个 worker 死了，Dask 会重算这一块：这时照样看着集群，不会一直等下去。"""
    from distributed import KilledWorker
    from distributed.comm.core import CommClosedError
    wait = 5.0
    while True:
        try:
            return future.result(timeout=wait)
        except KilledWorker:
            raise ServiceError("同一块输入先后让几个 Dask worker 意外结束了（常见的原因是内存不够）："
                               "其余的块没有核对") from None
        except (CancelledError, CommClosedError):  # Dask 断了和调度器的连接：取消了每一个任务，或者取结果时连接关了
            # （CommClosedError 也是 OSError：先认它，不然会被当成 worker 读输入出的错）
            raise SchedulerLost("和 Dask 调度器的连接断了（调度器被结束了，或者网络断了）") from None
        except TimeoutError:
            if future.status == "error":
                raise ServiceError("worker 读输入时超时了") from None
            watch.check()
            wait = min(wait * 2, 300.0)
        except ImportError:
            raise ServiceError("worker 上导入不了本项目：每个 worker 上都要装它（pip install '.[cluster]'），"
                               "版本和这里一样") from None
        except OSError as error:  # worker 读输入时出的错（比如文件在运行中被删了），原样传回到这里
            where = f" {literal(error.filename)}" if error.filename else ""
            raise ServiceError(f"worker 读不了输入{where}：{os_error_text(error)}"
                               "（每个 worker 都要能用同一个路径读到输入）") from None
        except MemoryError:
            raise ServiceError("worker 的内存不够") from None


START_SECONDS = 60
STOP_SECONDS = 15
BOOT = ("import sys; sys.path[:0] = sys.argv[2:]; "
        "from sourced_answers.batch.dask_scheduler import serve; serve(int(sys.argv[1]))")


def serve(workers: int) -> None:
    """子进程：起集群，打印调度器地址，等标准输入结束再关掉集群。"""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from distributed import LocalCluster
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cluster:
        print(cluster.scheduler_address, flush=True)
        sys.stdin.read()


@contextmanager
def local_cluster(workers: int, debug: bool = False) -> Iterator[str]:
    """起一个本机集群，给出调度器的地址（tcp://127.0.0.1:端口）；离开时关掉它。"""
    paths = [path or os.getcwd() for path in sys.path]
    try:
        process = subprocess.Popen([sys.executable or "python3", "-c", BOOT, str(workers), *paths],
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=None if debug else subprocess.DEVNULL, start_new_session=True)
    except OSError as error:
        raise ServiceError(f"起不了本机的 Dask 集群：{error.strerror or '系统错误'}") from None
    try:
        yield scheduler_address(process)
    finally:
        stop(process)


def scheduler_address(process: "subprocess.Popen[bytes]") -> str:
    """读子进程打印的调度器地址；它没起来（退出了、START_SECONDS 秒没有消息）就报 ServiceError。"""
    assert process.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        ready = selector.select(START_SECONDS)
    line = process.stdout.readline().decode("utf-8", "replace").strip() if ready else ""
    if not line.startswith("tcp://"):
        raise ServiceError("本机的 Dask 集群没有起来" + ("" if ready else f"（{START_SECONDS} 秒没有消息）") +
                           "：可以加 --debug 看 Dask 自己的说明，或者用 --scheduler 连一个已经在运行的调度器")
    return line


def stop(process: "subprocess.Popen[bytes]") -> None:
    """请集群关掉（关上它的标准输入）；等不到、或者等的时候又收到一个信号（再按一次 Ctrl-C，终端关掉时的第二个
    SIGHUP），就结束它的整个进程组（包括 worker 进程）。"""
    try:
        if process.stdin is not None:
            process.stdin.close()
    except OSError:
        pass
    try:
        process.wait(timeout=STOP_SECONDS)
    except subprocess.TimeoutExpired:
        pass
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)  # 进程组里剩下的（worker）也一起结束；都已退出时什么也不做
        except (ProcessLookupError, PermissionError):
            pass
        process.wait()
        if process.stdout is not None:
            process.stdout.close()
