"""没给 --scheduler 时，在本机起一个小 Dask 集群（调度器 + 几个 worker 进程），用完关掉。

集群跑在一个单独的子进程里，这个子进程在自己的会话里：终端的 Ctrl-C 只发给 cluster 命令本身，由它关掉集群；
Dask 的 worker 进程不会各自收到 Ctrl-C、打出英文的报错堆栈和日志。子进程的标准输出只用来告诉我们调度器的地址；
它的标准错误不接（Dask 的英文日志不混进我们的输出），加 --debug 时才接到我们的标准错误上，方便查原因。
我们关掉它的标准输入（或者我们自己没了）它就关掉集群、结束；等不到时结束它所在的整个进程组。
"""
import os
import selectors
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from sourced_answers.core.errors import ServiceError

START_SECONDS = 60
STOP_SECONDS = 15
BOOT = ("import sys; sys.path[:0] = sys.argv[2:]; "
        "from sourced_answers.batch.local_cluster import serve; serve(int(sys.argv[1]))")


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
