"""记录的格式：--json 写出的，就是 --verify 读进来的。

  · Source（定义在 checker.types）：一条资料，gather 从秘塔得到，--verify 从文件读出；
  · result_record：--json 的一条记录（字段是对外契约，保持稳定）；
  · saved_answer：--verify 读进来的一条（行由 json_lines 读出、解析），至少有 answer 和 sources
    （每条资料至少有 text）。格式不对时抛 InputError，说明是第几行、哪个字段（退出码 2）。
"""
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sourced_answers.checker import Report, Source
from sourced_answers.core.errors import InputError
from sourced_answers.core.settings import CheckSettings
from sourced_answers.core.strings import JsonNumberError, without_surrogates
from sourced_answers.steps.check_steps import Checked, Judge, check_and_fix

Record = dict[str, Any]


@dataclass
class SavedAnswer:
    """--verify 读到的一条回答。line：JSON Lines 里的行号（整个文件是一个对象时为 None）。"""
    line: int | None
    question: str | None
    model: str | None
    answer: str
    sources: list[Source]
    # 关于这个回答本身的字段（回答问题时的 --json 写的 served_model、truncated、unfinished_reasoning）：
    # 原样带到 --verify 的输出里
    about: dict[str, Any] = field(default_factory=dict)


# 回答问题时记下的、关于回答本身的字段：实际回答的模型、是否被长度上限截断、没有结束的思考（不核对）
ABOUT_ANSWER = ("served_model", "truncated", "unfinished_reasoning")


def result_record(question: str | None, model: str | None, answer: str, sources: Sequence[Source], report: Report,
                  extras: Mapping[str, Any] | None = None) -> Record:
    """--json 的输出。extras：可选的几步加上的字段（--fix 的 original_answer 和 repairs，--judge 的 judge）。"""
    record: Record = {
        "question": question,
        "model": model,
        "answer": answer,
        "sources": [{"n": number, "title": s.title, "link": s.link, "date": s.date, "text": s.text,
                     "read": s.read, "cached": s.cached, "cited": number in report.cited}
                    for number, s in enumerate(sources, 1)],
        "problems": [p.to_dict() for p in report.problems],
        # 每个带引用的句子：支持分、重合度、给出这个分的资料、结论（见 checker.types.ClaimCheck）
        "claims": [claim.to_dict() for claim in report.claims],
        "unused": report.unused,
        "passed": report.passed,
    }
    record.update(extras or {})
    return record

def checked_record(checked: Checked, question: str | None, model: str | None,
                   about: Mapping[str, Any] | None = None) -> Record:
    """核对（和修正、评判）之后的一条记录：用了 --fix 时多出 original_answer 和 repairs，用了 --judge 时多出 judge。
    about：关于回答本身的字段（ABOUT_ANSWER：实际回答的模型、是否被截断、没有结束的思考）。"""
    extras: dict[str, Any] = dict(about or {})
    if checked.fix:
        extras["original_answer"] = checked.fix.original
        extras["repairs"] = [r.to_dict() for r in checked.fix.repairs]
    if checked.judged:
        judge: dict[str, Any] = {"model": checked.judged.model, "url": checked.judged.url,
                                 "calls": [c.to_dict() for c in checked.judged.calls],
                                 "skipped": checked.judged.skipped}
        if checked.judged.error:
            judge["error"] = checked.judged.error
        extras["judge"] = judge
    return result_record(question, model, checked.answer, checked.sources, checked.report, extras)


def check_saved(saved: SavedAnswer, check: CheckSettings, judge: Judge | None = None) -> tuple[Checked, Record]:
    """核对一条保存下来的回答——每个入口都走这一个函数：--verify（任何 --jobs）、verify_record、Dask 任务。
    返回核对结果和 --verify --json 打印的那条记录。judge：评判模型（None 时不问）。"""
    truncated = bool(saved.about.get("truncated"))  # 回答问题时记下的：到了长度上限被截断了
    checked = check_and_fix(saved.answer, saved.sources, check, judge=judge, truncated=truncated)
    return checked, checked_record(checked, saved.question, saved.model, saved.about)


