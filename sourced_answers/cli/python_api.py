"""给别的 Python 程序用的两个函数（from answer_with_sources import answer_question, verify_answer）。

它们和命令行走同一条路：参数按命令行的参数解析、检查（范围、互斥，中文的错误），环境变量按命令行的规矩读一次，
然后交给 api 层（api.answering.answer、api.verifying.verify_answer）——不另写任何一步。出错时抛本程序的错误
（core.errors 里的类：UsageError 是用法或配置错误，ServiceError 是秘塔或模型服务出错），说明是中文的，不含密钥。
"""
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sourced_answers.api.answering import answer
from sourced_answers.api.results import Result, result_of
from sourced_answers.api.verifying import verify_answer as verify_with
from sourced_answers.cli.config import build_settings
from sourced_answers.cli.parser import build_parser
from sourced_answers.core.errors import AppError, UsageError
from sourced_answers.core.masking import mask, masked_error
from sourced_answers.core.secrets import secrets_to_mask
from sourced_answers.core.settings import CHECK_DEFAULTS, CheckSettings
from sourced_answers.model.local_serving import bundled_model

Log = Callable[[str], None]
PROG = "answer_question"
# 命令行有、answer_question 不接受的：它只回答一个问题，结果就是返回的 Result
NOT_OPTIONS = {"json", "verify", "eval", "html", "summary", "install_local_model", "serve", "mcp", "help", "version",
               "concurrency", "queue", "jobs", "quiet", "debug"}


def checked_environ(environ: Any) -> Mapping[str, str]:
    """environ：不给是 os.environ；给了要是 名字 → 值 的映射。"""
    if environ is None:
        return os.environ
    if not isinstance(environ, Mapping) or not all(isinstance(k, str) and isinstance(v, str)
                                                   for k, v in environ.items()):
        raise UsageError("environ 应是环境变量的字典（名字和值都是文字），不给就用 os.environ")
    return environ


def flags_of(options: Mapping[str, Any]) -> list[str]:
    """关键字参数 → 命令行参数：read=2 → --read=2，fix=True → --fix，False 和 None 不写。值和参数名写在一起
    （--model=-x 也是模型名 -x，不会被当成另一个参数）。"""
    flags: list[str] = []
    for name, value in options.items():
        flag = "--" + name.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            flags.append(flag)
        elif isinstance(value, (list, tuple)):
            flags.append(f"{flag}={','.join(str(item) for item in value)}")
        else:
            flags.append(f"{flag}={value}")
    return flags


def answer_question(question: str, *, environ: Mapping[str, str] | None = None, log: Log | None = None,
                    **options: Any) -> Result:
    """回答一个问题并核对，返回 Result（record 就是 --json 的那条记录）。

    options 是命令行的参数写成关键字：read=2、size=5、model="qwen2.5:1.5b"、fix=True、judge="qwen2.5:7b"、demo=True、
    local_model=True、timeout=60……密钥和服务地址从 environ（默认 os.environ）读，和命令行一样。
    log：进度和提醒（命令行写在标准错误上的那些）交给它；不给就不说。"""
    environ = checked_environ(environ)
    secrets = secrets_to_mask(environ)
    say: Log = (lambda message: log(mask(message, secrets))) if log else (lambda message: None)
    if not isinstance(question, str):
        raise UsageError("question 应是文字")
    parser = build_parser(PROG)
    known = {option.lstrip("-").replace("-", "_") for option in parser._option_string_actions
             if option.startswith("--")}
    for name in options:
        if name in NOT_OPTIONS or name not in known:
            # 只认一字不差的参数名：argparse 会把 hel、js 当作 --help、--json 的缩写（打印帮助、退出调用它的程序）
            raise UsageError(f"answer_question 不接受 {name}：它只回答一个问题（结果就是返回的 Result），"
                             "参数名要和命令行的一字不差（read、size、model、fix、judge、demo、local_model……）")
    # 问题放在 -- 后面：“-20℃的车库能放NAS吗”“--help”也是问题，不是参数（不然会打印帮助、退出调用它的程序）
    args = parser.parse_args(["--json", *flags_of(options), "--", question])
    try:
        settings = build_settings(args, environ, [])
        with bundled_model(settings, say) as settings:
            answered = answer(settings, say)
    except AppError as error:  # 抛给调用方的说明也经过遮挡：服务回显的密钥（Bearer sk-…）不会出现在异常里
        raise masked_error(error, secrets) from None
    return result_of(answered.checked, answered.record, secrets)


def verify_answer(answer_text: str, sources: Sequence[Mapping[str, Any]], *, rule: str = CHECK_DEFAULTS.rule,
                  threshold: float | None = None, fix: bool = False, question: str | None = None,
                  environ: Mapping[str, str] | None = None) -> Result:
    """核对一个保存下来的回答（不搜索、不调用模型），返回 Result：和 --verify --json 是同一条记录。
    sources 的第 n 条就是回答里的 [n]，每条至少有 text（可以有 title、link、date）。"""
    environ = checked_environ(environ)
    flags = build_parser(PROG).parse_args(["--verify", "-", f"--rule={rule}",
                                           *([f"--threshold={threshold}"] if threshold is not None else [])])
    check = CheckSettings(rule=flags.rule, threshold=flags.threshold, fix=bool(fix))
    secrets = secrets_to_mask(environ)
    try:
        return verify_with(answer_text, sources, check, question, None, secrets)
    except AppError as error:
        raise masked_error(error, secrets) from None
