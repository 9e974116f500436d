"""第 1 步：从搜索后端（search/backend.py）搜索，并发读取前几条的正文，挑出和问题相关的段落，得到编号的资料。

所有后端共用这里：读取失败的改用搜索摘要（并说明原因），缓存命中时说一句，客户端走了就不再读。
SourceSession 按设置打开后端、用完关掉；各个门（命令行、--serve、--mcp、Python API、--eval）都经过它。
"""
import contextvars
import threading
from collections.abc import Sequence
from dataclasses import replace
from types import TracebackType

from sourced_answers.checker import Source
from sourced_answers.core.abandoning import stop_if_gone
from sourced_answers.core.errors import NoResults, QuestionError, SourceError
from sourced_answers.core.masking import mask, may_hold_secret, searchable
from sourced_answers.core.retrying import Deadline
from sourced_answers.core.settings import SearchSettings
from sourced_answers.core.strings import literal
from sourced_answers.search.backend import Backend, Hit, Log, Shared, open_backend
from sourced_answers.search.passages import select_passages
from sourced_answers.search.source_cache import age_text

# 读取最多取这么多字符，再从里面挑和问题相关的段落放进 --max-chars 的预算
READ_LIMIT = 200_000

# 一条结果读取的结果：(文字, 失败原因或 None, 缓存里存了多少秒或 None)；失败时文字是摘要
PageResult = tuple[str, str | None, float | None]


def read_one(backend: Backend, hit: Hit, question: str, max_chars: int) -> PageResult:
    """读一条结果并挑出相关段落。"""
    try:
        text, age = backend.read(hit, READ_LIMIT)
    except SourceError as error:
        return hit.snippet, str(error), None
    return select_passages(text, question, max_chars), None, age


