"""拟合英文的支持分：sourced_answers/checker/support_model_en.json 里的权重、切点和评判模型的询问区间
都由这个脚本算出来。
英文句子引英文资料时，核对用这一份（sourced_answers/checker/calibration.py）；别的句子照旧用中文的 support_model.json。

数据是 AttributionBench（OSU-NLP-Group/AttributionBench）的 dev 集 data/dev_all_subset_balanced.jsonl：1198 条人工标注，
每条是英文回答里的一句（claim）和它引用的英文资料（references），标签 attributable / not attributable。
它不在 ../shared 里，也不能放进仓库（没有许可证）：默认用 git show 从本机那份仓库的镜像里读（--repo），
也可以用 --data 给一个文件。不联网（git 也禁止了任何传输协议）。

每条做成和 CiteCheck 一样的 --verify 输入（bench/evaluate_citecheck.py 的 answer_of）：claim 去掉原有的引用标记、
句末引用资料 [1]；references 用空行连起来，就是资料 [1] 的正文；attributable 就是“支持”。
只用产品会交给英文模型的那些条（每个带引用的句子都是英文、资料是英文；别的条在产品里用中文模型，不拿来拟合）。

  1. 特征、逻辑回归、5 折交叉验证和随机种子都和 fit_support_score 一样（L2 也一样，没有在英文上另选）；
  2. 切点：在交叉验证的分数上，选让“支持”的条被标出（连同确定的规则）不超过 8% 的最高切点。要达到的是
     没见过的英文数据上 ≤ 10%；留出的那份样本只有 250 条“支持”，抽样误差约 1.9 个百分点，所以留两个点的余量；
  3. 评判模型的询问区间：同样模拟准确率 85% 的评判模型，问过之后的误报不超过 10%；
  4. 用全部的条拟合最终的权重。
文件里还记下交叉验证的结果、中文模型在同样这些条上的结果（换成英文模型之前）和一张取舍表（别的切点会怎样），
docs/checker.md 里的这些数字由 python -m sourced_answers.cli.reference_doc 从文件生成。
AttributionBench 的两份测试集是留出的：这个脚本从不读它们，什么也不在它们上面选
（只在最后量一次，见 bench/evaluate_attributionbench.py）。

  python -m bench.fit_english_support            # 拟合并写文件
  python -m bench.fit_english_support --check    # 重新拟合，和随包发布的文件比较（不写文件；不一样时退出码 1）
"""
import argparse
import hashlib
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from bench import fit_support_score as base
from bench.evaluate_citecheck import answer_of
from sourced_answers.checker import (
    ENGLISH,
    ENGLISH_MODEL_FILE,
    FEATURES,
    Source,
    SourceIndexes,
    assess,
    cites_existing,
    structure_problems,
    support_model,
)

DEFAULT_REPO = Path("/work/.mirror/OSU-NLP-Group+AttributionBench/repo")
DEV_FILE = "data/dev_all_subset_balanced.jsonl"
LABELS = {"attributable": 1, "not attributable": 0}
FALSE_ALARM_TARGET = 0.08
JUDGE_FALSE_ALARM_LIMIT = 0.10
# 取舍表：交叉验证上误报不超过这些比例时的最高切点
TRADEOFF_TARGETS = (0.05, 0.08, 0.10, 0.15, 0.20, 0.25, 0.30)
FIGURE_DIGITS = 4
ABOUT = "由 python -m bench.fit_english_support 生成，不要手改（tests/test_english_support_model.py 会重新拟合并比较）"


# ---------- 数据 ----------

@dataclass(frozen=True)
class Example:
    """一条标注：第几行、原来的 claim、资料 [1] 的正文、标签（1 = attributable）。"""
    position: int
    claim: str
    source: str
    label: int

    @property
    def answer(self) -> str:
        """核对的回答：claim 去掉原有的引用、句末引用 [1]（和 CiteCheck 的陈述一样）。"""
        return answer_of(self.claim)


def example_of(position: int, data: dict) -> Example:
    """AttributionBench 的一行 → 一条标注（见模块说明）。不认识的标签是数据错了，直接报错。"""
    references = data["references"]
    text = "\n\n".join(references) if isinstance(references, list) else str(references)
    return Example(position, data["claim"], text, LABELS[data["attribution_label"]])


def examples_in(content: bytes) -> list[Example]:
    lines = content.decode("utf-8").splitlines()
    return [example_of(position, json.loads(line)) for position, line in enumerate(lines) if line.strip()]


