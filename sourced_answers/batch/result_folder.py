"""Dask 任务的结果目录（--out）：在做任何事之前检查，结果整套地换，说得出写了哪些文件。

  · 只往空目录、还不存在的目录（上一层要在、要能写），或者本程序上次写结果的目录里写。目录里有一个不是本程序写的
    文件（别人的 0.jsonl、笔记、隐藏文件）就在做任何事之前拒绝（退出码 2），不会一声不响地换掉它。
  · 本程序写的文件由目录里的清单 _manifest.json 记着：写它的程序、是不是全部写完了（complete）、真正写好了的文件
    （files：只记目录里真有的，不管任务怎样结束——做完、出错、Ctrl-C、SIGTERM、SIGHUP，连 kill -9 也一样），和
    这次还会写、正在删、可能只写了一半的名字（pending：不一定存在，只用来下次认出它们是本程序留下的）。
    再跑一次时，上一次的那一套在写第一个新文件之前整个删掉：新旧结果不会混在一起。
  · 结果文件按分区编号补零命名（00000.jsonl、00001.jsonl……），按文件名排序接起来（cat 目录/*.jsonl）就是输入的顺序。
  · 目录在连上集群、知道要分几块之后才建：连不上调度器不会留下一个空目录。
本地的文件都由 core/output_files 检查、写（先写临时文件再换名）；s3:// 之类的目录由 fsspec 读写，规矩一样。
"""
import json
import os
import re
import stat
from collections.abc import Sequence
from typing import Any

from sourced_answers.core.errors import OutputFileError, ServiceError, UsageError
from sourced_answers.core.network import os_error_text
from sourced_answers.core.output_files import (
    OutputFiles,
    PlannedFile,
    cannot_write_in,
    identity,
    stream_identity,
    write_file,
)
from sourced_answers.core.strings import literal

MANIFEST = "_manifest.json"
WRITER = "sourced_answers.cluster"
SHOWN = 5  # 说明里最多列出几个文件名
WIDTH = 5  # 结果文件名至少几位数字


def is_remote(path: str) -> bool:
    return "://" in path


def filesystem(url: str) -> Any:
    """对象存储的文件系统（fsspec）。缺了对应的包时说清楚要装什么（不是说 Dask 没装）。"""
    import fsspec
    protocol = url.split("://", 1)[0]
    try:
        return fsspec.filesystem(protocol)
    except ImportError:
        raise UsageError(f"读写 {protocol}:// 要先装对应的包（比如 s3:// 要 pip install s3fs，gs:// 要 gcsfs）") \
            from None
    except ValueError:
        raise UsageError(f"不认识的地址类型 {literal(protocol)}://") from None


def visible(name: str) -> str:
    """文件名放进说明里：换行、控制字符写成 \\n、\\x1b 这样看得见的样子，伪造不出一行别的话。"""
    return "".join(char if char.isprintable() else repr(char)[1:-1] for char in name)


def result_names(count: int) -> list[str]:
    width = max(WIDTH, len(str(max(count - 1, 0))))
    return [f"{number:0{width}d}.jsonl" for number in range(count)]


def listed(names: Sequence[str]) -> str:
    """几个文件名：连着的编号写成一段（00000.jsonl–00007.jsonl），最多列 SHOWN 段。"""
    runs: list[list[str]] = []
    for name in sorted(names):
        number = name.split(".")[0]
        previous = runs[-1][-1].split(".")[0] if runs else ""
        if runs and number.isdigit() and previous.isdigit() and int(number) == int(previous) + 1:
            runs[-1].append(name)
        else:
            runs.append([name])
    parts = [visible(run[0]) if len(run) == 1 else f"{visible(run[0])}–{visible(run[-1])}" for run in runs]
    return "、".join(parts[:SHOWN]) + (f" 等（一共 {len(names)} 个）" if len(parts) > SHOWN else "")


