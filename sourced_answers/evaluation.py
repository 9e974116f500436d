"""--eval：几个模型回答同一组问题，比较通过率、各类问题的个数和速度。

每个问题只搜索、读取一次，所有模型用同样的资料（也省秘塔的积分）；缺哪些模型在第一次搜索之前一起说。
"""
import json
import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from sourced_answers.check_steps import rewriter
from sourced_answers.checker import Source, check_answer
from sourced_answers.config import MAX_QUESTION, Config, clean_question
from sourced_answers.errors import ExitCode, InputError, UsageError
from sourced_answers.gather import MetasoSession
from sourced_answers.json_lines import read_lines
from sourced_answers.model_client import ModelError, ModelUnreachable, chat
from sourced_answers.network import os_error_text
from sourced_answers.preflight import check_before_paying, model_key
from sourced_answers.prompts import fitted_prompt
from sourced_answers.repair import fix_answer
from sourced_answers.retrying import Deadline
from sourced_answers.safe_output import Output
from sourced_answers.thinking import without_thinking

PROBLEM_KINDS = ("missing_source", "uncited_paragraph", "weak_support", "number_mismatch")
KIND_HEADERS = ("编号不存在", "段落无引用", "对不上", "数字不符")

EvalRecord = dict[str, Any]


def read_questions(path: str) -> list[str]:
    """问题文件：每行一个问题，# 开头的行是注释。和 --verify 的输入一样一行一行地读，每行有上限（/dev/zero 这样
    没有换行的输入也不会把内存读满）。"""
    name = f"问题文件 {path}"
    try:
        with open(path, "rb") as handle:
            lines = list(read_lines(handle, name, MAX_QUESTION * 4, question_too_long))
    except OSError as error:
        raise UsageError(f"读不了问题文件 {path}：{os_error_text(error)}") from None
    questions = [clean_question(line, f"{name} 第 {number} 行的问题")
                 for number, line in lines if line.strip() and not line.lstrip().startswith("#")]
    if not questions:
        raise UsageError(f"问题文件 {path} 里没有问题（每行一个，# 开头的行是注释）")
    return questions


def question_too_long(name: str, number: int) -> InputError:
    return InputError(f"{name} 第 {number} 行的问题太长，请控制在 {MAX_QUESTION} 个字符以内")


def eval_one(question: str, sources: Sequence[Source], model: str, config: Config, deadline: Deadline) -> EvalRecord:
    """一个模型回答一个问题并核对。返回一条记录（--json 的一行）。"""
    record: EvalRecord = {"model": model, "question": question, "passed": False, "problems": {}, "error": None,
                          "seconds": None, "first_text_seconds": None, "completion_tokens": None,
                          "tokens_per_second": None}
    messages, _ = fitted_prompt(question, sources, config.max_tokens, config.context_window)
    try:
        result = chat(messages, model, config.model_url, stream=True, max_tokens=config.max_tokens,
                      deadline=deadline, key=model_key(config))
        answer = without_thinking(result.text)
        first = result.first_text_seconds
        speed = result.tokens_per_second
        record.update(seconds=round(result.seconds, 3), completion_tokens=result.generated_tokens,
                      first_text_seconds=round(first, 3) if first else None,
                      tokens_per_second=round(speed, 1) if speed else None)
        if not answer:
            raise ModelError("模型返回了空回答")
    except ModelUnreachable:
        raise  # 服务不在，剩下的也不用跑了
    except ModelError as error:
        record["error"] = str(error)
        return record
    report = check_answer(answer, sources, config.support_rule)
    record["passed"] = report.passed
    record["problems"] = dict(Counter(p.kind for p in report.problems))
    if config.fix:
        started = time.monotonic()
        ask = rewriter(question, sources, model, config, deadline, lambda message: None)
        _, fixed_report, repairs = fix_answer(answer, sources, config.support_rule, config.fix_rounds, ask)
        record.update(passed_after_fix=fixed_report.passed, repairs=len(repairs),
                      fix_seconds=round(time.monotonic() - started, 3))
    return record


