"""第 1 步：搜索秘塔，并发读取前几个网页的正文，挑出和问题相关的段落，得到编号的资料。

读取失败的页面改用搜索摘要（并说明原因）；秘塔的结果经过本地缓存（见 metaso_cache.py）。
"""
import contextvars
import threading
from collections.abc import Callable, Sequence
from types import TracebackType

from sourced_answers.checker import Source, has_chinese
from sourced_answers.core.abandoning import stop_if_gone
from sourced_answers.core.errors import MetasoError, NoResults, QuestionError
from sourced_answers.core.masking import searchable
from sourced_answers.core.retrying import Deadline
from sourced_answers.core.settings import SearchSettings
from sourced_answers.core.strings import literal, truncate
from sourced_answers.search import metaso_cache, metaso_client
from sourced_answers.search.demo_pages import PAGE_SETS
from sourced_answers.search.demo_service import DemoMetaso
from sourced_answers.search.passages import select_passages

# 读取接口最多取这么多字符，再从里面挑和问题相关的段落放进 --max-chars 的预算
READ_LIMIT = 200_000
# 搜索结果的标题最多这么多个字符（连同截断时的“…”；网页的标题再长也就一两百个字，几 MB 的“标题”会把提示词撑爆）
MAX_TITLE = 300

Log = Callable[[str], None]
# 一个页面读取的结果：(文字, 失败原因或 None, 缓存里存了多少秒或 None)；失败时文字是摘要
PageResult = tuple[str, str | None, float | None]
SearchResult = dict[str, str]


def read_one(result: SearchResult, question: str, max_chars: int, client: metaso_client.Client,
             cache: metaso_cache.MetasoCache | None = None) -> PageResult:
    """读一个网页并挑出相关段落。"""
    try:
        text, age = metaso_cache.read_page(cache, result["link"], READ_LIMIT, client)
    except MetasoError as error:
        return result["snippet"], str(error), None
    return select_passages(text, question, max_chars), None, age


