"""python -m sourced_answers.cluster 的命令行：参数（和别的入口同样的约定）、跑 Dask 任务、把结果变成退出码。
任务本身在 batch/dask_job.py。"""
import os
import sys

from sourced_answers.batch.dask_job import Job, job_from, run_job
from sourced_answers.batch.dask_scheduler import WAIT_WORKERS_SECONDS
from sourced_answers.cli.arguments import (
    ChineseArgumentParser,
    ChineseHelpFormatter,
    add_rule_flags,
    add_standard_flags,
    add_summary_flag,
    in_range,
)
from sourced_answers.core.errors import ENDINGS, ExitCode, UsageError, exit_code_of
from sourced_answers.core.masking import masked_json
from sourced_answers.core.output_files import write_file
from sourced_answers.core.safe_output import SafeWriter
from sourced_answers.core.secrets import secrets_to_mask


def build_parser() -> ChineseArgumentParser:
    parser = ChineseArgumentParser(prog="python -m sourced_answers.cluster", add_help=False,
                                   formatter_class=ChineseHelpFormatter,
                                   description="在 Dask 集群上核对一批 JSON Lines 回答日志"
                                               "（结果和 --verify --json 一样）。")
    parser.add_argument("paths", nargs="+", metavar="路径",
                        help="输入：JSON Lines 文件或 glob（本地路径，或 s3:// 之类）；要是普通文件："
                             "输入按字节切块分给 worker，命名管道、设备不行")
    parser.add_argument("--out", required=True, metavar="DIR",
                        help="结果写到这个目录（00000.jsonl、00001.jsonl……和清单 _manifest.json）：要是空的、新的，"
                             "或者本程序上次写的（上次的结果整个换掉）")
    parser.add_argument("--scheduler", metavar="ADDRESS",
                        help="Dask 调度器地址（tcp://主机:8786），按它的 worker 和线程分块；不给就在本机起一个小集群")
    parser.add_argument("--workers", type=in_range(1, 256), metavar="N",
                        help="本机集群的 worker 进程数，1–256（默认 2；不能和 --scheduler 一起用）")
    parser.add_argument("--wait-workers", type=in_range(1.0, 3600.0, float, "秒"), default=WAIT_WORKERS_SECONDS,
                        metavar="SECONDS",
                        help=f"调度器上没有 worker 时最多等几秒，开始时和半路上都算（默认 {WAIT_WORKERS_SECONDS}），"
                             "等不到就以退出码 3 结束")
    add_rule_flags(parser)
    parser.add_argument("--fix", action="store_true", help="和 --verify --fix 一样做确定性修正")
    add_summary_flag(parser)
    add_standard_flags(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    secrets = secrets_to_mask(os.environ)
    errors = SafeWriter(sys.stderr, secrets, name="标准错误", quiet=True)  # 标准错误写不进去（2>/dev/full）也照样做完

    def log(message: str) -> None:
        errors.write(message + "\n")
        errors.flush()

    job: Job | None = None
    try:
        args = build_parser().parse_args(argv)
        try:
            import dask  # noqa: F401
            import distributed  # noqa: F401
        except ImportError:
            raise UsageError("没有安装 Dask：pip install '.[cluster]'（每个 worker 上也要装本项目）") from None
        job = job_from(args, secrets=secrets)
        summary = run_job(job, args.debug, log)
        for line in summary.lines():
            log(line)
        if job.summary:  # 汇总已经打印了：这里写不了只是报错（退出码 2），结果文件都已写好
            write_file(job.summary, masked_json(summary.to_dict(), secrets, indent=2))
            job.folder.summary_written()
    except ENDINGS as ending:
        code = exit_code_of(ending, log)
        kept = job.folder.kept_line() if job is not None else None
        if kept:
            log(kept)
        return code
    log(job.folder.done_line())
    if summary.errors:
        return ExitCode.USAGE
    return ExitCode.PASSED if summary.failed == 0 else ExitCode.FAILED

