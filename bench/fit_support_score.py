"""拟合支持分：sourced_answers/checker/support_model.json 里的权重、切点和评判模型的询问区间，都由这个脚本算出来。

数据是 ../shared/citecheck/dev.jsonl（CiteCheck 的 dev 集，1000 条人工标注的中文陈述）的**拟合部分**
（bench/citecheck_split.py：约 70%；另外 30% 的验证部分这个脚本从不读，只由 bench/compare_verdicts.py 拿来报告）。
每条陈述做成用户的 --verify 会看到的样子（陈述去掉原有的引用标记、句末引用资料 [1]），用包里同一份核对代码算出特征和
确定的规则。

  1. 5 折交叉验证（按标签分层，随机种子固定）：每一折用另外四折拟合 L2 正则的逻辑回归，给这一折打分；
  2. 切点：在这些“没见过”的分数上，选让“支持”的陈述被标出（连同确定的规则）不超过 2.5% 的最高切点；
  3. 评判模型的询问区间：在同样的分数上模拟一个准确率为 85% 的评判模型（--judge），选让准确率最高的区间；
  4. 用全部 1000 条拟合最终的权重，写进 support_model.json。
同时打印：每一折的误报、召回、准确率（平均 ± 标准差）、校准（Brier 分数和可靠性表）、按 idx 奇偶分的两半
（一半拟合、另一半检验），以及不同准确率的评判模型的模拟结果。这些都是**样本内**的：切点就是在这些折上选的，
规则和词表也是看着拟合部分写的。没见过的数据上的数字只有验证部分的（python -m bench.compare_verdicts）。

  python -m bench.fit_support_score            # 拟合并写文件
  python -m bench.fit_support_score --check    # 重新拟合，和随包发布的文件比较（不写文件；不一样时退出码 1）
"""
import argparse
import bisect
import hashlib
import json
import math
import random
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path

from bench.citecheck_split import SPLIT_SEED, fitting_part
from bench.evaluate_citecheck import DEFAULT_DATA, answer_of
from sourced_answers.checker import (
    DEFAULT_RULE,
    FEATURES,
    MODEL_FILE,
    Source,
    SourceIndexes,
    SupportModel,
    assess,
    cites_existing,
    conclude,
    structure_problems,
    support_model,
)
from sourced_answers.checker.rules import Assessment

SEED = 20261203
# 中文模型的特征：没有 missing_numbers——中文句子里找不到的数由确定的规则下结论（在没见过的数据上够准），
# 不再算进支持分（英文的在 fit_english_support.py 里用全部的 FEATURES）
MODEL_FEATURES = tuple(name for name in FEATURES if name != "missing_numbers")
FOLDS = 5
# 每个特征的权重该有的方向：资料里对上的越多（+1）分越高，找不到的越多（-1）分越低。拟合时不许反过来：
# 数据里两个相关的特征可以一个正、一个负地互相抵消（英文的“找不到的内容词”曾经拟合出正的权重），那样的分数
# 在另加了一整句编造内容的句子上会变高
SIGNS = {"window_recall": 1, "unit_recall": 1, "weakest_third": 1, "novel_run": -1, "missing_content": -1,
         "unmatched_content": -1, "missing_numbers": -1}
# L2 正则的强度（在 dev 的偶数一半上用交叉验证选的；特征个数很少，结果对它不敏感）
L2 = 3.0
# 切点按“交叉验证上误报不超过 2%”选，比目标（没见过的数据上 ≤ 2.5%）留半个百分点：在同样的折上选出来的切点，
# 换到没见过的数据上误报会高一些。这个余量是在拟合部分上用嵌套交叉验证定的（切点在内层的折上选、在外层那一折上量，
# nested_estimate）：目标 2.5% 时外层的误报是 2.6%，目标 2.0% 时是 1.7%。验证部分没有参与
FALSE_ALARM_TARGET = 0.02
NESTED_SEED = SEED + 1
JUDGE_ACCURACY = 0.85
# 问评判模型之后，误报也不能超过这个数（评判模型在“支持”的句子上也会错）
JUDGE_FALSE_ALARM_LIMIT = 0.03
SIMULATED_ACCURACIES = (0.7, 0.8, 0.85, 0.9, 0.95)
DIGITS = 6


# ---------- 数据：每条陈述 → 特征和确定的规则 ----------