def check_record(record: Mapping[str, Any], check: CheckSettings, where: str = "记录：") -> tuple[Checked, Record]:
    """一条保存下来的记录（已经是一个 dict：verify_record、Python API 和服务的 verify_answer）：先检查格式
    （saved_answer，说明以 where 开头、说出是哪个字段），再由 check_saved 核对。"""
    # 不是映射的（None、文字、键值对的列表）交给 saved_answer 说“应是一个 JSON 对象”：dict(…) 抛的是 Python 的错误。
    # 单独的代理码位换成 U+FFFD，和从 JSON 读进来的（core.strings.json_value）一样：留着的话结果编不成 UTF-8
    data = without_surrogates(dict(record)) if isinstance(record, Mapping) else record
    return check_saved(saved_answer(data, None, where), check)


# json 模块的英文说明 → 中文
JSON_MESSAGES = {
    "Expecting value": "这里应该是一个值",
    "Expecting property name enclosed in double quotes": "这里应该是用双引号括起来的字段名",
    "Expecting ':' delimiter": "这里少了冒号",
    "Expecting ',' delimiter": "这里少了逗号",
    "Unterminated string starting at": "字符串没有结束",
    "Invalid control character at": "字符串里有不允许的控制字符",
    "Invalid \\escape": "字符串里有无效的转义",
    "Invalid \\uXXXX escape": "字符串里有无效的 \\u 转义",
    "Extra data": "一个 JSON 值之后还有多余的内容",
    "Unexpected UTF-8 BOM (decode using utf-8-sig)": "开头有 BOM（字节顺序标记）",
}


def json_problem(error: ValueError | RecursionError) -> str:
    """json.loads 失败的中文说明（带行列号）。"""
    if isinstance(error, RecursionError):
        return "嵌套太深"
    if isinstance(error, json.JSONDecodeError):
        return f"第 {error.colno} 列{JSON_MESSAGES.get(error.msg, '格式不对')}"
    if isinstance(error, JsonNumberError):
        return str(error)
    return "里面有太长的数字"  # 超过 Python 能转换的位数


def validate_record(record: Any, where: str) -> Record:
    if not isinstance(record, dict):
        raise InputError(f"{where}应是一个 JSON 对象")
    if not isinstance(record.get("answer"), str):
        raise InputError(f"{where}缺少字符串字段 answer")
    for name in ("question", "model", "served_model", "unfinished_reasoning"):
        if record.get(name) is not None and not isinstance(record[name], str):
            raise InputError(f"{where}{name} 应是字符串")
    if record.get("truncated") is not None and not isinstance(record["truncated"], bool):
        raise InputError(f"{where}truncated 应是 true 或 false")
    sources = record.get("sources")
    if not isinstance(sources, list):
        raise InputError(f"{where}缺少列表字段 sources")
    for number, source in enumerate(sources, 1):
        if not isinstance(source, dict) or not isinstance(source.get("text"), str):
            raise InputError(f"{where}sources 的第 {number} 项缺少字符串字段 text")
        for name in ("title", "link", "date"):
            if source.get(name) is not None and not isinstance(source[name], str):
                raise InputError(f"{where}sources 的第 {number} 项的 {name} 应是字符串")
    return record


def saved_answer(data: Any, line: int | None, where: str) -> SavedAnswer:
    """一条解析好的 JSON → SavedAnswer（先检查字段；where 是出错时说明的开头，比如“saved.jsonl 第 3 行：”）。"""
    record = validate_record(data, where)
    about = {name: record[name] for name in ABOUT_ANSWER if name in record}
    return SavedAnswer(line, record.get("question"), record.get("model"), record["answer"],
                       [Source.from_json(source) for source in record["sources"]], about)
