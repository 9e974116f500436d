"""搜索后端的结果的本地缓存：同一个搜索、同一个网页不付两次钱。

一个 SQLite 文件（标准库 sqlite3），放在 $XDG_CACHE_HOME/answer-with-sources/（默认 ~/.cache/answer-with-sources/），
目录 0700、文件 0600。每个键都带着后端的名字（SourceCache 的 backend）和请求的全部内容：秘塔的搜索按请求体
（q、scope、size 等全部字段）和秘塔地址，网页按地址、格式和长度；密钥既不进键也不进值。搜索结果默认留 1 天，
网页 7 天；总大小有上限，超出时先删最旧的。文件名和秘塔的键还是只有秘塔一个后端时的样子：升级以后，已经付过费的
结果照样命中。

只缓存好的响应：出错的（错误体、HTTP 错误、连接断开）在后端的客户端里就抛了异常，到不了这里；
后端再挡住空的搜索结果（cached 的 keep）。
缓存自己出任何问题（文件损坏、目录不能写、磁盘满）都只警告一次，然后照常向后端请求——绝不因为缓存丢掉用户的回答。
"""
import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from sourced_answers.core.network import os_error_text
from sourced_answers.core.settings import SEARCH_DEFAULTS
from sourced_answers.core.strings import literal

SEARCH_TTL = SEARCH_DEFAULTS.cache_search_hours * 3600
PAGE_TTL = SEARCH_DEFAULTS.cache_page_days * 86400
MAX_BYTES = SEARCH_DEFAULTS.cache_max_mb * 1024 * 1024
BUSY_TIMEOUT_MS = 10_000
FILE_NAME = "metaso.sqlite3"

T = TypeVar("T")


def age_text(seconds: float) -> str:
    """“2 小时前”这样的说法。"""
    if seconds < 60:
        return "刚才"
    for unit, size in (("天", 86400), ("小时", 3600), ("分钟", 60)):
        if seconds >= size:
            return f"{int(seconds // size)} {unit}前"
    return "刚才"


