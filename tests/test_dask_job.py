"""Dask 任务在真的 dask scheduler 和 dask worker 进程上（127.0.0.1 上随机的空闲端口），守和 --verify 一样的规矩：
结果和 --verify --json 逐条相同、每个 worker 都有活干、worker 或调度器半路没了几秒内是退出码 3（已经写好的结果保留、
说出是哪些）、没有 worker 时等够 --wait-workers 秒就结束、Ctrl-C 是 130；没有 Dask 的英文日志和报错堆栈。

起一个调度器和 worker 要好几秒：只结束任务、不动集群的测试共用一个一个 worker 的集群（shared_cluster），等 worker 的
测试共用一个没有 worker 的调度器（bare_scheduler），一次测试会话各起一个，几个 xdist 进程也共用（tests/across_workers.py），
会话结束时结束它们的整个进程组。要结束 worker 或调度器、要两个 worker 的测试各起各的（cluster），测试结束时（不管成败）
结束它们。"""
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.across_workers import Service, release, session_folder, use
from tests.support import HERE, cli_env, run_cli
from tests.test_corpus import corpus

pytestmark = pytest.mark.slow

# 要在任务半路上动手的测试用的条数：1 个线程 × 4 = 4 块，每块一秒多，第一个结果写好时后面还有好几秒的活。
# （800 条的块在不忙的机器上半秒就算完：测试还没动手，任务可能已经做完了）
MID_JOB = 2400
ENGLISH = re.compile(r"Traceback|Error|Exception|WARNING|INFO|distributed\.|Task exception")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class RealCluster:
    """一个真的调度器和几个真的 worker（dask scheduler / dask worker 这两个命令，由 distributed 包提供）。"""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = free_port()
        self.address = f"tcp://127.0.0.1:{self.port}"
        self.processes: list[subprocess.Popen[bytes]] = []
        self.scheduler: subprocess.Popen[bytes] | None = None
        self.workers: list[subprocess.Popen[bytes]] = []

    def start(self, module: str, arguments: list[str], ready: str) -> subprocess.Popen[bytes]:
        log = self.folder / f"{module.rsplit('_', 1)[-1]}-{len(self.processes)}.log"
        with log.open("wb") as handle:
            process = subprocess.Popen([sys.executable, "-m", f"distributed.cli.{module}", *arguments],
                                       stdin=subprocess.DEVNULL, stdout=handle, stderr=subprocess.STDOUT,
                                       start_new_session=True)  # 自己的进程组：结束时连 nanny 下面的 worker 一起结束
        self.processes.append(process)
        deadline = time.monotonic() + 60
        while ready not in log.read_text(errors="replace"):
            assert process.poll() is None and time.monotonic() < deadline, log.read_text(errors="replace")
            time.sleep(0.1)
        return process

    def start_scheduler(self) -> None:
        self.scheduler = self.start("dask_scheduler", ["--host", "127.0.0.1", "--port", str(self.port),
                                                       "--no-dashboard"], "Scheduler at")

    def start_worker(self) -> None:
        self.workers.append(self.start("dask_worker", [self.address, "--host", "127.0.0.1", "--nthreads", "1",
                                                       "--no-dashboard"], "Registered to"))

    def stop(self) -> None:
        for process in self.processes:
            kill(process)


def kill(process: "subprocess.Popen[bytes]") -> None:
    """像 kill -9 那样结束进程和它所在的进程组（nanny 和它下面的 worker 进程）。"""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()


def dask_or_skip() -> None:
    try:
        import distributed  # noqa: F401
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("CI 里没有装 Dask（bash quickstart.sh --test 会装 .[cluster]）")
        pytest.skip("没有安装 Dask：pip install '.[cluster]'")


@pytest.fixture
def cluster(tmp_path):
    """这个测试自己的调度器（worker 由测试自己起）：测试会结束 worker 或调度器、或者要两个 worker。"""
    dask_or_skip()
    real = RealCluster(tmp_path)
    try:
        real.start_scheduler()
        yield real
    finally:
        real.stop()


@dataclass(frozen=True)
class SharedCluster:
    """几个测试共用的集群：地址和放日志的目录（测试不能结束它的 worker 或调度器）。"""
    address: str
    folder: Path

    def client_connections(self) -> int:
        """调度器到现在接受过几个 Dask 客户端的连接（它的日志里每个一行）。"""
        return (self.folder / "scheduler-0.log").read_text(errors="replace").count("Receive client connection")


