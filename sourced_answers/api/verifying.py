"""核对一个保存下来的回答（不搜索、不调用回答的模型）：和 --verify --json、verify_record、Dask 任务是同一段代码
（outputs.records.check_record → check_saved）。给别的程序用的 verify_answer（api/public.py）、两个服务的
verify_answer 都调用这里，核对的设置（CheckSettings）由调用方建好。"""
from collections.abc import Mapping, Sequence
from typing import Any

from sourced_answers.api.results import Result, result_of
from sourced_answers.core.errors import InputError
from sourced_answers.core.settings import CHECK_DEFAULTS, CheckSettings
from sourced_answers.outputs.records import check_record


def verify_answer(answer: str, sources: Sequence[Mapping[str, Any]], check: CheckSettings = CHECK_DEFAULTS,
                  question: str | None = None, secrets: Sequence[str] = ()) -> Result:
    """answer 是带 [n] 引用的回答，sources 是编号从 1 开始的资料（每条至少有 text，可以有 title、link、date）。
    格式不对时抛 InputError（中文说明，说出是哪个字段）。secrets：结果里要遮掉的密钥。"""
    if not isinstance(answer, str):
        raise InputError("answer 应是文字（带 [n] 引用的回答）")
    if isinstance(sources, (str, bytes)) or not isinstance(sources, Sequence):
        raise InputError("sources 应是一个列表：第 n 项是回答里 [n] 的资料 {title, link, text}")
    # 签名收任何映射（MappingProxyType、别的 Mapping），记录的格式检查只认 dict
    given = [dict(source) if isinstance(source, Mapping) else source for source in sources]
    record = {"answer": answer, "sources": given, "question": question, "model": None}
    # 每一项是不是对象、字段对不对都在 check_record 里检查，说出是第几项
    checked, checked_record = check_record(record, check, "回答：")
    return result_of(checked, checked_record, secrets)
