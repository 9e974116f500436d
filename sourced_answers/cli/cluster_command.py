"""python -m sourced_answers.cluster 的命令行：参数（和别的入口同样的约定）、跑 Dask 任务、把结果变成退出码。
任务本身在 batch/cluster.py。"""
import os
import sys

from sourced_answers.batch.cluster import job_from, run_job
from sourced_answers.checker import RULES
from sourced_answers.cli.arguments import ChineseArgumentParser, ChineseHelpFormatter, ShowVersion, in_range
from sourced_answers.core.errors import AppError, ExitCode, UsageError
from sourced_answers.core.output_files import write_file
from sourced_answers.core.safe_output import SafeWriter
from sourced_answers.core.secrets import secrets_to_mask
from sourced_answers.core.text import masked_json


def build_parser() -> ChineseArgumentParser:
    parser = ChineseArgumentParser(prog="python -m sourced_answers.cluster", add_help=False,
                                   formatter_class=ChineseHelpFormatter,
                                   description="在 Dask 集群上核对一批 JSON Lines 回答日志"
                                               "（结果和 --verify --json 一样）。")
    parser.add_argument("-h", "--help", action="help", help="显示这段帮助并退出")
    parser.add_argument("--version", action=ShowVersion, help="显示版本号并退出")
    parser._positionals.title = "参数"
    parser._optionals.title = "选项"
    parser.add_argument("paths", nargs="+", metavar="路径",
                        help="输入：JSON Lines 文件或 glob（本地路径，或 s3:// 之类）")
    parser.add_argument("--out", required=True, metavar="DIR", help="结果写到这个目录（0.jsonl、1.jsonl……）")
    parser.add_argument("--scheduler", metavar="ADDRESS", help="Dask 调度器地址（tcp://主机:8786）；不给就在本机起一个小集群")
    parser.add_argument("--workers", type=in_range(1, 256), default=2, metavar="N",
                        help="本机集群的 worker 进程数，1–256（默认 2）")
    parser.add_argument("--rule", choices=RULES, default="score", metavar="RULE",
                        help="和 --verify 的 --rule 一样（默认 score）")
    parser.add_argument("--threshold", type=in_range(0.0, 1.0, float), default=None, metavar="X",
                        help="和 --verify 的 --threshold 一样：0 到 1（默认用那条规则的默认值）")
    parser.add_argument("--fix", action="store_true", help="和 --verify --fix 一样做确定性修正")
    parser.add_argument("--summary", metavar="FILE", help="把汇总另存为 JSON（和 --verify --summary 的字段一样）")
    parser.add_argument("--debug", action="store_true", help="程序内部出错时显示报错堆栈")
    return parser


def main(argv: list[str] | None = None) -> int:
    secrets = secrets_to_mask(os.environ)
    errors = SafeWriter(sys.stderr, secrets, name="标准错误", quiet=True)  # 标准错误写不进去（2>/dev/full）也照样做完

    def log(message: str) -> None:
        errors.write(message + "\n")
        errors.flush()

    try:
        args = build_parser().parse_args(argv)
        try:
            import dask  # noqa: F401
            import distributed  # noqa: F401
        except ImportError:
            raise UsageError("没有安装 Dask：pip install '.[cluster]'（每个 worker 上也要装本项目）") from None
        job = job_from(args, secrets=secrets)
        summary = run_job(job, args.debug)
        for line in summary.lines():
            log(line)
        if job.summary:  # 汇总已经打印了：这里写不了只是报错（退出码 2），结果文件都已写好
            write_file(job.summary, masked_json(summary.to_dict(), secrets, indent=2))
    except SystemExit as done:  # -h
        return int(done.code or 0) if isinstance(done.code, int | None) else ExitCode.USAGE
    except AppError as error:
        log(f"✗ {error}")
        return error.exit_code
    except KeyboardInterrupt:
        log("\n已中断")
        return ExitCode.INTERRUPTED
    log(f"结果写在 {job.out}（{len(job.files)} 个文件，按编号接起来就是输入的顺序）")
    if summary.errors:
        return ExitCode.USAGE
    return ExitCode.PASSED if summary.failed == 0 else ExitCode.FAILED

