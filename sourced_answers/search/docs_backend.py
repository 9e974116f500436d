"""本地文档这个搜索后端（--docs PATH，search/backend.py 的 Backend）：从用户的笔记里找资料，不联网、不要密钥。

每个给的路径（文件夹或单个文件）一个索引（docs_folder.Folder）。打开后端时按文件的元数据增量更新索引；
服务（--serve、--mcp）里索引开着、各个请求共用（Shared），请求开始时离上一次看文件夹超过 RESCAN_SECONDS 秒就再
stat 一遍：改过的笔记最多十秒后就搜得到（一万个文件 stat 一遍的用时见 docs/performance.md）。

一条结果是一段（不是整个文件），已经带着正文（Hit.text），gather 不再读它：
- 标题：相对路径:起-止行 · 所在的标题（notes/raid.md:12-18 · 重建）；PDF 按页（report.pdf:p3 · 第 3 页）；
- 链接：docs_links 为 file 时是 file:// 的绝对地址加 #L12-18（PDF 是 #page=3）；为 relative（--serve）时是
  文件夹名/相对路径:12-18，哪里都没有绝对路径；
- 日期：文件的修改日期。
"""
import datetime
import os
from collections.abc import Callable
from pathlib import Path
from urllib.parse import unquote, urlsplit

from sourced_answers.core.errors import DocsError, SourceError
from sourced_answers.core.retrying import Deadline
from sourced_answers.core.settings import SearchSettings
from sourced_answers.core.strings import literal, truncate
from sourced_answers.search.backend import BACKENDS, Hit, Log, Shared
from sourced_answers.search.docs_folder import Folder
from sourced_answers.search.docs_index import Match, has_fts5

SNIPPET_CHARS = 200
# 服务里（--serve、--mcp）一个请求开始时，上一次看文件夹已经过了这么多秒才再看一遍：改过的笔记最多这么久之后搜得到，
# 问题不必每个都等 stat 一遍整个文件夹
RESCAN_SECONDS = 10.0


def no_fts5_message() -> str:
    import sqlite3
    return (f"这个 Python 的 SQLite（{sqlite3.sqlite_version}）没有 FTS5 全文索引，--docs 用不了。换一个带 FTS5 的 "
            "Python 3 再装本程序：python.org 的安装包、Homebrew、conda 和 Debian/Ubuntu 自带的 python3 都带；"
            "自己编译 Python 时，先装带 FTS5 的 SQLite（libsqlite3-dev）再编译")


def resolve(given: tuple[str, ...], log: Log) -> list[Path]:
    """用户给的路径 → 存在的绝对路径；不存在的说一句。同一处给了两次（包括经过符号链接），或者给的文件、文件夹在另一个
    给了的文件夹里面：只留外面的那一个，说一句（不然同一段会作为两条资料出现）。"""
    roots: list[tuple[Path, Path]] = []  # (绝对路径, 真实路径)
    for text in given:
        path = Path(os.path.expanduser(text))
        try:
            absolute = Path(os.path.abspath(path))
            exists = absolute.exists()
            real = absolute.resolve()
        except (OSError, ValueError, RuntimeError):
            exists = False
        if not exists:
            log(f"⚠ --docs 给的 {literal(text)} 不存在，跳过")
            continue
        outer = next((kept for kept, kept_real in roots if real == kept_real or real.is_relative_to(kept_real)), None)
        if outer is not None:
            log(f"⚠ --docs 给的 {literal(text)} 已经在 {literal(outer)} 里面了，不再单独算一次")
            continue
        inner = [(kept, kept_real) for kept, kept_real in roots if kept_real.is_relative_to(real)]
        for kept, kept_real in inner:
            log(f"⚠ --docs 给的 {literal(kept)} 在 {literal(text)} 里面，不再单独算一次")
            roots.remove((kept, kept_real))
        roots.append((absolute, real))
    return [absolute for absolute, _ in roots]


def span(match: Match) -> str:
    """12-18、12（只有一行）、p3（PDF 的第 3 页）。"""
    passage = match.passage
    prefix = "p" if passage.page else ""
    if passage.start == passage.end:
        return f"{prefix}{passage.start}"
    return f"{prefix}{passage.start}-{prefix}{passage.end}" if passage.page else f"{passage.start}-{passage.end}"


def opener(root: Path, cache: Path | None, max_bytes: int, log: Log) -> Callable[[], Folder]:
    return lambda: Folder(root, cache, max_bytes, log)


