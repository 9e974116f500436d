"""--verify：核对保存下来的回答（--json 的输出，一个对象或 JSON Lines），不搜索、不调用回答的模型。

一行一行地读（json_lines：唯一的读法）、一边读一边核对、按输入的顺序一行一行地写，内存不随输入变大；
--jobs N 用 N 个进程一起核对（workers），输出和 --jobs 1 一字不差，坏的输入也一样。读的是普通文件时先快速过一遍，
格式不对就在输出任何东西之前报错；标准输入、管道只能读一遍，所以是前面的行都输出了、再在坏的那一行报错。
输入是流（tail -f）时，读到的记录很快就有结论。结束时在标准错误里给一段汇总（--summary 另存为 JSON）；
标准错误是终端时显示进度条。可以加 --fix（只做确定性修正）、--judge（请评判模型看支持分拿不准的句子，
这时只用一个进程）和 --html。

verify_record 是给别的程序用的库函数：一条记录进去，--verify --json 的那个 dict 出来。它、每个 --jobs 和
Dask 任务（batch/dask_job.py 的 check_block）都由 outputs.records.check_saved 核对一条记录。
"""
import io
import os
import stat
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import IO, Any

from sourced_answers.batch.workers import Workers
from sourced_answers.core.collection import fewer_collections
from sourced_answers.core.errors import ExitCode, InputError
from sourced_answers.core.masking import masked_json
from sourced_answers.core.network import os_error_text
from sourced_answers.core.options import accepted, fill
from sourced_answers.core.output_files import write_file
from sourced_answers.core.safe_output import Output
from sourced_answers.core.settings import VERIFY_KEYWORDS, CheckSettings, Settings
from sourced_answers.core.strings import literal
from sourced_answers.outputs.json_lines import Line, parse_line, read_lines, records_of
from sourced_answers.outputs.records import Record, check_record, check_saved
from sourced_answers.outputs.render import render_result
from sourced_answers.outputs.summary import Summary
from sourced_answers.steps.check_steps import Judge, judge_asker

# ---------- 库函数 ----------


def verify_record(record: Mapping[str, Any], **keywords: Any) -> Record:
    """核对一条保存下来的回答：和 --verify --json 打印的那一行是同一个 dict。格式不对时抛 InputError。
    keywords 和 verify_answer 的一样（rule、threshold、fix：和 --rule、--threshold、--fix 同名，
    threshold 不给时用那条规则的默认值），不对时抛 UsageError。"""
    check = fill(CheckSettings, accepted(keywords, VERIFY_KEYWORDS, "verify_record"))
    return check_record(record, check)[1]


# ---------- 读输入 ----------

def open_input(path: str, stdin: IO[bytes]) -> IO[bytes]:
    if path == "-":
        return stdin
    try:
        return open(path, "rb")  # noqa: SIM115  由调用方关闭
    except OSError as error:
        raise InputError(f"读不了 {literal(path)}：{os_error_text(error)}") from None


def input_lines(handle: IO[bytes], name: str) -> Iterator[Line]:
    """输入里的每一条记录 (行号, 文字)；读不了的时候（I/O 错误）说明是哪个文件。"""
    try:
        yield from records_of(read_lines(handle, name), name, stream=is_stream(handle))
    except OSError as error:
        raise InputError(f"读不了 {name}：{os_error_text(error)}") from None


def is_stream(handle: IO[bytes]) -> bool:
    """输入是不是一直开着、读下一行可能要等的流（管道、终端、套接字）。普通文件和内存里的字节不是。"""
    try:
        mode = os.fstat(handle.fileno()).st_mode
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        return False
    return not stat.S_ISREG(mode)


def regular_file(path: str) -> bool:
    """能读两遍的输入：普通文件。标准输入、管道、<(zcat …) 这样的进程替换、设备只能读一遍。"""
    try:
        return path != "-" and stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False  # 打不开的由 open_input 报


# ---------- 核对一批行（可以在别的进程里） ----------

@dataclass(frozen=True)
class Options:
    """核对每一行要知道的（能交给别的进程：里面没有密钥以外的连接和文件）。check：核对和修正的设置；
    json：每条输出一行 JSON；secrets：要在输出的数据里遮掉的密钥。"""
    name: str
    check: CheckSettings
    json: bool
    keep_records: bool  # --html 要把每条记录留下来做页面
    several: bool  # 多条记录时，文字输出在每条前面写“── 第 N 行 ──”
    secrets: tuple[str, ...] = ()

    @classmethod
    def of(cls, name: str, settings: Settings, several: bool) -> "Options":
        run = settings.run
        return cls(name, settings.check, run.json, bool(run.html), several, run.secrets)


@dataclass
class Result:
    """一行的结果：要打印的文字、结论、每个问题的种类（有几个问题就有几项）、用时；
    出错时 error 是说明（这一行之后就停）。"""
    line: int | None
    output: str = ""
    passed: bool = False
    kinds: list[str] = field(default_factory=list)
    seconds: float = 0.0
    record: Record | None = None
    error: str | None = None
    step_error: str | None = None


def check_line(line: Line, options: Options, judge: Judge | None = None) -> Result:
    """核对一行：读、核对、写成这一行的输出。读进来的和建出来的对象（一个长回答有几十万个）期间少做垃圾回收，
    和 check_and_fix 里的是同一个办法（core/collection.py）。"""
    with fewer_collections():
        return checked_line(line, options, judge)


