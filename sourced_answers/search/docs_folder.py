"""--docs 给的一个文件夹（或一个文件）和它的索引：打开（或建）索引、按文件的元数据增量更新、大小超过缓存上限时让位。

索引文件在缓存目录的 docs/ 下，名字是文件夹绝对路径的摘要（目录 0700、文件 0600），文件夹里什么都不写。
更新（refresh）只 stat 每个文件：大小、修改时间、inode 都没变的不读；新的、变了的读一遍；没了的从索引里删掉。
读不进来的文件（二进制、编码不认得、坏的 .docx/PDF）记下原因，下次没变就不再读，只再说一遍原因；
打不开的（没有权限）不记，下次再试。没装 pypdf 时 PDF 不读也不记（装上以后下次就读）。
docs/ 下全部索引加起来超过缓存上限（--cache-max-mb）时，先删最久没用过的别的文件夹的索引；只剩这一个还超过时说一句，
留着它（删了每次都要重建）。
"""
import hashlib
import importlib.util
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sourced_answers.core.network import os_error_text
from sourced_answers.core.strings import literal
from sourced_answers.search.docs_files import Found, NotText, decode, read_bytes, scan
from sourced_answers.search.docs_formats import Unreadable, document_passages, pdf_install_command
from sourced_answers.search.docs_index import Index
from sourced_answers.search.source_cache import sqlite_text

Log = Callable[[str], None]
# 每读这么多个文件提交一次：中途按了 Ctrl-C，已经读过的下次不必再读
COMMIT_EVERY = 200
# 一次最多列出这么多条跳过的说明，其余的只数一下
MAX_NOTES = 10


def index_path(directory: Path, root: Path) -> Path:
    return directory / f"{hashlib.sha256(str(root).encode('utf-8', 'surrogatepass')).hexdigest()[:32]}.sqlite3"


def has_pypdf() -> bool:
    return importlib.util.find_spec("pypdf") is not None


def say_notes(log: Log, notes: list[str]) -> None:
    for note in notes[:MAX_NOTES]:
        log(f"  ⚠ {literal(note, None)}")
    if len(notes) > MAX_NOTES:
        log(f"  ⚠ 还有 {len(notes) - MAX_NOTES} 个文件也跳过了")


