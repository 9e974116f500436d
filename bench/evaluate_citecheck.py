"""在人工标注的 CiteCheck 数据上衡量引用核对的效果。

走的是用户用的同一条路：把每条标注做成 --verify 的一行输入（statement 当作回答里的一句话，
引用唯一的资料 quote），以子进程运行 answer_with_sources.py --verify - --json，再和标签比较。

  python -m bench.evaluate_citecheck                       # 默认阈值 + 一组阈值的扫描
  python -m bench.evaluate_citecheck --data 路径 --thresholds 0.3,0.35,0.4

输出：准确率、对“不支持”语句的召回率、对“支持”语句的误报率。
"""
import argparse
import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from sourced_answers.checker import DEFAULT_THRESHOLD, strip_citation_marks

HERE = Path(__file__).resolve().parent.parent  # 仓库根目录
DEFAULT_DATA = HERE.parent / "shared" / "citecheck" / "dev.jsonl"


def verify_line(row):
    """一条标注 → 一行 --verify 输入：去掉 statement 里原有的引用标记，在句末引用资料 [1]。"""
    statement = " ".join(strip_citation_marks(row["statement"]).split())
    return json.dumps({"answer": statement + "[1]", "sources": [{"text": row["quote"]}]}, ensure_ascii=False)


def run_verify(rows, threshold, fix=False, judge=()):
    """返回每条的 passed（True 表示核对认为有支持）。fix：加上 --fix，看修正后的结论；judge：评判模型的参数。"""
    return [record["passed"] for record in verify_records(rows, threshold, fix, judge)]


def verify_records(rows, threshold, fix=False, judge=()):
    lines = "\n".join(verify_line(row) for row in rows) + "\n"
    result = subprocess.run([sys.executable, str(HERE / "answer_with_sources.py"), "--verify", "-", "--json",
                             "--threshold", str(threshold), *(["--fix"] if fix else []), *judge],
                            input=lines, capture_output=True, text=True, encoding="utf-8", check=False)
    if result.returncode not in (0, 1):
        raise SystemExit(f"--verify 失败（退出码 {result.returncode}）：{result.stderr}")
    return [json.loads(line) for line in result.stdout.splitlines()]


def scores(rows, passed):
    unsupported = [not p for r, p in zip(rows, passed, strict=True) if r["label"] == 0]
    supported = [not p for r, p in zip(rows, passed, strict=True) if r["label"] == 1]
    correct = sum(unsupported) + (len(supported) - sum(supported))
    return {"accuracy": correct / len(rows),
            "recall_unsupported": sum(unsupported) / max(len(unsupported), 1),
            "false_alarm": sum(supported) / max(len(supported), 1)}


def false_alarms_by_kind(pairs):
    """“支持”的陈述被标出时，是被哪一种问题标出的：{种类: 条数}（一条可能有几种）。"""
    supported = [rec for row, rec in pairs if row["label"] == 1]
    counts = Counter(kind for rec in supported if not rec["passed"]
                     for kind in {p["kind"] for p in rec["problems"]})
    total = max(len(supported), 1)
    return "、".join(f"{kind} {count} 条（{count / total:.1%}）" for kind, count in counts.most_common()) or "无"


def report_judge(rows, model, url):
    """字面核对 + 评判模型（它说“不支持”就算标出）的效果，以及评判模型自己在它被问到的句子上的表现。"""
    judge = ["--judge", model] + (["--judge-url", url] if url else [])
    started = time.monotonic()
    records = verify_records(rows, DEFAULT_THRESHOLD, judge=judge)
    seconds = time.monotonic() - started
    calls = [(row, record["judge"]["calls"]) for row, record in zip(rows, records, strict=True)]
    asked = [(row, call) for row, row_calls in calls for call in row_calls]
    opinions = [(row, call) for row, call in asked if call["verdict"] is not None]
    right = sum((call["verdict"] is True) == (row["label"] == 1) for row, call in opinions)
    print(f"评判模型 {model}：问了 {len(asked)} 句（{seconds / max(len(asked), 1):.2f} 秒一句），"
          f"有意见的 {len(opinions)} 句，其中和标签一致的 {right} 句"
          f"（{right / max(len(opinions), 1):.1%}），没有意见 {len(asked) - len(opinions)} 句")
    for parity, name in ((0, "调参的一半（idx 偶数）"), (1, "留出的一半（idx 奇数）")):
        half = [(r, rec["passed"]) for r, rec in zip(rows, records, strict=True) if r["idx"] % 2 == parity]
        if half:
            result = scores([r for r, _ in half], [p for _, p in half])
            print(f"  字面 + 评判，{name}：准确率 {result['accuracy']:.1%}，不支持召回 "
                  f"{result['recall_unsupported']:.1%}，误报 {result['false_alarm']:.1%}")


