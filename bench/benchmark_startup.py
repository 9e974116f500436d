"""启动的用时：--help、--version 和 --verify 一条一句话的记录，作为子进程从开始到结束的墙上时间，
和以前的版本在同一次运行里交替着量，并排打印最少的一次、中位数和比值（毫秒；目标：每条都 ≤ 200 毫秒，2 核机器）。

每个 --verify、每个 --jobs 的工作进程、每个 Dask 任务进程和每次 --mcp 都要付一次启动；哪条路导入哪些模块由
tests/test_startup.py 守着（只断言模块，不断言用时），这里量的是用时。

  python -m bench.benchmark_startup                                 # 以前 = 24bb3be（两轮之前）和 main，现在 = HEAD
  python -m bench.benchmark_startup --before 24bb3be --runs 30
  python -m bench.benchmark_startup --bytecode                      # 另外量一遍带 .pyc 的（像 pip 装好的包）

每个版本用 git archive 取到一个临时目录（不碰工作区），以 python 那个目录/answer_with_sources.py 运行：脚本所在的
目录在 sys.path 的最前面，所以每个版本用的是它自己的 sourced_answers。默认不带 .pyc（PYTHONDONTWRITEBYTECODE=1，
每次从源代码编译：可编辑安装、这台机器的设置）；--bytecode 时先用 compileall 编译好每个版本，再量一遍。
版本按轮交替（每一轮里的先后也轮换），机器忙闲的变化几个版本都摊到；报的是墙上时间，机器忙时最少的一次最可信。
"""
import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.benchmark_first_answer import checkout

HERE = Path(__file__).resolve().parent.parent
BEFORE = ["24bb3be", "main"]  # 24bb3be：两轮之前，启动约 170 毫秒
TARGET = 0.2
RECORD = json.dumps({"answer": "RAID1 用两块盘互为镜像 [1]。",
                     "sources": [{"text": "RAID1 用两块盘互为镜像，一块坏了数据还在。"}]}, ensure_ascii=False) + "\n"


def commands(record: Path) -> dict[str, list[str]]:
    return {"--help": ["--help"], "--version": ["--version"], "--verify 一条记录": ["--verify", str(record)]}


def environment(bytecode: bool) -> dict[str, str]:
    """不带本机的密钥和服务地址（遮密钥的正则、服务的设置都不因这台机器而变）。"""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("METASO_", "ANS_", "OLLAMA_", "PYTHON"))}
    env["PYTHONIOENCODING"] = "utf-8"
    if not bytecode:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def wall_seconds(tree: Path, arguments: list[str], env: dict[str, str]) -> float:
    """在 tree 里运行一次 python answer_with_sources.py 参数：从开始到进程结束的墙上时间（秒）。"""
    command = [sys.executable, str(tree / "answer_with_sources.py"), *arguments]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=tree, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, check=False)
    took = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{tree.name}：{' '.join(arguments)} 退出码 {done.returncode}\n"
                         f"{done.stderr.decode(errors='replace')[-2000:]}")
    return took


# 原样以 __main__ 运行入口文件，结束时写出 sys.modules 有多少个模块（python -X importtime 看不到 importlib 导入的）
COUNT_MODULES = """
import atexit, runpy, sys
listing, script, *arguments = sys.argv[1:]
atexit.register(lambda: open(listing, "w").write(str(len(sys.modules))))
sys.argv = [script, *arguments]
runpy.run_path(script, run_name="__main__")
"""


def module_count(tree: Path, arguments: list[str], env: dict[str, str]) -> int:
    """这条命令结束时一共导入了多少个模块（sys.modules，连解释器启动时的在内）。"""
    with tempfile.TemporaryDirectory() as folder:
        listing = Path(folder) / "count"
        command = [sys.executable, "-c", COUNT_MODULES, str(listing), str(tree / "answer_with_sources.py"), *arguments]
        subprocess.run(command, cwd=tree, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=False)
        return int(listing.read_text())


def measure(trees: dict[str, Path], runs: list[str], record: Path, rounds: int,
            env: dict[str, str]) -> dict[tuple[str, str], list[float]]:
    """每条命令：几个版本交替各跑 rounds 次（先热身一次，不算）。{(命令, 版本): [秒, …]}"""
    seconds: dict[tuple[str, str], list[float]] = {}
    for name, arguments in commands(record).items():
        if name not in runs:
            continue
        for tree in trees.values():
            wall_seconds(tree, arguments, env)
        for turn in range(rounds):
            order = list(trees.items())
            shift = turn % len(order)
            for ref, tree in order[shift:] + order[:shift]:
                seconds.setdefault((name, ref), []).append(wall_seconds(tree, arguments, env))
    return seconds


def table(trees: dict[str, Path], seconds: dict[tuple[str, str], list[float]], record: Path,
          env: dict[str, str]) -> list[str]:
    refs = list(trees)
    now = refs[-1]
    lines = ["| 命令 | " + " | ".join(f"{ref}（最少 / 中位数，模块数）" for ref in refs) + " | "
             + " | ".join(f"{now} / {ref}（中位数）" for ref in refs[:-1]) + " |",
             "|---" * (2 * len(refs)) + "|"]
    for name, arguments in commands(record).items():
        if (name, now) not in seconds:
            continue
        cells = []
        for ref, tree in trees.items():
            values = seconds[(name, ref)]
            cells.append(f"{min(values) * 1000:.0f} / {statistics.median(values) * 1000:.0f} 毫秒，"
                         f"{module_count(tree, arguments, env)} 个")
        middle = statistics.median(seconds[(name, now)])
        ratios = [f"{middle / statistics.median(seconds[(name, ref)]):.2f}" for ref in refs[:-1]]
        lines.append(f"| {name} | " + " | ".join(cells + ratios) + " |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--before", action="append", help="以前的版本（git 的 ref，可以给几次；默认 24bb3be 和 main）")
    parser.add_argument("--after", default="HEAD", help="现在的版本（默认 HEAD；没提交的改动不算）")
    parser.add_argument("--runs", type=int, default=20, help="每条命令、每个版本跑几次（默认 20）")
    parser.add_argument("--only", action="append", choices=["help", "version", "verify"],
                        help="只量这条命令（可以给几次；默认三条都量）")
    parser.add_argument("--bytecode", action="store_true", help="另外量一遍带 .pyc 的（先 compileall）")
    args = parser.parse_args(argv)
    runs = [name for name in commands(Path("x")) if not args.only or name.split()[0].lstrip("-") in args.only]
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"机器：{cores} 核；开始时负载 {os.getloadavg()[0]:.2f}；{sys.executable}", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="startup-") as folder:
        record = Path(folder) / "one.json"
        record.write_text(RECORD, encoding="utf-8")
        refs = list(dict.fromkeys([*(args.before or BEFORE), args.after]))
        trees = {ref: checkout(ref, Path(folder)) for ref in refs}
        modes = [False, True] if args.bytecode else [False]
        for bytecode in modes:
            env = environment(bytecode)
            if bytecode:
                for tree in trees.values():
                    compileall.compile_dir(str(tree / "sourced_answers"), quiet=1)
            seconds = measure(trees, runs, record, args.runs, env)
            print(f"\n{'带 .pyc（compileall 之后）' if bytecode else '不带 .pyc（PYTHONDONTWRITEBYTECODE=1）'}，"
                  f"每条命令每个版本 {args.runs} 次，墙上时间；结束时负载 {os.getloadavg()[0]:.2f}；"
                  f"目标 ≤ {TARGET * 1000:.0f} 毫秒\n")
            print("\n".join(table(trees, seconds, record, env)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