class SourceCache:
    """可以在多个进程之间共用的缓存，一个后端一个（backend：登记的名字，进每一个键）。
    任何 sqlite 错误都让它警告一次后停用（返回未命中、不再写）。"""

    def __init__(self, directory: Path | str, search_ttl: float = SEARCH_TTL, page_ttl: float = PAGE_TTL,
                 max_bytes: int = MAX_BYTES, read: bool = True, write: bool = True,
                 clock: Callable[[], float] = time.time, warn: Callable[[str], None] = lambda message: None,
                 backend: str = "metaso") -> None:
        self.directory = Path(directory)
        # 秘塔的键前面不加名字：只有它一个后端时存下的结果照样命中
        self.namespace = "" if backend == "metaso" else f"{backend}:"

        self.path = self.directory / FILE_NAME
        self.ttl = {"search": search_ttl, "page": page_ttl}
        self.max_bytes = max_bytes
        self.read = read
        self.write = write
        self.clock = clock
        self.warn = warn
        self.saved = {"search": 0, "page": 0}
        self.lock = threading.Lock()  # 并发读取网页的几个线程共用一个连接
        self.connection = self._open() if (read or write) else None

    # ---------- 打开、损坏时重建 ----------

    def _open(self) -> sqlite3.Connection | None:
        try:
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as error:
            self.warn(f"⚠ 缓存目录 {literal(self.directory)} 不能用（{os_error_text(error)}），这次不用缓存")
            return None
        try:
            return self._connect()
        except OSError as error:
            self.warn(f"⚠ 缓存文件 {literal(self.path)} 不能用（{os_error_text(error)}），这次不用缓存")
            return None
        except sqlite3.DatabaseError as error:
            if not self.path.exists() or "not a database" not in str(error) and "malformed" not in str(error):
                self.warn(f"⚠ 缓存文件 {literal(self.path)} 不能用（{sqlite_text(error)}），这次不用缓存")
                return None
        self.warn(f"⚠ 缓存文件 {literal(self.path)} 损坏了，已经重建（之前缓存的结果没有了）")
        try:
            for suffix in ("", "-wal", "-shm"):
                Path(str(self.path) + suffix).unlink(missing_ok=True)
            return self._connect()
        except (OSError, sqlite3.DatabaseError) as error:
            reason = os_error_text(error) if isinstance(error, OSError) else sqlite_text(error)
            self.warn(f"⚠ 缓存文件 {literal(self.path)} 重建失败（{reason}），这次不用缓存")
            return None

    def _connect(self) -> sqlite3.Connection:
        if not self.path.exists():
            # 先以 0600 建好文件，sqlite 再打开它：别的用户读不到缓存
            os.close(os.open(self.path, os.O_CREAT | os.O_WRONLY, 0o600))
        connection = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                                     check_same_thread=False)
        try:
            connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            switch_to_wal(connection)
            connection.execute("CREATE TABLE IF NOT EXISTS entries (key TEXT PRIMARY KEY, kind TEXT NOT NULL, "
                               "value TEXT NOT NULL, stored REAL NOT NULL, size INTEGER NOT NULL)")
            connection.execute("CREATE INDEX IF NOT EXISTS entries_stored ON entries (stored)")
            connection.execute("SELECT count(*) FROM entries").fetchone()
        except sqlite3.DatabaseError:
            connection.close()
            raise
        return connection

    def _failed(self, error: sqlite3.Error) -> None:
        self.warn(f"⚠ 缓存出错（{sqlite_text(error)}），这次剩下的部分不用缓存")
        try:
            if self.connection is not None:
                self.connection.close()
        except sqlite3.Error:
            pass
        self.connection = None

    # ---------- 读、写 ----------

    def get(self, kind: str, key: Any) -> tuple[Any, float] | None:
        """命中且没过期时返回 (值, 存了多少秒)；否则 None。"""
        if not self.read or self.connection is None:
            return None
        try:
            with self.lock:
                row = self.connection.execute("SELECT value, stored FROM entries WHERE key = ?",
                                              (digest(self.namespace + kind, key),)).fetchone()
        except sqlite3.Error as error:
            self._failed(error)
            return None
        if row is None:
            return None
        age = self.clock() - row[1]
        if age > self.ttl[kind] or age < 0:
            return None
        try:
            value = json.loads(row[0])
        except (ValueError, RecursionError):
            self.drop(kind, key)
            return None
        self.saved[kind] += 1
        return value, age

    def drop(self, kind: str, key: Any) -> None:
        """一条读不懂的缓存：删掉它、提醒一次，当作没命中（再请求一次秘塔，不让这一条卡住以后每次运行）。"""
        self.warn("⚠ 缓存里有一条记录读不懂，已经删掉，这次重新请求")
        try:
            with self.lock:
                if self.connection is not None:
                    self.connection.execute("DELETE FROM entries WHERE key = ?", (digest(self.namespace + kind, key),))
        except sqlite3.Error as error:
            self._failed(error)

    def put(self, kind: str, key: Any, value: Any) -> None:
        connection = self.connection
        if not self.write or connection is None:
            return
        try:
            data = json.dumps(value, ensure_ascii=False)
        except (ValueError, RecursionError):
            return  # 存不下的值（嵌套太深之类）就不缓存
        try:
            with self.lock:
                row = (digest(self.namespace + kind, key), kind, data, self.clock(), len(data.encode()))
                connection.execute("INSERT OR REPLACE INTO entries VALUES (?, ?, ?, ?, ?)", row)
                self._evict(connection)
        except sqlite3.Error as error:
            self._failed(error)

    def _evict(self, connection: sqlite3.Connection) -> None:
        total = connection.execute("SELECT coalesce(sum(size), 0) FROM entries").fetchone()[0]
        if total <= self.max_bytes:
            return
        rows = connection.execute("SELECT key, size FROM entries ORDER BY stored").fetchall()
        doomed = []
        for key, size in rows:
            if total <= self.max_bytes:
                break
            doomed.append((key,))
            total -= size
        connection.executemany("DELETE FROM entries WHERE key = ?", doomed)

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None

    def savings(self) -> str | None:
        """“省下 1 次搜索、2 次读取”；什么都没省时返回 None。"""
        parts = []
        if self.saved["search"]:
            parts.append(f"{self.saved['search']} 次搜索")
        if self.saved["page"]:
            parts.append(f"{self.saved['page']} 次读取")
        return "缓存省下 " + "、".join(parts) if parts else None


