"""JSON Lines 的唯一读法：--verify（文件、标准输入、管道，read_lines）和 Dask 任务（split_block、block_line）
都用它，所以同一份输入在哪里核对，行号、错误和结论都一样（verify_record 拿到的已经是一个 dict，不读 JSON Lines）。

  · 行只在 \\n 处断开（\\r\\n 也认，\\r 去掉）；字符串里的 U+2028、单独的 \\r 都不是换行；
  · 文件开头的 BOM 去掉；每行按 UTF-8 解码，解不了就说是第几行；
  · 一条记录最多 MAX_RECORD_BYTES：更长的一行（包括 /dev/zero 这样一直没有换行的输入）说是第几行太长，
    读的时候也只读这么多，内存有上限；
  · 空行跳过；每行必须是一个 JSON 对象，字段由 records.saved_answer 检查；
  · 字符串里的 \\ud800 这样单独的代理码位换成 U+FFFD（它们编不成 UTF-8，写页面、缓存、结果文件时会出错）。
"""
import json
from collections.abc import Callable, Iterator
from typing import IO, Any

from sourced_answers.core.errors import InputError
from sourced_answers.core.strings import json_value
from sourced_answers.outputs.records import SavedAnswer, json_problem, saved_answer

MAX_RECORD_BYTES = 16 * 1024 * 1024
MAX_RECORD_TEXT = "16 MB"
BOM = "\ufeff"

Line = tuple[int | None, str]  # (行号, 文字)；整个输入是一个跨行的 JSON 值时行号为 None


def decoded(raw: bytes, number: int, name: str, file_start: bool) -> str:
    """一行的字节 → 文字：去掉行尾的 \\n、\\r\\n，文件开头的 BOM。"""
    if raw.endswith(b"\n"):
        raw = raw[:-1]
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{name} 第 {number} 行不是 UTF-8 编码") from None
    return text.removeprefix(BOM) if file_start else text


def too_long(name: str, number: int) -> InputError:
    return InputError(f"{name} 第 {number} 行太长（一条记录最多 {MAX_RECORD_TEXT}），或者它根本不是 JSON Lines")


def read_lines(handle: IO[bytes], name: str, limit: int = MAX_RECORD_BYTES,
               too_long_error: Callable[[str, int], InputError] = too_long) -> Iterator[tuple[int, str]]:
    """按行给出 (行号, 文字)，空行也给（行号要对）。每次最多读一行的上限 limit 个字节，更长的一行报
    too_long_error(name, 行号)。--verify 和 --eval 的问题文件都这样读。"""
    number = 0
    while True:
        raw = handle.readline(limit + 2)
        if not raw:
            return
        number += 1
        if len(raw) >= limit + 2 and not raw.endswith(b"\n"):
            raise too_long_error(name, number)
        yield number, decoded(raw, number, name, number == 1)


def split_block(block: bytes, first_number: int) -> Iterator[tuple[int, bytes]]:
    """一块字节（Dask 按 \\n 切开的一段文件）里的行：(行号, 这一行的字节)，行号从 first_number 开始。
    每一行再交给 block_line：一行出错不影响这一块里的别的行。"""
    pieces = block.split(b"\n")
    if pieces and pieces[-1] == b"":
        pieces.pop()
    for offset, raw in enumerate(pieces):
        yield first_number + offset, raw


def block_line(raw: bytes, number: int, name: str) -> str:
    """split_block 给出的一行 → 文字：和 read_lines 一样的长度上限和解码（第 1 行去掉 BOM）。"""
    if len(raw) > MAX_RECORD_BYTES + 1:
        raise too_long(name, number)
    return decoded(raw, number, name, number == 1)


def records_of(lines: Iterator[tuple[int, str]], name: str, stream: bool = False) -> Iterator[Line]:
    """--verify 的输入：JSON Lines，或者一个（可能跨好几行的、缩进过的）JSON 值。跳过空行。
    第一行本身不是完整的 JSON 时，整个输入当作一个 JSON 值（一起最多 MAX_RECORD_BYTES）；只有一行时也当作
    一个 JSON 值（行号为 None）。stream：输入是一直开着的流（管道、终端）——不往后多看一行（那会一直等下去），
    第一行就按 JSON Lines 的第 1 行处理。"""
    nonblank = ((number, text) for number, text in lines if text.strip())
    first = next(nonblank, None)
    if first is None:
        raise InputError(f"{name} 是空的")
    try:
        json.loads(first[1])
    except (ValueError, RecursionError):
        pieces = ["\n" * (first[0] - 1), first[1]]
        size = len(first[1])
        last = first[0]
        for number, text in lines:  # 空行也要：行号和字符串里的内容都不能变
            pieces += ["\n" * (number - last), text]
            last = number
            size += len(text) + 1
            if size > MAX_RECORD_BYTES:
                raise too_long(name, number) from None
        yield None, "".join(pieces)
        return
    if stream:
        yield first
        yield from nonblank
        return
    second = next(nonblank, None)
    if second is None:  # 只有一条：它是一个 JSON 对象，不是 JSON Lines（输出不标行号）
        yield None, first[1]
        return
    yield first
    yield second
    yield from nonblank


def parse_line(line: Line, name: str) -> SavedAnswer:
    """一行 → SavedAnswer；格式不对时抛 InputError，说明是第几行、哪个字段。"""
    number, text = line
    try:
        data: Any = json_value(text)
    except (ValueError, RecursionError) as error:
        if number is None and isinstance(error, json.JSONDecodeError):
            number = error.lineno  # 跨行的 JSON 值：说它自己是在第几行出的错
        where = f"{name} 第 {number} 行" if number else f"{name} "
        raise InputError(f"{where}不是合法的 JSON：{json_problem(error)}") from None
    return saved_answer(data, number, f"{name} 第 {number} 行：" if number else f"{name}：")