def manifest_files(text: str) -> list[str] | None:
    """清单里记的名字（files 和 pending）；不是本程序写的清单（读不懂、别的程序的）时为 None。
    以前的清单没有 pending，files 里记着还没写的名字：一样认得。"""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):  # 读不懂，或者嵌套得太深（[[[[……）
        return None
    if not isinstance(data, dict) or data.get("written_by") != WRITER:
        return None
    listed = [data.get("files"), data.get("pending", [])]
    if not all(isinstance(names, list) for names in listed):
        return None
    names = [name for names in listed for name in names]
    plain = [name for name in names if isinstance(name, str) and name and "/" not in name
             and name not in (".", "..", MANIFEST)]
    return plain if len(plain) == len(names) else None


class ResultFolder:
    """一次任务的结果目录。check() 在做任何事之前；start(块数) 在连上集群之后、第一块结果之前；write、finish 随后。"""

    def __init__(self, out: str, outputs: OutputFiles, extra: PlannedFile | None = None) -> None:
        self.out = out
        self.remote = is_remote(out)
        self.directory = out.rstrip("/") if self.remote else os.path.realpath(out)
        self.outputs = outputs
        # 也写在这个目录里的汇总（--summary 目录/summary.json）：一样记进清单，下次认得出是本程序写的
        self.extra = extra.path if extra and os.path.dirname(extra.target) == self.directory else None
        self.extra_is_folder = extra is not None and not self.remote and extra.target == self.directory
        self.old: list[str] = []  # 上一次运行留下的、要整个换掉的文件
        self.names: list[str] = []
        self.planned: dict[str, PlannedFile] = {}
        self.written: list[str] = []
        self.complete = False
        self.started = False
        self.created = False

    # ---------- 做任何事之前 ----------

    def check(self, inputs: Sequence[str]) -> None:
        """能不能往这个目录写（见模块说明）；不能时抛 UsageError（退出码 2），什么都还没有做。"""
        if self.extra_is_folder:
            raise UsageError(f"--summary 和 --out 是同一个路径 {visible(self.out)}：汇总要写成一个文件，"
                             f"可以写在结果目录里（{visible(os.path.join(self.out, 'summary.json'))}）或者别处")
        name = self.extra_name()
        if name and (name == MANIFEST or name.endswith(".jsonl")):
            raise UsageError(f"--summary {visible(str(self.extra))} 在结果目录里，又和结果文件同名或者也以 .jsonl 结尾"
                             f"（cat 目录/*.jsonl 会把它一起接进去）：请换一个文件名，比如 summary.json")
        if self.remote:
            self.check_remote()
            return
        directory = self.directory
        for path in inputs:
            if os.path.dirname(os.path.realpath(path)) == directory:
                raise UsageError(f"--out {visible(self.out)} 就是输入 {visible(path)} 所在的目录：结果会和输入混在一起"
                                 f"（还可能覆盖输入），请换一个目录")
        if os.path.exists(directory) and not os.path.isdir(directory):
            raise UsageError(f"--out {visible(self.out)} 已经是一个文件，不是目录")
        if not os.path.isdir(directory):
            parent = os.path.dirname(directory)
            if not os.path.isdir(parent):
                raise UsageError(f"--out {visible(self.out)} 的上一层目录不存在")
            try:  # 建一次、马上删掉：现在就知道建不建得了，又不在连上集群之前留下一个空目录
                os.mkdir(directory)
                os.rmdir(directory)
            except OSError as error:
                raise UsageError(f"建不了结果目录 {visible(self.out)}：{os_error_text(error)}") from None
            return
        problem = cannot_write_in(directory)
        if problem is not None:
            raise UsageError(f"结果目录 {visible(self.out)} 写不进去：{os_error_text(problem)}")
        try:
            entries = os.listdir(directory)
        except OSError as error:
            raise UsageError(f"读不了结果目录 {visible(self.out)}：{os_error_text(error)}") from None
        self.old = self.ours(entries, self.read_local_manifest(entries))
        for name in self.old:
            self.check_not_a_stream(name)

    def read_local_manifest(self, entries: list[str]) -> list[str] | None:
        path = os.path.join(self.directory, MANIFEST)
        if MANIFEST not in entries or not self.is_plain_file(MANIFEST):
            return None
        try:
            with open(path, encoding="utf-8") as handle:
                return manifest_files(handle.read(1024 * 1024 * 16))
        except (OSError, UnicodeDecodeError):
            return None

    def ours(self, entries: list[str], files: list[str] | None) -> list[str]:
        """目录里的 entries 都是本程序上次写的吗（清单里记的、清单本身、写到一半的临时文件）？是就返回它们。"""
        known = set(files or ())
        if files is not None:
            known.add(MANIFEST)
        temporary = re.compile(r"\.(?P<name>.+)\.[^.]+\.part")
        foreign = []
        for name in entries:
            half = temporary.fullmatch(name)
            mine = name in known or (half is not None and half["name"] in known)
            if not mine or not (self.remote or self.is_plain_file(name)):
                foreign.append(name)
        if foreign:
            raise UsageError(f"结果目录 {visible(self.out)} 里有不是本程序写的东西：{listed(foreign)}。"
                             f"本程序只写到空目录、新目录，或者它自己上次写结果的目录（有 {MANIFEST} 清单，"
                             f"上次的结果会整个换掉）；请换一个目录，或者先把这些移走")
        return sorted(entries)

    def is_plain_file(self, name: str) -> bool:
        """本程序只写普通文件：同名的目录、符号链接不是它写的。"""
        try:
            return stat.S_ISREG(os.lstat(os.path.join(self.directory, name)).st_mode)
        except OSError:
            return True  # 刚刚不见了：没有什么要担心的

    def check_not_a_stream(self, name: str) -> None:
        """上次的结果文件要删掉：它不能正是这次的标准输入、输出、错误（比如 2>>out/00000.jsonl）。"""
        same = identity(os.path.join(self.directory, name))
        for fd, what in ((0, "标准输入"), (1, "标准输出"), (2, "标准错误")):
            if same is not None and stream_identity(fd) == same:
                raise UsageError(f"结果目录里的 {visible(name)} 就是这次运行的{what}：请换一个目录")

    def check_remote(self) -> None:
        fs = self.filesystem()
        try:
            entries = [os.path.basename(path.rstrip("/")) for path in fs.ls(self.directory, detail=False)] \
                if fs.exists(self.directory) else []
        except OSError as error:
            raise ServiceError(f"读不了结果目录 {visible(self.out)}：{os_error_text(error)}") from None
        files = None
        if MANIFEST in entries:
            try:
                with fs.open(f"{self.directory}/{MANIFEST}", "r", encoding="utf-8") as handle:
                    files = manifest_files(handle.read(1024 * 1024 * 16))
            except (OSError, UnicodeDecodeError):
                files = None
        self.old = self.ours(entries, files)

    def filesystem(self) -> Any:
        return filesystem(self.out)

    # ---------- 连上集群之后 ----------

    def start(self, count: int) -> None:
        """要写 count 个结果文件：建目录（需要时），把上次的那一套改记成 pending 再删掉，清单里记下这次要写的名字
        （pending，还一个都没写好）。中途被打断、被 kill -9 也没关系：目录里剩下的都记在清单里，下次认得出来；
        清单的 files 从不记一个不在的文件。"""
        self.names = result_names(count)
        self.started = True
        if not self.remote:
            if not os.path.isdir(self.directory):
                try:
                    os.mkdir(self.directory)
                except OSError as error:
                    raise OutputFileError(f"建不了结果目录 {visible(self.out)}：{os_error_text(error)}") from None
                self.created = True
        if self.old:
            self.save_manifest([], complete=False, pending=self.old)
            for name in self.old:
                if name != MANIFEST:
                    self.remove(name)
        if not self.remote:
            self.planned = {name: self.outputs.plan(os.path.join(self.out, name), "结果") for name in self.names}
        self.save_manifest([], complete=False, pending=self.names)

    def extra_name(self) -> str | None:
        return os.path.basename(self.extra) if self.extra else None

    def write(self, number: int, text: str) -> None:
        name = self.names[number]
        if self.remote:
            self.write_remote(name, text)
        else:
            write_file(self.planned[name], text)
        self.written.append(name)

    def finish(self, complete: bool) -> None:
        """最后一次写清单：记下真正写好的文件——以目录里真有的为准（写好了、还没来得及记下就被打断的那一个也算）。
        什么都没写成、目录又是这次建的：把目录也删掉，不留空目录。"""
        if not self.started:
            return
        present = self.present(self.names)
        self.written = [name for name in self.names if name in present]
        self.complete = complete
        if not complete and not self.written and self.created:
            self.remove(MANIFEST)
            try:
                os.rmdir(self.directory)
            except OSError:
                pass
            return
        try:
            self.save_manifest(self.written, complete)
        except (OutputFileError, ServiceError):
            if complete:
                raise

    def summary_written(self) -> None:
        """目录里的汇总（--summary 目录/summary.json）在任务之后才写：写好了，清单里从 pending 挪到 files。"""
        if self.started and self.extra_name():
            self.save_manifest(self.written, self.complete)

    def save_manifest(self, files: Sequence[str], complete: bool, pending: Sequence[str] = ()) -> None:
        """写清单。files 里只留下目录里真有的（最后一道防线：不管谁传进来什么，清单从不说一个不在的文件写好了）；
        目录里的汇总写好了就记进 files，还没写（或者正要删掉）就记进 pending。"""
        extra = self.extra_name()
        present = self.present([*files, *([extra] if extra else [])])
        written = [name for name in files if name in present]
        waiting = {*pending} - {*written, MANIFEST}
        if extra and extra in present and extra not in waiting:
            written.append(extra)
        elif extra:
            waiting.add(extra)
        text = json.dumps({"written_by": WRITER, "complete": complete, "files": written, "pending": sorted(waiting)},
                          ensure_ascii=False, indent=2) + "\n"
        if self.remote:
            self.write_remote(MANIFEST, text)
            return
        planned = PlannedFile(os.path.join(self.out, MANIFEST), os.path.join(self.directory, MANIFEST), "结果清单")
        write_file(planned, text)

    def present(self, names: Sequence[str]) -> set[str]:
        """names 里哪些现在真的在目录里：列一次目录；列不了（没有读权限之类）就一个一个看，看不了的算不在——
        清单宁可少记，不多记。"""
        if not names:
            return set()
        try:
            if self.remote:
                fs = self.filesystem()
                fs.invalidate_cache(self.directory)  # 对象存储的文件系统会记着上次列出来的
                listing = {os.path.basename(path.rstrip("/")) for path in fs.ls(self.directory, detail=False)}
            else:
                listing = set(os.listdir(self.directory))
            return set(names) & listing
        except OSError:
            return {name for name in names if self.exists(name)}

    def exists(self, name: str) -> bool:
        try:
            if self.remote:
                return bool(self.filesystem().exists(f"{self.directory}/{name}"))
            return os.path.isfile(os.path.join(self.directory, name))
        except OSError:
            return False

    def remove(self, name: str) -> None:
        try:
            if self.remote:
                self.filesystem().rm(f"{self.directory}/{name}")
            else:
                os.unlink(os.path.join(self.directory, name))
        except FileNotFoundError:
            pass
        except OSError as error:
            raise OutputFileError(f"删不掉上次的结果 {visible(name)}：{os_error_text(error)}") from None

    def write_remote(self, name: str, text: str) -> None:
        try:
            with self.filesystem().open(f"{self.directory}/{name}", "w", encoding="utf-8") as handle:
                handle.write(text)
        except OSError as error:
            raise ServiceError(f"写不了结果 {visible(self.out)}/{visible(name)}：{os_error_text(error)}") from None

    # ---------- 说明 ----------

    def done_line(self) -> str:
        return (f"结果写在 {visible(self.out)}：{len(self.written)} 个文件 {listed(self.written)}，"
                f"按文件名的顺序接起来（cat {visible(self.out.rstrip('/'))}/*.jsonl）就是按输入顺序的全部结果；"
                f"清单在 {MANIFEST}")

    def kept_line(self) -> str | None:
        """任务没做完时：已经写好的结果保留，说出是哪些（一个也没有时什么都不说）。"""
        if not self.written:
            return None
        missing = [name for name in self.names if name not in self.written]
        if not missing:
            return (f"{len(self.written)} 个结果文件都已写好，保留在 {visible(self.out)}：{listed(self.written)}"
                    f"（{MANIFEST} 里记着）")
        return (f"已经写好的 {len(self.written)} 个结果文件保留在 {visible(self.out)}：{listed(self.written)}；"
                f"其余 {len(missing)} 块（{listed(missing)}）没有写成（{MANIFEST} 里记着写好了哪些）")
