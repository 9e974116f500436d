"""核对的速度，和以前的版本在同一次运行里并排比：每个版本以子进程运行 --verify --json，量用户等的墙上时间，
交替运行、各取最少的一次（机器忙的时候多跑几轮）。子进程的环境里去掉 PYTHONDONTWRITEBYTECODE、先各跑一次写好
.pyc：用户的机器上就是这样。

  1. 启动：--help 和核对一条一句话的记录；目标 --help ≤ 0.2 秒；
  2. 1 MB、每句都对的回答，减去同一个版本 --help 的时间（“启动之后”）：目标 ≤ 0.55 秒，
     并排的是两轮之前的 main（24bb3be）和这一轮改动之前（147df5c，对齐之前）；再量一遍环境里有秘塔的密钥时
     （用户的机器上就是这样：每道门写出去之前都要找它）；
  3. 1 MB 的回答（bench.benchmark_check 的段落一直重复，其中一句引错了资料，所以还要算“可以 --fix 几处”）；
  4. 没有引用的长列表（bench.benchmark_check 的 many_list_items）2 万项、20 万项：目标 20 万项 10 秒以内；
  5. 10 MB 的语料（bench.benchmark_corpus 的记录，每条 5 个同样的网页）：每秒核对的记录数，--jobs 1；
     目标：不比支持分之前（3a8c0a0，还是手写规则）少；
  6. 同样的语料，但每条记录的网页都不一样（每页末尾加上记录号）：最近用过的资料索引帮不上忙时的每秒记录数。

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

from bench.benchmark_check import SOURCES, answer_of_size, many_list_items
from bench.benchmark_corpus import full_records

HERE = Path(__file__).resolve().parent.parent
TWO_ROUNDS_AGO = "24bb3be"  # 两轮之前的 main：那时 1 MB 启动之后 0.50–0.62 秒，--help 0.17 秒
BEFORE_ALIGNMENT = "147df5c"  # 这一轮改动之前：对齐、证据的位置、只导入要用的之前
BEFORE_SCORE = "3a8c0a0"  # 支持分之前（手写规则）
TARGET_AFTER_START = 0.55
TARGET_HELP = 0.2


def checkout(ref, folder):
    """把 ref 的文件取到 folder；取不到（没有 git、浅克隆）时返回 None。"""
    target = Path(folder) / ref
    target.mkdir()
    archive = subprocess.run(["git", "-C", str(HERE), "archive", ref], capture_output=True, check=False)
    if archive.returncode != 0:
        return None
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return target


# 用户的环境里有秘塔的密钥：每一道门写出去之前都要找它（这个值是假的，只为量时间）
FAKE_KEY = "mk-" + "0123456789ABCDEF" * 2
KEY_IN_ENVIRONMENT = {"on": False}


def child_environment():
    """子进程的环境：和用户的机器一样写 .pyc（有的 CI 设了 PYTHONDONTWRITEBYTECODE，每次启动都要重新编译）；
    量“环境里有密钥”时放进 METASO_API_KEY，否则去掉。"""
    environment = dict(os.environ)
    environment.pop("PYTHONDONTWRITEBYTECODE", None)
    environment.pop("METASO_API_KEY", None)
    if KEY_IN_ENVIRONMENT["on"]:
        environment["METASO_API_KEY"] = FAKE_KEY
    return environment


def seconds_of(tree, *args, limit=None):
    """在 tree 里以子进程运行 answer_with_sources.py args，返回墙上秒数（用户等的时间）。
    limit：墙上时间超过这么多秒就结束它，返回 None（以前的版本在有的输入上是平方级的）。"""
    command = [sys.executable, str(Path(tree) / "answer_with_sources.py"), *args]
    with open(os.devnull, "wb") as sink:
        started = time.perf_counter()
        process = subprocess.Popen(command, cwd=tree, stdout=sink, stderr=sink, env=child_environment())
        try:
            code = process.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            return None
        elapsed = time.perf_counter() - started
    if code not in (0, 1):
        raise SystemExit(f"{tree}：{command} 失败（退出码 {code}）")
    return elapsed


def verify_seconds(tree, path, *args, limit=None):
    return seconds_of(tree, "--verify", str(path), "--json", *args, limit=limit)


def help_seconds_of(tree, limit=None):
    return seconds_of(tree, "--help", limit=limit)


def side_by_side(trees, rounds, *args, limit=None, measure=verify_seconds):
    """每个版本交替各跑 rounds 次，各取最少的秒数：{名字: 秒}（超时的是 None，不再跑它）。"""
    best = {name: float("inf") for name in trees}
    for _ in range(rounds):
        for name, tree in trees.items():
            if best[name] is None:
                continue
            seconds = measure(tree, *args, limit=limit)
            best[name] = None if seconds is None else min(best[name], seconds)
    return best


def shown(seconds, limit):
    return "，".join(f"{name} " + (f"超过 {limit} 秒（停下了）" if value is None else f"{value:.2f} 秒")
                     for name, value in seconds.items())


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


def write_record(folder, name, record):
    path = Path(folder) / name
    path.write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")
    return path


def main(argv=None):
    parser = argparse.ArgumentParser(description="核对的速度，和以前的版本并排比。")
    parser.add_argument("--quick", action="store_true", help="语料只用 1 MB（默认 10 MB）")
    parser.add_argument("--rounds", type=int, default=3, help="每个版本跑几次，取最少的（默认 3）")
    parser.add_argument("--answer-only", action="store_true", help="只量启动和 1 MB 每句都对的回答（1、2）")
    parser.add_argument("--limit", type=int, default=120, help="以前的版本一次超过这么多秒就停下（默认 120）")
    args = parser.parse_args(argv)
    corpus_size = 1_000_000 if args.quick else 10_000_000
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        trees = {"现在": HERE}
        for ref in (TWO_ROUNDS_AGO, BEFORE_ALIGNMENT, BEFORE_SCORE):
            tree = checkout(ref, folder)
            if tree is None:
                print(f"取不到 {ref}（没有 git 历史？）：只量现在的版本")
            else:
                trees[ref] = tree
        answers = {name: tree for name, tree in trees.items() if name != BEFORE_SCORE}
        tiny = write_record(folder, "tiny.json", {"answer": "家用 NAS 至少选两盘位 [1]。",
                                                   "sources": [{"text": "家用 NAS 至少选两盘位。"}]})
        side_by_side(trees, 1, tiny)  # 各跑一次：写好 .pyc
        help_seconds = side_by_side(answers, args.rounds * 3, measure=help_seconds_of)
        start_up = side_by_side(answers, args.rounds * 3, tiny)
        print("启动：--help " + "，".join(f"{name} {value:.2f} 秒" for name, value in help_seconds.items())
              + f"（目标 ≤ {TARGET_HELP} 秒）；核对一条一句话的记录 "
              + "，".join(f"{name} {value:.2f} 秒" for name, value in start_up.items()), flush=True)
        total = side_by_side(answers, args.rounds, write_answer(folder, True))
        after = {name: total[name] - help_seconds[name] for name in answers}
        print("1 MB 回答（每句都对），减去 --help："
              + "，".join(f"{name} {value:.2f} 秒" for name, value in after.items())
              + f"（目标 ≤ {TARGET_AFTER_START} 秒"
              + (f"，现在 / {TWO_ROUNDS_AGO} = {after['现在'] / after[TWO_ROUNDS_AGO]:.2f}"
                 if TWO_ROUNDS_AGO in after else "") + "）", flush=True)
        KEY_IN_ENVIRONMENT["on"] = True
        keyed = side_by_side(answers, args.rounds, write_answer(folder, True))
        KEY_IN_ENVIRONMENT["on"] = False
        print("  同样，环境里有秘塔的密钥（每道门写出去之前都要找它）："
              + "，".join(f"{name} {keyed[name] - help_seconds[name]:.2f} 秒" for name in answers), flush=True)
        if args.answer_only:
            return 0
        print("1 MB 回答（一句引错，要算可修正几处）："
              + shown(side_by_side(answers, args.rounds, write_answer(folder, False), limit=args.limit), args.limit),
              flush=True)
        for count in (20_000, 200_000):
            path = write_record(folder, f"list{count}.json", many_list_items(count))
            seconds = side_by_side(answers, 1, path, limit=args.limit)
            print(f"没有引用的列表 {count} 项：{shown(seconds, args.limit)}"
                  + ("（目标 ≤ 10 秒）" if count == 200_000 else ""), flush=True)
        for unique, label in ((False, "语料（每条同样 5 个网页）"), (True, "语料（每条的网页都不一样）")):
            path, count = write_corpus(folder, corpus_size, unique)
            seconds = side_by_side({name: tree for name, tree in trees.items()
                                    if name in ("现在", BEFORE_ALIGNMENT, BEFORE_SCORE)},
                                   max(1, args.rounds - 1), path, "--jobs", "1")
            speed = {name: count / value for name, value in seconds.items()}
            shown_speed = "，".join(f"{name} {value:.0f} 条/秒" for name, value in speed.items())
            ratio = (f"；现在 / {BEFORE_SCORE} = {speed['现在'] / speed[BEFORE_SCORE]:.2f}"
                     + ("（目标 ≥ 1）" if not unique else "") if BEFORE_SCORE in trees else "")
            print(f"{label} {corpus_size // 1_000_000} MB、{count} 条：{shown_speed}{ratio}", flush=True)
    print(f"（全部用时 {time.perf_counter() - started:.0f} 秒；都是墙上时间）", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
