"""核对的速度，和以前的版本在同一次运行里并排比（每个版本以子进程运行 --verify --json，量子进程用掉的 CPU 秒数，
交替运行、各取最少的一次）：

  1. 1 MB 的回答（bench.benchmark_check 的段落一直重复，其中一句引错了资料，所以还要算“可以 --fix 几处”）；
     目标：不比“最相关的一句”那条规则之前的版本（e1ba110）慢；
  2. 同样 1 MB、每句都对的回答；
  3. 10 MB 的语料（bench.benchmark_corpus 的记录，每条 5 个同样的网页）：每秒核对的记录数，--jobs 1；
     目标：不比这次改动之前（3a8c0a0，还是手写规则）少；
  4. 同样的语料，但每条记录的网页都不一样（每页末尾加上记录号）：最近用过的资料索引帮不上忙时的每秒记录数。

以前的版本用 git archive 从本仓库的历史里取出来（放在临时目录里，不改工作区）；没有 git 历史时只量现在的版本。
  python -m bench.benchmark_speed            # 全部（几分钟）
  python -m bench.benchmark_speed --quick    # 语料只用 1 MB
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.benchmark_check import SOURCES, answer_of_size
from bench.benchmark_corpus import full_records

HERE = Path(__file__).resolve().parent.parent
BEFORE_BEST_SENTENCE = "e1ba110"  # “最相关的一句”和数字矛盾规则之前（issue 23 说那时 1 MB 要 1.46 秒）
BEFORE_SCORE = "3a8c0a0"  # 支持分之前（手写规则）


def checkout(ref, folder):
    """把 ref 的文件取到 folder；取不到（没有 git、浅克隆）时返回 None。"""
    target = Path(folder) / ref
    target.mkdir()
    archive = subprocess.run(["git", "-C", str(HERE), "archive", ref], capture_output=True, check=False)
    if archive.returncode != 0:
        return None
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return target


def cpu_seconds(tree, path, *args):
    """在 tree 里以子进程运行 answer_with_sources.py --verify path --json，返回它用掉的 CPU 秒数（用户 + 系统）。"""
    command = [sys.executable, str(Path(tree) / "answer_with_sources.py"), "--verify", str(path), "--json", *args]
    with open(os.devnull, "wb") as sink:
        process = subprocess.Popen(command, cwd=tree, stdout=sink, stderr=sink)
        _, status, usage = os.wait4(process.pid, 0)
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"{tree}：--verify 失败（{command}）")
    return usage.ru_utime + usage.ru_stime


def side_by_side(trees, path, rounds, *args):
    """每个版本交替各跑 rounds 次，各取最少的 CPU 秒数：{名字: 秒}。"""
    best = {name: float("inf") for name in trees}
    for _ in range(rounds):
        for name, tree in trees.items():
            best[name] = min(best[name], cpu_seconds(tree, path, *args))
    return best


def write_answer(folder, passing):
    answer = answer_of_size(1_000_000)
    if passing:
        answer = answer.replace("Intel 型号 [2]", "Intel 型号 [1]")
    path = Path(folder) / ("pass.json" if passing else "fail.json")
    path.write_text(json.dumps({"answer": answer, "sources": [{"title": s.title, "text": s.text} for s in SOURCES]},
                               ensure_ascii=False), encoding="utf-8")
    return path


def write_corpus(folder, size, unique):
    text, count = full_records(size)
    if unique:
        lines = []
        for number, line in enumerate(text.splitlines()):
            record = json.loads(line)
            for source in record["sources"]:
                source["text"] += f"\n\n（本页编号 {number}）"
            lines.append(json.dumps(record, ensure_ascii=False))
        text = "\n".join(lines) + "\n"
    path = Path(folder) / ("unique.jsonl" if unique else "corpus.jsonl")
    path.write_text(text, encoding="utf-8")
    return path, count


def main(argv=None):
    parser = argparse.ArgumentParser(description="核对的速度，和以前的版本并排比。")
    parser.add_argument("--quick", action="store_true", help="语料只用 1 MB（默认 10 MB）")
    parser.add_argument("--rounds", type=int, default=3, help="每个版本跑几次，取最少的（默认 3）")
    args = parser.parse_args(argv)
    corpus_size = 1_000_000 if args.quick else 10_000_000
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        trees = {"现在": HERE}
        for ref in (BEFORE_BEST_SENTENCE, BEFORE_SCORE):
            tree = checkout(ref, folder)
            if tree is None:
                print(f"取不到 {ref}（没有 git 历史？）：只量现在的版本")
            else:
                trees[ref] = tree
        for passing, label in ((False, "1 MB 回答（一句引错，要算可修正几处）"), (True, "1 MB 回答（每句都对）")):
            seconds = side_by_side(trees, write_answer(folder, passing), args.rounds)
            shown = "，".join(f"{name} {value:.2f} 秒" for name, value in seconds.items())
            ratio = ""
            if BEFORE_BEST_SENTENCE in trees:
                share = seconds["现在"] / seconds[BEFORE_BEST_SENTENCE]
                ratio = f"；现在 / {BEFORE_BEST_SENTENCE} = {share:.2f}（目标 ≤ 1）"
            print(f"{label}：{shown}{ratio}", flush=True)
        for unique, label in ((False, "语料（每条同样 5 个网页）"), (True, "语料（每条的网页都不一样）")):
            path, count = write_corpus(folder, corpus_size, unique)
            seconds = side_by_side({name: tree for name, tree in trees.items() if name != BEFORE_BEST_SENTENCE},
                                   path, max(1, args.rounds - 1), "--jobs", "1")
            speed = {name: count / value for name, value in seconds.items()}
            shown = "，".join(f"{name} {value:.0f} 条/秒" for name, value in speed.items())
            ratio = (f"；现在 / {BEFORE_SCORE} = {speed['现在'] / speed[BEFORE_SCORE]:.2f}"
                     + ("（目标 ≥ 1）" if not unique else "") if BEFORE_SCORE in trees else "")
            print(f"{label} {corpus_size // 1_000_000} MB、{count} 条：{shown}{ratio}", flush=True)
    print(f"（全部用时 {time.perf_counter() - started:.0f} 秒；CPU 秒数是子进程的用户 + 系统时间）", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
