"""给别的 Python 程序用的两个函数（from answer_with_sources import answer_question, verify_answer）。

两个都是普通的关键字函数，建的是和命令行一样的设置：关键字就是设置里声明的 option（core/settings.py：名字、类型、
范围只写在那里，docs/reference.md 的“Python API 的关键字”由它生成），按声明检查（core.options.accepted），
再和命令行的参数一样交给 api.config.settings_from（环境变量按命令行的规矩读一次），然后交给同一层的
api.answering.answer、api.verifying.verify_answer——不另写任何一步，也不经过命令行的解析器。
出错时抛本程序的错误（core.errors 里的类：UsageError 是用法或配置错误，ServiceError 是秘塔或模型服务出错），
说明是中文的，不含密钥。
"""
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sourced_answers.api.answering import answer
from sourced_answers.api.config import settings_from
from sourced_answers.api.results import Result, result_of
from sourced_answers.api.verifying import verify_answer as verify_with
from sourced_answers.core.errors import AppError, UsageError
from sourced_answers.core.masking import mask, masked_error
from sourced_answers.core.options import accepted, fill, with_keywords
from sourced_answers.core.secrets import secrets_to_mask
from sourced_answers.core.settings import ANSWER_KEYWORDS, VERIFY_KEYWORDS, CheckSettings
from sourced_answers.model.local_serving import bundled_model

Log = Callable[[str], None]
PROG = "answer_question"


def checked_environ(environ: Any) -> Mapping[str, str]:
    """environ：不给是 os.environ；给了要是 名字 → 值 的映射。"""
    if environ is None:
        return os.environ
    if not isinstance(environ, Mapping) or not all(isinstance(k, str) and isinstance(v, str)
                                                   for k, v in environ.items()):
        raise UsageError("environ 应是环境变量的字典（名字和值都是文字），不给就用 os.environ")
    return environ


def answer_question(question: str, *, environ: Mapping[str, str] | None = None, log: Log | None = None,
                    **keywords: Any) -> Result:
    """回答一个问题并核对，返回 Result（record 就是 --json 的那条记录）。

    keywords 是设置，和命令行的参数同名：read=2、size=5、model="qwen2.5:1.5b"、fix=True、judge="qwen2.5:7b"、
    demo=True、local_model=True、timeout=60……（全表见 docs/reference.md 的“Python API 的关键字”）。密钥和服务地址
    从 environ（默认 os.environ）读，和命令行一样。log：进度和提醒（命令行写在标准错误上的那些）交给它；不给就不说。"""
    environ = checked_environ(environ)
    if log is not None and not callable(log):  # 不然要到第一条进度（预检之后）才抛出 TypeError
        raise UsageError("log 应是一个函数（每条进度和提醒交给它一行文字，例如 log=print），不给就不说")
    secrets = secrets_to_mask(environ)
    say: Log = (lambda message: log(mask(message, secrets))) if log else (lambda message: None)
    if not isinstance(question, str):
        raise UsageError("question 应是文字")
    try:  # 关键字的说明里也会写出收到的值（把密钥错当成 model 传进来）：和别的错误一样经过遮挡
        values = accepted(keywords, ANSWER_KEYWORDS, PROG)
        settings = settings_from({**values, "question": question, "prog": PROG}, environ, [])
        with bundled_model(settings, say) as settings:
            answered = answer(settings, say)
    except AppError as error:  # 抛给调用方的说明也经过遮挡：服务回显的密钥（Bearer sk-…）不会出现在异常里
        raise masked_error(error, secrets) from None
    return result_of(answered.checked, answered.record, secrets)


def verify_answer(answer_text: str, sources: Sequence[Mapping[str, Any]], *, question: str | None = None,
                  environ: Mapping[str, str] | None = None, **keywords: Any) -> Result:
    """核对一个保存下来的回答（不搜索、不调用模型），返回 Result：和 --verify --json 是同一条记录。
    sources 的第 n 条就是回答里的 [n]，每条至少有 text（可以有 title、link、date）。keywords 是核对的设置：
    rule、threshold、fix，和命令行的参数同名。"""
    environ = checked_environ(environ)
    secrets = secrets_to_mask(environ)
    try:
        check = fill(CheckSettings, accepted(keywords, VERIFY_KEYWORDS, "verify_answer"))
        return verify_with(answer_text, sources, check, question=question, secrets=secrets)
    except AppError as error:
        raise masked_error(error, secrets) from None


with_keywords(answer_question, ANSWER_KEYWORDS)
with_keywords(verify_answer, VERIFY_KEYWORDS)
