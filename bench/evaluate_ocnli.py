"""在 OCNLI（../shared/ocnli/train.10k.jsonl）上量“照抄了资料、只换了一处”的规则：矛盾抓到了多少，蕴涵碰了多少。

OCNLI 的许可是 CC BY-NC 2.0：只拿来量和写规则，不进仓库，也不拿来拟合随包的权重（权重只在 CiteCheck 上拟合）。
数据出处：Hu et al., 2020, "OCNLI: Original Chinese Natural Language Inference"（CLUE）。

  · 每一对读成回答里的一句话（hypothesis，句末引用 [1]）和它引的资料（premise）；标签是 “-” 的不要；
  · 引用核对要管的是照抄了资料的那些对：hypothesis 去掉标点和空白之后，至少 70% 的字二元组出现在 premise 里，
    而且至少有 4 个二元组；
  · 按 id 用固定的种子分成两半，一次分好、不再改：写规则的一半（write）和只报告的一半（report）。
    规则、词表只看 write；report 只在最后量一次，写进文档。
打印：每一半里矛盾、蕴涵、中立各有多少被标出（整个核对，不只是新规则），按问题种类分，带 95% 自助法区间；
以及新规则（说反了、反义词、名字、同一处换了数）各自标出的对里，矛盾占几成（精确度）。

  python -m bench.evaluate_ocnli --part write      # 写规则时看的一半
  python -m bench.evaluate_ocnli --part report     # 只报告的一半（不要照着它改规则）
"""
import argparse
import json
import random
import re
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.compare_verdicts import interval
from sourced_answers.checker import Source, check_answer

HERE = Path(__file__).resolve().parent.parent
DEFAULT_DATA = HERE.parent / "shared" / "ocnli" / "train.10k.jsonl"
SPLIT_SEED = 20261206
COPY_SHARE = 0.7
MIN_BIGRAMS = 4
BOOTSTRAP = 2000
BOOTSTRAP_SEED = 7
NOT_TEXT = re.compile(r"[\s\W_]+")
LABELS = ("contradiction", "entailment", "neutral")
NEW_KINDS = ("polarity_mismatch", "opposite_mismatch", "name_mismatch", "number_mismatch")


def bigrams(text: str) -> list[str]:
    text = NOT_TEXT.sub("", text)
    return [text[i:i + 2] for i in range(len(text) - 1)]


def copies(hypothesis: str, premise: str) -> bool:
    """hypothesis 照抄了 premise：它的字二元组至少 COPY_SHARE 在 premise 里，而且至少有 MIN_BIGRAMS 个。"""
    found = bigrams(hypothesis)
    known = set(bigrams(premise))
    return len(found) >= MIN_BIGRAMS and sum(pair in known for pair in found) / len(found) >= COPY_SHARE


def load(path: Path) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    return [row for row in rows if row.get("label") in LABELS]


def split(rows: Sequence[dict[str, Any]], part: str) -> list[dict[str, Any]]:
    """照抄了 premise 的对里属于 part（write 或 report）的那一半：按 id 用 SPLIT_SEED 打乱，前一半是 write。"""
    ids = sorted(row["id"] for row in rows)
    random.Random(SPLIT_SEED).shuffle(ids)
    write = set(ids[:len(ids) // 2])
    wanted = part == "write"
    return [row for row in rows if copies(row["sentence2"], row["sentence1"]) and (row["id"] in write) == wanted]


def kinds_of(row: dict[str, Any]) -> set[str]:
    """这一对当作回答里的一句话核对出来的问题种类（通过时是空的）。"""
    answer = row["sentence2"].rstrip("。.！!？?") + " [1]。"
    return {problem.kind for problem in check_answer(answer, [Source(text=row["sentence1"])]).problems}


def share_interval(flags: Sequence[bool]) -> tuple[float, float, float]:
    """标出的比例和它的 95% 自助法区间。"""
    generator = random.Random(BOOTSTRAP_SEED)
    size = len(flags)
    if not size:
        return 0.0, 0.0, 0.0
    draws = [sum(flags[generator.randrange(size)] for _ in range(size)) / size for _ in range(BOOTSTRAP)]
    low, high = interval(draws)
    return sum(flags) / size, low, high


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="OCNLI 上照抄了资料的对：矛盾抓到多少，蕴涵碰了多少。")
    parser.add_argument("--part", choices=("write", "report"), default="write",
                        help="write：写规则时看的一半（默认）；report：只报告的一半")
    parser.add_argument("--data", default=str(DEFAULT_DATA), help="train.10k.jsonl（默认 shared 里的）")
    args = parser.parse_args(argv)
    path = Path(args.data)
    if not path.is_file():
        print(f"找不到 {path}：OCNLI 不随仓库发布，放在 ../shared/ocnli/ 里", file=sys.stderr)
        return 2
    rows = split(load(path), args.part)
    found = [kinds_of(row) for row in rows]
    counts = Counter(row["label"] for row in rows)
    print(f"OCNLI train.10k，{'写规则的一半' if args.part == 'write' else '只报告的一半'}：照抄了 premise 的 "
          f"{len(rows)} 对（矛盾 {counts['contradiction']}、蕴涵 {counts['entailment']}、中立 {counts['neutral']}）")
    for label in LABELS:
        flags = [bool(kinds) for row, kinds in zip(rows, found, strict=True) if row["label"] == label]
        share, low, high = share_interval(flags)
        print(f"  {label:<14} 标出 {sum(flags):>3} / {len(flags):<3} = {share:.1%} [{low:.1%}, {high:.1%}]")
    print("新规则各自标出的对（一对可以有几种问题）；精确度 = 矛盾 /（矛盾 + 蕴涵），括号里连中立也算作不对：")
    for kind in NEW_KINDS:
        hits = Counter(row["label"] for row, kinds in zip(rows, found, strict=True) if kind in kinds)
        right, wrong, other = hits["contradiction"], hits["entailment"], hits["neutral"]
        precision = right / (right + wrong) if right + wrong else 0.0
        strict = right / (right + wrong + other) if right + wrong + other else 0.0
        print(f"  {kind:<18} 矛盾 {right:>3}、蕴涵 {wrong:>2}、中立 {other:>2}：精确度 {precision:.0%}（{strict:.0%}）")
    return 0


if __name__ == "__main__":
    sys.exit(main())
