"""在 Dask 集群上核对一整批回答日志：读一组 JSON Lines 文件（glob），每一行核对一遍，结果写成 JSON Lines，外加一份汇总。

  pip install '.[cluster]'
  python -m sourced_answers.cluster 'logs/*.jsonl' --out results/                  # 本机起一个两个进程的小集群
  python -m sourced_answers.cluster 's3://bucket/logs/*.jsonl' --out s3://bucket/checked/ \\
      --scheduler tcp://调度器地址:8786 --summary summary.json                     # 真正的集群（要 s3fs）

为什么选 Dask：这件事就是“很多行文字，每行独立处理，再按原样写回去”；它是纯 Python 的包，本机 pip 装上就能起一个小集群
来测试，到了真集群只换一个调度器地址；s3://、gs:// 这类路径由它的文件系统层（fsspec）处理。

和 --verify 守同样的规矩、用同样的零件：参数是中文的、检查范围（cli）；行的读法是 json_lines（\\n 分行、\\r\\n 也认、
开头的 BOM 去掉、一条最多 16 MB）；每一行的结果和 --verify --json 打印的那一行完全一样
（check_and_fix + 同一份记录格式）；
汇总和 --verify --summary 一样（summary.Summary，多一个 errors：格式不对的行）。要写的文件在做任何事之前检查：
汇总由 output_files，结果目录由 result_folder（空的、新的，或者本程序上次写的；能写）。
连上集群以后问调度器一共有几个线程（dask_scheduler），按大小把输入切成线程数 × BLOCKS_PER_THREAD 块（分区；一个文件
也会切开），每个线程都有活干；worker 算完一块，这里就把它写进自己的文件（result_folder：补零的编号 00000.jsonl……，
按文件名排序接起来就是按输入顺序的结果，每个文件都以换行结尾）。格式不对的行不会让任务停下：它的结果是
{"error": "…", "line": 行号, "input": 这一行的前 200 个字}，并在汇总里计数（退出码 2）。
"""
import argparse
import glob
import math
import os
import re
import stat
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sourced_answers.batch.dask_scheduler import (
    START_SECONDS,
    Watch,
    cluster_threads,
    collect,
    connected,
    interrupts_held,
    local_cluster,
    quiet_dask_logs,
)
from sourced_answers.batch.result_folder import ResultFolder, filesystem, is_remote
from sourced_answers.core.errors import InputError, ServiceError, UsageError
from sourced_answers.core.masking import masked_excerpt, masked_json
from sourced_answers.core.network import os_error_text
from sourced_answers.core.options import fill
from sourced_answers.core.output_files import OutputFiles, PlannedFile
from sourced_answers.core.settings import CheckSettings
from sourced_answers.core.strings import literal
from sourced_answers.outputs.json_lines import MAX_RECORD_BYTES, block_line, parse_line, split_block
from sourced_answers.outputs.records import check_saved
from sourced_answers.outputs.summary import Summary

# 每个线程大约分到这么多块：块小一点，快的 worker 多干一点，慢的拖后腿的时间短一点
BLOCKS_PER_THREAD = 4
MIN_BLOCK = 64 * 1024  # 输入至少有 线程数 × 64 KB 时，每个线程都至少分到一块
MAX_BLOCK = 64 * 1024 * 1024
SCHEDULER = re.compile(r"tcp://(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(?P<port>[0-9]{1,5})")
Block = tuple[str, int, int, int]  # (文件, 开始的字节, 长度, 分区号)


@dataclass(frozen=True)
class Job:
    """一次 Dask 任务要用的一切（参数在 job_from 里检查一次；分几块要等连上集群才知道）。"""
    paths: list[str]
    folder: ResultFolder
    scheduler: str | None
    workers: int  # 本机集群的 worker 进程数（给了 --scheduler 时不用）
    wait_workers: float
    check: CheckSettings  # 核对的设置：和 --verify 一样由 core.options.fill 从参数建（--rule、--threshold、--fix）
    summary: PlannedFile | None
    secrets: tuple[str, ...] = ()  # 环境里本程序认得的每个密钥（core.secrets.secrets_to_mask；和 --verify 一样）


def expand(paths: Sequence[str]) -> list[str]:
    """本地的 glob 展开成文件；对象存储上的交给 fsspec（要装对应的包，比如 s3fs）。"""
    found: list[str] = []
    for pattern in paths:
        if not pattern.strip():
            raise UsageError("输入的路径是空的")
        if is_remote(pattern):
            found += remote_files(pattern)
            continue
        matches = sorted(glob.glob(pattern)) if glob.has_magic(pattern) else [pattern]
        problems = {path: not_a_file(path) for path in matches}
        files = [path for path, problem in problems.items() if problem is None]
        if not files:
            # 存在、却不是普通文件的（目录、设备、命名管道、绕成圈的符号链接）说出它是什么，不说“没有找到”
            said = next((problem for problem in problems.values() if problem), None)
            raise UsageError(said or f"没有找到输入文件：{literal(pattern)}")
        # 绝对路径：worker 可能在别的目录里运行（dask worker 在哪个目录启动，相对路径就从哪里算）
        found += [os.path.abspath(path) for path in files]
    return list(dict.fromkeys(found))


