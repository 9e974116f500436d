"""问评判模型哪些句子（--judge-ask band / risky / all）：在 CiteCheck dev 上比较，用交叉验证的支持分。

每条标注做成 --verify 会看到的回答（和拟合时一样，见 bench.evaluate_citecheck.answer_of），核对时的支持分来自
**没见过这一条的权重**：5 折，分折和种子同 bench/fit_support_score.py；切点和询问区间用随包的（它们就是在这些
交叉验证的分数上选的）。问哪些句子、怎样合并评判模型的意见，用的是 --judge 的那一段代码（steps/judge.judge_answer）。

  1. 漏报在哪里：支持分放过了的“不支持”陈述，它的支持分在询问区间之上、之中还是之下；
  2. 每一种选择问多少句（代价），盖住多少漏报、多少误报（只有被问到的，评判模型才改得了）；
  3. 模拟的评判模型：两种标签上准确率一样，固定种子抽 REPEATS 次取平均。**是模拟，不是实测**；
  4. 给了 --url 时，请那个真的评判模型回答：它在被问到的句子上有意见的比例、有意见时和标签一致的比例，以及合起来的
     准确率、召回、误报。同一句话只问一次，几种选择共用它的回答。

  python -m bench.evaluate_judge_choice                          # 1–3，不问模型，一分钟左右
  python -m sourced_answers.local_model serve --context 8192     # 另一个终端：自带的 SmolLM2-135M
  python -m bench.evaluate_judge_choice --url http://127.0.0.1:端口 --judge-model smollm2-135m \
      --choices band,risky --replies replies.json                # 全部 1000 条；回答存进 replies.json
  python -m bench.evaluate_judge_choice --url … --judge-model smollm2-135m --sample 200 --replies replies.json
                                                                 # 固定种子、按标签分层抽 200 条，三种都比
docs/checker.md 的“问哪些句子”一节是这样量的（2026-12-04，SmolLM2-135M，2 核）。
"""
import argparse
import copy
import json
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from bench.evaluate_citecheck import DEFAULT_DATA, answer_of
from bench.fit_support_score import FOLDS, SEED, fit, folds_of, load_rows, training_set
from sourced_answers.checker import (
    DEFAULT_RULE,
    Report,
    Source,
    SourceIndexes,
    SupportModel,
    assess,
    checked_indexes,
    cites_existing,
    conclude,
    repeated_problems,
    structure_problems,
    support_model,
)
from sourced_answers.checker.evidence import located
from sourced_answers.core.retrying import Deadline
from sourced_answers.core.settings import JUDGE_ASK, MODEL_DEFAULTS, JudgeSettings
from sourced_answers.model.endpoints import api_base
from sourced_answers.model.messages import Message
from sourced_answers.steps.check_steps import judge_asker
from sourced_answers.steps.judge import JudgeAsk, JudgeCall, asking_band, judge_answer

SIMULATED_ACCURACIES = (0.7, 0.85, 0.95)
REPEATS = 20
PROGRESS_EVERY = 20


@dataclass
class Case:
    """一条标注：标签、资料，和用没见过它的权重核对出来的结果（评判之前）。"""
    idx: int
    label: int
    sources: list[Source]
    report: Report


@dataclass
class Outcome:
    """一种选择在一批标注上的结果：每条通过没有、每条问了哪些句子。"""
    passed: list[bool]
    calls: list[list[JudgeCall]]


def cv_report(answer: str, sources: list[Source], model: SupportModel) -> Report:
    """和 checker.check_answer 一样核对，只是支持分用 model 的权重。CiteCheck 的回答只引用存在的 [1]。"""
    problems, unused, cited, structure = structure_problems(answer, len(sources))
    problems += repeated_problems(structure)
    indexes = SourceIndexes(sources)
    report = Report(problems, unused, cited)
    for claim, index in zip(structure.claims, checked_indexes(structure.claims), strict=True):
        if index is None:
            continue
        assert cites_existing(claim, len(sources))
        check, problem = conclude(assess(claim, indexes), indexes, DEFAULT_RULE, model)
        # 同样的句子的比较结果是共用的（可能来自别的段落、别的回答）：段落号用这一句自己的，和 check_claim 一样
        check.paragraph = claim.paragraph
        if problem:
            problem.paragraph = claim.paragraph
        report.claims.append(check)
        if problem:
            problem.claim = index
            report.problems.append(problem)
    located(report.claims, structure, answer, answer)
    return report


