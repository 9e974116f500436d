"""两个版本的结论并排比：每个改动核对的提交都引用它的输出。

  python -m bench.compare_verdicts A B                 # A、B 是 git 的版本（提交、分支、HEAD~1）；“.” 是工作区
  python -m bench.compare_verdicts HEAD .              # 这次没提交的改动改变了哪些结论
  python -m bench.compare_verdicts HEAD . --all-rows   # 也列出拟合部分里变了的行（默认只数个数）

两个版本各以子进程运行自己的 answer_with_sources.py --verify - --json（和用户走的是同一条路），输入是：
  · CiteCheck dev 的每一条（bench/evaluate_citecheck.answer_of：陈述当作回答里的一句话，引用唯一的资料）；
  · 项目的例子回答 bench/example_answers.py（各种结构、各种伪装、小模型真会写的样子，中英文都有）。
打印：
  1. 结论或问题种类变了的每一条：例子回答全部列出；dev 的验证部分全部列出（它们就是要报告的）；
  2. 验证部分（bench/citecheck_split.py，从不用来调任何东西）上两个版本的准确率、召回、误报，各带 95% 自助法区间；
  3. 两个版本在验证部分上的配对检验（McNemar 精确检验：只看两个版本判得不一样的行）和差值的区间；
  4. 每一种问题在验证部分上标出了多少条有依据、多少条没依据的（确定的规则就是凭这个看准不准）；
  5. 拟合部分上的同样数字，标明“样本内”：规则和切点是在这一部分上定的，这些数字不是没见过的数据上的结果。
"""
import argparse
import json
import math
import random
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from bench.citecheck_split import DEFAULT_DATA, load, validation_ids
from bench.evaluate_citecheck import verify_line
from bench.example_answers import EXAMPLES

HERE = Path(__file__).resolve().parent.parent
WORKTREE = "."
BOOTSTRAP = 2000
BOOTSTRAP_SEED = 7


def tree_of(revision: str, folder: Path) -> Path:
    """revision 的文件：工作区就是仓库本身，别的版本用 git archive 取到 folder 里（不动工作区）。"""
    if revision == WORKTREE:
        return HERE
    target = folder / revision.replace("/", "_").replace("~", "-").replace("^", "-")
    target.mkdir()
    archive = subprocess.run(["git", "-C", str(HERE), "archive", revision], capture_output=True, check=False)
    if archive.returncode != 0:
        raise SystemExit(f"取不到版本 {revision}：{archive.stderr.decode(errors='replace').strip()}")
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return target


def verdicts(tree: Path, lines: Sequence[str]) -> list[dict]:
    """在 tree 里运行 --verify - --json：每一行输入的 (通过？, 问题种类)。"""
    result = subprocess.run([sys.executable, str(tree / "answer_with_sources.py"), "--verify", "-", "--json"],
                            input="\n".join(lines) + "\n", capture_output=True, text=True, encoding="utf-8",
                            cwd=tree, check=False)
    if result.returncode not in (0, 1):
        raise SystemExit(f"{tree}：--verify 失败（退出码 {result.returncode}）：{result.stderr[-2000:]}")
    records = [json.loads(line) for line in result.stdout.splitlines()]
    if len(records) != len(lines):
        raise SystemExit(f"{tree}：{len(lines)} 行输入只得到 {len(records)} 条记录")
    return [{"passed": record["passed"], "kinds": sorted({p["kind"] for p in record["problems"]})}
            for record in records]


def example_lines() -> tuple[list[str], list[str]]:
    """例子回答：(名字, --verify 的一行)。"""
    return ([example["id"] for example in EXAMPLES],
            [json.dumps({"answer": example["answer"], "sources": example["sources"]}, ensure_ascii=False)
             for example in EXAMPLES])


# ---------- 指标和区间 ----------

def measures(labels: Sequence[int], flagged: Sequence[bool]) -> dict[str, float]:
    """误报（有依据的被标出）、召回（没依据的被标出）、准确率。"""
    supported = [f for label, f in zip(labels, flagged, strict=True) if label == 1]
    unsupported = [f for label, f in zip(labels, flagged, strict=True) if label == 0]
    correct = sum(f != (label == 1) for label, f in zip(labels, flagged, strict=True))
    return {"false_alarm": sum(supported) / max(len(supported), 1),
            "recall": sum(unsupported) / max(len(unsupported), 1),
            "accuracy": correct / max(len(labels), 1)}


def bootstrap(labels: Sequence[int], *flag_sets: Sequence[bool], rounds: int = BOOTSTRAP,
              seed: int = BOOTSTRAP_SEED) -> list[dict[str, list[float]]]:
    """按行有放回地重抽 rounds 次（固定的种子，几个版本用同一组重抽）：每个版本每个指标的全部重抽值。"""
    generator = random.Random(seed)
    size = len(labels)
    samples: list[dict[str, list[float]]] = [{"false_alarm": [], "recall": [], "accuracy": []} for _ in flag_sets]
    for _ in range(rounds):
        picks = [generator.randrange(size) for _ in range(size)]
        drawn = [labels[i] for i in picks]
        for found, flags in zip(samples, flag_sets, strict=True):
            for name, value in measures(drawn, [flags[i] for i in picks]).items():
                found[name].append(value)
    return samples


