"""--docs 的全文索引：一个文件夹一个 SQLite 文件（FTS5，标准库 sqlite3），放在缓存目录的 docs/ 下，不放在文件夹里。

索引里存每个文件的大小、修改时间（纳秒）和 inode：再次打开时只 stat，变了的、新的才读，没了的删掉；什么都没变时
一个文件也不读。索引的是段落（docs_formats.Passage），排序用 FTS5 的 bm25。

中文没有空格分词：汉字按相邻两个字一组（“缓存目录”→ 缓存 存目 目录）进索引，两个字的词就能搜到；其他文字按小写的
词和数字（去掉常见的英文词尾：backups 也找得到 backup）。问题里的“怎么”“什么”“how”这类问法的词不搜；在太多段落里都有
的词（超过 COMMON_SHARE）也不搜——除非问题里只剩它们。
"""
import re
import sqlite3
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from sourced_answers.search.docs_formats import Passage

SCHEMA_VERSION = "2"
BUSY_TIMEOUT_MS = 10_000
# 一个问题最多用这么多个词去搜（最少见的那些）：长问题的 OR 查询也在几十毫秒内
MAX_TERMS = 24
# 出现在超过这个比例的段落里的词不搜（除非只剩它们）：它们几乎不区分段落
COMMON_SHARE = 0.25
# bm25 的列权重：正文、标题和文件名
WEIGHTS = (1.0, 0.6)

HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
TERM = re.compile(f"[{HAN}]+|[^\\W{HAN}_]+")
HAN_RUN = re.compile(f"[{HAN}]+")
# 问法的词：问题里有它们，资料里不一定有，也不说明问的是什么
QUESTION_WORDS = {
    "怎么", "怎样", "么样", "什么", "如何", "为什", "么是", "是什", "哪个", "哪些", "哪里", "是否", "可以", "能否",
    "应该", "需要", "一下", "我的", "我们", "一个", "有没", "没有", "多少", "几个", "吗", "呢", "的", "了", "是", "我",
    "how", "what", "why", "which", "when", "where", "who", "do", "does", "did", "is", "are", "was", "the", "a", "an",
    "i", "my", "me", "we", "our", "to", "of", "in", "on", "for", "and", "or", "it", "should", "can", "could", "would",
    "be", "with", "that", "this", "there", "about", "use", "from",
}


def stem(word: str) -> str:
    """英文词去掉最常见的词尾（复数、-ing、-ed），backups 和 backup、updated 和 update 算一个词。只动长词：
    is、was、bus 不变。"""
    if len(word) <= 3 or not word.isascii() or not word.isalpha():
        return word
    for ending, replacement in (("ies", "y"), ("sses", "ss"), ("ing", ""), ("ed", ""), ("es", "e"), ("s", "")):
        if word.endswith(ending) and len(word) - len(ending) >= 3 and not word.endswith(("ss", "us", "is")):
            word = word[:len(word) - len(ending)] + replacement
            break
    return word.removesuffix("e") if len(word) > 4 else word


def terms(text: str) -> list[str]:
    """进索引、拿去搜的词：汉字两个一组（单独一个汉字就是它自己），其他的是小写的词和数字（英文去掉常见词尾）。"""
    found = []
    for run in TERM.findall(text.lower()):
        if HAN_RUN.fullmatch(run):
            found += [run] if len(run) == 1 else [run[i:i + 2] for i in range(len(run) - 1)]
        else:
            found.append(stem(run))
    return found


def indexed_text(text: str) -> str:
    return " ".join(terms(text))


def has_fts5() -> bool:
    """这个 Python 的 SQLite 有没有 FTS5（有的发行版、自己编译的 Python 没有）。"""
    try:
        connection = sqlite3.connect(":memory:")
        try:
            connection.execute("CREATE VIRTUAL TABLE probe USING fts5(x)")
        finally:
            connection.close()
    except sqlite3.Error:
        return False
    return True


@dataclass(frozen=True)
class Stored:
    """索引里记着的一个文件：上次读它时的大小、修改时间、inode，和没读进来的原因（读进来了就是 None）。"""
    id: int
    size: int
    mtime_ns: int
    inode: int
    skipped: str | None


@dataclass(frozen=True)
class Match:
    """搜到的一段：哪个文件（相对路径）、它的修改时间、段落本身，bm25 分（越小越相关）。"""
    relative: str
    mtime_ns: int
    passage: Passage
    score: float


