"""核对一个保存下来的回答（不搜索、不调用回答的模型）：和 --verify --json 是同一段代码
（outputs.records.check_saved）。"""
from collections.abc import Mapping, Sequence
from typing import Any

from sourced_answers.api.results import Result, result_of
from sourced_answers.core.errors import InputError
from sourced_answers.core.settings import CHECK_DEFAULTS, CheckSettings
from sourced_answers.outputs.records import check_saved, saved_answer


def verify_answer(answer: str, sources: Sequence[Mapping[str, Any]], check: CheckSettings = CHECK_DEFAULTS,
                  question: str | None = None, model: str | None = None, secrets: Sequence[str] = ()) -> Result:
    """answer 是带 [n] 引用的回答，sources 是编号从 1 开始的资料（每条至少有 text，可以有 title、link、date）。
    格式不对时抛 InputError（中文说明，说出是哪个字段）。secrets：结果里要遮掉的密钥。"""
    if not isinstance(answer, str):
        raise InputError("answer 应是文字（带 [n] 引用的回答）")
    if isinstance(sources, (str, bytes)) or not isinstance(sources, Sequence):
        raise InputError("sources 应是一个列表：第 n 项是回答里 [n] 的资料 {title, link, text}")
    record = {"answer": answer, "sources": list(sources), "question": question, "model": model}
    saved = saved_answer(record, None, "回答：")  # 每一项是不是对象、字段对不对都在这里检查，说出是第几项
    checked, checked_record = check_saved(saved, check)
    return result_of(checked, checked_record, secrets)
