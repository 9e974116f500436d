"""--verify：核对保存下来的回答（--json 的输出，一个对象或 JSON Lines），不搜索、不调用回答的模型。

JSON Lines 一行一行地读、一行一行地写（按输入的顺序），内存不随输入变大；--jobs N 用 N 个进程一起核对，
输出和 --jobs 1 一字不差。读的是文件时先快速过一遍，格式不对就在输出任何东西之前报错（标准输入只能读一遍，
所以是读到哪一行出错就在哪一行停）。结束时在标准错误里给一段汇总（--summary 另存为 JSON）；标准错误是终端时
显示进度条。可以加 --fix（只做确定性修正）、--judge（请评判模型看支持分拿不准的句子，这时只用一个进程）和 --html。

verify_record 是给别的程序（比如 cluster.py 的 Dask 任务）用的库函数：一条记录进去，--verify --json 的那个 dict 出来。
"""
import json
import multiprocessing
import os
import signal
import stat
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any

from sourced_answers.check_steps import Checked, check_and_fix, judge_asker
from sourced_answers.config import Config
from sourced_answers.errors import ExitCode, InputError
from sourced_answers.judge import JudgeAsk
from sourced_answers.network import os_error_text
from sourced_answers.preflight import check_models, judge_key, probe_timeout
from sourced_answers.records import (
    Record,
    SavedAnswer,
    json_problem,
    parse_saved_answers,
    saved_answer,
)
from sourced_answers.render import render_result
from sourced_answers.retrying import Deadline
from sourced_answers.review_page import save_review_page
from sourced_answers.safe_output import Output

# 每个进程一次拿这么多行；同时在路上的批数最多是进程数的这么多倍（内存因此有上限）
BATCH = 32
WINDOW_PER_JOB = 4
SLOWEST = 5

Line = tuple[int | None, str]


# ---------- 库函数 ----------

def verify_record(record: Mapping[str, Any], threshold: float | None = None, fix: bool = False,
                  rule: str = "score") -> Record:
    """核对一条保存下来的回答：和 --verify --json 打印的那一行是同一个 dict。格式不对时抛 InputError。
    rule、threshold 和 --rule、--threshold 一样（threshold 为 None 时用那条规则的默认值）。"""
    saved = saved_answer(dict(record), None, "记录：")
    checked = check_and_fix(saved.answer, saved.sources, Config(rule=rule, threshold=threshold, fix=fix))
    return checked.record(saved.question, saved.model)


# ---------- 读输入 ----------

def open_input(path: str, stdin: IO[bytes]) -> IO[bytes]:
    if path == "-":
        return stdin
    try:
        return open(path, "rb")  # noqa: SIM115  由调用方关闭
    except OSError as error:
        raise InputError(f"读不了 {path}：{os_error_text(error)}") from None


def decoded(raw: bytes, number: int, name: str) -> str:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{name} 不是 UTF-8 编码（第 {number} 行）") from None
    return text.removeprefix("\ufeff") if number == 1 else text


def saved_lines(handle: IO[bytes], name: str) -> Iterator[Line]:
    """按行给出 (行号, 文字)。整个输入只有一个 JSON 值时给出 (None, 全文)：它可能跨好几行（缩进过的 JSON）。"""
    rows = ((number, decoded(raw, number, name)) for number, raw in enumerate(handle, 1))
    nonblank = ((number, text) for number, text in rows if text.strip())
    first = next(nonblank, None)
    if first is None:
        raise InputError(f"{name} 是空的")
    try:
        json.loads(first[1])
    except (ValueError, RecursionError):
        # 第一行不是完整的 JSON：整个输入是一个跨行的 JSON 值（或者格式不对，parsed 会说是第几行），一起读进来
        rest = "".join(text for _, text in rows)
        yield None, "\n" * (first[0] - 1) + first[1] + rest
        return
    second = next(nonblank, None)
    if second is None:
        yield None, first[1]
        return
    yield first
    yield second
    yield from nonblank


def parsed(line: Line, name: str) -> SavedAnswer:
    """一行 → SavedAnswer（格式不对时抛 InputError，说明是第几行）。"""
    number, text = line
    if number is None:
        [answer] = parse_saved_answers(text, name)
        return answer
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as error:
        raise InputError(f"{name} 第 {number} 行不是合法的 JSON：{json_problem(error)}") from None
    return saved_answer(data, number, f"{name} 第 {number} 行：")


# ---------- 核对一批行（可以在别的进程里） ----------

@dataclass(frozen=True)
class Options:
    """核对每一行要知道的（能交给别的进程）。"""
    name: str
    rule: str
    threshold: float | None
    fix: bool
    json: bool
    keep_records: bool  # --html 要把每条记录留下来做页面
    several: bool  # 多条记录时，文字输出在每条前面写“── 第 N 行 ──”
    judge_model: str | None = None  # --judge（只在本进程里用）
    judge_url: str = ""
    judge_all: bool = False


