"""本程序写的每一个文件（审阅页、汇总、Dask 任务的结果和汇总）都经过这里：一处检查，一处写。

OutputFiles.plan(路径, 用途) 在付费、打印任何东西之前检查路径（先解析符号链接），拒绝：
  · 这次运行的输入、标准输入、标准输出、标准错误，以及和它们是同一个文件的任何路径
    （硬链接、符号链接、/dev/stdout 都算）；
  · 管道（FIFO）、设备、目录、以 / 结尾的路径，以及所在目录不存在、不能写的路径；
  · 同一次运行已经要写的文件。
  · 符号链接本身（不跟着它写到别处，也不把链接换成普通文件；上层目录是链接没关系）。
所在目录能不能写，是在里面建一个临时文件再删掉试出来的（cannot_write_in）。
write_file(计划好的文件, 文字) 写到同一目录下的临时文件，再换名到位：中途出错不会留下写了一半的文件。
"""
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from sourced_answers.core.errors import OutputFileError
from sourced_answers.core.network import os_error_text
from sourced_answers.core.strings import SURROGATE, literal

STREAM_NAMES = {0: "标准输入", 1: "标准输出", 2: "标准错误"}


@dataclass(frozen=True)
class PlannedFile:
    """检查过的输出文件：path 是用户写的（说明里用），target 是解析过符号链接的真实路径，what 是它的用途。"""
    path: str
    target: str
    what: str
    identity: tuple[int, int] | None = None  # 已经存在的文件：(设备, inode)，认得出硬链接


def identity(path: str) -> tuple[int, int] | None:
    """文件的 (设备, inode)：跟着符号链接走；不存在时为 None。"""
    try:
        status = os.stat(path)
    except OSError:
        return None
    return status.st_dev, status.st_ino


def stream_identity(fd: int) -> tuple[int, int] | None:
    try:
        status = os.fstat(fd)
    except (OSError, ValueError):
        return None
    return status.st_dev, status.st_ino


class OutputFiles:
    """一次运行要写的全部文件。inputs：这次运行读的文件；streams：标准输入、输出、错误的文件描述符。"""

    def __init__(self, inputs: Iterable[str] = (), streams: Iterable[int] = (0, 1, 2)) -> None:
        self.inputs = [path for path in inputs if path and path != "-"]
        self.streams = list(streams)
        self.planned: list[PlannedFile] = []
        self.writable: set[str] = set()  # 已经试过能写的目录

    def refuse(self, path: str, what: str, reason: str) -> OutputFileError:
        return OutputFileError(f"写不了{what} {literal(path)}：{reason}")

    def plan(self, path: str, what: str) -> PlannedFile:
        """检查 path 能不能用来写 what（见模块说明），记下来；不能时抛 OutputFileError（退出码 2）。"""
        if not path.strip():
            raise self.refuse(repr(path), what, "路径是空的")
        if path.endswith(("/", os.sep)):
            raise self.refuse(path, what, "路径以 / 结尾，是一个目录；请写上文件名")
        target = os.path.realpath(path)  # 上层目录可以是符号链接：比较时用解析过的真实路径
        try:
            status: os.stat_result | None = os.stat(path)  # 跟着链接走（/dev/stdout 这样的也认得出是谁）
        except FileNotFoundError:
            status = None
        except OSError as error:
            raise self.refuse(path, what, os_error_text(error)) from None
        self.check_not_used(path, target, status, what)  # 先说最要紧的：它就是输入、标准输出……
        if os.path.islink(path):
            raise self.refuse(path, what, f"它是一个符号链接（指向 {literal(os.readlink(path))}）：程序不跟着链接写，"
                                          "也不把链接换掉；要写到它指向的文件，请直接写那个路径")
        if status is not None:
            if stat.S_ISDIR(status.st_mode):
                raise self.refuse(path, what, "这是一个目录")
            if not stat.S_ISREG(status.st_mode):
                raise self.refuse(path, what, "它不是普通文件（管道、设备之类），只写到普通文件或新文件")
        parent = os.path.dirname(target) or "."
        if not os.path.isdir(parent):
            raise self.refuse(path, what, f"目录 {literal(os.path.dirname(path) or '.')} 不存在")
        if parent not in self.writable:  # 文件是换名到位的：要能写的是目录（先试一次，做任何事之前就知道）
            problem = cannot_write_in(parent)
            if problem is not None:
                raise self.refuse(path, what, f"目录 {literal(os.path.dirname(path) or '.')} 写不进去："
                                                  f"{os_error_text(problem)}")
            self.writable.add(parent)
        planned = PlannedFile(path, target, what, (status.st_dev, status.st_ino) if status is not None else None)
        self.planned.append(planned)
        return planned

    def check_not_used(self, path: str, target: str, status: os.stat_result | None, what: str) -> None:
        """不能是输入、标准输入输出、也不能是这次运行已经要写的文件。"""
        same = (status.st_dev, status.st_ino) if status is not None else None
        for source in self.inputs:
            if os.path.realpath(source) == target or (same is not None and identity(source) == same):
                raise self.refuse(path, what, f"它就是这次的输入 {literal(source)}，不能覆盖输入，请换一个文件名")
        for fd in self.streams:
            if same is not None and stream_identity(fd) == same:
                raise self.refuse(path, what, f"它就是这次运行的{STREAM_NAMES.get(fd, '输出')}，请换一个文件名")
        for earlier in self.planned:
            if earlier.target == target or (same is not None and earlier.identity == same):
                raise self.refuse(path, what, f"这次运行已经要把{earlier.what}写到这个文件（{literal(earlier.path)}）")


def cannot_write_in(directory: str) -> OSError | None:
    """在 directory 里建一个临时文件再删掉，试试能不能写（权限、只读的文件系统、/sys 这样的目录，root 也一样）。
    能写时为 None，否则是系统给的错误。"""
    import tempfile  # 只在真的要写文件时导入（它还要导入 shutil、random）：每次建设置都导入这个模块
    try:
        handle, temporary = tempfile.mkstemp(prefix=".", suffix=".probe", dir=directory)
        os.close(handle)
        os.unlink(temporary)
    except OSError as error:
        return error
    return None


def write_file(planned: PlannedFile, text: str) -> None:
    """把 text 写进计划好的文件：先写同目录下的临时文件，再换名替换，已有文件的权限保留。"""
    import tempfile

    target = Path(planned.target)
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode) if target.exists() else None
        handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
        try:
            with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as out:
                out.write(SURROGATE.sub("\ufffd", text))  # 编不成 UTF-8 的单独代理码位：和屏幕上一样换成 �
            os.chmod(temporary, mode if mode is not None else 0o666 & ~current_umask())
            os.replace(temporary, target)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    except OSError as error:
        raise OutputFileError(f"写不了{planned.what} {literal(planned.path)}：{os_error_text(error)}") from None


def current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
