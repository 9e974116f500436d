"""秘塔结果的本地缓存：命中、未命中、过期、--no-cache、--refresh、出错不缓存、文件损坏、并发、不能写的位置、
大小上限、密钥不落盘。秘塔由模拟服务代替（它记下收到的每个请求），其余都真实运行。"""
import json
import multiprocessing
import os
import sqlite3
import stat
import subprocess
from pathlib import Path

import pytest

import metaso_search
from sourced_answers.search.metaso_backend import read_page, search
from sourced_answers.search.source_cache import FILE_NAME, SourceCache, digest
from tests.support import CANARY_KEY, HERE, cli_command, cli_env, run_cli

QUESTION = "家用 NAS 怎么选"


def calls(fake, endpoint):
    return sum(1 for _, path in fake.requests if path.endswith(endpoint))


def ask(fake, model_server, env, *args):
    return run_cli(QUESTION, "--json", *args, env=env)


def setup(fake, model_server):
    return cli_env(fake, model_server, ANS_MODEL="good")


def test_second_identical_run_makes_no_metaso_calls(fake_metaso, model_server):
    env = setup(fake_metaso, model_server)
    first = ask(fake_metaso, model_server, env)
    assert (calls(fake_metaso, "search"), calls(fake_metaso, "reader")) == (1, 2)
    second = ask(fake_metaso, model_server, env)
    assert (calls(fake_metaso, "search"), calls(fake_metaso, "reader")) == (1, 2)
    assert first.returncode == second.returncode == 0
    one, two = json.loads(first.stdout), json.loads(second.stdout)
    assert [s["cached"] for s in one["sources"]] == [False] * 5
    assert [s["cached"] for s in two["sources"]] == [True] * 5
    assert [s["text"] for s in one["sources"]] == [s["text"] for s in two["sources"]]
    assert "搜索：来自缓存（刚才）" in second.stderr
    assert "读取 [1]：来自缓存（刚才）" in second.stderr
    assert second.stderr.rstrip().endswith("缓存省下 1 次搜索、2 次读取")
    assert "缓存省下" not in first.stderr


def test_a_different_question_or_size_is_a_miss(fake_metaso, model_server):
    env = setup(fake_metaso, model_server)
    ask(fake_metaso, model_server, env)
    ask(fake_metaso, model_server, env, "--size", "4")
    assert calls(fake_metaso, "search") == 2
    assert calls(fake_metaso, "reader") == 2  # 同样的网页：读取仍然命中


def test_no_cache_neither_reads_nor_writes(fake_metaso, model_server):
    env = setup(fake_metaso, model_server)
    ask(fake_metaso, model_server, env, "--no-cache")
    assert not (Path(env["XDG_CACHE_HOME"]) / "answer-with-sources" / FILE_NAME).exists()
    ask(fake_metaso, model_server, env)
    result = ask(fake_metaso, model_server, env, "--no-cache")
    assert calls(fake_metaso, "search") == 3 and "来自缓存" not in result.stderr


def test_refresh_asks_metaso_again_and_stores_the_new_result(fake_metaso, model_server):
    env = setup(fake_metaso, model_server)
    ask(fake_metaso, model_server, env)
    refreshed = ask(fake_metaso, model_server, env, "--refresh")
    assert calls(fake_metaso, "search") == 2 and "来自缓存" not in refreshed.stderr
    ask(fake_metaso, model_server, env)
    assert calls(fake_metaso, "search") == 2


def test_no_cache_and_refresh_together_is_a_usage_error(fake_metaso, model_server):
    result = ask(fake_metaso, model_server, setup(fake_metaso, model_server), "--no-cache", "--refresh")
    assert result.returncode == 2 and calls(fake_metaso, "search") == 0


def test_entries_expire(tmp_path, fake_metaso):
    now = [1_000_000.0]
    options = metaso_search.Client(fake_metaso.key, fake_metaso.base_url)
    cache = SourceCache(tmp_path, search_ttl=3600, clock=lambda: now[0])
    search(cache, QUESTION, 5, options)
    now[0] += 3599
    _, age = search(cache, QUESTION, 5, options)
    assert age == 3599 and calls(fake_metaso, "search") == 1
    now[0] += 2
    _, age = search(cache, QUESTION, 5, options)
    assert age is None and calls(fake_metaso, "search") == 2


def test_page_lifetime_option(fake_metaso, model_server):
    env = setup(fake_metaso, model_server)
    ask(fake_metaso, model_server, env)
    path = Path(env["XDG_CACHE_HOME"]) / "answer-with-sources" / FILE_NAME
    with sqlite3.connect(path) as db:  # 把存的时间往前拨两天
        db.execute("UPDATE entries SET stored = stored - 2 * 86400")
    result = ask(fake_metaso, model_server, env, "--cache-search-hours", "72", "--cache-page-days", "1")
    assert "搜索：来自缓存（2 天前）" in result.stderr
    assert calls(fake_metaso, "reader") == 4  # 网页只留 1 天：重新读