def read_data(data: Path | None, repo: Path | None = None, member: str = DEV_FILE) -> tuple[str, bytes]:
    """(数据的名字, 内容)：给了 data 就读这个文件，否则从 AttributionBench 的镜像（一个 git 目录，默认 DEFAULT_REPO）
    里取 member。镜像不在、取不到时抛 FileNotFoundError。git 禁止了任何传输协议：镜像里没有的东西也不会去网上拿。"""
    if data is not None:
        return data.name, data.read_bytes()
    repo = repo or DEFAULT_REPO
    command = ["git", f"--git-dir={repo}", "-c", "protocol.allow=never", "show", f"HEAD:{member}"]
    try:
        result = subprocess.run(command, capture_output=True, check=False)
    except OSError as error:  # 没有 git
        raise FileNotFoundError(f"读不了 {repo}：{error}") from error
    if not repo.is_dir() or result.returncode != 0:
        raise FileNotFoundError(f"{repo} 里没有 {member}：{result.stderr.decode(errors='replace').strip()}")
    return Path(member).name, result.stdout


def row_of(example: Example) -> base.Row | None:
    """一条 → 特征和确定的规则（同 fit_support_score.row_of）。有一个要判支持分的句子不交给英文模型（或者跨语言）时
    返回 None：产品用中文模型判它。不判支持分的短句子（比如 “Bieber.[1]” 句末落单的 “.”）不看语言，它们从不因为
    支持分被标出；交给英文模型的那些和中文的拟合一样也进训练集。"""
    sources = [Source(text=example.source)]
    problems, _, _, structure = structure_problems(example.answer, len(sources))
    row = base.Row(example.position, example.label, certain=bool(problems), features=FEATURES)
    indexes = SourceIndexes(sources)
    for claim in structure.claims:
        if not cites_existing(claim, len(sources)):
            continue
        found = assess(claim, indexes)
        if found.calibration != ENGLISH and (found.eligible or found.cross_language):
            return None
        if found.calibration != ENGLISH:
            continue
        row.certain |= base.decided(found, indexes)
        for support in found.supports:
            row.claims.append(([support.features[name] for name in FEATURES], found.eligible))
    return row


# ---------- 拟合和报告 ----------

def figures(result: dict[str, float]) -> dict[str, float]:
    return {name: round(value, FIGURE_DIGITS) for name, value in result.items()}


def cut_for_recall(rows: list[base.Row], scores: list[list[float]], recall: float) -> float:
    """召回不低于 recall 的最低切点（取在两个相邻分数的正中间）；怎样都达不到时是 1。"""
    values = sorted({min(s) for s in scores if s})
    marks = base.Marks(rows, scores)
    for low, high in zip(values, values[1:] + [1.0], strict=True):
        cut = (low + high) / 2
        if marks.metrics(cut)["recall"] >= recall:
            return cut
    return 1.0


def tradeoff(rows: list[base.Row], scores: list[list[float]], recall: float) -> list[dict[str, float]]:
    """取舍表：每个误报目标下的最高切点，以及召回不低于 recall（中文模型在同样这些条上的召回）的最低切点，
    和它们在交叉验证上的结果，按切点从低到高。"""
    cuts = [base.choose_cut(rows, scores, target) for target in TRADEOFF_TARGETS]
    cuts.append(cut_for_recall(rows, scores, recall))
    return [{"cut": round(cut, FIGURE_DIGITS), **figures(base.metrics(rows, scores, cut))} for cut in sorted(cuts)]


def fit_all(rows: list[base.Row], report: bool = True) -> dict:
    """交叉验证选切点和询问区间，全部的条拟合权重；再加上交叉验证的结果、中文模型的结果和取舍表。"""
    fold = base.folds_of(rows)
    scores = base.out_of_fold(rows, fold)
    cut = base.choose_cut(rows, scores, FALSE_ALARM_TARGET)
    band = base.choose_band(rows, scores, cut, limit=JUDGE_FALSE_ALARM_LIMIT)
    result = base.rounded(base.fit(*base.training_set(rows)), cut, band)
    chinese = support_model()
    before = base.metrics(rows, [base.row_scores(chinese, row) for row in rows], chinese.cut)
    spread = base.per_fold(rows, scores, fold, cut)
    result["cross_validation"] = {**figures(base.metrics(rows, scores, cut)),
                                  **{f"{name}_sd": round(sd, FIGURE_DIGITS) for name, (_, sd) in spread.items()}}
    result["chinese_model"] = {"cut": round(chinese.cut, FIGURE_DIGITS), **figures(before)}
    result["tradeoff"] = tradeoff(rows, scores, before["recall"])
    if report:
        print_report(rows, scores, cut, band, result)
    return result