class DocsBackend:
    """本地文档：search 在各个索引里按 bm25 排出最相关的段落，read 按链接找回一段。"""
    name = "docs"
    label = BACKENDS[name].label
    unit = BACKENDS[name].unit

    def __init__(self, search: SearchSettings, log: Log, deadline: Deadline, shared: Shared | None = None) -> None:
        self.settings = search
        self.log = log
        self.shared = shared
        self.folders: list[Folder] = []
        self.by_link: dict[str, tuple[Folder, Match]] = {}
        if not has_fts5():
            raise DocsError(no_fts5_message())
        roots = resolve(search.docs, log)
        cache = None if search.no_cache else search.cache_dir
        if cache is None and shared is None:
            log("⚠ 没有可用的缓存目录（或用了 --no-cache）：这次在内存里建索引，下次要重新读一遍")
        max_bytes = search.cache_max_mb * 1024 * 1024
        try:
            for root in roots:
                if shared is not None:
                    folder = shared.get(f"docs:{root}:{cache}", opener(root, cache, max_bytes, log))
                else:
                    folder = Folder(root, cache, max_bytes, log)
                    self.folders.append(folder)  # 自己开的自己关
                folder.refresh(log, search.progress, RESCAN_SECONDS if shared is not None else 0.0)
                if shared is not None:
                    self.folders.append(folder)
        except BaseException:
            self.close()
            raise
        if not any(folder.index.counts()[1] for folder in self.folders):
            paths = "、".join(literal(text) for text in search.docs) or "（没有给路径）"
            raise DocsError(f"--docs 给的 {paths} 里没有能读的文档（认得的格式：.md、.txt、.html、.pdf、.docx）")

    def hit(self, folder: Folder, match: Match) -> Hit:
        passage = match.passage
        where = f"{match.relative}:{span(match)}"
        title = f"{where} · {passage.heading}" if passage.heading else where
        if self.settings.docs_links == "relative":
            link = f"{folder.name}/{where}" if folder.root.is_dir() else where
        else:
            path = folder.root / match.relative if folder.root.is_dir() else folder.root
            fragment = f"page={passage.start}" if passage.page else f"L{span(match)}"
            link = f"{path.as_uri()}#{fragment}"
        date = datetime.datetime.fromtimestamp(match.mtime_ns / 1e9).strftime("%Y-%m-%d")
        self.by_link[link] = (folder, match)
        return Hit(title=title, link=link, snippet=truncate(passage.text, SNIPPET_CHARS), date=date,
                   text=passage.text)

    def search(self, question: str, size: int) -> tuple[list[Hit], float | None]:
        found = [(match.score, order, folder, match) for order, folder in enumerate(self.folders)
                 for match in folder.index.search(question, size)]
        found.sort(key=lambda item: (item[0], item[1]))
        return [self.hit(folder, match) for _, _, folder, match in found[:size]], None

    def read(self, hit: Hit, limit: int) -> tuple[str, float | None]:
        known = self.by_link.get(hit.link) or self.find(hit.link)
        if known is None:
            raise SourceError(f"本地文档里没有 {literal(hit.link)} 这一段", next_step="文件可能改过了，再问一次")
        return known[1].passage.text[:limit], None

    def find(self, link: str) -> tuple[Folder, Match] | None:
        """按链接在索引里找回一段（不是这个后端这次给出的链接时）。"""
        for folder in self.folders:
            if link.startswith("file:"):
                parts = urlsplit(link)
                path, fragment = Path(unquote(parts.path)), parts.fragment
                if folder.root.is_dir() and not path.is_relative_to(folder.root):
                    continue
                relative = path.relative_to(folder.root).as_posix() if folder.root.is_dir() else folder.name
                numbers = fragment.removeprefix("page=").removeprefix("L")
            else:
                prefix = f"{folder.name}/" if folder.root.is_dir() else ""
                if not link.startswith(prefix) or ":" not in link:
                    continue
                relative, numbers = link[len(prefix):].rsplit(":", 1)
            start, _, end = numbers.replace("p", "").partition("-")
            if not start.isdigit() or not (end or start).isdigit():
                continue
            match = folder.index.passage(relative, int(start), int(end or start))
            if match is not None:
                return folder, match
        return None

    def savings(self) -> str | None:
        return None

    def close(self) -> None:
        if self.shared is None:
            for folder in self.folders:
                folder.close()
        self.folders = []
