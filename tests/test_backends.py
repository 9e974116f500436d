"""搜索后端的接口（search/backend.py）：登记一个新的后端，每个门（命令行、--eval、Python API、--serve、--mcp）
就都从它那里拿资料、照样核对，不必改别的代码；它的错误、没有结果都和秘塔的一样说明。

这里登记的后端（PagesBackend）在本进程里给出演示页面（和模拟秘塔的那几页一样的正文，链接换成 pages://）：
门要是绕过了接口去找秘塔，模拟秘塔就会收到请求，来源的链接也不会是 pages://。"""
import json

import pytest

from answer_with_sources import answer_question
from sourced_answers.core.errors import NoResults, SourceError
from sourced_answers.search import backend as backend_module
from sourced_answers.search.backend import Hit, Registration, Shared
from sourced_answers.search.demo_pages import NAS_PAGES
from tests.serving import InProcess
from tests.support import GOOD_ANSWER, cli_env, run_cli

QUESTION = "家用 NAS 怎么选"
LOG: list[str] = []  # 后端的每一次 search、read


class PagesBackend:
    """测试用的后端：按顺序给出演示页面；第 3 条起在搜索结果里就带着正文（gather 不再读它）。"""
    name = "pages"
    label = "测试资料"
    unit = "页"

    def __init__(self, search, log, deadline, shared: Shared | None = None) -> None:
        self.closed = False
        LOG.append("open")

    def search(self, question: str, size: int) -> tuple[list[Hit], float | None]:
        LOG.append(f"search {question} {size}")
        if question == "没有":
            return [], None
        if question == "坏了":
            raise SourceError("测试资料坏了", next_step="修好再试")
        return [Hit(title=page["title"], link=f"pages://{number}", snippet=page["text"][:40],
                    text=page["text"] if number > 2 else None)
                for number, page in enumerate(NAS_PAGES, 1)], None

    def read(self, hit: Hit, limit: int) -> tuple[str, float | None]:
        LOG.append(f"read {hit.link}")
        return NAS_PAGES[int(hit.link.removeprefix("pages://")) - 1]["text"], None

    def savings(self) -> str | None:
        return None

    def close(self) -> None:
        LOG.append("close")


@pytest.fixture
def pages(monkeypatch):
    """把默认的后端换成 PagesBackend：各个门用的是设置里的默认名字，走的都是登记表。"""
    LOG.clear()
    monkeypatch.setitem(backend_module.BACKENDS, "metaso", Registration(__name__, "PagesBackend", "测试资料", "页"))
    return LOG


def from_pages(record) -> bool:
    return [source["link"] for source in record["sources"]] == [f"pages://{n}" for n in range(1, 6)]


def test_the_command_answers_from_a_registered_backend(pages, fake_metaso, model_server):
    result = run_cli(QUESTION, "--read", "2", "--json", env=cli_env(fake_metaso, model_server, ANS_MODEL="good"))
    record = json.loads(result.stdout)
    assert result.returncode == 0 and record["passed"] and record["answer"] == GOOD_ANSWER
    assert from_pages(record) and fake_metaso.requests == []
    assert "搜索测试资料：家用 NAS 怎么选（5 条）" in result.stderr and "读取前 2 个页的正文…" in result.stderr
    # 只读没带正文的前两条；用完关掉
    assert pages == ["open", f"search {QUESTION} 5", "read pages://1", "read pages://2", "close"] or \
        pages == ["open", f"search {QUESTION} 5", "read pages://2", "read pages://1", "close"]


def test_eval_and_the_python_api_answer_from_a_registered_backend(pages, fake_metaso, model_server, tmp_path):
    environ = cli_env(fake_metaso, model_server, ANS_MODEL="good")
    assert from_pages(answer_question(QUESTION, environ=environ).record)
    questions = tmp_path / "questions.txt"
    questions.write_text(f"{QUESTION}\n没有\n", encoding="utf-8")
    result = run_cli("--eval", str(questions), "--json", env=environ)
    first, second = (json.loads(line) for line in result.stdout.splitlines())
    assert first["error"] is None and first["passed"]
    assert second["error"] == "测试资料没有搜到这个问题的资料，没有请模型回答"
    assert fake_metaso.requests == []


def test_serve_and_mcp_answer_from_a_registered_backend(pages, fake_metaso, model_server):
    from anyio.from_thread import start_blocking_portal
    from mcp import Client

    from sourced_answers.api.config import build_settings
    from sourced_answers.cli.parser import build_parser
    from sourced_answers.servers import mcp_server

    env = cli_env(fake_metaso, model_server, ANS_MODEL="good")
    server = InProcess(env)
    try:
        reply = server.post("/chat/completions", {"model": "good", "messages": [{"role": "user", "content": QUESTION}]})
        assert reply.status_code == 200 and "pages://1" in reply.json()["choices"][0]["message"]["content"]
    finally:
        server.close()
    settings = build_settings(build_parser("answer-with-sources").parse_args(["--mcp"]), env, [])
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(
            Client(mcp_server.build_server(settings, Shared()))) as client:
        result = portal.call(client.call_tool, "answer_question", {"question": QUESTION})
        assert "测试资料" in str(portal.call(client.list_tools))
    assert from_pages(result.structured_content)
    assert fake_metaso.requests == []


def test_a_backend_error_and_no_results_are_service_errors_with_its_name(pages, fake_metaso, model_server):
    env = cli_env(fake_metaso, model_server, ANS_MODEL="good")
    broken = run_cli("坏了", env=env)
    assert broken.returncode == 3 and "测试资料坏了。修好再试" in broken.stderr
    empty = run_cli("没有", env=env)
    assert empty.returncode == 3 and "测试资料没有搜到结果" in empty.stderr
    assert "close" in pages and pages.count("open") == pages.count("close") == 2
    with pytest.raises(NoResults, match="测试资料没有搜到结果"):
        answer_question("没有", environ=env)