def checked_line(line: Line, options: Options, judge: Judge | None) -> Result:
    started = time.perf_counter()
    try:
        saved = parse_line(line, options.name)
    except InputError as error:
        return Result(line[0], error=str(error))
    # 评判模型只在本进程里问（judge 为 None 时这一行不问它，比如在工作进程里）
    checked, record = check_saved(saved, options.check, judge)
    if options.json:
        # 先在数据上遮掉密钥，再编码成 JSON（编码之后密钥里的引号、反斜杠会变样，就找不到了）
        output = masked_json(record, options.secrets)
    else:
        header = f"── 第 {saved.line} 行 ──\n" if saved.line and options.several else ""
        output = header + render_result(checked) + "\n"
    return Result(saved.line, output, checked.report.passed, [p.kind for p in checked.report.problems],
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
            parse_line(line, name)
            results.append(None)
        except InputError as error:
            results.append(str(error))
    return results


# ---------- --verify ----------

@dataclass
class Reading:
    """--verify 正在读的输入：说明里的名字、打开的文件、其中的记录（第一条已经读了：看是一条还是很多条）、
    是不是流（标准输入、管道：每条结论写完就冲刷，读的人马上能看到）和进度条。"""
    name: str
    handle: IO[bytes]
    lines: Iterator[Line]
    several: bool
    streaming: bool
    progress: "Progress | None"

    @classmethod
    def of(cls, handle: IO[bytes], name: str, streaming: bool, progress_stream: Any) -> "Reading":
        lines = input_lines(handle, name)
        first = next(lines)
        several = first[0] is not None
        progress = Progress(input_size(handle), progress_stream) if progress_stream and several else None
        return cls(name, handle, chained(first, lines), several, streaming, progress)


def verify(settings: Settings, out: Output, log: Callable[[str], None], stdin: IO[bytes],
           progress_stream: Any = None) -> int:
    """progress_stream：画进度条的地方（标准错误是终端时由 main 给出；否则 None，不画）。"""
    path = settings.run.verify or "-"
    name = "标准输入" if path == "-" else literal(path)  # 说明里的文件名：一行，控制字符看得见
    workers = Workers(1 if settings.judge.name else max(1, settings.run.jobs))
    try:
        if regular_file(path):
            with open_input(path, stdin) as handle:  # 先过一遍：格式不对的输入在输出任何东西之前就报错
                for error in workers.ordered(validate_batch, input_lines(handle, name), name):
                    if error:
                        raise InputError(error)
        judge = checked_judge(settings)
        handle = open_input(path, stdin)
        try:
            reading = Reading.of(handle, name, not regular_file(path), progress_stream)
            return run_lines(settings, reading, workers, judge, out, log)
        finally:
            if handle is not stdin:
                handle.close()
    finally:
        workers.close()


def checked_judge(settings: Settings) -> Judge | None:
    """--judge 的评判模型（先确认它在，还没有花钱）；没用 --judge 时是 None。"""
    deadline = settings.run.deadline()
    if settings.judge.name:
        from sourced_answers.model.preflight import check_judge  # 模型服务的客户端只在真有评判模型时导入
        check_judge(settings.judge, settings.model.url, deadline)
    return judge_asker(settings.judge, settings.model, deadline)


def run_lines(settings: Settings, reading: Reading, workers: Workers, judge: Judge | None, out: Output,
              log: Callable[[str], None]) -> int:
    """核对每一行并按顺序输出，最后汇总（--summary、--html 照设置写）。"""
    run = settings.run
    options = Options.of(reading.name, settings, reading.several)
    summary = Summary()
    started = time.perf_counter()
    reviewed: list[Record] = []
    step_error = None
    progress = reading.progress
    try:
        asker = [judge]  # 评判模型出错之后换成 None：剩下的回答不再问它，只做字面核对
        results = (workers.ordered(check_batch, reading.lines, options) if not judge
                   else (check_line(line, options, asker[0]) for line in reading.lines))
        for result in results:
            if result.error:
                raise InputError(result.error)
            out.write(result.output)
            if reading.streaming:
                out.flush()
            summary.add(result.passed, result.kinds, result.seconds, result.line)
            if result.step_error and not step_error:
                step_error = result.step_error
                asker[0] = None
            if result.record is not None:
                reviewed.append(result.record)
            if progress:
                progress.update(summary.records, reading.handle)
    finally:
        if progress:
            progress.close()
    summary.seconds = time.perf_counter() - started
    # 一个 JSON 对象也给汇总：和只有一行的 JSON Lines 是同一条记录，说的也一样（--summary 的文件本来就照写）
    for text in summary.lines():
        log(text)
    if run.summary:
        write_file(run.summary, masked_json(summary.to_dict(), run.secrets, indent=2))
    if step_error:
        log(f"✗ {literal(step_error, None)}（回答和字面核对的结论已经输出）")
    if run.html:
        from sourced_answers.outputs.review_page import save_review_page  # 审阅页只在 --html 时导入
        out.flush()
        save_review_page(run.html, reviewed, run.secrets, log)
    if step_error:
        return ExitCode.SERVICE
    return ExitCode.PASSED if summary.failed == 0 else ExitCode.FAILED


def chained(first: Line, rest: Iterator[Line]) -> Iterator[Line]:
    yield first
    yield from rest


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