@dataclass
class Result:
    """一行的结果：要打印的文字、结论、问题种类、用时；出错时 error 是说明（这一行之后就停）。"""
    line: int | None
    output: str = ""
    passed: bool = False
    kinds: list[str] = field(default_factory=list)
    seconds: float = 0.0
    record: Record | None = None
    error: str | None = None
    step_error: str | None = None


def check_line(line: Line, options: Options, judge: JudgeAsk | None = None) -> Result:
    started = time.perf_counter()
    try:
        saved = parsed(line, options.name)
    except InputError as error:
        return Result(line[0], error=str(error))
    config = Config(rule=options.rule, threshold=options.threshold, fix=options.fix,
                    judge=options.judge_model if judge else None, judge_url=options.judge_url,
                    judge_all=options.judge_all)
    checked: Checked = check_and_fix(saved.answer, saved.sources, config, judge=judge)
    record = checked.record(saved.question, saved.model)
    if options.json:
        output = json.dumps(record, ensure_ascii=False) + "\n"
    else:
        header = f"── 第 {saved.line} 行 ──\n" if saved.line and options.several else ""
        output = header + render_result(checked) + "\n"
    return Result(saved.line, output, checked.report.passed, sorted({p.kind for p in checked.report.problems}),
                  round(time.perf_counter() - started, 4), record if options.keep_records else None,
                  step_error=checked.step_error)


def check_batch(batch: list[Line], options: Options) -> list[Result]:
    """在工作进程里核对一批行。"""
    return [check_line(line, options) for line in batch]


def validate_batch(batch: list[Line], name: str) -> list[str | None]:
    """在工作进程里只检查格式：每行给出错误说明或 None。"""
    results: list[str | None] = []
    for line in batch:
        try:
            parsed(line, name)
            results.append(None)
        except InputError as error:
            results.append(str(error))
    return results


def ignore_interrupts() -> None:
    """工作进程不理会 Ctrl-C（终端把它发给整个进程组）：由主进程结束它们，不然每个进程都会打出一段报错堆栈。"""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class Workers:
    """jobs 个工作进程，第一次真的需要时才启动，两遍（检查格式、核对）共用；用完 close()。

    forkserver：新进程从一个干净的服务进程分出来，不继承本进程的线程和锁（直接 fork 在有线程的进程里可能卡住），
    又不用像 spawn 那样每个进程都重新导入一遍。"""

    def __init__(self, jobs: int) -> None:
        self.jobs = jobs
        self.pool: Any = None

    def ordered(self, work: Callable[..., list[Any]], lines: Iterable[Line], argument: Any) -> Iterator[Any]:
        """按输入的顺序给出 work(一批行, argument) 的每一个结果，同时在路上的批数有上限（内存不随输入变大）。
        输入不多（不到 jobs 批）时就在本进程里做：开进程不划算。"""
        jobs = self.jobs
        lines = iter(lines)
        head = [line for _, line in zip(range(jobs * BATCH), lines, strict=False)]
        if jobs <= 1 or len(head) < jobs * BATCH:
            for batch in batches(line for part in (head, lines) for line in part):
                yield from work(batch, argument)
            return
        if self.pool is None:
            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload(["sourced_answers.verification"])
            self.pool = context.Pool(jobs, initializer=ignore_interrupts)
        pending: deque[Any] = deque()
        for batch in batches(line for part in (head, lines) for line in part):
            pending.append(self.pool.apply_async(work, (batch, argument)))
            if len(pending) >= jobs * WINDOW_PER_JOB:
                yield from pending.popleft().get()
        while pending:
            yield from pending.popleft().get()

    def close(self) -> None:
        if self.pool is not None:
            self.pool.terminate()
            self.pool.join()
            self.pool = None


def batches(lines: Iterable[Line], size: int = BATCH) -> Iterator[list[Line]]:
    batch: list[Line] = []
    for line in lines:
        batch.append(line)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def in_order(lines: Iterable[Line], options: Options, workers: Workers) -> Iterator[Result]:
    """按输入的顺序给出每一行的结果（内存不随输入变大）。"""
    return workers.ordered(check_batch, lines, options)


# ---------- 汇总 ----------

@dataclass
class Summary:
    records: int = 0
    passed: int = 0
    failed: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    slowest: list[tuple[float, int | None]] = field(default_factory=list)
    seconds: float = 0.0

    def add(self, result: Result) -> None:
        self.records += 1
        self.passed += result.passed
        self.failed += not result.passed
        self.kinds.update(result.kinds)
        self.slowest = sorted([*self.slowest, (result.seconds, result.line)], reverse=True)[:SLOWEST]

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["kinds"] = dict(self.kinds.most_common())
        data["slowest"] = [{"line": line, "seconds": seconds} for seconds, line in self.slowest]
        data["records_per_second"] = round(self.records / self.seconds, 1) if self.seconds else None
        data["seconds"] = round(self.seconds, 3)
        return data

    def lines(self) -> list[str]:
        kinds = "、".join(f"{kind} {count}" for kind, count in self.kinds.most_common()) or "无"
        slowest = "、".join(f"第 {line} 行 {seconds:.2f} 秒" for seconds, line in self.slowest if line)
        speed = f"，{self.records / self.seconds:.0f} 条/秒" if self.seconds else ""
        head = f"汇总：{self.records} 条，通过 {self.passed}，没通过 {self.failed}（用时 {self.seconds:.1f} 秒{speed}）"
        return [head, f"  问题按种类：{kinds}", *([f"  最慢的几条：{slowest}"] if slowest else [])]


