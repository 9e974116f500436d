"""在人工标注的 CiteCheck 数据上，走用户的那条路衡量核对：把每条标注做成 --verify 的一行输入（statement 当作
回答里的一句话，引用唯一的资料 quote），以子进程运行 answer_with_sources.py --verify - --json，再和标签比较。

  python -m bench.evaluate_citecheck                        # 默认设置、一组支持分切点、原教程的规则
  python -m bench.evaluate_citecheck --cuts 0.1,0.2,0.3     # 换一组切点
  python -m bench.evaluate_citecheck --judge-model qwen2.5:7b --url http://127.0.0.1:11434   # 加上评判模型
  python -m bench.evaluate_citecheck --judge-model qwen2.5:7b --judge-ask risky --limit 100  # 多问有风险的句子
  python -m bench.evaluate_citecheck --fix                  # 修正不应让任何“不支持”的陈述变成通过

注意：随包发布的支持分模型就是在 dev 上拟合的，所以这里在 dev 上量出的数字是**样本内**的，会比没见过的数据好看。
没见过的数据上的估计是 python -m bench.fit_support_score 打印的交叉验证和“一半拟合、另一半检验”的数字。
这个脚本的用处是：确认用户走的那条路（--verify）和拟合时算的一样，看误报按种类分布，衡量评判模型和 --fix。
输出：准确率、对“不支持”语句的召回率、对“支持”语句的误报率。
"""
import argparse
import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from sourced_answers.checker import strip_citation_marks, support_model
from sourced_answers.core.settings import JUDGE_ASK, JUDGE_DEFAULTS

HERE = Path(__file__).resolve().parent.parent  # 仓库根目录
DEFAULT_DATA = HERE.parent / "shared" / "citecheck" / "dev.jsonl"


def answer_of(statement):
    """一条陈述 → 回答：去掉原有的引用标记，句末引用资料 [1]（拟合支持分时也这样做）。"""
    return " ".join(strip_citation_marks(statement).split()) + "[1]"


def verify_line(row):
    """一条标注 → 一行 --verify 输入。"""
    return json.dumps({"answer": answer_of(row["statement"]), "sources": [{"text": row["quote"]}]}, ensure_ascii=False)


def verify_records(rows, *options):
    """以子进程运行 --verify - --json，再加上 options（比如 --threshold 0.2、--rule tutorial、--fix、--judge M）。"""
    lines = "\n".join(verify_line(row) for row in rows) + "\n"
    result = subprocess.run([sys.executable, str(HERE / "answer_with_sources.py"), "--verify", "-", "--json",
                             *options], input=lines, capture_output=True, text=True, encoding="utf-8", check=False)
    if result.returncode not in (0, 1):
        raise SystemExit(f"--verify 失败（退出码 {result.returncode}）：{result.stderr}")
    return [json.loads(line) for line in result.stdout.splitlines()]


def passed(rows, *options):
    """每条的 passed（True 表示核对认为有依据）。"""
    return [record["passed"] for record in verify_records(rows, *options)]


def scores(rows, verdicts):
    unsupported = [not p for r, p in zip(rows, verdicts, strict=True) if r["label"] == 0]
    supported = [not p for r, p in zip(rows, verdicts, strict=True) if r["label"] == 1]
    correct = sum(unsupported) + (len(supported) - sum(supported))
    return {"accuracy": correct / len(rows),
            "recall_unsupported": sum(unsupported) / max(len(unsupported), 1),
            "false_alarm": sum(supported) / max(len(supported), 1)}


def line(name, result):
    return (f"{name:<28}{result['accuracy']:>8.1%}{result['recall_unsupported']:>12.1%}"
            f"{result['false_alarm']:>10.1%}")


def false_alarms_by_kind(pairs):
    """“支持”的陈述被标出时，是被哪一种问题标出的：{种类: 条数}（一条可能有几种）。"""
    supported = [rec for row, rec in pairs if row["label"] == 1]
    counts = Counter(kind for rec in supported if not rec["passed"]
                     for kind in {p["kind"] for p in rec["problems"]})
    total = max(len(supported), 1)
    return "、".join(f"{kind} {count} 条（{count / total:.1%}）" for kind, count in counts.most_common()) or "无"


def deterministic_catches(pairs, kinds=("number_mismatch", "polarity_mismatch")):
    """确定的规则各自标出了多少条（有依据的、没依据的）。确定的规则不拟合：它在有依据的陈述上标出的每一条都是误报，
    所以两边都列出来（规则留下的前提是有依据的那一边不增加）。"""
    def flagged(kind, label):
        return sum(1 for row, record in pairs if row["label"] == label and kind in kinds_of(record))
    return "、".join(f"{kind} 标出有依据 {flagged(kind, 1)} 条、没依据 {flagged(kind, 0)} 条" for kind in kinds)