def interval(values: Sequence[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return ordered[int(0.025 * (len(ordered) - 1))], ordered[int(0.975 * (len(ordered) - 1))]


def mcnemar(labels: Sequence[int], first: Sequence[bool], second: Sequence[bool]) -> tuple[int, int, float]:
    """McNemar 精确检验：(只有 A 判对的行数, 只有 B 判对的行数, 双侧 p 值)。"""
    only_first = sum((a != (y == 1)) and (b == (y == 1)) for y, a, b in zip(labels, first, second, strict=True))
    only_second = sum((a == (y == 1)) and (b != (y == 1)) for y, a, b in zip(labels, first, second, strict=True))
    n = only_first + only_second
    if n == 0:
        return 0, 0, 1.0
    tail = sum(math.comb(n, k) for k in range(min(only_first, only_second) + 1)) / 2 ** n
    return only_first, only_second, min(1.0, 2 * tail)


def percent(value: float) -> str:
    return f"{value:.1%}"


def report_part(name: str, labels: Sequence[int], flags: dict[str, list[bool]], rounds: int) -> None:
    """一部分数据上每个版本的指标和区间，以及两个版本的配对比较。"""
    revisions = list(flags)
    samples = bootstrap(labels, *flags.values(), rounds=rounds)
    print(f"\n{name}（{len(labels)} 条：有依据 {sum(labels)}、没依据 {len(labels) - sum(labels)}；"
          f"95% 区间是按行重抽 {rounds} 次的自助法）")
    for revision, found in zip(revisions, samples, strict=True):
        point = measures(labels, flags[revision])
        shown = "，".join(f"{title} {percent(point[key])} [{percent(interval(found[key])[0])}, "
                         f"{percent(interval(found[key])[1])}]"
                         for key, title in (("false_alarm", "误报"), ("recall", "召回"), ("accuracy", "准确率")))
        print(f"  {revision:<12} {shown}")
    if len(revisions) == 2:
        first, second = (flags[r] for r in revisions)
        only_first, only_second, p_value = mcnemar(labels, first, second)
        differences = []
        for key, title in (("false_alarm", "误报"), ("recall", "召回"), ("accuracy", "准确率")):
            delta = [b - a for a, b in zip(samples[0][key], samples[1][key], strict=True)]
            point = measures(labels, second)[key] - measures(labels, first)[key]
            low, high = interval(delta)
            differences.append(f"{title} {point:+.1%} [{low:+.1%}, {high:+.1%}]")
        print(f"  差（{revisions[1]} − {revisions[0]}）：" + "，".join(differences))
        print(f"  McNemar：只有 {revisions[0]} 判对 {only_first} 条，只有 {revisions[1]} 判对 {only_second} 条，"
              f"双侧精确 p = {p_value:.3g}")


def by_kind(labels: Sequence[int], records: Sequence[dict]) -> str:
    """每种问题标出的有依据 / 没依据的条数（一条可以有几种问题）。"""
    supported = Counter(kind for label, record in zip(labels, records, strict=True) if label == 1
                        for kind in record["kinds"])
    unsupported = Counter(kind for label, record in zip(labels, records, strict=True) if label == 0
                          for kind in record["kinds"])
    kinds = sorted(set(supported) | set(unsupported), key=lambda k: -(supported[k] + unsupported[k]))
    return "；".join(f"{kind} 有依据 {supported[kind]}、没依据 {unsupported[kind]}" for kind in kinds) or "无"


def changed_rows(names: Sequence[str], first: Sequence[dict], second: Sequence[dict]) -> list[str]:
    shown = []
    for name, a, b in zip(names, first, second, strict=True):
        if a != b:
            before = "通过" if a["passed"] else "+".join(a["kinds"])
            after = "通过" if b["passed"] else "+".join(b["kinds"])
            shown.append(f"  {name}: {before} → {after}")
    return shown


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="两个版本的结论并排比（CiteCheck dev 和项目的例子回答）。")
    parser.add_argument("first", metavar="A", help="git 的版本，或 . 表示工作区")
    parser.add_argument("second", metavar="B", help="git 的版本，或 . 表示工作区")
    parser.add_argument("--data", default=str(DEFAULT_DATA), help="CiteCheck dev（默认 shared 里的）")
    parser.add_argument("--rounds", type=int, default=BOOTSTRAP, help=f"自助法重抽几次（默认 {BOOTSTRAP}）")
    parser.add_argument("--all-rows", action="store_true", help="也列出拟合部分里变了的每一行")
    args = parser.parse_args(argv)
    rows = load(Path(args.data))
    held = validation_ids()
    example_names, examples = example_lines()
    dev_lines = [verify_line(row) for row in rows]
    results: dict[str, list[dict]] = {}
    with tempfile.TemporaryDirectory() as folder:
        for revision in (args.first, args.second):
            label = revision if revision != WORKTREE else "工作区"
            results[label] = verdicts(tree_of(revision, Path(folder)), dev_lines + examples)
    (first_name, first), (second_name, second) = results.items()
    count = len(rows)
    print(f"例子回答（bench/example_answers.py，{len(examples)} 条）里结论或问题种类变了的：")
    print("\n".join(changed_rows(example_names, first[count:], second[count:])) or "  没有")
    parts = {"验证部分": [i for i, row in enumerate(rows) if row["idx"] in held],
             "拟合部分（样本内：规则和切点在这里定）": [i for i, row in enumerate(rows) if row["idx"] not in held]}
    for name, members in parts.items():
        names = [f"idx {rows[i]['idx']}（标签 {'有依据' if rows[i]['label'] else '没依据'}）" for i in members]
        changes = changed_rows(names, [first[i] for i in members], [second[i] for i in members])
        print(f"\n{name}里结论或问题种类变了的 {len(changes)} 条" + ("：" if changes else ""))
        if changes and (args.all_rows or name == "验证部分"):
            print("\n".join(changes))
        labels = [rows[i]["label"] for i in members]
        report_part(name, labels, {first_name: [not first[i]["passed"] for i in members],
                                   second_name: [not second[i]["passed"] for i in members]}, args.rounds)
        for revision, records in ((first_name, first), (second_name, second)):
            print(f"  {revision} 按问题种类：{by_kind(labels, [records[i] for i in members])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