def switch_to_wal(connection: sqlite3.Connection) -> None:
    """PRAGMA journal_mode = WAL，别的进程同时在建同一个文件时重试。
    换日志模式要独占锁，sqlite 在这里不调用 busy_timeout 的等待，直接报“database is locked”：
    几个进程同时第一次运行时，只有一个换得成，其余的等它换完再试（最多等 BUSY_TIMEOUT_MS）。"""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            connection.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error).lower() or time.monotonic() >= deadline:
                raise
            time.sleep(0.01)


def sqlite_text(error: BaseException) -> str:
    """sqlite 的英文说明换成中文（认不出的就说“数据库出错”）。"""
    text = str(error).lower()
    for english, chinese in (("locked", "数据库被别的进程锁住了"), ("malformed", "文件损坏"),
                             ("not a database", "不是缓存数据库"), ("readonly", "只读，写不进去"),
                             ("disk i/o", "读写磁盘出错"), ("full", "磁盘已满"), ("unable to open", "打不开文件")):
        if english in text:
            return chinese
    return "数据库出错"


def digest(kind: str, key: Any) -> str:
    """键：类型加上请求内容的 SHA-256。键里只有请求内容（问题、网址），从不含密钥。"""
    return kind + ":" + hashlib.sha256(json.dumps(key, ensure_ascii=False, sort_keys=True).encode()).hexdigest()


# ---------- 带缓存的调用 ----------

# 同一个进程里同时问同一件事（--serve 同时来了几个一样的问题）：只有第一个去请求后端，别的等它存进缓存再读——
# 不然每一个都没命中、都付一次费。每个键一把锁，用完就从表里拿掉（表不会越长越大）
PENDING: dict[str, tuple[threading.Lock, int]] = {}
PENDING_LOCK = threading.Lock()


@contextmanager
def one_at_a_time(kind: str, key: Any) -> Iterator[None]:
    """同一个键（同一个搜索、同一个网页）同一时间只有一个线程在查缓存、请求后端。"""
    name = digest(kind, key)
    with PENDING_LOCK:
        lock, users = PENDING.get(name, (threading.Lock(), 0))
        PENDING[name] = (lock, users + 1)
    try:
        with lock:
            yield
    finally:
        with PENDING_LOCK:
            lock, users = PENDING[name]
            if users == 1:
                del PENDING[name]
            else:
                PENDING[name] = (lock, users - 1)


def cached(cache: SourceCache | None, kind: str, key: Any, fetch: Callable[[], T],
           keep: Callable[[Any], bool]) -> tuple[T, float | None]:
    """带缓存地调用 fetch：命中时返回 (存着的值, 存了多少秒)，否则调用它并返回 (值, None)。keep(值) 说这个值
    能不能存、存着的能不能用（空的搜索结果不存；读不懂的存货删掉重新请求）。同一个键同一时间只有一个线程在请求。"""
    if cache is None:
        return fetch(), None
    with one_at_a_time(cache.namespace + kind, key):
        hit = cache.get(kind, key)
        if hit and keep(hit[0]):
            return hit[0], hit[1]
        if hit:
            cache.drop(kind, key)
        value = fetch()
        if keep(value):
            cache.put(kind, key, value)
        return value, None
