"""秘塔这个搜索后端（search/backend.py 的 Backend）：秘塔的客户端、本地缓存和 --demo 的演示服务。

--demo 时在本机启动模拟服务（不用缓存，免得虚构的页面混进真缓存）：等知道了问题（和它的语言）再启动，用完关掉；
服务（--serve、--mcp）里用它们共用的那一个（Shared），开到服务停止，回答里的来源链接在服务运行时都能打开。
"""
from typing import Any

from sourced_answers.checker import has_chinese
from sourced_answers.core.errors import MetasoError
from sourced_answers.core.retrying import Deadline
from sourced_answers.core.settings import SearchSettings
from sourced_answers.core.strings import truncate
from sourced_answers.search import metaso_client
from sourced_answers.search.backend import BACKENDS, Hit, Log, Shared
from sourced_answers.search.demo_pages import PAGE_SETS
from sourced_answers.search.demo_service import DemoMetaso
from sourced_answers.search.source_cache import SourceCache, cached

# 搜索结果的标题最多这么多个字符（连同截断时的“…”；网页的标题再长也就一两百个字，几 MB 的“标题”会把提示词撑爆）
MAX_TITLE = 300


def has_results(response: Any) -> bool:
    """一个搜索响应（新收到的或缓存里的）有结果、样子也对：只有这样的才存、才从缓存里用。"""
    if not isinstance(response, dict):
        return False
    try:
        return bool(metaso_client.search_results(response))
    except MetasoError:
        return False


def has_text(text: Any) -> bool:
    return isinstance(text, str) and bool(text.strip())


def search(cache: SourceCache | None, query: str, size: int,
           client: metaso_client.Client) -> tuple[dict[str, Any], float | None]:
    """和 metaso_client.search 一样，多返回一个“存了多少秒”（没命中时为 None）。"""
    key = {"base": client.base, "body": metaso_client.search_body(query, size)}
    return cached(cache, "search", key, lambda: client.search(query, size), has_results)


def read_page(cache: SourceCache | None, url: str, max_chars: int,
              client: metaso_client.Client) -> tuple[str, float | None]:
    """和 metaso_client.read_page 一样，多返回一个“存了多少秒”（没命中时为 None）。"""
    key = {"base": client.base, "url": url, "format": "text/plain", "max_chars": max_chars}
    return cached(cache, "page", key, lambda: client.read_page(url, max_chars), has_text)


class MetasoBackend:
    """秘塔：search 调用 /search，read 调用 /reader；两者都经过本地缓存（--demo、--no-cache 时不用）。"""
    name = "metaso"
    label = BACKENDS[name].label
    unit = BACKENDS[name].unit

    def __init__(self, search: SearchSettings, log: Log, deadline: Deadline, shared: Shared | None = None) -> None:
        self.settings = search
        self.log = log
        self.deadline = deadline
        self.shared = shared
        self.fake: DemoMetaso | None = None  # 自己开的演示服务和它用的那组页面（shared 给的不归这里关）
        self.fake_pages = ""
        self.client: metaso_client.Client | None = None
        self.reader: metaso_client.Client | None = None  # 读网页用搜索时的那个服务（--demo 的页面在它那里）
        self.cache: SourceCache | None = None
        if search.demo:
            return  # 模拟服务等知道了问题（和它的语言）再启动
        self.client = metaso_client.Client(search.key, search.base, deadline, self.on_retry)
        if not search.no_cache and search.cache_dir is None:
            log("⚠ 找不到家目录，也没有设置绝对路径的 XDG_CACHE_HOME：这次不用缓存")
        elif not search.no_cache and search.cache_dir is not None:
            self.cache = SourceCache(search.cache_dir, search_ttl=search.cache_search_hours * 3600,
                                     page_ttl=search.cache_page_days * 86400,
                                     max_bytes=search.cache_max_mb * 1024 * 1024, read=not search.refresh,
                                     warn=log, backend=self.name)

    def on_retry(self, message: str) -> None:
        self.log(f"  {message}")

    def demo_client(self, question: str) -> metaso_client.Client:
        """--demo：启动（或换成）问题的语言那一组页面的模拟服务。--demo-pages 没给时，中文问题用 nas，其他用 nas-en。"""
        pages = self.settings.demo_pages or ("nas" if has_chinese(question) else "nas-en")
        if self.shared is not None:
            fake = self.shared.get(f"demo:{pages}", lambda: DemoMetaso(PAGE_SETS[pages]).start())
            return metaso_client.Client(fake.key, fake.base_url, self.deadline, self.on_retry)
        if self.fake is None or self.fake_pages != pages:
            if self.fake:
                self.fake.close()
            self.fake = DemoMetaso(PAGE_SETS[pages]).start()
            self.fake_pages = pages
            self.log(f"使用内置的模拟秘塔服务（--demo，页面 {pages}）：{self.fake.base_url}")
        return metaso_client.Client(self.fake.key, self.fake.base_url, self.deadline, self.on_retry)

    def search(self, question: str, size: int) -> tuple[list[Hit], float | None]:
        client = self.client if self.client is not None else self.demo_client(question)
        self.reader = client
        response, age = search(self.cache, question, size, client)
        # 样子不对的响应在这里就抛 MetasoError（点名字段），不会被当作“没有搜到结果”
        hits = [Hit(title=truncate(item["title"], MAX_TITLE - 1), link=item["link"], snippet=item["snippet"],
                    date=item.get("date") or "") for item in metaso_client.search_results(response)]
        return hits, age

    def read(self, hit: Hit, limit: int) -> tuple[str, float | None]:
        client = self.reader or self.client or self.demo_client("")
        return read_page(self.cache, hit.link, limit, client)

    def savings(self) -> str | None:
        return self.cache.savings() if self.cache else None

    def close(self) -> None:
        if self.fake:
            self.fake.close()
        if self.cache:
            self.cache.close()
