"""启动时按 Ctrl-C 会出报错堆栈的那段时间（窗口）：从解释器装上它自己的 SIGINT 处理（从这一刻起 Ctrl-C 是
KeyboardInterrupt 和报错堆栈）到入口装上本项目的处理（从这一刻起是“已中断”和 130）。和以前的版本在同一次运行里
交替着量，并排打印中位数、最少的一次和比值（毫秒）。

接住启动期间信号的那几行以前在每个入口文件里各抄一份（只用标准库，第一行就装上），现在在包的根
sourced_answers/__init__.py 里只写一次：顶层的入口文件要先导入它，窗口就多了导入它的那一点。这里量那一点有多少。

  python -m bench.benchmark_interrupt_window                     # 以前 = main，现在 = HEAD，每个入口 100 次
  python -m bench.benchmark_interrupt_window --before 6cd48cf --runs 200
  python -m bench.benchmark_interrupt_window --bytecode          # 另外量一遍带 .pyc 的（像 pip 装好的包）

怎么量：起一个入口（--version），不停地读 /proc/PID/status 的 SigCgt（这个进程接住了哪些信号）。解释器自己只接
SIGINT；本项目的处理同时接 SIGINT、SIGTERM、SIGHUP。所以 SIGINT 出现的那一刻是窗口的开始，SIGTERM 出现的那一刻
是窗口的结束。只在 Linux 上能量（要 /proc）。读一次 /proc 要几十微秒，机器忙时读的进程也会被挤开：一次的误差
是零点几毫秒，次数多了看中位数；两个时刻落在同一次读里的（窗口太短或者被挤开了）不算。
每个版本用 git archive 取到一个临时目录（bench/benchmark_first_answer.py 的 checkout），在那个目录里以
python answer_with_sources.py 和 python -m sourced_answers 运行，用的是它自己的 sourced_answers。
"""
import argparse
import compileall
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.benchmark_first_answer import checkout
from bench.benchmark_startup import environment

INTERPRETER_ONLY = 1 << (signal.SIGINT - 1)
PROJECT = 1 << (signal.SIGTERM - 1)


def doors(tree: Path) -> dict[str, list[str]]:
    return {"python answer_with_sources.py": [sys.executable, str(tree / "answer_with_sources.py"), "--version"],
            "python -m sourced_answers": [sys.executable, "-m", "sourced_answers", "--version"]}


def caught(pid: int) -> int | None:
    """这个进程接住的信号（SigCgt 的位）；进程没了是 None。"""
    try:
        with open(f"/proc/{pid}/status", "rb") as handle:
            for line in handle:
                if line.startswith(b"SigCgt:"):
                    return int(line.split()[1], 16)
    except OSError:
        return None
    return None


def ctrl_c_as_in_a_terminal() -> None:
    """在后台运行时 shell 让子进程忽略 SIGINT，解释器就不装它的处理，量不到窗口的开始。"""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def window(command: list[str], tree: Path, env: dict[str, str]) -> tuple[float, float] | None:
    """(窗口开始, 窗口结束)，从起进程算起的秒数；两个时刻落在同一次读里、或者进程先结束了是 None。"""
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=tree, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, preexec_fn=ctrl_c_as_in_a_terminal)
    opened = closed = None
    try:
        while closed is None:
            mask = caught(process.pid)
            now = time.perf_counter()
            if mask is None or process.poll() is not None:
                break
            if mask & PROJECT:
                closed = now
            elif mask & INTERPRETER_ONLY and opened is None:
                opened = now
    finally:
        process.wait()
    if opened is None or closed is None:
        return None
    return opened - started, closed - started


def measure(trees: dict[str, Path], rounds: int, env: dict[str, str]) -> dict[tuple[str, str], list[tuple]]:
    """每个入口：几个版本交替各跑 rounds 次（先热身一次，不算；每一轮里的先后轮换）。"""
    found: dict[tuple[str, str], list[tuple]] = {}
    for name in doors(Path()):
        for tree in trees.values():
            window(doors(tree)[name], tree, env)
        for turn in range(rounds):
            order = list(trees.items())
            shift = turn % len(order)
            for ref, tree in order[shift:] + order[:shift]:
                measured = window(doors(tree)[name], tree, env)
                found.setdefault((name, ref), [])
                if measured:
                    found[(name, ref)].append(measured)
    return found


def table(refs: list[str], found: dict[tuple[str, str], list[tuple]], rounds: int) -> list[str]:
    now = refs[-1]
    lines = ["| 入口 | " + " | ".join(f"{ref}：窗口 中位数 / 最少（量到几次），装上处理的时刻" for ref in refs)
             + " | " + " | ".join(f"{now} / {ref}（窗口的中位数）" for ref in refs[:-1]) + " |",
             "|---" * (2 * len(refs)) + "|"]
    for name in dict.fromkeys(name for name, _ in found):
        cells = []
        for ref in refs:
            values = found[(name, ref)]
            if not values:
                cells.append(f"没量到（0/{rounds}）")
                continue
            widths = [closed - opened for opened, closed in values]
            cells.append(f"{statistics.median(widths) * 1000:.2f} / {min(widths) * 1000:.2f} 毫秒"
                         f"（{len(values)}/{rounds}），{statistics.median(c for _, c in values) * 1000:.1f} 毫秒")
        ratios = []
        for ref in refs[:-1]:
            if found[(name, ref)] and found[(name, now)]:
                middle = [statistics.median(c - o for o, c in found[(name, key)]) for key in (now, ref)]
                ratios.append(f"{middle[0] / middle[1]:.3f}")
            else:
                ratios.append("—")
        lines.append(f"| {name} | " + " | ".join(cells + ratios) + " |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--before", action="append", help="以前的版本（git 的 ref，可以给几次；默认 main）")
    parser.add_argument("--after", default="HEAD", help="现在的版本（默认 HEAD；没提交的改动不算）")
    parser.add_argument("--runs", type=int, default=100, help="每个入口、每个版本跑几次（默认 100）")
    parser.add_argument("--bytecode", action="store_true", help="另外量一遍带 .pyc 的（先 compileall）")
    args = parser.parse_args(argv)
    if not Path(f"/proc/{os.getpid()}/status").exists():
        raise SystemExit("要 Linux 的 /proc 才量得到（看进程接住了哪些信号）")
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"机器：{cores} 核；开始时负载 {os.getloadavg()[0]:.2f}；{sys.executable}", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="interrupt-window-") as folder:
        refs = list(dict.fromkeys([*(args.before or ["main"]), args.after]))
        trees = {ref: checkout(ref, Path(folder)) for ref in refs}
        for bytecode in [False, True] if args.bytecode else [False]:
            env = environment(bytecode)
            if bytecode:
                for tree in trees.values():
                    compileall.compile_dir(str(tree / "sourced_answers"), quiet=1)
            found = measure(trees, args.runs, env)
            print(f"\n{'带 .pyc（compileall 之后）' if bytecode else '不带 .pyc（PYTHONDONTWRITEBYTECODE=1）'}，"
                  f"每个入口每个版本 {args.runs} 次；结束时负载 {os.getloadavg()[0]:.2f}。"
                  "窗口：解释器装上它的 SIGINT 处理到入口装上本项目的处理；时刻从起进程算起\n")
            print("\n".join(table(refs, found, args.runs)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
