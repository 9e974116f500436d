"""在 Dask 集群上核对一整批回答日志：读一组 JSON Lines 文件（glob），每一行核对一遍，结果写成 JSON Lines，外加一份汇总。

  pip install '.[cluster]'
  python -m sourced_answers.cluster 'logs/*.jsonl' --out results/                  # 本机起一个两核的小集群
  python -m sourced_answers.cluster 's3://bucket/logs/*.jsonl' --out s3://bucket/checked/ \\
      --scheduler tcp://调度器地址:8786 --summary summary.json                     # 真正的集群

为什么选 Dask：这件事就是“很多行文字，每行独立处理，再按原样写回去”，正好是 dask.bag 的用法（read_text → map →
to_textfiles），不用定义表结构；它是纯 Python 的包，本机 pip 装上就能起一个小集群来测试，到了真集群只换一个调度器地址；
s3://、gs:// 这类路径由 Dask 自己的文件系统层（fsspec）处理。Ray Data 也能做，但它更大、以表格和张量为中心，
本机测试也更重。

每一行的结果和 --verify --json 打印的那一行完全一样（同一个库函数 verification.verify_record）；格式不对的行
不会让整个任务停下：它的结果是 {"error": "…", "input": 原来那一行的前 200 个字}，并在汇总里计数。
输出的文件按输入分区的顺序编号（0.jsonl、1.jsonl……），按编号接起来就是按输入顺序的结果。
吞吐量随 worker 的核数线性增长：每一行的核对互不相关，瓶颈是 CPU（读写文件在核对面前可以忽略）。
"""
import argparse
import json
import sys
from collections import Counter
from collections.abc import Sequence
from typing import Any

from sourced_answers.errors import InputError
from sourced_answers.verification import verify_record

SLOWEST = 5


def check_line(line: str, threshold: float | None, fix: bool) -> dict[str, Any]:
    """一行 JSON → 它的核对结果（或者说明这一行哪里不对）。在 worker 上运行。"""
    try:
        data = json.loads(line)
    except (ValueError, RecursionError):
        return {"error": "不是合法的 JSON", "input": line[:200]}
    if not isinstance(data, dict):
        return {"error": "应是一个 JSON 对象", "input": line[:200]}
    try:
        return verify_record(data, threshold, fix)
    except InputError as error:
        return {"error": str(error), "input": line[:200]}


def summarize(results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """汇总：多少条、通过、没通过、格式不对、问题按种类。"""
    kinds: Counter[str] = Counter()
    for result in results:
        kinds.update({problem["kind"] for problem in result.get("problems", [])})
    errors = sum("error" in result for result in results)
    passed = sum(bool(result.get("passed")) for result in results)
    return {"records": len(results), "passed": passed, "failed": len(results) - passed - errors, "errors": errors,
            "kinds": dict(kinds.most_common())}


def merge(summaries: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """把各个分区的汇总加起来（汇总在 worker 上按分区算，回到这里的只有每个分区一个小 dict）。"""
    total: dict[str, Any] = {"records": 0, "passed": 0, "failed": 0, "errors": 0, "kinds": Counter()}
    for part in summaries:
        for name in ("records", "passed", "failed", "errors"):
            total[name] += part[name]
        total["kinds"].update(part["kinds"])
    total["kinds"] = dict(total["kinds"].most_common())
    return total


def run(paths: str | list[str], out: str, scheduler: str | None = None, workers: int = 2,
        threshold: float | None = None, fix: bool = False) -> dict[str, Any]:
    """在 Dask 上核对 paths（glob 或文件列表，本地路径或 s3:// 之类）里的每一行，结果写到 out/*.jsonl，返回汇总。
    scheduler 为 None 时在本机起一个 workers 个进程的集群（只监听 127.0.0.1，不开网页面板）。"""
    import dask.bag as bag
    from distributed import Client, LocalCluster

    cluster = None if scheduler else LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                                  host="127.0.0.1", dashboard_address=None)
    with Client(scheduler or cluster) as client:
        lines = bag.read_text(paths, encoding="utf-8").map(str.strip).filter(bool)
        results = lines.map(check_line, threshold, fix).persist()
        results.map(lambda result: json.dumps(result, ensure_ascii=False)).to_textfiles(
            f"{out.rstrip('/')}/*.jsonl", encoding="utf-8")
        summary = merge(results.map_partitions(lambda part: [summarize(list(part))]).compute())
        client.cancel(results)
    if cluster is not None:
        cluster.close()
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="在 Dask 集群上核对一批 JSON Lines 回答日志。")
    parser.add_argument("paths", nargs="+", help="输入：JSON Lines 文件或 glob（本地路径，或 s3:// 之类）")
    parser.add_argument("--out", required=True, help="结果写到这个目录（0.jsonl、1.jsonl……）")
    parser.add_argument("--scheduler", help="Dask 调度器地址（tcp://主机:8786）；不给就在本机起一个小集群")
    parser.add_argument("--workers", type=int, default=2, help="本机集群的 worker 进程数（默认 2）")
    parser.add_argument("--threshold", type=float, default=None, help="支持分的下限（默认和 --verify 一样）")
    parser.add_argument("--fix", action="store_true", help="和 --verify --fix 一样做确定性修正")
    parser.add_argument("--summary", help="把汇总另存为 JSON")
    args = parser.parse_args(argv)
    try:
        summary = run(args.paths if len(args.paths) > 1 else args.paths[0], args.out, args.scheduler, args.workers,
                      args.threshold, args.fix)
    except ImportError:
        print("✗ 没有安装 Dask：pip install '.[cluster]'", file=sys.stderr)
        return 2
    text = json.dumps(summary, ensure_ascii=False, indent=2)
    print(text, file=sys.stderr)
    if args.summary:
        with open(args.summary, "w", encoding="utf-8") as handle:
            handle.write(text + "\n")
    return 0 if summary["failed"] == 0 and summary["errors"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