def test_errors_are_never_cached(fake_metaso, model_server):
    env = setup(fake_metaso, model_server)
    fake_metaso.fail_with("reader", "html", times=2)
    first = ask(fake_metaso, model_server, env)
    assert "读取接口返回了 HTML 页面" in first.stderr  # 当作读取失败，改用摘要，不进缓存
    second = ask(fake_metaso, model_server, env)
    assert "搜索：来自缓存" in second.stderr and "读取 [1]：来自缓存" not in second.stderr
    assert calls(fake_metaso, "reader") == 4
    fake_metaso.fail_with("search", "errcode-5000", times=3)
    refreshed = ask(fake_metaso, model_server, env, "--refresh")
    assert refreshed.returncode == 3  # 刷新时秘塔出错：照常报错，错误体不进缓存
    fake_metaso.fail_with("search", "errcode-2005", times=1)
    last = ask(fake_metaso, model_server, env)
    assert last.returncode == 0 and "搜索：来自缓存" in last.stderr  # 缓存里仍是之前那份好结果
    assert calls(fake_metaso, "reader") == 4


def test_corrupt_cache_file_warns_once_and_the_answer_is_the_same(fake_metaso, model_server):
    env = setup(fake_metaso, model_server)
    clean = ask(fake_metaso, model_server, env, "--no-cache")
    directory = Path(env["XDG_CACHE_HOME"]) / "answer-with-sources"
    directory.mkdir(parents=True)
    (directory / FILE_NAME).write_bytes(b"this is not a sqlite file" * 100)
    result = ask(fake_metaso, model_server, env)
    assert result.returncode == clean.returncode == 0
    assert json.loads(result.stdout)["answer"] == json.loads(clean.stdout)["answer"]
    assert [line for line in result.stderr.splitlines() if "缓存" in line] == [
        f"⚠ 缓存文件 {directory / FILE_NAME} 损坏了，已经重建（之前缓存的结果没有了）"]
    again = ask(fake_metaso, model_server, env)
    assert "来自缓存" in again.stderr  # 重建后照常工作


def test_a_file_where_the_directory_should_be_gives_one_warning_and_no_cache(fake_metaso, model_server, tmp_path):
    blocker = tmp_path / "blocker"
    blocker.write_text("x")
    env = cli_env(fake_metaso, model_server, ANS_MODEL="good", XDG_CACHE_HOME=str(blocker))
    result = ask(fake_metaso, model_server, env)
    assert result.returncode == 0 and json.loads(result.stdout)["passed"]
    assert len([line for line in result.stderr.splitlines() if line.startswith("⚠ 缓存")]) == 1
    ask(fake_metaso, model_server, env)
    assert calls(fake_metaso, "search") == 2


@pytest.mark.slow
def test_four_processes_at_once_all_succeed(fake_metaso, model_server):
    env = setup(fake_metaso, model_server)
    command = cli_command(QUESTION, "--json")
    runs = [subprocess.Popen(command, env=env, cwd=HERE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             stdin=subprocess.DEVNULL, text=True, encoding="utf-8") for _ in range(4)]
    results = [(run.communicate(timeout=60), run.returncode) for run in runs]
    assert [code for _, code in results] == [0, 0, 0, 0], [err for (_, err), _ in results]
    assert all("⚠" not in err for (_, err), _ in results)
    ask(fake_metaso, model_server, env)
    assert calls(fake_metaso, "search") <= 4  # 第五次一定命中


def open_cache_at_the_same_time(directory, barrier, results):
    warnings = []
    barrier.wait()
    cache = SourceCache(directory, warn=warnings.append)
    cache.put("search", {"q": "NAS"}, {"webpages": []})
    results.put(warnings)


@pytest.mark.slow
def test_first_runs_creating_the_cache_together_never_give_it_up(tmp_path):
    # 几个进程同时第一次建缓存文件：换 WAL 日志模式时 sqlite 不等 busy_timeout，直接报“被锁住”，
    # 以前约七分之一的次数里有一个进程警告后不用缓存
    context = multiprocessing.get_context("fork")
    for attempt in range(40):
        barrier, results = context.Barrier(4), context.Queue()
        workers = [context.Process(target=open_cache_at_the_same_time,
                                   args=(tmp_path / str(attempt), barrier, results)) for _ in range(4)]
        for worker in workers:
            worker.start()
        warnings = [results.get(timeout=30) for _ in workers]
        for worker in workers:
            worker.join()
        assert warnings == [[]] * 4, (attempt, warnings)