def not_a_file(path: str) -> str | None:
    """本地的输入能不能用：普通文件时为 None，否则是给人看的一句（不存在时为空字符串，由调用方说没有找到）。
    集群按字节把文件切成块、交给各个 worker 去读（split、lines_of_block），所以只能是普通文件。只看 stat，
    不打开：没有写的一方时，打开命名管道会一直等下去。"""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return ""
    except OSError as error:  # 绕成圈的符号链接、没有权限进的目录
        return f"读不了输入 {literal(path)}：{os_error_text(error)}"
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return f"输入 {literal(path)} 是一个目录：请写成 目录/*.jsonl"
    what = "命名管道（FIFO）" if stat.S_ISFIFO(mode) else "设备" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) \
        else "套接字" if stat.S_ISSOCK(mode) else "特殊文件"
    return (f"输入 {literal(path)} 是一个{what}，不是普通文件：集群把输入按字节切成块分给各个 worker 去读，"
            "只能读普通文件（先存成文件，或者用 --verify 读管道）")


def remote_files(pattern: str) -> list[str]:
    fs = filesystem(pattern)
    protocol = pattern.split("://", 1)[0]
    try:
        files = [f"{protocol}://{path}" for path in sorted(fs.glob(pattern)) if fs.isfile(path)]
    except OSError as error:
        raise ServiceError(f"读不了 {literal(pattern)}：{os_error_text(error)}") from None
    if not files:
        raise UsageError(f"没有找到输入文件：{literal(pattern)}")
    return files


def size_of(path: str) -> int:
    if is_remote(path):
        return int(filesystem(path).size(path))
    return os.path.getsize(path)


def split(paths: list[str], threads: int) -> list[Block]:
    """把输入按大小切成块：一共大约 threads × BLOCKS_PER_THREAD 块（一个文件也会被切开，每个线程都有活干）。
    块的边界由读的时候对齐到换行（见 lines_of_block）。"""
    try:
        sizes = [(path, size_of(path)) for path in paths]
    except OSError as error:
        raise ServiceError(f"读不了输入的大小：{os_error_text(error)}") from None
    total = sum(size for _, size in sizes)
    block = min(MAX_BLOCK, max(MIN_BLOCK, math.ceil(total / (max(1, threads) * BLOCKS_PER_THREAD))))
    blocks: list[Block] = []
    for path, size in sizes:
        for start in range(0, max(size, 1), block):
            blocks.append((path, start, min(block, size - start), len(blocks)))
    return blocks


def job_from(args: argparse.Namespace, streams: Sequence[int] = (0, 1, 2), secrets: Sequence[str] = ()) -> Job:
    """参数 → Job：和主程序一样在做任何事之前检查（调度器地址、输入、汇总、结果目录）。这里什么都不写、不建。"""
    address = SCHEDULER.fullmatch(args.scheduler.strip()) if args.scheduler else None
    if args.scheduler and not (address and 1 <= int(address["port"]) <= 65535):
        raise UsageError(f"--scheduler 的值“{literal(args.scheduler)}”不是 Dask 调度器的地址：要写成 tcp://主机:端口，"
                         f"端口 1–65535（dask scheduler 默认的端口是 8786；不是 http:// 的面板地址，tls:// 还不支持）")
    if args.scheduler and args.workers is not None:
        raise UsageError("--workers 只管本机起的小集群；用 --scheduler 时按集群里真有的 worker 和线程分块，"
                         "请去掉 --workers（worker 的个数在起 dask worker 时定）")
    if not args.out.strip():
        raise UsageError("--out 的值是空的：请给出结果目录")
    paths = expand(args.paths)
    outputs = OutputFiles(paths, streams)
    summary = outputs.plan(args.summary, "汇总") if args.summary else None
    if is_remote(args.out):
        filesystem(args.out)
    folder = ResultFolder(args.out, outputs, summary)
    folder.check(paths)
    return Job(paths, folder, args.scheduler.strip() if args.scheduler else None,
               args.workers if args.workers is not None else 2, args.wait_workers, fill(CheckSettings, vars(args)),
               summary, tuple(secrets))


# ---------- 在 worker 上运行 ----------

def count_newlines(block: tuple[str, int, int, int]) -> int:
    """这一块字节范围里有几个换行（第一遍：算出每一块的第一行是全文件的第几行）。"""
    import fsspec
    path, start, length, _ = block
    count = 0
    with fsspec.open(path, "rb") as handle:
        handle.seek(start)
        left = length
        while left > 0:  # 按 1 MB 一段读，内存有上限
            piece = handle.read(min(1024 * 1024, left))
            if not piece:
                break
            count += piece.count(b"\n")
            left -= len(piece)
    return count


