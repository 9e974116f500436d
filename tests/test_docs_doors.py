"""--docs 在每个门：命令行（文字、--json、--html、--fix）、--eval、Python API 的 docs=、--serve --docs、--mcp --docs
都从本机的文件夹回答，引用指向文件里的段落、照样核对；不要秘塔的密钥，秘塔一个请求也收不到。
--serve 的客户端看不到本机的绝对路径。索引本身（格式、增量、坏文件）的测试在 tests/test_docs_backend.py 这些里。"""
import json

import pytest

from answer_with_sources import answer_question
from sourced_answers.core.errors import UsageError
from sourced_answers.search.demo_pages import NAS_PAGES
from tests.serving import InProcess
from tests.support import cli_env, run_cli

QUESTION = "家用 NAS 怎么选"


@pytest.fixture
def notes(tmp_path):
    """一个笔记文件夹：演示的那几页 NAS 资料，一页一个 Markdown 文件，放在子文件夹里。"""
    folder = tmp_path / "我的笔记"
    (folder / "nas").mkdir(parents=True)
    for number, page in enumerate(NAS_PAGES, 1):
        (folder / "nas" / f"page{number}.md").write_text(page["text"], encoding="utf-8")
    return folder


def env_without_metaso(model_server, **extra):
    """没有秘塔的密钥（--docs 不要它）；模拟秘塔的地址也不给：真要去搜秘塔就是报错，不会悄悄付费。"""
    env = cli_env(None, model_server, **{"ANS_MODEL": "good", **extra})
    env.pop("METASO_API_KEY", None)
    return env


def assert_from_notes(record, folder, absolute=True):
    assert record["sources"], record
    for source in record["sources"]:
        if absolute:
            assert source["link"].startswith(folder.resolve().as_uri() + "/nas/page"), source["link"]
        else:
            assert str(folder.resolve()) not in json.dumps(source, ensure_ascii=False), source
            assert source["link"].startswith("我的笔记/nas/page"), source["link"]
        assert source["title"].startswith("nas/page") and ".md:" in source["title"], source["title"]


def test_the_command_answers_from_a_folder_without_a_metaso_key(notes, model_server, fake_metaso):
    result = run_cli(QUESTION, "--docs", str(notes), "--json", env=env_without_metaso(model_server))
    assert result.returncode in (0, 1), result.stderr
    record = json.loads(result.stdout)
    assert_from_notes(record, notes)
    assert record["claims"] and all("score" in claim for claim in record["claims"])  # 照样逐句核对
    assert "搜索本地文档：家用 NAS 怎么选" in result.stderr and "秘塔" not in result.stderr
    assert fake_metaso.requests == []


def test_text_html_and_fix_work_the_same_from_a_folder(notes, model_server, tmp_path):
    env = env_without_metaso(model_server, ANS_MODEL="wrong-source")
    page = tmp_path / "review.html"
    result = run_cli(QUESTION, "--docs", str(notes), "--fix", "--html", str(page), env=env)
    assert result.returncode in (0, 1), result.stderr
    assert "\n来源：\n" in result.stdout and notes.resolve().as_uri() in result.stdout
    html = page.read_text(encoding="utf-8")
    assert f'href="{notes.resolve().as_uri()}/nas/page' in html  # 审阅页上能点开文件


def test_several_docs_flags_and_a_single_file(notes, model_server):
    extra = notes.parent / "另一个.txt"
    extra.write_text("RAID 不是备份。重要的照片另外再存一份到移动硬盘。", encoding="utf-8")
    result = run_cli("RAID 是备份吗", "--docs", str(notes), "--docs", str(extra), "--size", "10", "--json",
                     env=env_without_metaso(model_server))
    record = json.loads(result.stdout)
    assert any(source["title"].startswith("另一个.txt:") for source in record["sources"]), record["sources"]


@pytest.mark.parametrize(("flags", "message"), [
    (["--demo"], "--docs 从本机的文档回答，不要同时给 --demo"),
    (["--verify", "saved.json"], "--docs 从本机的文档回答，不要同时给 --verify"),
])
def test_docs_with_a_flag_it_cannot_go_with_is_a_usage_error(notes, model_server, flags, message):
    args = flags if "--verify" in flags else [QUESTION, *flags]
    result = run_cli(*args, "--docs", str(notes), env=env_without_metaso(model_server))
    assert result.returncode == 2 and message in result.stderr


def test_eval_answers_every_question_from_the_folder(notes, model_server, tmp_path, fake_metaso):
    questions = tmp_path / "questions.txt"
    questions.write_text(f"{QUESTION}\nRAID5 至少几块盘\n", encoding="utf-8")
    result = run_cli("--eval", str(questions), "--docs", str(notes), "--json", env=env_without_metaso(model_server))
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(records) == 2 and all(record["error"] is None for record in records), records
    assert fake_metaso.requests == []