@dataclass
class Row:
    """一条标注：标签、idx，它的每个带引用的句子的特征（有支持分的才有）、能不能判支持分，和确定的规则是否标出了它。"""
    idx: int
    label: int
    claims: list[tuple[list[float], bool]] = field(default_factory=list)
    certain: bool = False  # 确定的规则（结构、数字、跨语言）已经标出了这一条
    features: tuple[str, ...] = ()  # claims 里每个值是哪个特征（空的：中文模型的那些，MODEL_FEATURES）


def decided(found: Assessment, indexes: SourceIndexes) -> bool:
    """这句话由确定的规则下了结论（和产品的 conclude 同一个判断；不看支持分，所以用哪份权重都一样）。"""
    if found.cross_language or not found.supports:
        return False
    check, _ = conclude(found, indexes, DEFAULT_RULE, support_model(found.calibration))
    return check.certain


def row_of(data: dict) -> Row:
    answer = answer_of(data["statement"])
    sources = [Source(text=data["quote"])]
    problems, _, _, structure = structure_problems(answer, len(sources))
    row = Row(data["idx"], data["label"], certain=bool(problems))
    indexes = SourceIndexes(sources)
    for claim in structure.claims:
        if not cites_existing(claim, len(sources)):
            continue
        found = assess(claim, indexes)
        # 确定的规则和产品里的一样（conclude 给出的 certain：数字、同一处的矛盾、只是标题），跨语言也不按支持分判
        row.certain |= bool(found.cross_language) or decided(found, indexes)
        for support in found.supports:
            row.claims.append(([support.features[name] for name in MODEL_FEATURES], found.eligible))
    return row


def load_rows(path: Path) -> list[Row]:
    """拟合部分的每一条（验证部分的行在这里就被丢掉，连特征都不算）。"""
    data = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [row_of(item) for item in fitting_part(data)]


def folds_of(rows: list[Row], folds: int = FOLDS, seed: int = SEED) -> list[int]:
    """每一条在第几折：两种标签各自打乱（固定的种子），再轮流发到各折。"""
    generator = random.Random(seed)
    fold = [0] * len(rows)
    for label in (0, 1):
        members = [i for i, row in enumerate(rows) if row.label == label]
        generator.shuffle(members)
        for position, member in enumerate(members):
            fold[member] = position % folds
    return fold


# ---------- 逻辑回归（牛顿法，L2 正则；纯 Python，确定的结果） ----------

def standardize(samples: list[list[float]]) -> tuple[list[float], list[float]]:
    columns = list(zip(*samples, strict=True))
    means = [sum(column) / len(column) for column in columns]
    scales = [math.sqrt(sum((v - m) ** 2 for v in column) / len(column)) or 1.0
              for column, m in zip(columns, means, strict=True)]
    return means, scales


def solve(matrix: list[list[float]], vector: list[float]) -> list[float]:
    """高斯消元（选主元）解 matrix · x = vector。"""
    size = len(vector)
    rows = [row[:] + [vector[i]] for i, row in enumerate(matrix)]
    for column in range(size):
        pivot = max(range(column, size), key=lambda r: abs(rows[r][column]))
        rows[column], rows[pivot] = rows[pivot], rows[column]
        for r in range(column + 1, size):
            factor = rows[r][column] / rows[column][column]
            for k in range(column, size + 1):
                rows[r][k] -= factor * rows[column][k]
    result = [0.0] * size
    for r in range(size - 1, -1, -1):
        result[r] = (rows[r][size] - sum(rows[r][k] * result[k] for k in range(r + 1, size))) / rows[r][r]
    return result


def fit(samples: list[list[float]], labels: list[int], features: tuple[str, ...] = (), l2: float = L2) -> SupportModel:
    """L2 正则的逻辑回归（截距不正则化），特征先标准化；每个特征的权重只能是它该有的方向（SIGNS）。
    某个权重拟合出来方向不对，就把它定为 0 再拟合其余的，直到都对为止（特征很少，几遍就完）。"""
    means, scales = standardize(samples)
    rows = [[1.0] + [(v - m) / s for v, m, s in zip(sample, means, scales, strict=True)] for sample in samples]
    fixed: set[int] = set()
    features = features or MODEL_FEATURES
    signs = [SIGNS[name] for name in features] if len(features) == len(samples[0]) else [0] * len(samples[0])
    while True:
        weights = newton(rows, labels, l2, fixed)
        wrong = [i for i, sign in enumerate(signs, 1) if i not in fixed and weights[i] * sign < 0]
        if not wrong:
            break
        fixed.add(max(wrong, key=lambda i: abs(weights[i])))
    return SupportModel(features, tuple(means), tuple(scales), tuple(weights[1:]), weights[0], 0.5, (0.0, 1.0))


