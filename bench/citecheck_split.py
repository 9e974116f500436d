"""CiteCheck dev 分成两份，一次分好、永远不变：拟合的部分（约 70%）和验证的部分（约 30%）。

  · 拟合的部分：拟合支持分的权重、用交叉验证选切点、写规则和词表，都只看这一份；
  · 验证的部分：只用来报告（bench/compare_verdicts.py、docs/checker.md 的数字），什么也不在它上面调。

分法：两种标签各自按固定的种子打乱，各取 30% 做验证（所以两份里支持、不支持各占一半）。验证部分的 idx
写在 citecheck_validation_ids.txt 里，随仓库提交；tests/test_citecheck_split.py 按种子重新分一遍、和文件比较，
并且检查拟合脚本换掉验证部分的标签之后拟合出的东西一个数也不变（也就是它真的没读验证部分）。

  python -m bench.citecheck_split           # 按种子重新分，写 citecheck_validation_ids.txt
  python -m bench.citecheck_split --check   # 只比较（不一样时退出码 1）
"""
import argparse
import json
import random
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DEFAULT_DATA = HERE.parent.parent / "shared" / "citecheck" / "dev.jsonl"
IDS_FILE = HERE / "citecheck_validation_ids.txt"
SPLIT_SEED = 20261204
VALIDATION_SHARE = 0.3


def load(path: Path = DEFAULT_DATA) -> list[dict[str, Any]]:
    """dev 的每一行（按文件里的顺序）。"""
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def split_ids(rows: Sequence[dict[str, Any]], seed: int = SPLIT_SEED, share: float = VALIDATION_SHARE) -> list[int]:
    """验证部分的 idx（从小到大）：两种标签各自打乱，各取 share。"""
    generator = random.Random(seed)
    chosen: list[int] = []
    for label in (0, 1):
        members = sorted(row["idx"] for row in rows if row["label"] == label)
        generator.shuffle(members)
        chosen += members[:round(len(members) * share)]
    return sorted(chosen)


def validation_ids(path: Path = IDS_FILE) -> frozenset[int]:
    """提交在仓库里的验证部分的 idx。"""
    return frozenset(int(line) for line in path.read_text(encoding="utf-8").split() if line.strip())


def fitting_part(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """拟合的部分：不在验证部分里的行。拟合、选切点、写规则只用它。"""
    held = validation_ids()
    return [row for row in rows if row["idx"] not in held]


def validation_part(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """验证的部分：只给报告用。"""
    held = validation_ids()
    return [row for row in rows if row["idx"] in held]


def ids_text(ids: Iterable[int]) -> str:
    return "\n".join(str(idx) for idx in ids) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="把 CiteCheck dev 分成拟合和验证两部分（固定的种子）。")
    parser.add_argument("--data", default=str(DEFAULT_DATA), help="dev.jsonl（默认 shared 里的）")
    parser.add_argument("--check", action="store_true", help="只和提交的 idx 文件比较，不写文件")
    args = parser.parse_args(argv)
    expected = ids_text(split_ids(load(Path(args.data))))
    if args.check:
        same = IDS_FILE.exists() and IDS_FILE.read_text(encoding="utf-8") == expected
        print(f"{IDS_FILE.name} {'和按种子分的一致' if same else '和按种子分的不一致'}")
        return 0 if same else 1
    IDS_FILE.write_text(expected, encoding="utf-8")
    print(f"已写入 {IDS_FILE}（{expected.count(chr(10))} 条验证部分的 idx）")
    return 0


if __name__ == "__main__":
    sys.exit(main())