class Index:
    """一个文件夹的索引。path 为 None 时在内存里（这次运行用完就没了）。几个线程共用一个连接（服务里），用锁隔开。"""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.lock = threading.RLock()
        self.connection = self.connect()

    def connect(self) -> sqlite3.Connection:
        target = ":memory:" if self.path is None else str(self.path)
        connection = sqlite3.connect(target, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False,
                                     isolation_level=None)
        try:
            connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            version = self.version(connection)
            if version != SCHEMA_VERSION:
                self.create(connection)
        except sqlite3.Error:
            connection.close()
            raise
        return connection

    @staticmethod
    def version(connection: sqlite3.Connection) -> str | None:
        try:
            row = connection.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
        except sqlite3.OperationalError:
            return None
        return row[0] if row else None

    @staticmethod
    def create(connection: sqlite3.Connection) -> None:
        connection.executescript(f"""
            BEGIN;
            DROP TABLE IF EXISTS meta; DROP TABLE IF EXISTS files; DROP TABLE IF EXISTS passages;
            DROP TABLE IF EXISTS passage_terms;
            CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
            CREATE TABLE files (id INTEGER PRIMARY KEY, relative TEXT UNIQUE, size INTEGER, mtime_ns INTEGER,
                                inode INTEGER, skipped TEXT);
            CREATE TABLE passages (id INTEGER PRIMARY KEY, file_id INTEGER, start INTEGER, end INTEGER,
                                   page INTEGER, heading TEXT, text TEXT);
            CREATE INDEX passages_of_file ON passages (file_id);
            CREATE VIRTUAL TABLE passage_terms USING fts5(body, label, tokenize = 'unicode61');
            CREATE VIRTUAL TABLE term_counts USING fts5vocab(passage_terms, 'row');
            INSERT INTO meta VALUES ('version', '{SCHEMA_VERSION}');
            COMMIT;""")

    # ---------- 增量更新 ----------

    def stored(self) -> dict[str, Stored]:
        with self.lock:
            rows = self.connection.execute("SELECT relative, id, size, mtime_ns, inode, skipped FROM files")
            return {row[0]: Stored(*row[1:]) for row in rows}

    def remove(self, relatives: Iterable[str]) -> None:
        """删掉这些文件和它们的段落（在调用者的事务里）。"""
        for relative in relatives:
            row = self.connection.execute("SELECT id FROM files WHERE relative = ?", (relative,)).fetchone()
            if row is None:
                continue
            self.connection.execute("DELETE FROM passage_terms WHERE rowid IN "
                                    "(SELECT id FROM passages WHERE file_id = ?)", (row[0],))
            self.connection.execute("DELETE FROM passages WHERE file_id = ?", (row[0],))
            self.connection.execute("DELETE FROM files WHERE id = ?", (row[0],))

    def put(self, relative: str, size: int, mtime_ns: int, inode: int, found: list[Passage],
            skipped: str | None = None) -> None:
        """存一个文件（先删掉它原来的）：读到的段落，或者没读进来的原因。"""
        self.remove([relative])
        cursor = self.connection.execute(
            "INSERT INTO files (relative, size, mtime_ns, inode, skipped) VALUES (?, ?, ?, ?, ?)",
            (relative, size, mtime_ns, inode, skipped))
        file_id = cursor.lastrowid
        label_terms = indexed_text(Path(relative).stem.replace("_", " ").replace("-", " "))
        for passage in found:
            row = self.connection.execute(
                "INSERT INTO passages (file_id, start, end, page, heading, text) VALUES (?, ?, ?, ?, ?, ?)",
                (file_id, passage.start, passage.end, int(passage.page), passage.heading, passage.text))
            self.connection.execute("INSERT INTO passage_terms (rowid, body, label) VALUES (?, ?, ?)",
                                    (row.lastrowid, indexed_text(passage.text),
                                     f"{indexed_text(passage.heading)} {label_terms}"))

    def begin(self) -> None:
        self.connection.execute("BEGIN IMMEDIATE")

    def commit(self) -> None:
        self.connection.execute("COMMIT")

    def rollback(self) -> None:
        if self.connection.in_transaction:
            self.connection.execute("ROLLBACK")

    def counts(self) -> tuple[int, int]:
        """(读进来的文件数, 段落数)。"""
        with self.lock:
            files = self.connection.execute("SELECT count(*) FROM files WHERE skipped IS NULL").fetchone()[0]
            passages = self.connection.execute("SELECT count(*) FROM passages").fetchone()[0]
            return files, passages

    # ---------- 搜索 ----------

    def query_terms(self, question: str) -> list[str]:
        """问题里拿去搜的词：去掉问法的词和重复的，只留索引里有的；太常见的不要（除非只剩它们），最多 MAX_TERMS 个，
        最少见的在前。"""
        wanted = list(dict.fromkeys(term for term in terms(question) if term not in QUESTION_WORDS))
        if not wanted:
            return []
        with self.lock:
            total = self.connection.execute("SELECT count(*) FROM passages").fetchone()[0] or 1
            marks = ",".join("?" * len(wanted))
            counts = dict(self.connection.execute(
                f"SELECT term, doc FROM term_counts WHERE term IN ({marks})", wanted).fetchall())
        present = sorted((counts[term], term) for term in wanted if term in counts)
        rare = [term for count, term in present if count <= COMMON_SHARE * total]
        chosen = rare or [term for _, term in present[:3]]
        return chosen[:MAX_TERMS]

    def search(self, question: str, size: int) -> list[Match]:
        chosen = self.query_terms(question)
        if not chosen:
            return []
        expression = " OR ".join(f'"{term}"' for term in chosen)
        with self.lock:
            rows = self.connection.execute(
                "SELECT files.relative, files.mtime_ns, passages.start, passages.end, passages.page, passages.heading, "
                "passages.text, ranked.score FROM "
                f"(SELECT rowid, bm25(passage_terms, {WEIGHTS[0]}, {WEIGHTS[1]}) AS score FROM passage_terms "
                "WHERE passage_terms MATCH ? ORDER BY score LIMIT ?) AS ranked "
                "JOIN passages ON passages.id = ranked.rowid JOIN files ON files.id = passages.file_id "
                "ORDER BY ranked.score", (expression, size)).fetchall()
        return [Match(relative, mtime_ns, Passage(start, end, heading, text, bool(page)), score)
                for relative, mtime_ns, start, end, page, heading, text, score in rows]

    def passage(self, relative: str, start: int, end: int) -> Match | None:
        """按文件和起止行（页）找回一段（read 用）。"""
        with self.lock:
            row = self.connection.execute(
                "SELECT files.mtime_ns, passages.page, passages.heading, passages.text FROM passages "
                "JOIN files ON files.id = passages.file_id WHERE files.relative = ? AND passages.start = ? "
                "AND passages.end = ?", (relative, start, end)).fetchone()
        if row is None:
            return None
        return Match(relative, row[0], Passage(start, end, row[2], row[3], bool(row[1])), 0.0)

    def close(self) -> None:
        with self.lock:
            self.connection.close()