def write_summary(path: str, summary: Summary) -> None:
    try:
        Path(path).write_text(json.dumps(summary.to_dict(), ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    except OSError as error:
        raise InputError(f"写不了汇总 {path}：{os_error_text(error)}") from None


# ---------- --verify ----------

def verify(config: Config, out: Output, log: Callable[[str], None], stdin: IO[bytes],
           progress_stream: Any = None) -> int:
    """progress_stream：画进度条的地方（标准错误是终端时由 main 给出；否则 None，不画）。"""
    path = config.verify or "-"
    name = "标准输入" if path == "-" else path
    workers = Workers(1 if config.judge else max(1, config.jobs))
    try:
        return verify_with(workers, config, out, log, stdin, progress_stream, path, name)
    finally:
        workers.close()


def regular_file(path: str) -> bool:
    """能读两遍的输入：普通文件。标准输入、管道、<(zcat …) 这样的进程替换只能读一遍。"""
    try:
        return path != "-" and stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False  # 打不开的由下面 open_input 报


def verify_with(workers: Workers, config: Config, out: Output, log: Callable[[str], None], stdin: IO[bytes],
                progress_stream: Any, path: str, name: str) -> int:
    if regular_file(path):
        with open_input(path, stdin) as handle:  # 先过一遍：格式不对的输入在输出任何东西之前就报错
            for error in workers.ordered(validate_batch, saved_lines(handle, name), name):
                if error:
                    raise InputError(error)
    if config.judge:
        check_models(config.judge_url, [config.judge], role="评判模型", timeout=probe_timeout(config),
                     key=judge_key(config))
    judge = judge_asker(config, Deadline(config.timeout))
    handle = open_input(path, stdin)
    try:
        lines = saved_lines(handle, name)
        first = next(lines)
        several = first[0] is not None
        options = Options(name, config.rule, config.threshold, config.fix, config.json, bool(config.html), several,
                          config.judge, config.judge_url, config.judge_all)
        progress = Progress(input_size(handle), progress_stream) if progress_stream and several else None
        return run_lines(config, [first], lines, options, workers, judge, out, log, handle, progress)
    finally:
        if handle is not stdin:
            handle.close()


def run_lines(config: Config, head: list[Line], rest: Iterator[Line], options: Options, workers: Workers,
              judge: JudgeAsk | None, out: Output, log: Callable[[str], None], handle: IO[bytes],
              progress: "Progress | None") -> int:
    summary = Summary()
    started = time.perf_counter()
    reviewed: list[Record] = []
    step_error = None
    lines = (line for part in (head, rest) for line in part)
    try:
        asker = [judge]  # 评判模型出错之后换成 None：剩下的回答不再问它，只做字面核对
        results = in_order(lines, options, workers) if not judge else (check_line(line, options, asker[0])
                                                                      for line in lines)
        for result in results:
            if result.error:
                raise InputError(result.error)
            out.write(result.output)
            summary.add(result)
            if result.step_error and not step_error:
                step_error = result.step_error
                asker[0] = None
            if result.record is not None:
                reviewed.append(result.record)
            if progress:
                progress.update(summary.records, handle)
    finally:
        if progress:
            progress.close()
    summary.seconds = time.perf_counter() - started
    if options.several:
        for text in summary.lines():
            log(text)
    if config.summary:
        write_summary(config.summary, summary)
    if step_error:
        log(f"✗ {step_error}（回答和字面核对的结论已经输出）")
    if config.html:
        out.flush()
        save_review_page(config.html, reviewed, config.secrets)
    if step_error:
        return ExitCode.SERVICE
    return ExitCode.PASSED if summary.failed == 0 else ExitCode.FAILED


class Progress:
    """标准错误上的进度条（tqdm）：已经核对了几条、每秒几条；输入是文件时按读到的字节估计还要多久。"""

    def __init__(self, total: int | None, stream: Any) -> None:
        from tqdm import tqdm
        self.bar = tqdm(total=total, unit="B", unit_scale=True, file=stream, dynamic_ncols=True, leave=False,
                        desc="核对")
        self.position = 0
        self.started = time.perf_counter()

    def update(self, records: int, handle: IO[bytes]) -> None:
        try:
            position = handle.tell()
        except (OSError, ValueError):
            position = self.position
        self.bar.update(max(0, position - self.position))
        self.position = position
        speed = records / max(time.perf_counter() - self.started, 1e-9)
        self.bar.set_postfix_str(f"{records} 条，{speed:.0f} 条/秒", refresh=False)

    def close(self) -> None:
        self.bar.close()


def input_size(handle: IO[bytes]) -> int | None:
    """输入文件的字节数（标准输入、管道时不知道）。"""
    try:
        size = os.fstat(handle.fileno()).st_size
    except (OSError, ValueError, AttributeError):
        return None
    return size or None