def test_the_python_api_takes_docs(notes, model_server):
    environ = env_without_metaso(model_server)
    result = answer_question(QUESTION, docs=notes, environ=environ)  # 一个 Path 也行
    assert_from_notes(result.record, notes)
    assert answer_question(QUESTION, docs=[str(notes)], environ=environ).record["sources"] == result.record["sources"]
    with pytest.raises(UsageError, match="参数 --docs：应是一个路径或路径的列表，收到 5（answer_question 的关键字 docs）"):
        answer_question(QUESTION, docs=5, environ=environ)


def test_serve_docs_answers_from_the_folder_and_never_shows_an_absolute_path(notes, model_server):
    app = InProcess(env_without_metaso(model_server), "--docs", str(notes))
    try:
        reply = app.post("/chat/completions", {"model": "good", "messages": [{"role": "user", "content": QUESTION}]})
        assert reply.status_code == 200, reply.text
        assert str(notes.parent.resolve()) not in reply.text and "file://" not in reply.text  # JSON 里汉字可能转义：看 ASCII 的上层
        assert "我的笔记/nas/page" in reply.json()["choices"][0]["message"]["content"]
        # 请求体里的 docs 不能让网页或客户端改读别的文件夹
        other = app.post("/chat/completions", {"model": "good", "docs": "/etc",
                                               "messages": [{"role": "user", "content": QUESTION}]})
        assert "/etc" not in other.text and "我的笔记/nas/page" in other.text
    finally:
        app.close()


def test_serve_with_a_folder_that_has_no_documents_does_not_start(tmp_path, model_server):
    empty = tmp_path / "空的"
    empty.mkdir()
    with pytest.raises(UsageError):
        InProcess(env_without_metaso(model_server), "--docs", str(empty))


def test_mcp_docs_answers_from_the_folder(notes, model_server):
    from anyio.from_thread import start_blocking_portal
    from mcp import Client

    from sourced_answers.api.config import build_settings
    from sourced_answers.cli.parser import build_parser
    from sourced_answers.search.backend import Shared
    from sourced_answers.servers import mcp_server

    env = env_without_metaso(model_server)
    settings = build_settings(build_parser("answer-with-sources").parse_args(["--mcp", "--docs", str(notes)]), env, [])
    with Shared() as shared, start_blocking_portal() as portal, portal.wrap_async_context_manager(
            Client(mcp_server.build_server(settings, shared))) as client:
        tools = portal.call(client.list_tools)
        result = portal.call(client.call_tool, "answer_question", {"question": QUESTION})
    assert "搜索本地文档" in str(tools)
    assert_from_notes(result.structured_content, notes)


@pytest.mark.parametrize("given", ["", "  "])
def test_an_empty_docs_path_is_a_usage_error_not_the_current_folder(given, model_server, notes, monkeypatch):
    """--docs "$NOTES" 而变量没设：扫一遍时它悄悄地索引了当前目录（可能是整个家目录）。Python API 早就拒绝空的路径，
    命令行现在走同一道检查。"""
    monkeypatch.chdir(notes)
    result = run_cli(QUESTION, "--docs", given, "--excerpts", env=env_without_metaso(model_server))
    assert result.returncode == 2, result.stderr
    assert "参数 --docs：每一项应是不空的路径" in result.stderr and "本地文档" not in result.stderr


def test_a_key_written_in_a_note_never_reaches_the_model_or_any_output(notes, model_server, tmp_path):
    """笔记里记着秘塔的密钥（模型服务可以是别人的机器）：扫一遍时输出都遮了，发给模型的提示词里却是原样的密钥。
    现在资料交给模型之前就遮掉（SourceSession.gather，每个后端、每道门都经过它），并说一句。"""
    from tests.support import CANARY_KEY
    (notes / "nas" / "page1.md").write_text(f"家用 NAS 选四盘位。秘塔的密钥是 {CANARY_KEY}，别外传。\n",
                                            encoding="utf-8")
    page = tmp_path / "review.html"
    env = {**env_without_metaso(model_server), "METASO_API_KEY": CANARY_KEY}  # --docs 不发它，环境里照样可能有
    result = run_cli(QUESTION, "--docs", str(notes), "--json", "--html", str(page), env=env)
    assert result.returncode in (0, 1), result.stderr
    assert model_server.requests and CANARY_KEY not in json.dumps(model_server.requests, ensure_ascii=False)
    assert CANARY_KEY not in result.stdout + result.stderr + page.read_text(encoding="utf-8")
    assert "密钥" in result.stderr and "遮掉" in result.stderr