def newton(rows: list[list[float]], labels: list[int], l2: float, fixed: set[int]) -> list[float]:
    """牛顿法拟合逻辑回归的权重（rows 的第 0 列是截距）；fixed 里的那几个权重定为 0。"""
    size = len(rows[0])
    free = [i for i in range(size) if i not in fixed]
    weights = [0.0] * size
    for _ in range(100):
        gradient = [l2 * weights[i] if i else 0.0 for i in free]
        hessian = [[(l2 if a == b and i else 0.0) for b in range(len(free))] for a, i in enumerate(free)]
        for row, label in zip(rows, labels, strict=True):
            z = sum(w * v for w, v in zip(weights, row, strict=True))
            p = 1.0 / (1.0 + math.exp(-z)) if z > -40 else 0.0
            for a, i in enumerate(free):
                gradient[a] += (p - label) * row[i]
                for b in range(a, len(free)):
                    hessian[a][b] += p * (1 - p) * row[i] * row[free[b]]
        for a in range(len(free)):
            for b in range(a):
                hessian[a][b] = hessian[b][a]
        step = solve(hessian, gradient)
        for a, i in enumerate(free):
            weights[i] -= step[a]
        if max(abs(s) for s in step) < 1e-12:
            break
    return weights


def training_set(rows: list[Row]) -> tuple[list[list[float]], list[int], tuple[str, ...]]:
    """拟合用的样本、标签和特征名（fit(*training_set(rows))）。"""
    samples = [(values, row.label) for row in rows for values, _ in row.claims]
    features = rows[0].features if rows else ()
    return [values for values, _ in samples], [label for _, label in samples], features


def row_scores(model: SupportModel, row: Row) -> list[float]:
    """一条里每个能判支持分的句子的支持分。"""
    names = row.features or MODEL_FEATURES
    return [model.score(dict(zip(names, values, strict=True))) for values, eligible in row.claims if eligible]


# ---------- 切点和指标 ----------

def flagged(row: Row, scores: list[float], cut: float) -> bool:
    return row.certain or any(score < cut for score in scores)


def metrics(rows: list[Row], scores: list[list[float]], cut: float) -> dict[str, float]:
    marks = [flagged(row, s, cut) for row, s in zip(rows, scores, strict=True)]
    supported = [m for row, m in zip(rows, marks, strict=True) if row.label == 1]
    unsupported = [m for row, m in zip(rows, marks, strict=True) if row.label == 0]
    return {"false_alarm": sum(supported) / max(len(supported), 1),
            "recall": sum(unsupported) / max(len(unsupported), 1),
            "accuracy": sum(m != (row.label == 1) for row, m in zip(rows, marks, strict=True)) / len(rows)}


class Marks:
    """每个切点下的 metrics，一次准备好：确定的规则标出的那些总是标出，其余的在最低的支持分低于切点时标出（flagged）。
    选切点要在每两个相邻的分数之间都算一次指标，每次逐条看一遍要好几秒；按最低分排好序，每次只要二分查找，
    得数和 metrics 一模一样。"""

    def __init__(self, rows: list[Row], scores: list[list[float]]) -> None:
        if any(row.label not in (0, 1) for row in rows):
            raise ValueError("标签只能是 0 或 1")
        self.count = len(rows)
        self.size = {0: 0, 1: 0}
        self.certain = {0: 0, 1: 0}
        self.lowest: dict[int, list[float]] = {0: [], 1: []}
        for row, row_score in zip(rows, scores, strict=True):
            self.size[row.label] += 1
            if row.certain:
                self.certain[row.label] += 1
            elif row_score:
                self.lowest[row.label].append(min(row_score))
        for values in self.lowest.values():
            values.sort()

    def flagged(self, label: int, cut: float) -> int:
        return self.certain[label] + bisect.bisect_left(self.lowest[label], cut)

    def metrics(self, cut: float) -> dict[str, float]:
        supported, unsupported = self.flagged(1, cut), self.flagged(0, cut)
        return {"false_alarm": supported / max(self.size[1], 1),
                "recall": unsupported / max(self.size[0], 1),
                "accuracy": (self.size[1] - supported + unsupported) / self.count}


