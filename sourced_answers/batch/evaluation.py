"""--eval：几个模型回答同一组问题，比较通过率、各类问题的个数和速度。

每个问题只搜索、读取一次，所有模型用同样的资料（也省秘塔的积分）；缺哪些模型在第一次搜索之前一起说。
每个回答走的是和回答问题同一段代码（check_steps：长度上限、空回答、核对、--fix、--judge），
表的“各类问题”一栏一栏来自 checker 的 PROBLEM_KINDS，新加的种类自动多一栏。
记录里有服务报告的、实际回答的模型（served_model）：llama.cpp 这类服务不管请求哪个名字都用同一个模型回答，
两个名字其实是同一个模型时要让人看得见。模型服务半路没了：已经完成的结果照常输出，退出码 3。
"""
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, NamedTuple

from sourced_answers.checker import PROBLEM_KINDS, Source
from sourced_answers.core.errors import (
    ExitCode,
    InputError,
    ModelError,
    ModelUnreachable,
    NoResults,
    QuestionError,
    UsageError,
)
from sourced_answers.core.masking import masked_json
from sourced_answers.core.network import os_error_text
from sourced_answers.core.questions import MAX_QUESTION, clean_question
from sourced_answers.core.retrying import Deadline
from sourced_answers.core.safe_output import Output
from sourced_answers.core.settings import ModelSettings, RunSettings, Settings
from sourced_answers.core.strings import literal
from sourced_answers.model.messages import ChatResult, Message
from sourced_answers.model.model_client import chat
from sourced_answers.model.preflight import check_before_paying, ollama_name
from sourced_answers.model.prompts import answer_prompt
from sourced_answers.outputs.json_lines import read_lines
from sourced_answers.search.backend import BACKENDS
from sourced_answers.search.gather import SourceSession
from sourced_answers.steps.check_steps import Checked, answer_of, check_reply, judge_asker, rewriter

EvalRecord = dict[str, Any]
Log = Callable[[str], None]


def read_questions(path: str) -> list[str]:
    """问题文件：每行一个问题，# 开头的行是注释。和 --verify 的输入一样一行一行地读，每行有上限（/dev/zero 这样
    没有换行的输入也不会把内存读满）。"""
    name = f"问题文件 {literal(path)}"  # 说明里的文件名：一行，控制字符看得见
    try:
        with open(path, "rb") as handle:
            lines = list(read_lines(handle, name, MAX_QUESTION * 4, question_too_long))
    except OSError as error:
        raise UsageError(f"读不了{name}：{os_error_text(error)}") from None
    questions = [clean_question(line, f"{name} 第 {number} 行的问题")
                 for number, line in lines if line.strip() and not line.lstrip().startswith("#")]
    if not questions:
        raise UsageError(f"{name} 里没有问题（每行一个，# 开头的行是注释）")
    return questions


def question_too_long(name: str, number: int) -> InputError:
    return InputError(f"{name} 第 {number} 行的问题太长，请控制在 {MAX_QUESTION} 个字符以内")


class Gathered(NamedTuple):
    """一个问题的资料和回答它的提示词（所有模型都用这一份）。"""
    sources: list[Source]
    messages: list[Message]


def empty_record(question: str, model: str) -> EvalRecord:
    return {"model": model, "served_model": None, "question": question, "passed": False, "problems": {},
            "error": None, "truncated": False, "seconds": None, "first_text_seconds": None,
            "completion_tokens": None, "tokens_per_second": None}


def eval_one(question: str, gathered: Gathered | None, model: ModelSettings, settings: Settings, deadline: Deadline,
             log: Log = lambda message: None) -> EvalRecord:
    """一个模型回答一个问题，和回答问题时一样收尾、核对（--fix 修正、--judge 请评判模型）。
    返回一条记录（--json 的一行）。连不上模型服务时抛 ModelUnreachable（剩下的也不用跑了）；
    别的出错记在记录的 error 里。gathered 是 None：搜索后端没有搜到结果，不问模型，记为出错。"""
    record = empty_record(question, model.name)
    if gathered is None:
        record["error"] = f"{BACKENDS[settings.search.backend].label}没有搜到这个问题的资料，没有请模型回答"
        return record
    sources = gathered.sources
    try:
        result = chat(gathered.messages, model, deadline, stream=True, on_retry=log)
        record.update(answer_fields(result))
        reply = answer_of(result, model.name, model.max_tokens, log)
    except ModelUnreachable:
        raise
    except ModelError as error:
        record["error"] = str(error)
        return record
    checked = check_reply(reply, model.name, sources, settings.check,
                          rewriter(question, sources, model, deadline, log), log,
                          judge_asker(settings.judge, settings.model, deadline))
    record.update(check_fields(checked))
    return record