def load_cases(path: Path) -> list[Case]:
    """每条标注按它那一折之外的数据拟合的权重核对（切点、询问区间用随包的）。"""
    rows = load_rows(path)
    fold = folds_of(rows)
    shipped = support_model()
    models = [replace(fit(*training_set([row for row, f in zip(rows, fold, strict=True) if f != k])),
                      cut=shipped.cut, judge_band=shipped.judge_band) for k in range(FOLDS)]
    data = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    cases = []
    for f, item in zip(fold, data, strict=True):
        sources = [Source(text=item["quote"])]
        cases.append(Case(item["idx"], item["label"], sources, cv_report(answer_of(item["statement"]), sources,
                                                                           models[f])))
    return cases


def sampled(cases: list[Case], size: int, seed: int = SEED) -> list[Case]:
    """按标签分层、固定种子抽 size 条（两种标签各一半），保持原来的顺序。"""
    generator = random.Random(seed)
    chosen: set[int] = set()
    for label in (0, 1):
        members = [case.idx for case in cases if case.label == label]
        chosen.update(generator.sample(members, min(len(members), size // 2)))
    return [case for case in cases if case.idx in chosen]


# ---------- 1. 漏报在哪里 ----------

def miss_positions(cases: Sequence[Case]) -> dict[str, int]:
    """支持分放过了的“不支持”陈述，按它最低的支持分落在询问区间的哪一边数。"""
    band = asking_band(DEFAULT_RULE)
    assert band is not None
    low, high = band
    counts = {"above": 0, "inside": 0, "below": 0, "unscored": 0}
    for case in cases:
        if case.label != 0 or not case.report.passed:
            continue
        found = [check.score for check in case.report.claims if check.status == "supported" and check.score is not None]
        if not found:
            counts["unscored"] += 1
        else:
            counts["above" if min(found) >= high else "inside" if min(found) >= low else "below"] += 1
    return counts


# ---------- 2–4. 问评判模型 ----------

def run_choice(cases: Sequence[Case], choice: str, asks: Sequence[JudgeAsk], model: str, window: int) -> Outcome:
    """每条标注按 choice 问评判模型（asks[i] 是问第 i 条用的函数），返回每条通过没有和问了哪些句子。"""
    passed, calls = [], []
    for case, ask in zip(cases, asks, strict=True):
        report = copy.deepcopy(case.report)  # judge_answer 会改句子的状态
        verdicts = judge_answer(case.sources, report, ask, model, choice, DEFAULT_RULE, window, concurrency=1)
        passed.append(not verdicts.problems)
        calls.append(verdicts.calls)
    return Outcome(passed, calls)


def no_opinion(messages: list[Message]) -> str:
    return ""


def simulated(label: int, accuracy: float, repeat: int) -> JudgeAsk:
    """模拟的评判模型：以 accuracy 的概率答对。答没答对只看（种子、第几次、提示词），所以同一句话在几种选择里
    答的一样，也和先算哪种选择无关。"""
    def ask(messages: list[Message]) -> str:
        right = random.Random(f"{SEED}/{repeat}/{messages[-1]['content']}").random() < accuracy
        return "是" if right == (label == 1) else "否"
    return ask


def scores(cases: Sequence[Case], passed: Sequence[bool]) -> dict[str, float]:
    unsupported = [not p for case, p in zip(cases, passed, strict=True) if case.label == 0]
    supported = [not p for case, p in zip(cases, passed, strict=True) if case.label == 1]
    return {"accuracy": (sum(unsupported) + len(supported) - sum(supported)) / len(cases),
            "recall": sum(unsupported) / max(len(unsupported), 1),
            "false_alarm": sum(supported) / max(len(supported), 1)}


def shown(result: dict[str, float]) -> str:
    return (f"准确率 {result['accuracy']:.1%}，召回 {result['recall']:.1%}，"
            f"误报 {result['false_alarm']:.1%}")


def coverage_lines(cases: Sequence[Case], choices: Sequence[str]) -> list[str]:
    """每一种选择问了多少句、多少条，盖住多少漏报和误报，以及问到了多少条支持分放过的“有依据”的陈述。"""
    before = [case.report.passed for case in cases]
    misses = [i for i, case in enumerate(cases) if case.label == 0 and before[i]]
    alarms = [i for i, case in enumerate(cases) if case.label == 1 and not before[i]]
    passing_supported = [i for i, case in enumerate(cases) if case.label == 1 and before[i]]
    lines = [f"评判之前：漏报 {len(misses)} 条、误报 {len(alarms)} 条（{len(cases)} 条里）"]
    for choice in choices:
        outcome = run_choice(cases, choice, [no_opinion] * len(cases), "count", MODEL_DEFAULTS.context_window)
        asked = [bool(calls) for calls in outcome.calls]
        lines.append(f"  {choice:<6} 问了 {sum(len(c) for c in outcome.calls)} 句（{sum(asked)} 条）："
                     f"盖住漏报 {sum(asked[i] for i in misses)}/{len(misses)}、"
                     f"误报 {sum(asked[i] for i in alarms)}/{len(alarms)}；"
                     f"问到支持分放过的有依据陈述 {sum(asked[i] for i in passing_supported)} 条")
    return lines


def simulation_lines(cases: Sequence[Case], choices: Sequence[str]) -> list[str]:
    lines = [f"模拟的评判模型（不是实测：两种标签上准确率一样，种子 {SEED}，{REPEATS} 次平均）："]
    for accuracy in SIMULATED_ACCURACIES:
        totals = {choice: {"accuracy": 0.0, "recall": 0.0, "false_alarm": 0.0} for choice in choices}
        for repeat in range(REPEATS):
            asks = [simulated(case.label, accuracy, repeat) for case in cases]
            for choice in choices:
                outcome = run_choice(cases, choice, asks, "simulated", MODEL_DEFAULTS.context_window)
                for name, value in scores(cases, outcome.passed).items():
                    totals[choice][name] += value / REPEATS
        lines += [f"  准确率 {accuracy:.0%}，{choice:<6}：{shown(totals[choice])}" for choice in choices]
    return lines


class RealJudge:
    """真的评判模型（和 --judge 用同一个 judge_asker）：同样的提示词只问一次（replies 文件里有的不再问），记下用时。"""

    def __init__(self, model: str, url: str, window: int, replies: Path | None = None) -> None:
        judge = judge_asker(JudgeSettings(name=model, url=api_base(url)),
                            replace(MODEL_DEFAULTS, context_window=window), Deadline(None))
        assert judge is not None
        self.model, self.url, self.window = model, url, window
        self.ask_model: Callable[[list[Message]], str] = judge.ask
        self.path = replies
        self.replies: dict[str, str] = json.loads(replies.read_text(encoding="utf-8")) \
            if replies and replies.exists() else {}
        self.asked = self.reused = 0
        self.seconds = 0.0

    def ask(self, messages: list[Message]) -> str:
        key = json.dumps([self.model, messages], ensure_ascii=False)
        if key in self.replies:
            self.reused += 1
            return self.replies[key]
        started = time.monotonic()
        self.replies[key] = self.ask_model(messages)
        self.seconds += time.monotonic() - started
        self.asked += 1
        if self.path:
            self.path.write_text(json.dumps(self.replies, ensure_ascii=False), encoding="utf-8")
        if self.asked % PROGRESS_EVERY == 0:
            print(f"  …已经问了 {self.asked} 句（平均 {self.seconds / self.asked:.1f} 秒一句）", file=sys.stderr,
                  flush=True)
        return self.replies[key]


def measured_lines(cases: Sequence[Case], choices: Sequence[str], judge: "RealJudge") -> list[str]:
    lines = [f"实测的评判模型 {judge.model}（{judge.url}，{len(cases)} 条）："]
    for choice in choices:
        outcome = run_choice(cases, choice, [judge.ask] * len(cases), judge.model, judge.window)
        said = [(case.label, call.verdict) for case, calls in zip(cases, outcome.calls, strict=True) for call in calls]
        opinions = [(label, verdict) for label, verdict in said if verdict is not None]
        right = sum(verdict == (label == 1) for label, verdict in opinions)
        lines.append(f"  {choice:<6} 问了 {len(said)} 句，有意见 {len(opinions)} 句"
                     f"（{len(opinions) / max(len(said), 1):.0%}），其中和标签一致 {right} 句"
                     f"（{right / max(len(opinions), 1):.0%}）；合起来：{shown(scores(cases, outcome.passed))}")
    asked = max(judge.asked, 1)
    lines.append(f"  这次一共请模型回答了 {judge.asked} 句不同的话（另外 {judge.reused} 次用的是问过的回答："
                 f"同一句话在几种选择里、或者 --replies 文件里），"
                 f"平均 {judge.seconds / asked:.1f} 秒一句")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="在 CiteCheck dev 上比较 --judge-ask 的几种选择（交叉验证的支持分）。")
    parser.add_argument("--data", default=str(DEFAULT_DATA), help="JSON Lines 标注文件（默认 shared 里的 dev 集）")
    parser.add_argument("--choices", default=",".join(JUDGE_ASK), help="要比较的选择，逗号分隔（默认全部）")
    parser.add_argument("--sample", type=int, default=0,
                        help=f"按标签分层、固定种子（{SEED}）抽这么多条（0 表示全部）")
    parser.add_argument("--judge-model", metavar="M", help="同时请这个真的评判模型回答（要和 --url 一起用）")
    parser.add_argument("--url", metavar="U", help="评判模型所在的 OpenAI 兼容服务")
    parser.add_argument("--context-window", type=int, default=MODEL_DEFAULTS.context_window,
                        help="评判模型的上下文窗口，和 --judge 一样用来缩短资料"
                             f"（默认 {MODEL_DEFAULTS.context_window}）")
    parser.add_argument("--replies", metavar="FILE",
                        help="把评判模型的回答存进这个 JSON 文件（提示词 → 回答），下次同样的提示词直接用它："
                             "中断了可以接着跑，几次运行（比如先 band,risky、再抽样 all）不重复问")
    args = parser.parse_args(argv)
    choices = [choice for choice in args.choices.split(",") if choice]
    unknown = [choice for choice in choices if choice not in JUDGE_ASK]
    if unknown or bool(args.judge_model) != bool(args.url):
        parser.error(f"不认识的选择：{'、'.join(unknown)}" if unknown else "--judge-model 和 --url 要一起给")
    cases = load_cases(Path(args.data))
    if args.sample:
        cases = sampled(cases, args.sample)
    band = asking_band(DEFAULT_RULE)
    assert band is not None
    positions = miss_positions(cases)
    print(f"数据：{args.data}（{len(cases)} 条{'，固定种子分层抽样' if args.sample else ''}）；"
          f"支持分来自 {FOLDS} 折交叉验证（种子 {SEED}），切点 {support_model().cut:.3f}，"
          f"询问区间 [{band[0]:.3f}, {band[1]:.3f})")
    print(f"支持分放过的“不支持”陈述 {sum(positions.values())} 条：在询问区间之上 {positions['above']}、之中 "
          f"{positions['inside']}、之下 {positions['below']}，没有支持分（太短）{positions['unscored']}")
    print(f"不问评判模型：{shown(scores(cases, [case.report.passed for case in cases]))}")
    print("\n".join(coverage_lines(cases, choices)))
    print("\n".join(simulation_lines(cases, choices)))
    if args.judge_model:
        judge = RealJudge(args.judge_model, args.url, args.context_window, Path(args.replies) if args.replies else None)
        print("\n".join(measured_lines(cases, choices, judge)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