def choose_cut(rows: list[Row], scores: list[list[float]], target: float = FALSE_ALARM_TARGET) -> float:
    """让“支持”的陈述被标出的比例不超过 target 的最高切点（取在两个相邻分数的正中间）。"""
    values = sorted({min(s) for s in scores if s})
    marks = Marks(rows, scores)
    best = 0.0
    for low, high in zip(values, values[1:] + [1.0], strict=True):
        cut = (low + high) / 2
        if marks.metrics(cut)["false_alarm"] > target:
            break
        best = cut
    return best


def out_of_fold(rows: list[Row], fold: list[int]) -> list[list[float]]:
    """每一条的支持分都来自没见过它的那个模型。"""
    scores: list[list[float]] = [[] for _ in rows]
    for k in range(max(fold) + 1):
        model = fit(*training_set([row for row, f in zip(rows, fold, strict=True) if f != k]))
        for i, row in enumerate(rows):
            if fold[i] == k:
                scores[i] = row_scores(model, row)
    return scores


# ---------- 评判模型的询问区间（模拟） ----------

def simulate(rows: list[Row], scores: list[list[float]], cut: float, band: tuple[float, float],
             accuracy: float) -> dict[str, float]:
    """支持分落在 band 里的句子交给一个准确率为 accuracy 的评判模型（两种标签上一样准）时的期望结果。
    确定的规则标出的不问（评判模型撤不掉它们）。返回期望的准确率、误报、召回和问了几成的句子。"""
    correct = false_alarm = caught = asked = 0.0
    low, high = band
    for row, row_score in zip(rows, scores, strict=True):
        deciding = min(row_score) if row_score else None
        if row.certain or deciding is None or not low <= deciding < high:
            mark = flagged(row, row_score, cut)
            p_flag = 1.0 if mark else 0.0
        else:
            asked += 1
            p_flag = 1 - accuracy if row.label == 1 else accuracy
        correct += p_flag if row.label == 0 else 1 - p_flag
        false_alarm += p_flag if row.label == 1 else 0
        caught += p_flag if row.label == 0 else 0
    supported = sum(row.label == 1 for row in rows)
    return {"accuracy": correct / len(rows), "false_alarm": false_alarm / supported,
            "recall": caught / (len(rows) - supported), "asked": asked / len(rows)}


def choose_band(rows: list[Row], scores: list[list[float]], cut: float, accuracy: float = JUDGE_ACCURACY,
                limit: float = JUDGE_FALSE_ALARM_LIMIT) -> tuple[float, float]:
    """期望误报不超过 limit 的区间里，期望准确率最高的一个（包含切点）；一样高时选问得少的。
    区间的两端取自分数的百分位。"""
    values = sorted(min(s) for s in scores if s)
    grid = sorted({0.0, 1.0, *(values[int(q * (len(values) - 1) / 40)] for q in range(41))})
    best: tuple[float, float, float, float] | None = None
    for low in (v for v in grid if v <= cut):
        for high in (v for v in grid if v > cut):
            result = simulate(rows, scores, cut, (low, high), accuracy)
            if result["false_alarm"] > limit:
                continue
            key = (round(result["accuracy"], 9), -result["asked"], low, high)
            if best is None or key > best:
                best = key
    assert best is not None
    return best[2], best[3]


# ---------- 报告和写文件 ----------

def rounded(model: SupportModel, cut: float, band: tuple[float, float]) -> dict:
    def r(value: float) -> float:
        return round(value, DIGITS)
    return {"features": list(model.features), "mean": [r(v) for v in model.mean],
            "scale": [r(v) for v in model.scale], "weights": [r(v) for v in model.weights], "bias": r(model.bias),
            "cut": r(cut), "judge_band": [r(band[0]), r(band[1])]}


def brier_and_reliability(rows: list[Row], scores: list[list[float]]) -> tuple[float, list[str]]:
    pairs = [(score, row.label) for row, row_score in zip(rows, scores, strict=True) for score in row_score]
    brier = sum((score - label) ** 2 for score, label in pairs) / len(pairs)
    table = []
    for b in range(10):
        members = [(s, y) for s, y in pairs if b / 10 <= s < (b + 1) / 10 or (b == 9 and s == 1.0)]
        if members:
            mean_score = sum(s for s, _ in members) / len(members)
            share = sum(y for _, y in members) / len(members)
            table.append(f"  {b / 10:.1f}–{(b + 1) / 10:.1f}  {len(members):>4} 句  平均分 {mean_score:.2f}  "
                         f"实际有依据 {share:.2f}")
    return brier, table