def kinds_of(record):
    return {problem["kind"] for problem in record["problems"]}


def report_judge(rows, model, url, ask):
    """支持分 + 评判模型（--judge-ask ask）的效果，问了多少句、省下了多少句，以及评判模型自己在它被问到的句子上的表现。
    支持分是样本内的；按交叉验证的分数比较几种 --judge-ask 见 python -m bench.evaluate_judge_choice。"""
    judge = ["--judge", model, "--judge-ask", ask] + (["--judge-url", url] if url else [])
    started = time.monotonic()
    records = verify_records(rows, *judge)
    seconds = time.monotonic() - started
    asked = [(row, call) for row, record in zip(rows, records, strict=True) for call in record["judge"]["calls"]]
    skipped = sum(record["judge"].get("skipped", 0) for record in records)
    opinions = [(row, call) for row, call in asked if call["verdict"] is not None]
    right = sum((call["verdict"] is True) == (row["label"] == 1) for row, call in opinions)
    print(f"评判模型 {model}：问了 {len(asked)} 句（{seconds / max(len(asked), 1):.2f} 秒一句），支持分有把握、"
          f"没有问的 {skipped} 句；有意见的 {len(opinions)} 句里和标签一致的 {right} 句"
          f"（{right / max(len(opinions), 1):.1%}），没有意见 {len(asked) - len(opinions)} 句")
    print(line("支持分 + 评判模型", scores(rows, [record["passed"] for record in records])))


def main(argv=None):
    parser = argparse.ArgumentParser(description="在 CiteCheck 标注数据上走 --verify 衡量引用核对。")
    parser.add_argument("--data", default=str(DEFAULT_DATA), help="JSON Lines 标注文件（默认 shared 里的 dev 集）")
    parser.add_argument("--cuts", default="0.05,0.1,0.15,0.2,0.25,0.3", help="要扫描的支持分切点，逗号分隔")
    parser.add_argument("--limit", type=int, default=0, help="只用前 N 条（0 表示全部）")
    parser.add_argument("--judge-model", metavar="M", help="同时衡量评判模型（--judge M）")
    parser.add_argument("--judge-ask", choices=list(JUDGE_ASK), default=JUDGE_DEFAULTS.ask,
                        help=f"评判模型问哪些句子（--judge-ask；默认 {JUDGE_DEFAULTS.ask}）")
    parser.add_argument("--judge-all", action="store_const", const="all", dest="judge_ask",
                        help="评判模型问每一个带引用的句子（同 --judge-ask all）")
    parser.add_argument("--url", metavar="U", help="评判模型所在的服务（默认 OLLAMA_URL）")
    parser.add_argument("--fix", action="store_true",
                        help="比较 --verify 和 --verify --fix：修正不应让任何“不支持”的陈述变成通过")
    args = parser.parse_args(argv)
    with open(args.data, encoding="utf-8") as handle:
        rows = [json.loads(text) for text in handle if text.strip()]
    if args.limit:
        rows = rows[:args.limit]
    default_cut = support_model().cut
    print(f"数据：{args.data}（{len(rows)} 条，不支持 {sum(r['label'] == 0 for r in rows)} 条）")
    print("（样本内：随包的支持分模型就是在 dev 上拟合的；没见过的数据上的估计见 python -m bench.fit_support_score）")
    print(f"{'':<28}{'准确率':>6}{'不支持召回':>8}{'误报率':>8}")
    records = verify_records(rows)
    print(line(f"默认（支持分 ≥ {default_cut:.3f}）", scores(rows, [record["passed"] for record in records])))
    print(f"  误报按种类：{false_alarms_by_kind(list(zip(rows, records, strict=True)))}")
    print(f"  确定的规则：{deterministic_catches(list(zip(rows, records, strict=True)))}")
    for cut in sorted({float(c) for c in args.cuts.split(",")}):
        print(line(f"支持分 ≥ {cut:.2f}", scores(rows, passed(rows, "--threshold", str(cut)))))
    print(line("原教程的规则（--rule tutorial）", scores(rows, passed(rows, "--rule", "tutorial"))))
    if args.judge_model:
        report_judge(rows, args.judge_model, args.url, args.judge_ask)
    if args.fix:
        before = [record["passed"] for record in records]
        after = passed(rows, "--fix")
        turned = sum(not b and a for r, b, a in zip(rows, before, after, strict=True) if r["label"] == 0)
        changed = sum(b != a for b, a in zip(before, after, strict=True))
        print(f"--verify --fix：结论变了的 {changed} 条；“不支持”的陈述被修正成通过的 {turned} 条")
    return 0


if __name__ == "__main__":
    sys.exit(main())
