"""--demo 的秘塔：在 127.0.0.1 上回答 /search 和 /reader 的小服务，行为按 shared/metaso-api.md 里已知的真实接口来做，
页面是 demo_pages 里虚构的那几组。程序的 --demo 用它；测试用的 fake_metaso.FakeMetaso 在它上面加了故障开关。

接口：
  POST /api/v1/search   搜索（size 可以是字符串或整数）
  POST /api/v1/reader   读取正文（Accept: text/plain 给正文，否则给 JSON）
  GET  /page/N          第 N 个页面的 HTML（搜索结果里的 link 指向这里）
密钥不对时和真实接口一样返回 HTTP 200 加错误体：search 是 errCode 2005，reader 是 errCode 500。
"""
import copy
import html
import json
import re
import socket
import threading
import time
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from sourced_answers.checker import char_bigrams
from sourced_answers.search.demo_pages import NAS_PAGES, Page

DEFAULT_KEY = "mk-fake-demo-key"
# serve_forever 多久看一次要不要停：close() 最多等这么久（十毫秒醒一次，空转的开销可以不计）
POLL_SECONDS = 0.01
JSON_TYPE = "application/json; charset=utf-8"


def fold(text: str) -> set[str]:
    """检索用：小写、去掉空白和标点后的字二元组集合。"""
    return char_bigrams(re.sub(r"[\W_]+", "", text.lower()))


def snippet_of(page: Page, limit: int = 80) -> str:
    if page.get("snippet"):
        return str(page["snippet"])
    # 摘要取正文里第一段像样的内容，跳过标题行和导航
    for block in page["text"].split("\n\n"):
        block = block.strip()
        if block and not block.startswith("#") and "|" not in block and "：首页" not in block:
            return block[:limit]
    return str(page["text"][:limit])