def per_fold(rows: list[Row], scores: list[list[float]], fold: list[int], cut: float) -> dict[str, tuple[float, float]]:
    results = [metrics([r for r, f in zip(rows, fold, strict=True) if f == k],
                       [s for s, f in zip(scores, fold, strict=True) if f == k], cut) for k in range(max(fold) + 1)]
    return {name: (statistics.mean(r[name] for r in results), statistics.stdev(r[name] for r in results))
            for name in results[0]}


def nested_estimate(rows: list[Row], target: float = FALSE_ALARM_TARGET) -> dict[str, float]:
    """嵌套交叉验证：外层每一折都用另外四折拟合权重、在那四折的交叉验证上选切点，再在这一折上量。
    切点从没见过被量的那一折，所以这是拟合部分之内对“选切点的办法”在没见过的数据上会怎样的估计。"""
    outer = folds_of(rows, seed=NESTED_SEED)
    marks: list[bool] = []
    members: list[Row] = []
    for k in range(FOLDS):
        train = [row for row, fold in zip(rows, outer, strict=True) if fold != k]
        test = [row for row, fold in zip(rows, outer, strict=True) if fold == k]
        cut = choose_cut(train, out_of_fold(train, folds_of(train)), target)
        model = fit(*training_set(train))
        members += test
        marks += [flagged(row, row_scores(model, row), cut) for row in test]
    supported = [mark for row, mark in zip(members, marks, strict=True) if row.label == 1]
    unsupported = [mark for row, mark in zip(members, marks, strict=True) if row.label == 0]
    return {"false_alarm": sum(supported) / len(supported), "recall": sum(unsupported) / len(unsupported)}


def held_out_half(train: list[Row], test: list[Row]) -> dict[str, float]:
    """只用一半拟合（切点也只在这一半的交叉验证上选），在另一半上检验。"""
    scores = out_of_fold(train, folds_of(train))
    cut = choose_cut(train, scores)
    model = fit(*training_set(train))
    return metrics(test, [row_scores(model, row) for row in test], cut)


def percent(value: float) -> str:
    return f"{value:.1%}"


def fit_all(rows: list[Row], report: bool = True) -> dict:
    """交叉验证选切点和询问区间，全部数据拟合权重。返回要写进 support_model.json 的内容。"""
    fold = folds_of(rows)
    scores = out_of_fold(rows, fold)
    cut = choose_cut(rows, scores)
    band = choose_band(rows, scores, cut)
    model = fit(*training_set(rows))
    result = rounded(model, cut, band)
    if not report:
        return result
    whole = metrics(rows, scores, cut)
    spread = per_fold(rows, scores, fold, cut)
    brier, table = brier_and_reliability(rows, scores)
    print(f"数据：拟合部分 {len(rows)} 条（验证部分不读）；{FOLDS} 折交叉验证（种子 {SEED}），L2 = {L2}")
    print("下面的数字都是样本内的（切点在同样的折上选）；没见过的数据上的数字见 python -m bench.compare_verdicts")
    print(f"切点 {cut:.4f}（交叉验证上“支持”被标出 ≤ {FALSE_ALARM_TARGET:.1%} 的最高切点，连同确定的规则）")
    nested = nested_estimate(rows)
    print(f"嵌套交叉验证（切点在内层选、在外层那一折上量，拟合部分之内）：误报 {percent(nested['false_alarm'])}，"
          f"召回 {percent(nested['recall'])}")
    print(f"交叉验证（每条的分数来自没见过它的模型，但切点是在这些分数上选的）：误报 {percent(whole['false_alarm'])}，"
          f"召回 {percent(whole['recall'])}，准确率 {percent(whole['accuracy'])}")
    print("  各折的平均 ± 标准差：" + "，".join(f"{name} {percent(m)} ± {percent(s)}"
                                        for name, (m, s) in spread.items()))
    print(f"校准：Brier 分数 {brier:.4f}（交叉验证的分数，越小越好）；可靠性表：")
    print("\n".join(table))
    even = [row for row in rows if row.idx % 2 == 0]
    odd = [row for row in rows if row.idx % 2 == 1]
    for name, train, test in (("偶数一半拟合 → 奇数一半检验", even, odd), ("奇数一半拟合 → 偶数一半检验", odd, even)):
        half = held_out_half(train, test)
        print(f"{name}：误报 {percent(half['false_alarm'])}，召回 {percent(half['recall'])}，"
              f"准确率 {percent(half['accuracy'])}")
    print(f"评判模型的询问区间 [{band[0]:.4f}, {band[1]:.4f})（按准确率 {JUDGE_ACCURACY:.0%} 的评判模型、"
          f"误报不超过 {JUDGE_FALSE_ALARM_LIMIT:.0%} 选）。")
    print("模拟（不是实测：假设评判模型在两种标签上都有给定的准确率，算期望）：")
    everyone = (0.0, 1.01)
    for accuracy in SIMULATED_ACCURACIES:
        in_band = simulate(rows, scores, cut, band, accuracy)
        asked_all = simulate(rows, scores, cut, everyone, accuracy)
        print(f"  准确率 {accuracy:.0%} 的评判模型：只问区间里的 {percent(in_band['asked'])} → 准确率 "
              f"{percent(in_band['accuracy'])}、误报 {percent(in_band['false_alarm'])}、"
              f"召回 {percent(in_band['recall'])}；全都问（--judge-all）→ 准确率 {percent(asked_all['accuracy'])}、"
              f"误报 {percent(asked_all['false_alarm'])}")
    print(f"不问评判模型：准确率 {percent(whole['accuracy'])}")
    return result