def read_pages(backend: Backend, hits: list[Hit], question: str, max_chars: int) -> list[PageResult]:
    """并发读取。用守护线程：按下 Ctrl-C 时不必等还在进行的读取结束。"""
    pages: list[PageResult] = [(hit.snippet, "没有读取", None) for hit in hits]

    def work(index: int, hit: Hit) -> None:
        try:
            pages[index] = read_one(backend, hit, question, max_chars)
        except Exception as error:  # noqa: BLE001  一条出任何问题都不影响其他的
            pages[index] = (hit.snippet, f"读取出错：{error}", None)

    # 每个线程带着这一刻的上下文（各自一份）：--serve 的“客户端走了”的标记在读取的线程里也看得见（core.abandoning）
    threads = [threading.Thread(target=contextvars.copy_context().run, args=(work, i, hit), daemon=True)
               for i, hit in enumerate(hits)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stop_if_gone()  # 读的时候客户端走了：没读的没有读，也不再请模型回答
    return pages


def gather(question: str, search: SearchSettings, backend: Backend, log: Log) -> list[Source]:
    """搜索，再并发读取前 search.read 条的正文（后端已经给了正文的不再读）。读取失败的改用摘要。"""
    log(f"搜索{backend.label}：{question}（{search.size} 条）")
    hits, age = backend.search(question, search.size)
    if age is not None:
        log(f"  搜索：来自缓存（{age_text(age)}）")
    hits = hits[:search.size]
    if not hits:
        return []
    to_read = [index for index, hit in enumerate(hits[:search.read]) if hit.link and hit.text is None]
    pages: dict[int, PageResult] = {}
    if to_read:
        log(f"读取前 {len(to_read)} 个{backend.unit}的正文…")
        read = read_pages(backend, [hits[i] for i in to_read], question, search.max_chars)
        pages = dict(zip(to_read, read, strict=True))
    sources = []
    for index, hit in enumerate(hits):
        if hit.text is not None:
            sources.append(Source(text=hit.text[:search.max_chars], title=hit.title, link=hit.link, date=hit.date,
                                  read=True, cached=False))
            continue
        text, read_ok, page_age = hit.snippet, False, None
        if index in pages:
            text, failure, page_age = pages[index]
            read_ok = failure is None
            if failure:
                log(f"  读取 [{index + 1}] {literal(hit.link)} 失败，改用摘要：{literal(failure, None)}")
            elif page_age is not None:
                log(f"  读取 [{index + 1}]：来自缓存（{age_text(page_age)}）")
        cached = page_age is not None if index in pages else age is not None
        sources.append(Source(text=text[:search.max_chars], title=hit.title, link=hit.link, date=hit.date,
                              read=read_ok, cached=cached))
    if pages and not any(failure is None for _, failure, _ in pages.values()):
        log(f"⚠ 所有{backend.unit}的正文都没读到，只用搜索摘要回答")
    return sources


def prepare(search: SearchSettings, log: Log, shared: Shared) -> None:
    """服务（--serve、--mcp）接受请求之前打开一次后端：本地文档这时建好、更新索引（留在 shared 里，第一个问题不用等），
    文件夹不对这时就说（退出码 2），不等到第一个请求。"""
    open_backend(search, log, Deadline(None), shared).close()


class SourceSession:
    """一次回答（或一次 --eval）的资料来源：按设置打开搜索后端，用完关掉。shared：服务里各个请求共用的东西。
    secrets：本程序认得的每个密钥，搜索的文字里有的话发出去之前去掉（gather）。"""

    def __init__(self, search: SearchSettings, log: Log, deadline: Deadline, secrets: Sequence[str],
                 shared: Shared | None = None) -> None:
        self.search = search
        self.log = log
        self.secrets = secrets
        self.searched = ""  # 上一次真正拿去搜索的文字
        self.key_cut: str | None = None  # 上一次搜索的文字里去掉了密钥时说的那句话（masking.KEY_CUT）
        self.backend = open_backend(search, log, deadline, shared)

    def __enter__(self) -> "SourceSession":
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.backend.close()

    def gather(self, question: str) -> list[Source]:
        """搜索并读取；一条结果也没有时是服务的问题（退出码 3）。问题里的密钥交给后端之前去掉，并说一句
        （masking.searchable：每道门、每个后端的搜索都经过这里，密钥只发给它自己的服务）；去掉以后没有字了就不搜索。"""
        question, note = searchable(question, self.secrets)
        if note:
            self.log(f"⚠ {note}")
            if not any(char.isalnum() for char in question):
                raise QuestionError("问题里除了密钥没有别的文字：去掉密钥以后没有可以搜索的内容，请换个问法",
                                    "empty_question")
        self.searched, self.key_cut = question, note
        sources = gather(question, self.search, self.backend, self.log)
        if not sources:
            raise NoResults(f"{self.backend.label}没有搜到结果", next_step="换个说法再试")
        return self.without_keys(sources)

    def without_keys(self, sources: list[Source]) -> list[Source]:
        """资料里写着本程序认得的密钥（笔记里记着秘塔的密钥）：交给模型（可以是别人机器上的服务）、写进任何输出之前
        遮掉，说一句是哪几条。"""
        if not self.secrets or not any(may_hold_secret(source.text + source.title, self.secrets) for source in sources):
            return sources
        cleaned = [replace(source, text=mask(source.text, self.secrets), title=mask(source.title, self.secrets))
                   for source in sources]
        numbers = [str(n) for n, (old, new) in enumerate(zip(sources, cleaned, strict=True), 1) if old != new]
        if numbers:
            self.log(f"⚠ 资料 {'、'.join(f'[{n}]' for n in numbers)} 里写着密钥：交给模型之前遮掉了")
        return cleaned

    def savings(self) -> str | None:
        """缓存省下了什么（“缓存省下 1 次搜索、2 次读取”；什么都没省时为 None）。"""
        return self.backend.savings()

    def report_savings(self) -> None:
        """运行结束时说一句缓存省下了什么（什么都没省时不说）。"""
        saved = self.savings()
        if saved:
            self.log(saved)
