"""整批核对的汇总：--verify 和 Dask 任务用同一个，字段一样（--summary 存的 JSON、结束时标准错误上的几行）。

  records 条数 · passed 通过 · failed 没通过 · errors 格式不对、没有核对的行（--verify 遇到坏行就停，所以总是 0）
  problems_by_kind 问题按种类：每种问题一共几个（一条记录里有三段没有引用就算 3）
  kinds 有这种问题的记录：每种问题出现在几条记录里（一条记录里同一种问题只算一次）
  （JSON 里的键是 id，标准错误上的那几行写“中文名 id 个数”）
  · slowest 最慢的几条（行号、秒）
  seconds 总用时 · records_per_second 每秒几条
"""
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sourced_answers.checker import PROBLEM_KINDS

SLOWEST = 5


def kind_count(kind: str, count: int) -> str:
    """给人看的一种问题和它的个数：“对不上 weak_support 475”——中文名，旁边是 --json 里的 id（拿去搜 JSON、
    文档都找得到）。没登记的种类只有 id。JSON 的汇总（to_dict）里的键仍然是 id。"""
    known = PROBLEM_KINDS.get(kind)
    return f"{known.label} {kind} {count}" if known else f"{kind} {count}"


@dataclass
class Summary:
    records: int = 0
    passed: int = 0
    failed: int = 0
    errors: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    slowest: list[tuple[float, int | None]] = field(default_factory=list)
    seconds: float = 0.0
    problems_by_kind: Counter[str] = field(default_factory=Counter)

    def add(self, passed: bool, kinds: Iterable[str], seconds: float, line: int | None) -> None:
        """一条核对过的记录。kinds：它的每个问题的种类（有几个问题就有几项）。"""
        kinds = list(kinds)
        self.records += 1
        self.passed += passed
        self.failed += not passed
        self.kinds.update(set(kinds))
        self.problems_by_kind.update(kinds)
        self.slowest = sorted([*self.slowest, (seconds, line)], reverse=True)[:SLOWEST]

    def add_error(self) -> None:
        """一行格式不对、没有核对（Dask 任务遇到坏行不停下来）。"""
        self.errors += 1

    def merge(self, other: "Summary") -> None:
        """把另一部分（Dask 的一个分区）的汇总加进来。"""
        self.records += other.records
        self.passed += other.passed
        self.failed += other.failed
        self.errors += other.errors
        self.kinds.update(other.kinds)
        self.problems_by_kind.update(other.problems_by_kind)
        self.slowest = sorted([*self.slowest, *other.slowest], reverse=True)[:SLOWEST]

    def to_dict(self) -> dict[str, Any]:
        return {"records": self.records, "passed": self.passed, "failed": self.failed, "errors": self.errors,
                "problems_by_kind": dict(self.problems_by_kind.most_common()),
                "kinds": dict(self.kinds.most_common()),
                "slowest": [{"line": line, "seconds": seconds} for seconds, line in self.slowest],
                "seconds": round(self.seconds, 3),
                "records_per_second": round(self.records / self.seconds, 1) if self.seconds else None}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Summary":
        return cls(data["records"], data["passed"], data["failed"], data["errors"], Counter(data["kinds"]),
                   [(item["seconds"], item["line"]) for item in data["slowest"]], data["seconds"],
                   Counter(data["problems_by_kind"]))

    def lines(self) -> list[str]:
        problems = "、".join(kind_count(kind, count) for kind, count in self.problems_by_kind.most_common()) or "无"
        kinds = "、".join(kind_count(kind, count) for kind, count in self.kinds.most_common()) or "无"
        slowest = "、".join(f"第 {line} 行 {seconds:.2f} 秒" for seconds, line in self.slowest if line)
        speed = f"，{self.records / self.seconds:.0f} 条/秒" if self.seconds else ""
        errors = f"，格式不对没有核对 {self.errors}" if self.errors else ""
        head = (f"汇总：{self.records} 条，通过 {self.passed}，没通过 {self.failed}{errors}"
                f"（用时 {self.seconds:.1f} 秒{speed}）")
        # 两个数不一样：一条记录里十段没有引用是 10 个问题、1 条记录。每一行都说出它数的是哪一个
        return [head, f"  问题按种类（个）：{problems}", f"  有这种问题的记录（条）：{kinds}",
                *([f"  最慢的几条：{slowest}"] if slowest else [])]