def answer_fields(result: ChatResult) -> EvalRecord:
    """记录里说回答本身的字段：实际回答的模型、是否被长度上限截断、用时和速度。"""
    first = result.first_text_seconds
    speed = result.tokens_per_second
    return {"served_model": result.served_model, "truncated": result.truncated, "seconds": round(result.seconds, 3),
            "completion_tokens": result.generated_tokens, "first_text_seconds": round(first, 3) if first else None,
            "tokens_per_second": round(speed, 1) if speed else None}


def check_fields(checked: Checked) -> EvalRecord:
    """记录里说核对的字段。用了 --fix 时 passed、problems 说的是修正前的回答，passed_after_fix 是修正（和评判）之后的；
    评判模型出错时 error 是它的说明（字面核对的结论照样在）。"""
    before = checked.fix.before if checked.fix else checked.report
    fields: EvalRecord = {"passed": before.passed, "problems": dict(Counter(p.kind for p in before.problems))}
    if checked.fix:
        fields.update(passed_after_fix=checked.report.passed, repairs=len(checked.fix.repairs),
                      fix_seconds=round(checked.fix.seconds, 3))
    if checked.judged:
        fields["judge_calls"] = len(checked.judged.calls)
    if checked.step_error or checked.no_answer:
        fields["error"] = checked.no_answer or checked.step_error
    return fields


def kind_columns(records: Sequence[EvalRecord]) -> dict[str, str]:
    """表里“各类问题”的列：PROBLEM_KINDS 的每一种（按它的顺序），再加上记录里出现、却没登记的种类（不悄悄丢掉）。"""
    columns = {name: kind.label for name, kind in PROBLEM_KINDS.items()}
    for record in records:
        for kind in record["problems"]:
            columns.setdefault(kind, kind)
    return columns


def served_differs(record: EvalRecord) -> bool:
    """服务报告的模型名和请求的不一样（Ollama 的“名字”和“名字:latest”算一样）。"""
    served = record.get("served_model")
    return isinstance(served, str) and ollama_name(served) != ollama_name(record["model"])


def short_name(served: str) -> str:
    """表格里的模型名：llama.cpp 报告的是模型文件的完整路径，表里只写文件名（--json 和提醒里是完整的）。"""
    if served.startswith("/") or re.match(r"[A-Za-z]:[\\/]", served):
        return re.split(r"[\\/]", served)[-1] or served
    return served


def served_notes(records: Sequence[EvalRecord]) -> list[str]:
    """实际回答的模型和请求的不一样时要说的话；几个名字是同一个模型回答的，特别说一句（比较它们没有意义）。"""
    notes = []
    answered_by: dict[str, list[str]] = {}
    for record in records:
        served = record.get("served_model")
        if not served:
            continue
        names = answered_by.setdefault(served, [])
        if record["model"] not in names:
            names.append(record["model"])
            if served_differs(record):
                notes.append(f"⚠ 请求的模型是 {record['model']}，模型服务报告回答的是 {served}")
    for served, names in answered_by.items():
        if len(names) > 1:
            notes.append(f"⚠ 模型 {'、'.join(names)} 都是 {served} 回答的（模型服务报告的名字相同）："
                         f"比较的很可能是同一个模型。llama.cpp 这类服务不管请求哪个名字，都用它加载的那一个模型回答")
    return notes


def eval_table(records: Sequence[EvalRecord], models: Sequence[str], fix: bool = False) -> str:
    """每个模型一行（还没有结果的模型不列）。实际回答的模型和请求的不一样时，最后多一列“服务报告的模型”。"""
    kinds = kind_columns(records)
    header = ["模型", "问题", "通过", "通过率", *kinds.values(), "截断", "出错", "平均用时(秒)", "token/秒"]
    if fix:
        header += ["修正后通过", "修正后通过率", "每个回答修正处数", "修正用时(秒)"]
    show_served = any(served_differs(r) for r in records)
    if show_served:
        header.append("服务报告的模型")
    rows = [header]
    for model in models:
        runs = [r for r in records if r["model"] == model]
        if not runs:
            continue
        passed = sum(r["passed"] for r in runs)
        counts = [sum(r["problems"].get(kind, 0) for r in runs) for kind in kinds]
        timed = [r["seconds"] for r in runs if r["seconds"] is not None]
        speeds = [r["tokens_per_second"] for r in runs if r["tokens_per_second"]]
        rows.append([model, str(len(runs)), str(passed), f"{passed / len(runs):.0%}", *map(str, counts),
                     str(sum(bool(r.get("truncated")) for r in runs)),
                     str(sum(r["error"] is not None for r in runs)),
                     f"{sum(timed) / len(timed):.1f}" if timed else "-",
                     f"{sum(speeds) / len(speeds):.1f}" if speeds else "-"])
        if fix:
            rows[-1] += fix_cells(runs)
        if show_served:
            served = dict.fromkeys(short_name(r["served_model"]) for r in runs if r.get("served_model"))
            rows[-1].append("、".join(served) or "-")
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