def summary(values: dict[str, float]) -> str:
    return (f"误报 {base.percent(values['false_alarm'])}，召回 {base.percent(values['recall'])}，"
            f"准确率 {base.percent(values['accuracy'])}")


def print_report(rows: list[base.Row], scores: list[list[float]], cut: float, band: tuple[float, float],
                 result: dict) -> None:
    checked, chinese = result["cross_validation"], result["chinese_model"]
    print(f"数据：{len(rows)} 条；{base.FOLDS} 折交叉验证（种子 {base.SEED}），L2 = {base.L2}")
    print(f"换成英文模型之前（中文模型，切点 {chinese['cut']:.4f}）：{summary(chinese)}")
    print(f"切点 {cut:.4f}（交叉验证上“支持”被标出 ≤ {FALSE_ALARM_TARGET:.0%} 的最高切点，连同确定的规则）")
    print(f"交叉验证（每条的分数都来自没见过它的模型）：{summary(checked)}")
    print("  各折的标准差：" + "，".join(f"{name} {base.percent(checked[name + '_sd'])}"
                                  for name in ("false_alarm", "recall", "accuracy")))
    print("取舍（交叉验证；切点越高，标出的越多）：")
    for entry in result["tradeoff"]:
        print(f"  切点 {entry['cut']:.4f}  {summary(entry)}")
    brier, table = base.brier_and_reliability(rows, scores)
    print(f"校准：Brier 分数 {brier:.4f}；可靠性表：")
    print("\n".join(table))
    asked = base.simulate(rows, scores, cut, band, base.JUDGE_ACCURACY)
    print(f"评判模型的询问区间 [{band[0]:.4f}, {band[1]:.4f})：模拟（不是实测）准确率 "
          f"{base.JUDGE_ACCURACY:.0%} 的评判模型，问 {base.percent(asked['asked'])} 的条 → {summary(asked)}")


def refit(data: Path | None = None, repo: Path | None = None, report: bool = False) -> dict:
    """从数据重新拟合：support_model_en.json 应有的全部内容（不含说明）。"""
    name, content = read_data(data, repo)
    examples = examples_in(content)
    rows = [row for row in map(row_of, examples) if row is not None]
    if report:
        print(f"{name}：{len(examples)} 条，产品交给英文模型的 {len(rows)} 条"
              "（其余的句子太短、说不清语言，或资料不是英文）")
    fitted = fit_all(rows, report=report)
    fitted["fitted_on"] = {"data": name, "sha256_16": hashlib.sha256(content).hexdigest()[:16],
                           "rows_read": len(examples), "rows": len(rows), "folds": base.FOLDS, "seed": base.SEED,
                           "l2": base.L2, "false_alarm_target": FALSE_ALARM_TARGET,
                           "judge_accuracy": base.JUDGE_ACCURACY, "judge_false_alarm_limit": JUDGE_FALSE_ALARM_LIMIT}
    return fitted


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="在 AttributionBench 的 dev 集上拟合英文的支持分。")
    parser.add_argument("--data", type=Path, help=f"JSON Lines 标注文件（默认从 --repo 里取 {DEV_FILE}）")
    parser.add_argument("--repo", type=Path, default=DEFAULT_REPO,
                        help="AttributionBench 仓库的 git 目录（默认本机的镜像）")
    parser.add_argument("--check", action="store_true", help="只重新拟合并和随包发布的文件比较，不写文件")
    args = parser.parse_args(argv)
    try:
        fitted = refit(args.data, args.repo, report=not args.check)
    except FileNotFoundError as error:
        print(f"没有数据：{error}", file=sys.stderr)
        return 2
    if args.check:
        different = base.differences(fitted, json.loads(ENGLISH_MODEL_FILE.read_text(encoding="utf-8")))
        if different:
            print(f"{ENGLISH_MODEL_FILE.name} 和重新拟合的结果不一样：{'、'.join(different)}", file=sys.stderr)
            return 1
        print(f"{ENGLISH_MODEL_FILE.name} 和重新拟合的结果一致")
        return 0
    ENGLISH_MODEL_FILE.write_text(json.dumps({"about": ABOUT, **fitted}, ensure_ascii=False, indent=2) + "\n",
                                  encoding="utf-8")
    print(f"已写入 {ENGLISH_MODEL_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