def data_fingerprint(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def refit(path: Path, report: bool = False) -> dict:
    """从 path 的数据重新拟合：support_model.json 应有的全部内容（不含说明）。"""
    rows = load_rows(path)
    fitted = fit_all(rows, report=report)
    fitted["fitted_on"] = {"data": path.name, "sha256_16": data_fingerprint(path), "part": "fitting",
                           "split_seed": SPLIT_SEED, "rows": len(rows),
                           "folds": FOLDS, "seed": SEED, "l2": L2, "false_alarm_target": FALSE_ALARM_TARGET,
                           "judge_accuracy": JUDGE_ACCURACY, "judge_false_alarm_limit": JUDGE_FALSE_ALARM_LIMIT}
    return fitted


def differences(fitted: dict, shipped: dict) -> list[str]:
    """拟合结果和随包发布的文件哪些字段不一样（“about”是说明，不比）。"""
    names = (set(fitted) | set(shipped)) - {"about"}
    return sorted(name for name in names if not close(fitted.get(name), shipped.get(name)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="在 CiteCheck dev 上拟合支持分的权重、切点和评判模型的询问区间。")
    parser.add_argument("--data", default=str(DEFAULT_DATA), help="JSON Lines 标注文件（默认 shared 里的 dev 集）")
    parser.add_argument("--check", action="store_true", help="只重新拟合并和随包发布的文件比较，不写文件")
    args = parser.parse_args(argv)
    fitted = refit(Path(args.data), report=not args.check)
    if args.check:
        different = differences(fitted, json.loads(MODEL_FILE.read_text(encoding="utf-8")))
        if different:
            print(f"{MODEL_FILE.name} 和重新拟合的结果不一样：{'、'.join(different)}", file=sys.stderr)
            return 1
        print(f"{MODEL_FILE.name} 和重新拟合的结果一致")
        return 0
    about = "由 python -m bench.fit_support_score 生成，不要手改（tests/test_support_model.py 会重新拟合并比较）"
    MODEL_FILE.write_text(json.dumps({"about": about, **fitted}, ensure_ascii=False, indent=2) + "\n",
                          encoding="utf-8")
    print(f"已写入 {MODEL_FILE}")
    return 0


def close(first: object, second: object, tolerance: float = 2e-6) -> bool:
    """两份拟合结果相同（浮点数允许最后一位因为不同机器的 exp 实现而差一点）。"""
    if isinstance(first, float | int) and isinstance(second, float | int) and not isinstance(first, bool):
        return abs(first - second) <= tolerance
    if isinstance(first, list) and isinstance(second, list):
        return len(first) == len(second) and all(close(a, b, tolerance) for a, b in zip(first, second, strict=True))
    if isinstance(first, dict) and isinstance(second, dict):
        return first.keys() == second.keys() and all(close(first[k], second[k], tolerance) for k in first)
    return first == second


if __name__ == "__main__":
    sys.exit(main())
