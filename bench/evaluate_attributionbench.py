"""在 AttributionBench（英文回答里的一句和它的英文资料）上走用户的那条路衡量核对：每条标注做成 --verify 的一行输入
（和 bench/fit_english_support.py 一样：claim 去掉原有的引用、句末引用 [1]，references 连起来当资料 [1]），
以子进程运行 answer_with_sources.py --verify - --json，再和标签比较。

同时给出“换成英文模型之前”的结果：同样的核对（结构、数字这些确定的规则都一样），每句都用中文模型和中文的切点，
在进程里算（bench/fit_support_score.row_of，拟合中文模型时用的那一套）。

  python -m bench.evaluate_attributionbench                 # dev（英文模型就是在它上面拟合的：样本内）
  python -m bench.evaluate_attributionbench --split test    # 留出的 in-distribution 样本（500 条）
  python -m bench.evaluate_attributionbench --split ood     # 留出的 out-of-distribution 测试集（1686 条）
  python -m bench.evaluate_attributionbench --data rows.jsonl

两份测试集是留出的：只在最后量一次、照实报告，不拿它们选任何东西（切点、特征、设置都只在 dev 上选）。
数据默认从本机的 AttributionBench 镜像用 git show 读（见 fit_english_support.read_data），不联网。
"""
import argparse
import sys
from pathlib import Path

from bench import fit_support_score
from bench.evaluate_citecheck import false_alarms_by_kind, line, scores, verify_records
from bench.fit_english_support import DEV_FILE, Example, examples_in, read_data
from sourced_answers.checker import support_model

SPLITS = {"dev": DEV_FILE, "test": "data/test_all_subset_balanced_sampled500.jsonl",
          "ood": "data/test_ood_all_subset_balanced.jsonl"}


def citecheck_row(example: Example) -> dict:
    """一条 → bench/evaluate_citecheck 和 fit_support_score 认的那种行（statement、quote、label、idx）：
    它们把 statement 做成回答的办法（answer_of）和 Example.answer 是同一个。"""
    return {"statement": example.claim, "quote": example.source, "label": example.label, "idx": example.position}


def chinese_only(rows: list[dict]) -> dict[str, float]:
    """每句都用中文模型、中文切点时的结果（换成英文模型之前），和 evaluate_citecheck.scores 的写法一样。"""
    model = support_model()
    checked = [fit_support_score.row_of(row) for row in rows]
    result = fit_support_score.metrics(checked, [fit_support_score.row_scores(model, row) for row in checked],
                                       model.cut)
    return {"accuracy": result["accuracy"], "recall_unsupported": result["recall"],
            "false_alarm": result["false_alarm"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="在 AttributionBench 上走 --verify 衡量英文句子的核对。")
    parser.add_argument("--split", choices=SPLITS, default="dev", help="用哪一份（默认 dev；test、ood 是留出的）")
    parser.add_argument("--data", type=Path, help="JSON Lines 标注文件（给了就不用 --split）")
    parser.add_argument("--repo", type=Path, help="AttributionBench 仓库的 git 目录（默认本机的镜像）")
    args = parser.parse_args(argv)
    try:
        name, content = read_data(args.data, args.repo, SPLITS[args.split])
    except FileNotFoundError as error:
        print(f"没有数据：{error}", file=sys.stderr)
        return 2
    rows = [citecheck_row(example) for example in examples_in(content)]
    print(f"数据：{name}（{len(rows)} 条，不支持 {sum(row['label'] == 0 for row in rows)} 条）")
    if args.data is None and args.split == "dev":
        print("（样本内：英文模型就是在 dev 上拟合的；没见过的数据上的估计见 python -m bench.fit_english_support）")
    elif args.data is None:
        print("（留出的测试集：只在最后量一次，不拿它选任何东西）")
    print(f"{'':<28}{'准确率':>6}{'不支持召回':>8}{'误报率':>8}")
    print(line("换成英文模型之前（中文模型）", chinese_only(rows)))
    records = verify_records(rows)
    print(line("现在（--verify，默认设置）", scores(rows, [record["passed"] for record in records])))
    print(f"  误报按种类：{false_alarms_by_kind(list(zip(rows, records, strict=True)))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