def read_pages(results: list[SearchResult], question: str, max_chars: int, client: metaso_client.Client,
               cache: metaso_cache.MetasoCache | None = None) -> list[PageResult]:
    """并发读取。用守护线程：按下 Ctrl-C 时不必等还在进行的读取结束。"""
    pages: list[PageResult] = [(r["snippet"], "没有读取", None) for r in results]

    def work(index: int, result: SearchResult) -> None:
        try:
            pages[index] = read_one(result, question, max_chars, client, cache)
        except Exception as error:  # noqa: BLE001  一个页面出任何问题都不影响其他页面
            pages[index] = (result["snippet"], f"读取出错：{error}", None)

    # 每个线程带着这一刻的上下文（各自一份）：--serve 的“客户端走了”的标记在读取的线程里也看得见（core.abandoning）
    threads = [threading.Thread(target=contextvars.copy_context().run, args=(work, i, r), daemon=True)
               for i, r in enumerate(results)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stop_if_gone()  # 读的时候客户端走了：没读的页面没有读，也不再请模型回答
    return pages


def gather(question: str, size: int, read_count: int, max_chars: int, client: metaso_client.Client, log: Log,
           cache: metaso_cache.MetasoCache | None = None) -> list[Source]:
    """搜索，再并发读取前 read_count 个网页的正文。读取失败的页面改用摘要。"""
    log(f"搜索秘塔：{question}（{size} 条）")
    response, age = metaso_cache.search(cache, question, size, client)
    if age is not None:
        log(f"  搜索：来自缓存（{metaso_cache.age_text(age)}）")
    # 样子不对的响应在这里就抛 MetasoError（点名字段），不会被当作“没有搜到结果”
    results = [{"title": truncate(item["title"], MAX_TITLE - 1), "link": item["link"], "date": item.get("date") or "",
                "snippet": item["snippet"]} for item in metaso_client.search_results(response)]
    results = results[:size]
    if not results:
        return []
    to_read = [r for r in results[:read_count] if r["link"]]
    pages: list[PageResult] = []
    if to_read:
        log(f"读取前 {len(to_read)} 个网页的正文…")
        pages = read_pages(to_read, question, max_chars, client, cache)
    sources = []
    for index, result in enumerate(results):
        text, read, page_age = result["snippet"], False, None
        if index < len(pages):
            text, failure, page_age = pages[index]
            read = failure is None
            if failure:
                log(f"  读取 [{index + 1}] {literal(result['link'])} 失败，改用摘要：{literal(failure, None)}")
            elif page_age is not None:
                log(f"  读取 [{index + 1}]：来自缓存（{metaso_cache.age_text(page_age)}）")
        cached = page_age is not None if index < len(pages) else age is not None
        sources.append(Source(text=text[:max_chars], title=result["title"], link=result["link"],
                              date=result["date"], read=read, cached=cached))
    if pages and not any(failure is None for _, failure, _ in pages):
        log("⚠ 所有网页的正文都没读到，只用搜索摘要回答")
    return sources


class DemoPool:
    """--serve、--mcp 的 --demo：每组页面一个演示服务，开到服务停止（回答里的来源链接在服务运行时都能打开）。
    一次回答用完就关的是 MetasoSession 自己开的那个。可以当上下文管理器用。"""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.running: dict[str, DemoMetaso] = {}

    def service(self, pages: str) -> DemoMetaso:
        with self.lock:
            if pages not in self.running:
                self.running[pages] = DemoMetaso(PAGE_SETS[pages]).start()
            return self.running[pages]

    def close(self) -> None:
        with self.lock:
            for service in self.running.values():
                service.close()
            self.running.clear()

    def __enter__(self) -> "DemoPool":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class MetasoSession:
    """秘塔客户端和本地缓存；--demo 时在本机启动模拟服务（不用缓存，免得虚构的页面混进真缓存），用完关掉。"""

    def __init__(self, search: SearchSettings, log: Log, deadline: Deadline, secrets: Sequence[str],
                 pool: DemoPool | None = None) -> None:
        self.fake: DemoMetaso | None = None  # --demo 的演示服务和它用的那组页面（pool 给的不归这里关）
        self.fake_pages = ""
        self.pool = pool
        self.client: metaso_client.Client | None
        self.cache: metaso_cache.MetasoCache | None = None
        self.log = log
        self.search = search
        self.secrets = secrets  # 本程序认得的每个密钥：搜索的文字里有的话发之前去掉（gather）
        self.searched = ""  # 上一次真正发给秘塔的搜索文字
        self.key_cut: str | None = None  # 上一次搜索的文字里去掉了密钥时说的那句话（masking.KEY_CUT）

        def on_retry(message: str) -> None:
            log(f"  {message}")

        self.on_retry = on_retry
        self.deadline = deadline
        if search.demo:
            self.client = None  # 模拟服务等知道了问题（和它的语言）再启动
        else:
            self.client = metaso_client.Client(search.key, search.base, deadline, on_retry)
            if not search.no_cache and search.cache_dir is None:
                log("⚠ 找不到家目录，也没有设置绝对路径的 XDG_CACHE_HOME：这次不用缓存")
            elif not search.no_cache and search.cache_dir is not None:
                self.cache = metaso_cache.MetasoCache(
                    search.cache_dir, search_ttl=search.cache_search_hours * 3600,
                    page_ttl=search.cache_page_days * 86400, max_bytes=search.cache_max_mb * 1024 * 1024,
                    read=not search.refresh, warn=log)

    def __enter__(self) -> "MetasoSession":
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self.fake:
            self.fake.close()
        if self.cache:
            self.cache.close()

    def demo_client(self, question: str) -> metaso_client.Client:
        """--demo：启动（或换成）问题的语言那一组页面的模拟服务。--demo-pages 没给时，中文问题用 nas，其他用 nas-en。"""
        pages = self.search.demo_pages or ("nas" if has_chinese(question) else "nas-en")
        if self.pool is not None:
            fake = self.pool.service(pages)
            return metaso_client.Client(fake.key, fake.base_url, self.deadline, self.on_retry)
        if self.fake is None or self.fake_pages != pages:
            if self.fake:
                self.fake.close()
            self.fake = DemoMetaso(PAGE_SETS[pages]).start()
            self.fake_pages = pages
            self.log(f"使用内置的模拟秘塔服务（--demo，页面 {pages}）：{self.fake.base_url}")
        return metaso_client.Client(self.fake.key, self.fake.base_url, self.deadline, self.on_retry)

    def gather(self, question: str) -> list[Source]:
        """搜索并读取；一条结果也没有时是服务的问题（退出码 3）。问题里的密钥发给秘塔之前去掉，并说一句
        （masking.searchable：每道门的搜索都经过这里，密钥只发给它自己的服务）；去掉以后没有字了就不搜索。"""
        question, note = searchable(question, self.secrets)
        if note:
            self.log(f"⚠ {note}")
            if not any(char.isalnum() for char in question):
                raise QuestionError("问题里除了密钥没有别的文字：去掉密钥以后没有可以搜索的内容，请换个问法",
                                    "empty_question")
        self.searched, self.key_cut = question, note
        search = self.search
        client = self.client if self.client is not None else self.demo_client(question)  # --demo 时没有 client
        sources = gather(question, search.size, search.read, search.max_chars, client, self.log, self.cache)
        if not sources:
            raise NoResults("秘塔没有搜到结果", next_step="换个说法再试")
        return sources

    def savings(self) -> str | None:
        """缓存省下了什么（“缓存省下 1 次搜索、2 次读取”；什么都没省时为 None）。"""
        return self.cache.savings() if self.cache else None

    def report_savings(self) -> None:
        """运行结束时说一句缓存省下了什么（什么都没省时不说）。"""
        saved = self.savings()
        if saved:
            self.log(saved)