class Folder:
    """用户给的一个路径（文件夹或文件）和它的索引。name：显示用的名字（文件夹名或文件名）。
    服务里几个请求共用一个（Shared），refresh 用锁隔开。"""

    def __init__(self, root: Path, cache: Path | None, max_bytes: int, log: Log) -> None:
        self.root = root
        # 不是 UTF-8 的文件夹名（GBK）：显示、写进链接时用转义的写法（\\xbe\\xc9），不带代理码位
        self.name = os.fsencode(root.name or str(root)).decode("utf-8", "backslashreplace")
        self.max_bytes = max_bytes
        self.lock = threading.Lock()
        self.refreshed = False
        self.scanned = 0.0  # 上一次看完文件夹的时刻（time.monotonic）
        self.index = self.open_index(cache, log)

    def open_index(self, cache: Path | None, log: Log) -> Index:
        if cache is None:
            return Index(None)
        if inside_folder(cache, self.root):
            log(f"⚠ 缓存目录 {literal(cache)} 在 --docs 给的 {literal(self.name)} 里面：索引不写进你的文件夹，"
                "这次在内存里建（把 XDG_CACHE_HOME 设到这个文件夹外面，下次就不用再读一遍）")
            return Index(None)
        directory = cache / "docs"
        path = index_path(directory, self.root)
        try:
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            os.chmod(directory, 0o700)
            os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
            os.chmod(path, 0o600)
            os.utime(path)  # 最近用过（超过上限时先删最久没用过的）
        except OSError as error:
            log(f"⚠ 索引目录 {literal(directory)} 不能用（{os_error_text(error)}），这次在内存里建索引")
            return Index(None)
        try:
            return Index(path)
        except sqlite3.DatabaseError as error:
            if busy(error):  # 另一个进程正拿着它（正在建同一个文件夹的索引）：它没坏，不能删
                log(f"⚠ {literal(self.name)} 的索引正被另一个进程占用，这次在内存里建索引")
                return Index(None)
            log(f"⚠ {literal(self.name)} 的索引文件坏了，重建")
        try:
            path.unlink()
            return Index(path)
        except (OSError, sqlite3.Error) as error:
            log(f"⚠ 索引文件 {literal(path)} 不能用（{error}），这次在内存里建索引")
            return Index(None)

    def refresh(self, log: Log, progress: Any = None, at_most_every: float = 0.0) -> None:
        """按文件的元数据更新索引。第一次说一遍文件夹的概况，之后（服务里的每个请求）只在有变化时说。
        at_most_every：上一次看过还不到这么多秒就不再看（服务里：一万个文件 stat 一遍要零点几秒到几秒，
        不让每个问题都等它；同时来的几个请求也只有第一个去看）。"""
        with self.lock:
            if self.refreshed and time.monotonic() - self.scanned < at_most_every:
                return
            first = not self.refreshed
            changed = self.update(log, progress, verbose=first)
            self.refreshed = True
            self.scanned = time.monotonic()
            if first or changed:
                files, passages = self.index.counts()
                log(f"本地文档 {literal(self.name)}：{files} 个文件，{passages} 段")

    def update(self, log: Log, progress: Any, verbose: bool) -> bool:
        found = scan(self.root)
        stored = self.index.stored()
        current = {item.relative: item for item in found.found}
        pdf_ok = has_pypdf()
        waiting_pdfs = [item for item in found.found if item.format == "pdf" and not pdf_ok]
        to_read = [item for item in found.found if (item.format != "pdf" or pdf_ok) and changed(item, stored)]
        gone = [relative for relative in stored if relative not in current]
        notes = list(found.notes)
        if verbose or to_read or gone:
            rereading = {item.relative for item in to_read}
            notes += [f"{relative}：{record.skipped}，没有读" for relative, record in stored.items()
                      if record.skipped and relative in current and relative not in rereading]
        if waiting_pdfs and verbose:
            notes.append(f"{len(waiting_pdfs)} 个 PDF 没有读：要先装 pypdf（{pdf_install_command()}）")
        if found.ignored and verbose:
            log(f"  {literal(self.name)} 里有 {found.ignored} 个文件不是认得的格式"
                "（.md、.txt、.html、.pdf、.docx），没有看")
        if to_read and verbose:
            log(f"  读取 {len(to_read)} 个新的或改过的文件，建索引…")
        try:
            notes += self.apply(to_read, gone, progress)
        except sqlite3.Error as error:  # 另一个进程正长时间写着同一个索引、磁盘满了……：这次用索引里已有的
            say_notes(log, [*notes, f"索引这次没能更新（{sqlite_text(error)}）：用索引里已有的内容回答，"
                                    f"{len(to_read) + len(gone)} 个新的、改过的或删掉的文件下次再看"])
            return False
        if verbose or to_read or gone:
            say_notes(log, notes)
        if to_read or gone:
            self.keep_within_limit(log)
        return bool(to_read or gone)

    def apply(self, to_read: list[Found], gone: list[str], progress: Any) -> list[str]:
        """读要读的文件，存进索引，删掉没了的；返回读不进来的说明。"""
        notes: list[str] = []
        bar = progress_bar(len(to_read), progress)
        self.index.lock.acquire()
        try:
            self.index.begin()
            self.index.remove(gone)
            for done, item in enumerate(to_read, 1):
                note = self.read_into_index(item)
                if note:
                    notes.append(note)
                if bar is not None:
                    bar.update(1)
                if done % COMMIT_EVERY == 0:
                    self.index.commit()
                    self.index.begin()
            self.index.commit()
        except BaseException:
            self.index.rollback()
            raise
        finally:
            self.index.lock.release()
            if bar is not None:
                bar.close()
        return notes

    def read_into_index(self, item: Found) -> str | None:
        try:
            data = read_bytes(item.path)
        except OSError as error:
            return f"{item.relative} 读不了（{os_error_text(error)}），跳过"
        try:
            found = document_passages(item.format, data, decode)
        except (NotText, Unreadable) as error:
            self.index.put(item.relative, item.size, item.mtime_ns, item.inode, [], skipped=str(error))
            return f"{item.relative}：{error}，跳过"
        except (ValueError, RecursionError) as error:  # 格式库没想到的坏文件
            reason = f"读不出文字（{type(error).__name__}）"
            self.index.put(item.relative, item.size, item.mtime_ns, item.inode, [], skipped=reason)
            return f"{item.relative}：{reason}，跳过"
        self.index.put(item.relative, item.size, item.mtime_ns, item.inode, found)
        return None

    def keep_within_limit(self, log: Log) -> None:
        """docs/ 下的索引加起来不超过缓存上限：先删最久没用过的别的文件夹的索引。"""
        path = self.index.path
        if path is None:
            return
        try:
            indexes = [(entry.stat().st_mtime, entry) for entry in path.parent.glob("*.sqlite3")]
            total = sum(entry.stat().st_size for _, entry in indexes)
            for _, entry in sorted(indexes, key=lambda pair: pair[0]):
                if total <= self.max_bytes:
                    return
                if entry == path:
                    continue
                size = entry.stat().st_size
                entry.unlink()
                total -= size
            if total > self.max_bytes:
                log(f"  ⚠ {literal(self.name)} 的索引有 {total / 1024 / 1024:.0f} MB，超过缓存上限 "
                    f"{self.max_bytes / 1024 / 1024:.0f} MB（--cache-max-mb）：留着它（删了每次都要重建），"
                    "可以调大上限")
        except OSError as error:
            log(f"  ⚠ 清理旧的索引时出错（{os_error_text(error)}），没有清理")

    def close(self) -> None:
        self.index.close()


def busy(error: sqlite3.Error) -> bool:
    """SQLite 说的是“被别人锁着”（等满了 busy_timeout），不是文件坏了。"""
    return getattr(error, "sqlite_errorcode", None) in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED) or \
        "locked" in str(error)


def inside_folder(cache: Path, root: Path) -> bool:
    """缓存目录是不是在用户给的文件夹里（或者就是它）：按真实的路径比（符号链接、.. 都算上）。"""
    try:
        return root.is_dir() and cache.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError):
        return True  # 说不清时当它在里面：宁可这次在内存里建，也不往用户的文件夹里写


def changed(item: Found, stored: dict[str, Any]) -> bool:
    record = stored.get(item.relative)
    return record is None or (record.size, record.mtime_ns, record.inode) != (item.size, item.mtime_ns, item.inode)


def progress_bar(total: int, stream: Any) -> Any:
    """建索引的进度条（tqdm，和 --eval 的一样只在门给了地方时画）。"""
    if stream is None or total == 0:
        return None
    from tqdm import tqdm
    return tqdm(total=total, unit="个文件", file=stream, dynamic_ncols=True, leave=False, desc="建索引")
