"""README 的第一条命令（bash quickstart.sh "家用 NAS 怎么选"）在没有 Ollama 的机器上用自带的小模型回答，要多久：
以前的版本和现在的版本在同一次运行里交替跑，并排打印用时和比值（目标：中文问题含安装 ≤ 20 秒，2 核机器）。

  python -m bench.benchmark_first_answer                        # 以前 = main，现在 = HEAD
  python -m bench.benchmark_first_answer --before 24bb3be --runs 5

每个版本用 git archive 取到一个临时目录（不改工作区），像新用户一样在里面运行 bash quickstart.sh：
  · 第一次（含安装）：建 .venv、装依赖、装自带的模型，再回答 README 的中文问题——README 里写的就是这个数；
  · 之后（已经装好）：中文问题和英文问题各跑 --runs 次，两个版本交替（机器忙闲的变化两边都摊到）。
没有秘塔密钥（用内置的模拟秘塔），OLLAMA_URL 指向没人听的端口（一定用自带的模型）。第一次装要下载的包从 pip 的
缓存里来：先运行一遍本脚本，缓存就热了。只访问 127.0.0.1（和 pip 的源）。

PYTHONPATH 设成检出的目录：较早的版本在没有装进 .venv 的检出里起不了自带模型的子进程
（“No module named sourced_answers”，子进程在包自己的目录里运行），这样两边都能跑，量的是其余的部分。
"""
import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
QUESTIONS = {"中文": "家用 NAS 怎么选", "英文": "How should I choose a home NAS?"}


def checkout(ref: str, folder: Path) -> Path:
    """用 git archive 把 ref 那一版取到 folder/ref（不碰工作区，不写 .git）。"""
    target = folder / ref.replace("/", "_")
    target.mkdir()
    archive = subprocess.run(["git", "-C", str(HERE), "archive", ref], capture_output=True, check=False)
    if archive.returncode != 0:
        raise SystemExit(f"取不出 {ref}：{archive.stderr.decode(errors='replace').strip()}")
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return target


def environment(cache: Path, tree: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("METASO_", "ANS_", "OLLAMA_", "PYTHON"))}
    env.update(OLLAMA_URL="http://127.0.0.1:9", XDG_CACHE_HOME=str(cache), PYTHONIOENCODING="utf-8",
               PYTHONPATH=str(tree))
    return env


def first_answer(tree: Path, question: str, env: dict[str, str]) -> tuple[float, float, str]:
    """在 tree 里运行一次 bash quickstart.sh 问题：返回 (墙上时间, 子进程用掉的 CPU 秒, 标准错误)。"""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    done = subprocess.run(["bash", "quickstart.sh", question], cwd=tree, env=env, capture_output=True, text=True,
                          encoding="utf-8", errors="replace", timeout=900, stdin=subprocess.DEVNULL)
    took = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{tree.name}：bash quickstart.sh 退出码 {done.returncode}\n{done.stderr[-2000:]}")
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return took, cpu, done.stderr


def load() -> str:
    return f"{os.getloadavg()[0]:.2f}"


def row(name: str, before: list[float], after: list[float]) -> str:
    def shown(values: list[float]) -> str:
        middle = statistics.median(values)
        spread = f"（{min(values):.1f}–{max(values):.1f}）" if len(values) > 1 else ""
        return f"{middle:.1f} 秒{spread}"
    ratio = statistics.median(after) / statistics.median(before)
    return f"| {name} | {shown(before)} | {shown(after)} | {ratio:.2f} |"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default="main", help="以前的版本（git 的 ref，默认 main）")
    parser.add_argument("--after", default="HEAD", help="现在的版本（默认 HEAD；没提交的改动不算）")
    parser.add_argument("--runs", type=int, default=3, help="装好之后每个问题跑几次（默认 3）")
    parser.add_argument("--keep", action="store_true", help="留下临时目录（看 .venv 和输出）")
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="first-answer-"))
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"机器：{cores} 核；开始时负载 {load()}；临时目录 {folder}", file=sys.stderr)
    try:
        trees = {ref: checkout(ref, folder) for ref in (args.before, args.after)}
        wall: dict[tuple[str, str], list[float]] = {}
        cpu: dict[tuple[str, str], list[float]] = {}

        def measure(ref: str, what: str, question: str) -> None:
            took, used, err = first_answer(trees[ref], question, environment(folder / "cache", trees[ref]))
            wall.setdefault((ref, what), []).append(took)
            cpu.setdefault((ref, what), []).append(used)
            threads = next((line for line in err.splitlines() if line.startswith("本机模型服务在")), "")
            print(f"  {ref} · {what}：{took:.1f} 秒（CPU {used:.1f} 秒，负载 {load()}）{threads[threads.find('（'):]}",
                  file=sys.stderr)

        for ref in trees:  # 第一次：含建 .venv 和安装
            measure(ref, "中文问题，第一次（含安装）", QUESTIONS["中文"])
        for run in range(args.runs):
            order = list(trees) if run % 2 == 0 else list(reversed(trees))  # 交替先后
            for language, question in QUESTIONS.items():
                for ref in order:
                    measure(ref, f"{language}问题，已经装好", question)
        print(f"\n结束时负载 {load()}。用时是墙上时间（中位数，括号里是最快和最慢）；CPU 秒是子进程一共用掉的。\n")
        print(f"| 测量 | 以前（{args.before}） | 现在（{args.after}） | 现在 / 以前 |")
        print("|---|---|---|---|")
        for what in dict.fromkeys(what for _, what in wall):
            print(row(what, wall[(args.before, what)], wall[(args.after, what)]))
        for what in dict.fromkeys(what for _, what in cpu):
            print(row(f"{what}，CPU", cpu[(args.before, what)], cpu[(args.after, what)]))
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