def read_block(block: tuple[str, int, int, int]) -> tuple[bytes, bool]:
    """这一块的行：从这一块范围里开始的每一行（最后一行可以伸出范围，读到它的换行为止）。
    一行属于它开头所在的那一块。返回 (字节, 第一行之前是不是还有这一块的半行——它属于上一块)。"""
    import fsspec
    path, start, length, _ = block
    with fsspec.open(path, "rb") as handle:
        skipped = False
        if start:
            handle.seek(start - 1)
            if handle.read(1) != b"\n":  # start 落在一行的中间：这一行属于上一块，跳过它
                handle.readline(MAX_RECORD_BYTES + 2)
                skipped = True
        begin = handle.tell()
        body = handle.read(max(0, start + length - begin))
        if body and not body.endswith(b"\n"):
            body += handle.readline(MAX_RECORD_BYTES + 2)
    return body, skipped


def check_block(block: tuple[str, int, int, int], newlines_before: int, check: CheckSettings,
                secrets: tuple[str, ...]) -> tuple[list[str], dict[str, Any]]:
    """在 worker 上核对一块：每一行的结果（JSON 文字）和这一块的汇总。newlines_before：这一块之前有几个换行；
    secrets：结果里要遮掉的密钥。"""
    path = block[0]
    body, skipped = read_block(block)
    before = newlines_before + skipped
    summary = Summary()
    results: list[str] = []
    for number, raw in split_block(body, before + 1):
        started = time.perf_counter()
        try:
            text = block_line(raw, number, path)
            if not text.strip():
                continue
            saved = parse_line((number, text), path)
        except InputError as error:
            summary.add_error()
            shown = masked_excerpt(raw, secrets)
            results.append(masked_json({"error": str(error), "line": number, "input": shown}, secrets))
            continue
        checked, record = check_saved(saved, check)
        results.append(masked_json(record, secrets))
        summary.add(checked.report.passed, [p.kind for p in checked.report.problems],
                    round(time.perf_counter() - started, 4), number)
    return results, summary.to_dict()


# ---------- 在这里（客户端）运行 ----------

def run_job(job: Job, debug: bool = False, say: Callable[[str], None] = print) -> Summary:
    """在 Dask 上核对每一块，每块算完就把结果写进它的文件，返回合起来的汇总。没给 --scheduler 时在本机起一个小集群。
    不管怎样结束（做完、出错、Ctrl-C、SIGTERM、SIGHUP），结果目录的清单都记下真正写好了哪些文件。"""
    if not debug:  # Dask 自己的英文日志和警告不混进我们的输出；--debug 时照常显示
        quiet_dask_logs()
    complete = False
    try:
        if job.scheduler is not None:
            with connected(job.scheduler) as client:
                summary = run_on(client, job.scheduler, job, None, say)
        else:
            with local_cluster(job.workers, debug) as address, connected(address) as client:
                summary = run_on(client, address, job, job.workers, say)
        complete = True
    finally:
        with interrupts_held() as pressed:  # 收尾时又来一个信号：清单照样写完，再算它
            job.folder.finish(complete)
    if pressed:
        raise KeyboardInterrupt
    return summary


def run_on(client: Any, address: str, job: Job, expected: int | None, say: Callable[[str], None]) -> Summary:
    """先问集群一共有几个线程、按它切块，再数每一块里的换行（算行号，和 --verify 报的行号一样），最后核对。
    expected：本机集群的 worker 数（真集群是 None）。"""
    started = time.perf_counter()
    wait = job.wait_workers if expected is None else max(job.wait_workers, START_SECONDS)
    workers = cluster_threads(client, address, wait, expected)
    threads = sum(workers.values())
    blocks = split(job.paths, threads)
    say(f"集群 {literal(address)}：{len(workers)} 个 worker，一共 {threads} 个线程；输入切成 {len(blocks)} 块")
    job.folder.start(len(blocks))
    watch = Watch(client, address, job.wait_workers)
    counts: dict[int, int] = {}
    collect({client.submit(count_newlines, block, pure=False): block[3] for block in blocks}, watch,
            counts.__setitem__)
    before: dict[int, int] = {}
    running: dict[str, int] = {}
    for path, _, _, number in blocks:
        before[number] = running.get(path, 0)
        running[path] = running.get(path, 0) + counts[number]
    total = Summary()

    def write(number: int, result: tuple[list[str], dict[str, Any]]) -> None:
        results, part = result
        job.folder.write(number, "".join(results))  # masked_json 的每一行都以换行结尾：cat 起来不会把两条接成一行
        total.merge(Summary.from_dict(part))

    collect({client.submit(check_block, block, before[block[3]], job.check, job.secrets, pure=False): block[3]
             for block in blocks}, watch, write)
    total.seconds = time.perf_counter() - started
    return total