@pytest.mark.slow
def test_the_same_question_asked_at_once_in_one_process_pays_once(fake_metaso, tmp_path):
    """--serve 同时来了几个一样的问题：只有第一个请求秘塔，别的等它存进缓存再读（以前每一个都付一次费）。"""
    import threading

    fake_metaso.delay = 0.3  # 第一个还没拿到结果时，别的已经都来了
    client = metaso_search.Client(fake_metaso.key, fake_metaso.base_url)
    caches = [SourceCache(tmp_path) for _ in range(4)]  # 每个请求自己的连接，同一个缓存文件
    results = []

    def ask(cache):
        response = search(cache, "家用 NAS 怎么选", 5, client)[0]
        results.append((response, read_page(cache, response["webpages"][0]["link"], 500, client)[0]))
    threads = [threading.Thread(target=ask, args=(cache,)) for cache in caches]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert (calls(fake_metaso, "search"), calls(fake_metaso, "reader")) == (1, 1)
    assert len(results) == 4 and all(result == results[0] for result in results)


def test_size_bound_drops_the_oldest_entries(tmp_path):
    now = [0.0]
    cache = SourceCache(tmp_path, max_bytes=10_000, clock=lambda: now[0])
    for number in range(30):
        now[0] += 1
        cache.put("page", {"url": number}, "字" * 300)  # 每条约 900 字节
    with sqlite3.connect(tmp_path / FILE_NAME) as db:
        total, count = db.execute("SELECT sum(size), count(*) FROM entries").fetchone()
    assert total <= 10_000 and count == 10_000 // len(json.dumps("字" * 300, ensure_ascii=False).encode())
    assert cache.get("page", {"url": 29}) is not None and cache.get("page", {"url": 0}) is None


def test_directory_and_file_are_private(fake_metaso, model_server):
    env = setup(fake_metaso, model_server)
    ask(fake_metaso, model_server, env)
    directory = Path(env["XDG_CACHE_HOME"]) / "answer-with-sources"
    assert stat.S_IMODE(os.stat(directory).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(directory / FILE_NAME).st_mode) == 0o600


def test_the_key_is_never_on_disk(fake_metaso, model_server):
    env = setup(fake_metaso, model_server)
    fake_metaso.pages[0] = dict(fake_metaso.pages[0], text=fake_metaso.pages[0]["text"] + "\n回显：{authorization}")
    ask(fake_metaso, model_server, env)
    ask(fake_metaso, model_server, env, "--size", "3")
    directory = Path(env["XDG_CACHE_HOME"]) / "answer-with-sources"
    for path in directory.iterdir():
        data = path.read_bytes()
        assert CANARY_KEY.encode() not in data and CANARY_KEY.encode("utf-16-le") not in data


def test_demo_keeps_its_pages_out_of_the_cache(model_server):
    env = cli_env(None, model_server, ANS_MODEL="good")
    result = run_cli("--demo", QUESTION, env=env)
    assert result.returncode == 0
    assert not (Path(env["XDG_CACHE_HOME"]) / "answer-with-sources").exists()


def test_eval_second_run_makes_no_metaso_calls(fake_metaso, model_server, tmp_path):
    questions = tmp_path / "q.txt"
    questions.write_text("家用 NAS 怎么选\nRAID5 至少几块盘\n", encoding="utf-8")
    env = setup(fake_metaso, model_server)
    run_cli("--eval", str(questions), "--models", "good", env=env)
    before = len(fake_metaso.requests)
    second = run_cli("--eval", str(questions), "--models", "good,wrong-source", env=env)
    assert len(fake_metaso.requests) == before
    assert "缓存省下 2 次搜索、4 次读取" in second.stderr


def test_each_backend_has_its_own_keys_and_metaso_keeps_the_keys_it_always_had(tmp_path):
    """键带着后端的名字：两个后端同样的请求内容不会互相命中；秘塔的键和只有它一个后端时一样（升级后照样命中）。"""
    key = {"url": "https://example.com/a"}
    SourceCache(tmp_path, backend="other").put("page", key, "别的后端的正文")
    metaso = SourceCache(tmp_path)
    assert metaso.get("page", key) is None
    metaso.put("page", key, "秘塔的正文")
    assert SourceCache(tmp_path, backend="other").get("page", key)[0] == "别的后端的正文"
    with sqlite3.connect(tmp_path / FILE_NAME) as db:
        stored = {row[0] for row in db.execute("SELECT key FROM entries")}
    assert digest("page", key) in stored  # 秘塔的键前面没有名字