def eval_table(records: Sequence[EvalRecord], models: Sequence[str], fix: bool = False) -> str:
    header = ["模型", "问题", "通过", "通过率", *KIND_HEADERS, "出错", "平均用时(秒)", "token/秒"]
    if fix:
        header += ["修正后通过", "修正后通过率", "每个回答修正处数", "修正用时(秒)"]
    rows = [header]
    for model in models:
        runs = [r for r in records if r["model"] == model]
        passed = sum(r["passed"] for r in runs)
        kinds = [sum(r["problems"].get(kind, 0) for r in runs) for kind in PROBLEM_KINDS]
        timed = [r["seconds"] for r in runs if r["seconds"] is not None]
        speeds = [r["tokens_per_second"] for r in runs if r["tokens_per_second"]]
        rows.append([model, str(len(runs)), str(passed), f"{passed / len(runs):.0%}", *map(str, kinds),
                     str(sum(r["error"] is not None for r in runs)),
                     f"{sum(timed) / len(timed):.1f}" if timed else "-",
                     f"{sum(speeds) / len(speeds):.1f}" if speeds else "-"])
        if fix:
            rows[-1] += fix_cells(runs)
    return "\n".join(" | ".join(row) for row in rows) + "\n"


def fix_cells(runs: Sequence[EvalRecord]) -> list[str]:
    """--eval --fix 的四列：修正后通过的个数和比例、平均每个回答修正几处、修正多花的平均时间（模型改写）。"""
    fixed = [r for r in runs if "passed_after_fix" in r]
    if not fixed:
        return ["-", "-", "-", "-"]
    passed = sum(r["passed_after_fix"] for r in fixed)
    return [str(passed), f"{passed / len(runs):.0%}", f"{sum(r['repairs'] for r in fixed) / len(fixed):.1f}",
            f"{sum(r['fix_seconds'] for r in fixed) / len(fixed):.1f}"]


def progress_bar(total: int, stream: Any) -> Any:
    """--eval 的进度条（tqdm）：问题 × 模型，已经做了几个、每个多久、还要多久。没有地方画时为 None。"""
    if stream is None:
        return None
    from tqdm import tqdm
    return tqdm(total=total, unit="个", file=stream, dynamic_ncols=True, leave=False, desc="问题 × 模型")


def run_eval(config: Config, out: Output, log: Callable[[str], None], progress: Any = None) -> int:
    """progress：画进度条的地方（标准错误是终端时由 main 给出）：问题 × 模型做了几个、还要多久。"""
    questions = read_questions(config.eval or "")
    models = config.models
    deadline = Deadline(config.timeout)
    check_before_paying(config, models, deadline)  # 缺哪些模型，在第一次搜索之前一起说
    gathered = {}
    with MetasoSession(config, log, deadline) as metaso:
        for number, question in enumerate(questions, 1):
            log(f"[资料 {number}/{len(questions)}] {question}")
            gathered[question] = metaso.gather(question)
    records = []
    total = len(models) * len(questions)
    bar = progress_bar(total, progress)
    for model in models:
        for question in questions:
            record = eval_one(question, gathered[question], model, config, deadline)
            records.append(record)
            if bar is not None:
                bar.update(1)
            verdict = "出错" if record["error"] else "通过" if record["passed"] else "没通过"
            took = f"，{record['seconds']:.1f} 秒" if record["seconds"] is not None else ""
            log(f"[{len(records)}/{total}] {model} · {question} → {verdict}{took}")
            if record["error"]:
                log(f"  {record['error']}")
            if config.json:
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
                out.flush()
    if bar is not None:
        bar.close()
    if not config.json:
        out.write(eval_table(records, models, config.fix))
    metaso.report_savings()
    if any(r["error"] for r in records):
        return ExitCode.SERVICE
    return ExitCode.PASSED if all(r.get("passed_after_fix", r["passed"]) for r in records) else ExitCode.FAILED
