"""--verify 的输入：一个 JSON 对象或 JSON Lines，每个至少有 answer 和 sources（每条资料至少有 text）。

格式不对时抛 InputError，说明是第几行、哪个字段（退出码 2）。
"""
import json
import sys


class InputError(Exception):
    """--verify 的输入文件读不了或格式不对（退出码 2）。"""


def parse_verify_input(text, name):
    """一个 JSON 对象，或 JSON Lines（每行一个对象）。返回 [(行号或 None, 对象)]。"""
    if not text.strip():
        raise InputError(f"{name} 是空的")
    try:
        return [(None, json.loads(text))]
    except json.JSONDecodeError as whole_error:
        records = []
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                records.append((number, json.loads(line)))
            except json.JSONDecodeError as error:
                if not records:
                    raise InputError(f"{name} 第 {whole_error.lineno} 行不是合法的 JSON："
                                     f"{whole_error.msg}") from None
                raise InputError(f"{name} 第 {number} 行不是合法的 JSON：{error.msg}") from None
        return records


def validate_record(record, where):
    if not isinstance(record, dict):
        raise InputError(f"{where}应是一个 JSON 对象")
    if not isinstance(record.get("answer"), str):
        raise InputError(f"{where}缺少字符串字段 answer")
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


def read_verify_file(path):
    try:
        if path == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as handle:
                data = handle.read()
    except OSError as error:
        raise InputError(f"读不了 {path}：{error.strerror}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise InputError(f"{path} 不是 UTF-8 编码（第 {error.start} 字节）") from None