def shared(tmp_path_factory: pytest.TempPathFactory, name: str, workers: int) -> Iterator[SharedCluster]:
    """一个调度器和 workers 个 worker，一次测试会话只起一个（几个 xdist 进程也共用）。"""
    dask_or_skip()
    folder = session_folder(tmp_path_factory)

    def start() -> tuple[Service, Callable[[], None]]:
        real = RealCluster(folder / name)
        real.folder.mkdir()
        try:
            real.start_scheduler()
            for _ in range(workers):
                real.start_worker()
        except BaseException:
            real.stop()
            raise
        return Service(real.address, ""), real.stop

    yield SharedCluster(use(folder, name, start).url, folder / name)
    release(folder, name)


@pytest.fixture(scope="session")
def shared_cluster(tmp_path_factory):
    """一个调度器、一个一个线程的 worker：只结束任务、不动集群的测试共用。"""
    yield from shared(tmp_path_factory, "dask_cluster", workers=1)


@pytest.fixture(scope="session")
def bare_scheduler(tmp_path_factory):
    """一个没有 worker 的调度器：等 worker 的测试共用。"""
    yield from shared(tmp_path_factory, "dask_scheduler", workers=0)


def start_job(cluster: "RealCluster | SharedCluster", source: Path, out: Path, *extra: str) -> "subprocess.Popen[str]":
    return subprocess.Popen([sys.executable, "-m", "sourced_answers.cluster", str(source), "--out", str(out),
                             "--scheduler", cluster.address, *extra], cwd=HERE, env=cli_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


def finish(job: "subprocess.Popen[str]", timeout: float) -> tuple[int, str]:
    try:
        _, err = job.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill(job)  # type: ignore[arg-type]
        pytest.fail(f"任务 {timeout} 秒还没有结束（卡住了）")
    return job.returncode, err


def first_result(out: Path, job: "subprocess.Popen[str]") -> list[str]:
    """等到第一个结果文件写好（任务正在算），返回这时已经有的结果文件。"""
    deadline = time.monotonic() + 60
    while not (out.is_dir() and list(out.glob("*.jsonl"))):
        assert job.poll() is None and time.monotonic() < deadline, "任务没有写出第一个结果文件就结束了"
        time.sleep(0.05)
    return sorted(path.name for path in out.glob("*.jsonl"))


def connected(cluster: SharedCluster, before: int, job: "subprocess.Popen[str]") -> None:
    """等到任务连上了调度器（调度器的日志里多了一个客户端的连接）。"""
    deadline = time.monotonic() + 60
    while cluster.client_connections() <= before:
        assert job.poll() is None and time.monotonic() < deadline, "任务没有连上调度器就结束了"
        time.sleep(0.05)


def records_of(out: Path) -> list[dict]:
    """cat out/*.jsonl：文件按名字排序接起来。"""
    return [json.loads(line) for part in sorted(out.glob("*.jsonl"))
            for line in part.read_text(encoding="utf-8").splitlines()]


def same_as_verify(code: int, err: str, source: Path, out: Path) -> None:
    """任务的退出码和结果文件（接起来）和在本机 --verify --json 同一个输入的一模一样（这些语料里有没通过的：退出码 1）。"""
    verify = run_cli("--verify", str(source), "--json", env=cli_env())
    assert code == verify.returncode == 1, err
    assert records_of(out) == [json.loads(line) for line in verify.stdout.splitlines()]


def test_two_real_workers_give_the_verify_records_and_both_get_work(cluster, tmp_path):
    from distributed import Client
    cluster.start_worker()
    cluster.start_worker()
    source = corpus(tmp_path, 160)  # 大约 600 KB：2 个线程 × 4 = 8 块
    with Client(cluster.address, set_as_default=False) as watcher:
        watcher.get_task_stream()  # 让调度器从现在起记下每个任务在哪个 worker 上算
        started = time.time()
        code, err = finish(start_job(cluster, source, tmp_path / "out"), 60)
        stream = watcher.get_task_stream(start=started)
    same_as_verify(code, err, source, tmp_path / "out")
    assert "2 个 worker，一共 2 个线程；输入切成 8 块" in err, err
    assert "8 个文件 00000.jsonl–00007.jsonl" in err and f"cat {tmp_path / 'out'}/*.jsonl" in err, err
    workers = {task["worker"] for task in stream if str(task["key"]).startswith("check_block")}
    assert len(workers) == 2, stream
    manifest = json.loads((tmp_path / "out" / "_manifest.json").read_text(encoding="utf-8"))
    assert manifest["complete"] is True and manifest["files"] == [f"0000{n}.jsonl" for n in range(8)]
    assert not ENGLISH.search(err), err


def test_a_worker_killed_mid_job_ends_it_with_exit_3_within_seconds_and_keeps_what_was_written(cluster, tmp_path):
    cluster.start_worker()
    source = corpus(tmp_path, MID_JOB)
    out = tmp_path / "out"
    job = start_job(cluster, source, out, "--wait-workers", "2")
    written = first_result(out, job)
    kill(cluster.workers[0])  # kill -9 它的整个进程组：nanny 和 worker
    killed = time.monotonic()
    code, err = finish(job, 30)
    assert code == 3 and time.monotonic() - killed < 15, err
    assert "worker 都没了，等了 2 秒也没有新的" in err, err
    kept = sorted(path.name for path in out.glob("*.jsonl"))
    assert set(written) <= set(kept) and len(kept) < 4  # 没算完的块没有结果文件
    assert f"已经写好的 {len(kept)} 个结果文件保留" in err and kept[0] in err, err
    manifest = json.loads((out / "_manifest.json").read_text(encoding="utf-8"))
    assert manifest["complete"] is False and manifest["files"] == kept
    assert not ENGLISH.search(err), err


def test_a_killed_worker_is_replaced_by_the_other_one_and_the_records_are_complete(cluster, tmp_path):
    cluster.start_worker()
    cluster.start_worker()
    source = corpus(tmp_path, 400)
    out = tmp_path / "out"
    job = start_job(cluster, source, out)
    first_result(out, job)
    kill(cluster.workers[0])
    code, err = finish(job, 90)
    same_as_verify(code, err, source, out)
    assert not ENGLISH.search(err), err


def test_a_worker_process_killed_under_its_nanny_is_restarted_and_the_records_are_complete(cluster, tmp_path):
    """内存不够时系统结束的是 nanny 下面的 worker 进程：nanny 把它重启起来，Dask 重算它手上的块。"""
    cluster.start_worker()
    source = corpus(tmp_path, 400)
    out = tmp_path / "out"
    job = start_job(cluster, source, out)
    first_result(out, job)
    nanny = cluster.workers[0].pid
    with open(f"/proc/{nanny}/task/{nanny}/children") as handle:
        children = [int(pid) for pid in handle.read().split()]
    assert children, "dask worker 没有 nanny 下面的 worker 进程"
    for pid in children:
        os.kill(pid, signal.SIGKILL)
    code, err = finish(job, 60)
    same_as_verify(code, err, source, out)
    assert not ENGLISH.search(err), err


def test_a_scheduler_killed_mid_job_is_exit_3_in_chinese_without_a_dask_traceback(cluster, tmp_path):
    cluster.start_worker()
    source = corpus(tmp_path, MID_JOB)
    out = tmp_path / "out"
    job = start_job(cluster, source, out)
    first_result(out, job)
    assert cluster.scheduler is not None
    kill(cluster.scheduler)
    killed = time.monotonic()
    code, err = finish(job, 30)
    assert code == 3 and time.monotonic() - killed < 10, err
    assert "和 Dask 调度器的连接断了" in err and "已经写好的" in err and "00000.jsonl" in err, err
    assert not ENGLISH.search(err), err


def test_a_scheduler_without_workers_waits_the_given_seconds_then_says_so(bare_scheduler, tmp_path):
    source = corpus(tmp_path, 10)
    started = time.monotonic()
    code, err = finish(start_job(bare_scheduler, source, tmp_path / "out", "--wait-workers", "2"), 30)
    assert code == 3 and 2 <= time.monotonic() - started < 20, err
    assert f"Dask 调度器 {bare_scheduler.address} 上没有 worker（等了 2 秒）" in err and "--wait-workers" in err, err
    assert not (tmp_path / "out").exists()  # 什么都没做：连结果目录都没有建
    assert not ENGLISH.search(err), err


@pytest.mark.parametrize("when", ["waiting for workers", "mid-job"])
def test_ctrl_c_on_a_job_on_a_real_scheduler_is_130_and_interrupted(request, tmp_path, when):
    cluster = request.getfixturevalue("shared_cluster" if when == "mid-job" else "bare_scheduler")
    source = corpus(tmp_path, MID_JOB)
    out = tmp_path / "out"
    connections = cluster.client_connections()
    job = start_job(cluster, source, out)
    if when == "mid-job":
        first_result(out, job)
    else:
        connected(cluster, connections, job)  # 连上了调度器，正在等 worker
    os.killpg(job.pid, signal.SIGINT)  # 和终端里按 Ctrl-C 一样：发给前台的进程组
    code, err = finish(job, 30)
    assert code == 130 and "已中断" in err, err
    assert not ENGLISH.search(err), err
    if when == "mid-job":
        assert "已经写好的" in err and "00000.jsonl" in err, err
    else:
        assert not out.exists()


@pytest.mark.parametrize("sent", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_sigterm_or_sighup_mid_job_ends_it_like_ctrl_c_and_the_manifest_names_only_the_files_written(shared_cluster, tmp_path,
                                                                                                     sent):
    """kill、timeout 发的 SIGTERM，终端关掉、ssh 断开时的 SIGHUP：和 Ctrl-C 一样收尾（130、已中断），清单里只有
    真正写好的结果文件（以前 SIGHUP 直接结束进程，清单还是开始时那份，记着一个也没写的 00001–00003）。"""
    out = tmp_path / "out"
    job = start_job(shared_cluster, corpus(tmp_path, MID_JOB), out)
    first_result(out, job)
    job.send_signal(sent)
    code, err = finish(job, 30)
    assert code == 130 and "已中断" in err, err
    kept = sorted(path.name for path in out.glob("*.jsonl"))
    manifest = json.loads((out / "_manifest.json").read_text(encoding="utf-8"))
    assert manifest["complete"] is False and manifest["files"] == kept and manifest["pending"] == []
    assert f"已经写好的 {len(kept)} 个结果文件保留" in err, err
    assert not ENGLISH.search(err), err


def test_a_second_sighup_while_the_job_ends_still_leaves_a_true_manifest_and_130(shared_cluster, tmp_path):
    """终端关掉时 SIGHUP 常常连着来两个（内核发一个，shell 再转发一个）：第二个落在收尾的半路上，清单照样写完、
    只记写好的文件，退出码照样是 130。"""
    out = tmp_path / "out"
    job = start_job(shared_cluster, corpus(tmp_path, MID_JOB), out)
    first_result(out, job)
    job.send_signal(signal.SIGHUP)
    job.send_signal(signal.SIGHUP)
    code, err = finish(job, 30)
    assert code == 130 and "已中断" in err, err
    kept = sorted(path.name for path in out.glob("*.jsonl"))
    manifest = json.loads((out / "_manifest.json").read_text(encoding="utf-8"))
    assert manifest["complete"] is False and manifest["files"] == kept
    assert not ENGLISH.search(err), err


def test_a_job_killed_outright_leaves_a_manifest_that_lists_no_unwritten_file_and_a_rerun_takes_the_folder(
        shared_cluster, tmp_path):
    """kill -9 收不了尾：清单还是开始时的那份，可它只把没写好的名字记在 pending 里，files 里没有一个不在的文件；
    再跑一次认得出目录里剩下的都是本程序的，整个换掉。"""
    out = tmp_path / "out"
    job = start_job(shared_cluster, corpus(tmp_path, MID_JOB), out)
    first_result(out, job)
    kill(job)  # type: ignore[arg-type]
    job.communicate()
    manifest = json.loads((out / "_manifest.json").read_text(encoding="utf-8"))
    assert all((out / name).exists() for name in manifest["files"]), manifest
    assert {path.name for path in out.glob("*.jsonl")} <= set(manifest["files"]) | set(manifest["pending"])
    code, err = finish(start_job(shared_cluster, corpus(tmp_path, 3, "small.jsonl"), out), 60)
    assert code == 1 and sorted(path.name for path in out.iterdir()) == ["00000.jsonl", "_manifest.json"], err


def test_a_relative_input_path_is_read_by_a_worker_started_in_another_directory(shared_cluster, tmp_path):
    # 共用集群的 worker 在测试进程的工作目录（检出的根目录）里启动，不在 tmp_path 里
    corpus(tmp_path, 5, "relative.jsonl")
    job = subprocess.Popen([sys.executable, "-m", "sourced_answers.cluster", "relative.jsonl", "--out", "out",
                            "--scheduler", shared_cluster.address], cwd=tmp_path, env=cli_env(),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    code, err = finish(job, 60)
    assert code == 1 and len(records_of(tmp_path / "out")) == 5, err


def test_a_rerun_replaces_the_earlier_results_as_a_whole(shared_cluster, tmp_path):
    out = tmp_path / "out"
    code, err = finish(start_job(shared_cluster, corpus(tmp_path, 80, "big.jsonl"), out), 60)
    assert code == 1 and len(list(out.glob("*.jsonl"))) == 4, err
    small = corpus(tmp_path, 3, "small.jsonl")
    code, err = finish(start_job(shared_cluster, small, out), 60)
    assert code == 1 and sorted(path.name for path in out.iterdir()) == ["00000.jsonl", "_manifest.json"], err
    assert [record["question"] for record in records_of(out)] == ["问题 0", "问题 1", "问题 2"]
    assert "1 个文件 00000.jsonl" in err, err