def progress_lines(record: EvalRecord, notes: Sequence[str], done: int, total: int) -> list[str]:
    """一个回答做完时标准错误里的几行：结论和用时，下面缩进的是这一个回答的提醒（截断、修正、评判）和出错的说明。"""
    verdict = "出错" if record["error"] else "通过" if record["passed"] else "没通过"
    took = f"，{record['seconds']:.1f} 秒" if record["seconds"] is not None else ""
    lines = [f"[{done}/{total}] {record['model']} · {record['question']} → {verdict}{took}"]
    lines += [f"  {note}" for note in notes]
    if record["error"]:
        lines.append(f"  {literal(record['error'], None)}")
    return lines


def stopped_message(error: ModelError, done: int, total: int) -> str:
    """模型服务半路没了：说清楚停在哪里、已经完成的结果在哪里（付过费的回答一个也不丢）。"""
    kept = f"已经完成的 {done} 个结果照常输出（表格，或 --json 的每一行）" if done else "还没有完成的结果"
    return f"{error}\n--eval 在第 {done + 1}/{total} 个回答时停下了：{kept}，剩下的 {total - done} 个没有做"


def run_eval(settings: Settings, out: Output, log: Log, progress: Any = None) -> int:
    """progress：画进度条的地方（标准错误是终端时由 main 给出）：问题 × 模型做了几个、还要多久。"""
    run = settings.run
    questions = read_questions(run.eval or "")
    models = run.models
    deadline = run.deadline()
    check_before_paying(settings.model, models, settings.judge, deadline)  # 缺哪些模型，在第一次搜索之前一起说
    with SourceSession(settings.search, log, deadline, settings.run.secrets) as session:
        gathered = gather_all(session, questions, settings.model, log)
    records: list[EvalRecord] = []
    total = len(models) * len(questions)
    bar = progress_bar(total, progress)
    said: set[str] = set()
    stopped = None
    try:
        for model in models:
            for question in questions:
                notes: list[str] = []
                records.append(eval_one(question, gathered[question], replace(settings.model, name=model), settings,
                                        deadline, notes.append))
                if bar is not None:
                    bar.update(1)
                report_one(records, notes, total, said, run, out, log)
    except ModelUnreachable as error:
        stopped = error  # 服务没了：下面照常输出已经完成的结果，再报告
    finally:
        # 出了任何事（连不上、Ctrl-C、程序自己的错）也先把已经付过费的结果写出来
        if bar is not None:
            bar.close()
        if records and not run.json:
            out.write(eval_table(records, models, settings.check.fix))
    session.report_savings()
    if stopped is not None:
        raise ModelUnreachable(stopped_message(stopped, len(records), total)) from None
    if any(r["error"] for r in records):
        return ExitCode.SERVICE
    return ExitCode.PASSED if all(r.get("passed_after_fix", r["passed"]) for r in records) else ExitCode.FAILED


def gather_all(session: SourceSession, questions: Sequence[str], model: ModelSettings,
               log: Log) -> dict[str, Gathered | None]:
    """每个问题搜索、读取一次，提示词也只建一次（所有模型共用）；提示词放不下上下文窗口时和回答问题时一样说一句。
    一个问题没有搜到结果只记在这个问题上（None），其余的问题照跑；后端别的错误（秘塔的密钥、余额）停下整次运行。"""
    gathered: dict[str, Gathered | None] = {}
    for number, question in enumerate(questions, 1):
        log(f"[资料 {number}/{len(questions)}] {question}")
        try:
            sources = session.gather(question)
        except (NoResults, QuestionError) as error:  # 没有结果；问题里除了密钥没有别的字
            log(f"  ✗ {literal(error, None)}：这个问题不请模型回答，记为出错")
            gathered[question] = None
            continue
        messages, note = answer_prompt(question, sources, model.max_tokens, model.context_window, model.token_rate,
                                       model.prompt_budget)
        if note:
            log(f"  {note}")
        gathered[question] = Gathered(sources, messages)
    return gathered


def report_one(records: Sequence[EvalRecord], notes: Sequence[str], total: int, said: set[str], run: RunSettings,
               out: Output, log: Log) -> None:
    """刚做完的一个（records 的最后一条）：标准错误里的进度和提醒；实际回答的模型第一次不对时说一次（said：说过的）；
    --json 时立刻写出这一行（服务半路没了，写出去的都还在）。"""
    record = records[-1]
    for line in progress_lines(record, notes, len(records), total):
        log(line)
    for note in served_notes(records):
        if note not in said:
            said.add(note)
            log(note)
    if run.json:
        out.write(masked_json(record, run.secrets))
        out.flush()
