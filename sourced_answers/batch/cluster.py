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
汇总和 --verify --summary 一样（summary.Summary，多一个 errors：格式不对的行）；要写的文件都先由 output_files 检查
（不能是输入、标准输入输出，不能是管道、设备、符号链接），再由 worker 算完后在这里按分区写（先写临时文件再换名）。
一个文件会按大小切成好几块（分区），所以只有一个大文件时所有 worker 也都有活干；结果按分区编号写成 0.jsonl、1.jsonl……，
按编号接起来就是按输入顺序的结果，每个文件都以换行结尾。格式不对的行不会让任务停下：它的结果是
{"error": "…", "line": 行号, "input": 这一行的前 200 个字}，并在汇总里计数（退出码 2）。
"""
import argparse
import glob
import logging
import math
import os
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sourced_answers.batch.local_cluster import local_cluster
from sourced_answers.core.errors import InputError, ServiceError, UsageError
from sourced_answers.core.network import os_error_text
from sourced_answers.core.output_files import OutputFiles, PlannedFile, write_file
from sourced_answers.core.settings import CheckSettings
from sourced_answers.core.text import literal, masked_json
from sourced_answers.outputs.json_lines import MAX_RECORD_BYTES, decoded, parse_line, too_long
from sourced_answers.outputs.records import check_saved
from sourced_answers.outputs.summary import Summary

# 每个 worker 进程大约分到这么多块：块小一点，快的 worker 多干一点，慢的拖后腿的时间短一点
BLOCKS_PER_WORKER = 4
MIN_BLOCK = 256 * 1024
MAX_BLOCK = 64 * 1024 * 1024
CONNECT_SECONDS = 10
SCHEDULER = re.compile(r"tcp://(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(?P<port>[0-9]{1,5})")


@dataclass(frozen=True)
class Job:
    """一次 Dask 任务要用的一切（参数在 job_from 里检查一次）。"""
    paths: list[str]
    out: str
    files: list[PlannedFile | str]  # 每个分区的结果文件：本地的是检查过的 PlannedFile，对象存储上的是地址
    blocks: list[tuple[str, int, int, int]]  # (文件, 开始的字节, 长度, 分区号)
    scheduler: str | None
    workers: int
    rule: str
    threshold: float | None
    fix: bool
    summary: PlannedFile | None
    secrets: tuple[str, ...] = ()  # 环境里本程序认得的每个密钥（core.secrets.secrets_to_mask；和 --verify 一样）


def is_remote(path: str) -> bool:
    return "://" in path


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
        files = [path for path in matches if os.path.isfile(path)]
        if not files:
            raise UsageError(f"没有找到输入文件：{literal(pattern)}" + ("（是一个目录：请写成 目录/*.jsonl）"
                                                            if os.path.isdir(pattern) else ""))
        found += files
    return list(dict.fromkeys(found))


def filesystem(url: str) -> Any:
    """对象存储的文件系统（fsspec）。缺了对应的包时说清楚要装什么（不是说 Dask 没装）。"""
    import fsspec
    protocol = url.split("://", 1)[0]
    try:
        return fsspec.filesystem(protocol)
    except ImportError:
        raise UsageError(f"读写 {protocol}:// 要先装对应的包（比如 s3:// 要 pip install s3fs，gs:// 要 gcsfs）") \
            from None
    except ValueError:
        raise UsageError(f"不认识的地址类型 {literal(protocol)}://") from None


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


def split(paths: list[str], workers: int) -> list[tuple[str, int, int, int]]:
    """把输入按大小切成块：一共大约 workers × BLOCKS_PER_WORKER 块（一个文件也会被切开，所有 worker 都有活干）。
    块的边界由读的时候对齐到换行（见 lines_of_block）。"""
    sizes = [(path, size_of(path)) for path in paths]
    total = sum(size for _, size in sizes)
    block = min(MAX_BLOCK, max(MIN_BLOCK, math.ceil(total / (max(1, workers) * BLOCKS_PER_WORKER))))
    blocks: list[tuple[str, int, int, int]] = []
    for path, size in sizes:
        for start in range(0, max(size, 1), block):
            blocks.append((path, start, min(block, size - start), len(blocks)))
    return blocks


def job_from(args: argparse.Namespace, streams: Sequence[int] = (0, 1, 2), secrets: Sequence[str] = ()) -> Job:
    """参数 → Job：和主程序一样在做任何事之前检查（路径、输出文件、调度器地址）。"""
    address = SCHEDULER.fullmatch(args.scheduler.strip()) if args.scheduler else None
    if args.scheduler and not (address and 1 <= int(address["port"]) <= 65535):
        raise UsageError(f"--scheduler 的值“{literal(args.scheduler)}”不是 Dask 调度器的地址：要写成 tcp://主机:端口，"
                         f"端口 1–65535（dask scheduler 默认的端口是 8786；不是 http:// 的面板地址，tls:// 还不支持）")
    if not args.out.strip():
        raise UsageError("--out 的值是空的：请给出结果目录")
    paths = expand(args.paths)
    workers = args.workers
    blocks = split(paths, workers)
    outputs = OutputFiles(paths, streams)
    summary = outputs.plan(args.summary, "汇总") if args.summary else None  # 先查完别的，最后才建结果目录
    files: list[PlannedFile | str] = []
    if is_remote(args.out):
        filesystem(args.out)
        files = [f"{args.out.rstrip('/')}/{number}.jsonl" for _, _, _, number in blocks]
    else:
        files = local_result_files(args.out, paths, blocks, outputs)
    return Job(paths, args.out, files, blocks, args.scheduler.strip() if args.scheduler else None, workers,
               args.rule, args.threshold, args.fix, summary, tuple(secrets))


def local_result_files(out: str, paths: list[str], blocks: list[tuple[str, int, int, int]],
                       outputs: OutputFiles) -> list[PlannedFile | str]:
    """本地的结果目录：不能是输入所在的目录（下一次用同样的 glob 就会把结果当输入读进来），不能是一个文件；
    不存在就建（上一层目录要存在）。每个分区的结果文件都由 output_files 检查。"""
    directory = os.path.realpath(out)
    for path in paths:
        if os.path.dirname(os.path.realpath(path)) == directory:
            raise UsageError(f"--out {literal(out)} 就是输入 {literal(path)} 所在的目录：结果会和输入混在一起"
                             f"（还可能覆盖输入），请换一个目录")
    if os.path.exists(directory) and not os.path.isdir(directory):
        raise UsageError(f"--out {literal(out)} 已经是一个文件，不是目录")
    if not os.path.isdir(directory):
        if not os.path.isdir(os.path.dirname(directory)):
            raise UsageError(f"--out {literal(out)} 的上一层目录不存在")
        try:
            os.mkdir(directory)
        except OSError as error:
            raise UsageError(f"建不了结果目录 {literal(out)}：{error.strerror}") from None
    return [outputs.plan(os.path.join(out, f"{number}.jsonl"), "结果") for _, _, _, number in blocks]


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


def check_block(block: tuple[str, int, int, int], newlines_before: int,
                options: tuple[str, float | None, bool, tuple[str, ...]]) -> tuple[list[str], dict[str, Any]]:
    """在 worker 上核对一块：每一行的结果（JSON 文字）和这一块的汇总。newlines_before：这一块之前有几个换行。"""
    path = block[0]
    rule, threshold, fix, secrets = options
    check = CheckSettings(rule=rule, threshold=threshold, fix=fix)
    body, skipped = read_block(block)
    before = newlines_before + skipped
    summary = Summary()
    results: list[str] = []
    pieces = body.split(b"\n")
    if pieces and pieces[-1] == b"":
        pieces.pop()
    for offset, raw in enumerate(pieces):
        number = before + offset + 1
        started = time.perf_counter()
        try:
            if len(raw) > MAX_RECORD_BYTES + 1:
                raise too_long(path, number)
            text = decoded(raw, number, path, number == 1)
            if not text.strip():
                continue
            saved = parse_line((number, text), path)
        except InputError as error:
            summary.add_error()
            shown = raw[:600].decode("utf-8", errors="replace")[:200]
            results.append(masked_json({"error": str(error), "line": number, "input": shown}, secrets))
            continue
        checked, record = check_saved(saved, check)
        results.append(masked_json(record, secrets))
        summary.add(checked.report.passed, [p.kind for p in checked.report.problems],
                    round(time.perf_counter() - started, 4), number)
    return results, summary.to_dict()


# ---------- 在这里（客户端）运行 ----------

def run_job(job: Job, debug: bool = False) -> Summary:
    """在 Dask 上核对每一块，每块算完就把结果写进它的文件，返回合起来的汇总。
    先数每一块里的换行（算行号，和 --verify 报的行号一样），再核对。没给 --scheduler 时在本机起一个小集群。"""
    if not debug:  # Dask 自己的英文日志（连接、关闭时的警告）不混进我们的输出；--debug 时照常显示
        logging.getLogger("distributed").setLevel(logging.CRITICAL)
        logging.getLogger("asyncio").setLevel(logging.CRITICAL)  # 中断时 Dask 留下的未取回任务
    if job.scheduler is not None:
        return run_on(job.scheduler, job)
    with local_cluster(job.workers, debug) as address:
        return run_on(address, job)


def run_on(address: str, job: Job) -> Summary:
    from distributed import Client, KilledWorker, as_completed

    started = time.perf_counter()
    try:
        client = Client(address, timeout=CONNECT_SECONDS)
    except (OSError, TimeoutError):
        raise ServiceError(f"连不上 Dask 调度器 {literal(address)}（等了 {CONNECT_SECONDS} 秒）："
                           f"请确认 dask scheduler 在运行、地址和端口对") from None
    total = Summary()
    try:
        options = (job.rule, job.threshold, job.fix, job.secrets)
        counts = client.gather(client.map(count_newlines, job.blocks, pure=False))
        before: dict[tuple[str, int], int] = {}
        running: dict[str, int] = {}
        for block, count in zip(job.blocks, counts, strict=True):
            before[(block[0], block[1])] = running.get(block[0], 0)
            running[block[0]] = running.get(block[0], 0) + count
        futures = {client.submit(check_block, block, before[(block[0], block[1])], options, pure=False): block[3]
                   for block in job.blocks}
        for future in as_completed(futures):
            results, part = future.result()
            write_results(job.files[futures[future]], results)
            total.merge(Summary.from_dict(part))
    except KilledWorker:
        raise ServiceError("一个 Dask worker 意外结束了（常见的原因是内存不够）：已经写好的结果文件保留，"
                           "其余的没有核对") from None
    except OSError as error:  # worker 读输入时出的错（比如文件在运行中被删了），原样传回到这里
        raise ServiceError(f"worker 读不了输入：{os_error_text(error)}") from None
    finally:
        client.close()
    total.seconds = time.perf_counter() - started
    return total


def write_results(target: PlannedFile | str, results: list[str]) -> None:
    """一个分区的结果：每行一条，以换行结尾（cat 起来不会把两条接成一行）。"""
    text = "".join(results)  # masked_json 的每一行都以换行结尾
    if isinstance(target, PlannedFile):
        write_file(target, text)
        return
    import fsspec
    try:
        with fsspec.open(target, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as error:
        raise ServiceError(f"写不了结果 {literal(target)}：{os_error_text(error)}") from None