class DemoMetaso:
    """在本机回答 /search 和 /reader 的演示服务。可以当上下文管理器用：with DemoMetaso() as demo: demo.base_url"""

    def __init__(self, pages: Sequence[Page] | None = None, key: str = DEFAULT_KEY, delay: float = 0.0,
                 host: str = "127.0.0.1", port: int = 0) -> None:
        # 建好时的页面、密钥和延迟：reset() 回到它们（测试改了页面，下一个测试看到的还是原样）
        self.initial: tuple[list[Page], str, float] = (copy.deepcopy(list(pages if pages is not None else NAS_PAGES)),
                                                        key, delay)
        self.lock = threading.Lock()
        self.reset()
        self.server = ThreadingHTTPServer((host, port), self._handler_class())
        self.server.daemon_threads = True
        self.thread: threading.Thread | None = None

    def reset(self) -> None:
        """回到刚建好时的样子：页面、密钥、延迟和所有的记录。测试能改的状态只在这里设初值（__init__ 也调用它），
        所以一个进程里的测试可以共用一个服务（tests/conftest.py 的 fake_metaso），每个测试开始前调用它。"""
        pages, self.key, self.delay = self.initial
        self.pages = copy.deepcopy(pages)
        self.requests: list[tuple[str, str]] = []  # 收到的每个请求：(方法, 路径)，测试用来数调用次数
        self.authorizations: list[str] = []  # 每个 API 请求带的 Authorization 头（测试用来确认别的密钥没发过来）
        self.queries: list[str] = []  # 每次搜索的问题（测试用来看追问搜的是什么）
        self.bodies: list[bytes] = []  # 每个 POST 请求的原样的请求体（测试用来确认别的密钥一个字节也没发过来）
        self.in_flight = {"search": 0, "reader": 0}
        self.max_in_flight = {"search": 0, "reader": 0}  # 同时在处理的最多请求数，用来验证并发读取
        self.hang_seconds = 60  # 故障 kind="hang" 时不回应多久（见 fake_metaso）

    @property
    def origin(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def base_url(self) -> str:
        return self.origin + "/api/v1"

    def start(self) -> "DemoMetaso":
        # 关闭时最多等一个轮询间隔：每次 --demo 运行结束都要停一次
        self.thread = threading.Thread(target=self.server.serve_forever, args=(POLL_SECONDS,), daemon=True)
        self.thread.start()
        return self

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> "DemoMetaso":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def take_fault(self, endpoint: str) -> dict[str, Any] | None:
        """这次请求要不要出错（故障的设置见 fake_metaso.FakeMetaso；演示服务从不出错）。"""
        return None

    def link(self, index: int) -> str:
        return f"{self.origin}/page/{index + 1}"

    def page_for_link(self, link: object) -> int | None:
        match = re.fullmatch(re.escape(self.origin) + r"/page/(\d+)", link if isinstance(link, str) else "")
        if match and 1 <= int(match.group(1)) <= len(self.pages):
            return int(match.group(1)) - 1
        return None

    def search(self, body: dict[str, Any], authorization: str = "") -> dict[str, Any]:
        """搜索。页面的标题、摘要里写着 {authorization} 时换成请求的 Authorization 头（模拟回显请求的结果）。"""
        query = str(body.get("q") or "")
        self.queries.append(query)
        try:
            size = int(body.get("size", 10))
        except (TypeError, ValueError):
            return {"errCode": 1000, "errMsg": "参数错误：size"}
        if not query.strip() or not 1 <= size <= 100:
            return {"errCode": 1000, "errMsg": "参数错误"}
        wanted = fold(query)
        matches = []
        for index, page in enumerate(self.pages):
            shared = len(wanted & fold(page["title"] + page["text"]))
            if shared:
                matches.append((index, shared / max(len(wanted), 1)))
        results = []
        for position, (index, ratio) in enumerate(matches[:size], 1):
            page = self.pages[index]
            result = {"title": page["title"].replace("{authorization}", authorization), "link": self.link(index),
                      "snippet": snippet_of(page).replace("{authorization}", authorization),
                      "score": "high" if ratio >= 0.5 else "medium" if ratio >= 0.2 else "low",
                      "position": position, "date": page.get("date", "")}
            if page.get("authors"):
                result["authors"] = page["authors"]
            results.append(result)
        scope = body.get("scope") or "webpage"
        return {"credits": 3, "searchParameters": {"q": query, "scope": scope, "size": size},
                "total": len(matches), scope + "s": results}

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass  # 不往终端打访问日志

            def handle(self) -> None:
                try:
                    super().handle()
                except (BrokenPipeError, ConnectionResetError):
                    pass  # 客户端不等了（Ctrl-C、--timeout 到了）：回应没人要，不往终端打英文的报错堆栈

            def send(self, status: int, body: str, content_type: str) -> None:
                data = body.encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def send_json(self, payload: dict[str, Any], status: int = 200) -> None:
                self.send(status, json.dumps(payload, ensure_ascii=False), "application/json; charset=utf-8")

            def do_GET(self) -> None:
                fake.requests.append(("GET", self.path))
                match = re.fullmatch(r"/page/(\d+)", self.path)
                if not match or not 1 <= int(match.group(1)) <= len(fake.pages):
                    self.send(404, "<h1>404 Not Found</h1>", "text/html; charset=utf-8")
                    return
                page = fake.pages[int(match.group(1)) - 1]
                paragraphs = "".join(f"<p>{html.escape(block)}</p>\n" for block in page["text"].split("\n\n"))
                self.send(200, f"<html><head><meta charset='utf-8'><title>{html.escape(page['title'])}"
                               f"</title></head><body>\n{paragraphs}</body></html>", "text/html; charset=utf-8")

            def do_POST(self) -> None:
                fake.requests.append(("POST", self.path))
                endpoint = self.path.rsplit("/", 1)[-1]
                # 处理完减的是开始时加的那一份计数：中途 reset() 换了新的计数，也不会把它减成负数
                in_flight, max_in_flight = fake.in_flight, fake.max_in_flight
                counted = endpoint in in_flight
                if counted:
                    with fake.lock:
                        in_flight[endpoint] += 1
                        max_in_flight[endpoint] = max(max_in_flight[endpoint], in_flight[endpoint])
                try:
                    self.answer(endpoint)
                finally:
                    if counted:
                        with fake.lock:
                            in_flight[endpoint] -= 1

            def answer(self, endpoint: str) -> None:
                if fake.delay:
                    time.sleep(fake.delay)
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    raw = self.rfile.read(length)
                    fake.bodies.append(raw)
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = None
                fake.authorizations.append(self.headers.get("Authorization") or "")
                authorized = self.headers.get("Authorization") == f"Bearer {fake.key}"
                fault = fake.take_fault(endpoint)
                if fault:
                    self.fault(fault)
                    return
                if self.path == "/api/v1/search":
                    if not authorized:
                        self.send_json({"errCode": 2005, "errMsg": "API密钥无效"})
                    elif not isinstance(body, dict):
                        self.send_json({"errCode": 1000, "errMsg": "参数错误"})
                    else:
                        self.send_json(fake.search(body, self.headers.get("Authorization") or ""))
                elif self.path == "/api/v1/reader":
                    self.reader(body, authorized)
                else:
                    self.send(404, "<h1>404 Not Found</h1>", "text/html; charset=utf-8")

            def fault(self, fault: dict[str, Any]) -> None:
                if fault["kind"] == "drop":
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                if fault["kind"] == "hang":
                    time.sleep(fake.hang_seconds)
                    self.close_connection = True
                    return
                text = fault["body"].replace("{authorization}", self.headers.get("Authorization") or "")
                self.send(fault["status"], text, fault["content_type"])

            def reader(self, body: Any, authorized: bool) -> None:
                index = fake.page_for_link(body.get("url")) if isinstance(body, dict) else None
                if not authorized or index is None:
                    self.send_json({"errCode": 500, "errMsg": "服务器错误"})
                    return
                page = fake.pages[index]
                if page.get("reader_fault"):
                    # 页面自带的读取错误（--fixtures 里也可以写），HTTP 200 加错误体
                    self.send(200, page["reader_fault"], "application/json; charset=utf-8")
                    return
                text = page["text"].replace("{authorization}", self.headers.get("Authorization") or "")
                if "text/plain" in (self.headers.get("Accept") or ""):
                    self.send(200, text, "text/plain; charset=utf-8")
                else:
                    self.send_json({"title": page["title"], "url": fake.link(index),
                                    "author": ", ".join(page.get("authors") or []),
                                    "date": page.get("date", ""), "markdown": text, "credits": 20})

        return Handler