def main(argv=None):
    parser = argparse.ArgumentParser(description="在 CiteCheck 标注数据上衡量引用核对。")
    parser.add_argument("--data", default=str(DEFAULT_DATA), help="JSON Lines 标注文件（默认 shared 里的 dev 集）")
    parser.add_argument("--thresholds", default="0.2,0.25,0.3,0.35,0.4,0.45,0.5",
                        help="要扫描的阈值，逗号分隔")
    parser.add_argument("--limit", type=int, default=0, help="只用前 N 条（0 表示全部）")
    parser.add_argument("--judge-model", metavar="M", help="同时衡量评判模型（--judge M）：它说“不支持”时算标出")
    parser.add_argument("--url", metavar="U", help="评判模型所在的服务（默认 OLLAMA_URL）")
    parser.add_argument("--fix", action="store_true",
                        help="在默认阈值下比较 --verify 和 --verify --fix：修正不应让任何“不支持”的陈述变成通过")
    args = parser.parse_args(argv)
    with open(args.data, encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    if args.limit:
        rows = rows[:args.limit]
    thresholds = sorted({DEFAULT_THRESHOLD, *(float(t) for t in args.thresholds.split(","))})
    print(f"数据：{args.data}（{len(rows)} 条，不支持 {sum(r['label'] == 0 for r in rows)} 条）")
    print(f"{'阈值':>6} {'准确率':>8} {'不支持召回':>10} {'误报率':>8}")
    for threshold in thresholds:
        result = scores(rows, run_verify(rows, threshold))
        mark = "  ← 默认" if threshold == DEFAULT_THRESHOLD else ""
        print(f"{threshold:>8.2f} {result['accuracy']:>10.1%} {result['recall_unsupported']:>12.1%} "
              f"{result['false_alarm']:>10.1%}{mark}")
    # 常数只在 idx 为偶数的一半上选；奇数的一半才是“没见过的数据”上的结果
    records = verify_records(rows, DEFAULT_THRESHOLD)
    for parity, name in ((0, "调参的一半（idx 偶数）"), (1, "留出的一半（idx 奇数）")):
        half = [(r, rec) for r, rec in zip(rows, records, strict=True) if r["idx"] % 2 == parity]
        result = scores([r for r, _ in half], [rec["passed"] for _, rec in half])
        print(f"{name}：准确率 {result['accuracy']:.1%}，不支持召回 {result['recall_unsupported']:.1%}，"
              f"误报 {result['false_alarm']:.1%}（默认阈值）")
        print(f"  误报按种类：{false_alarms_by_kind(half)}")
    if args.judge_model:
        report_judge(rows, args.judge_model, args.url)
    if args.fix:
        before = run_verify(rows, DEFAULT_THRESHOLD)
        after = run_verify(rows, DEFAULT_THRESHOLD, fix=True)
        turned = sum(not b and a for r, b, a in zip(rows, before, after, strict=True) if r["label"] == 0)
        changed = sum(b != a for b, a in zip(before, after, strict=True))
        print(f"--verify --fix：结论变了的 {changed} 条；“不支持”的陈述被修正成通过的 {turned} 条")
    return 0


if __name__ == "__main__":
    sys.exit(main())
