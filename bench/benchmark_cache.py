"""缓存的基准，同一次运行里并排测量，打印比值：

  1. 同样的问题跑两遍（模拟秘塔每个请求延迟 1 秒，搜索 + 读 2 页）：第二遍的秘塔调用次数（目标 0）和用时之比；
  2. 缓存里已有 10 000 条时，一次运行的查找（1 次搜索 + 2 次读取）多花多少毫秒（目标 < 10 ms）。
只访问 127.0.0.1；缓存放在临时目录，不碰你的 ~/.cache。
  python -m bench.benchmark_cache
"""
import statistics
import sys
import tempfile
import time
from pathlib import Path

from fake_metaso import FakeMetaso
from sourced_answers.core.retrying import Deadline
from sourced_answers.core.settings import SearchSettings
from sourced_answers.search.gather import gather
from sourced_answers.search.metaso_backend import MetasoBackend
from sourced_answers.search.source_cache import SourceCache

QUESTION = "家用 NAS 怎么选"


def one_run(fake, directory):
    """一次回答的第 1 步（搜索 + 读 2 页），经过秘塔这个后端和它的缓存，和命令行走的是同一条路。"""
    search = SearchSettings(key=fake.key, base=fake.base_url, size=5, read=2, cache_dir=Path(directory))
    backend = MetasoBackend(search, lambda message: None, Deadline(None))
    before = len(fake.requests)
    started = time.perf_counter()
    gather(QUESTION, search, backend, lambda message: None)
    seconds = time.perf_counter() - started
    backend.close()
    return seconds, len(fake.requests) - before


def second_run_ratio():
    with tempfile.TemporaryDirectory() as directory, FakeMetaso(delay=1.0) as fake:
        first, first_calls = one_run(fake, directory)
        second, second_calls = one_run(fake, directory)
    return first, first_calls, second, second_calls


def lookup_overhead(entries=10_000, rounds=20):
    with tempfile.TemporaryDirectory() as directory:
        cache = SourceCache(directory)
        cache.connection.execute("BEGIN")
        for number in range(entries):
            cache.connection.execute("INSERT INTO entries VALUES (?, ?, ?, ?, ?)",
                                     (f"page:{number:064x}", "page", '"' + "正文" * 500 + '"', time.time(), 3002))
        cache.connection.execute("COMMIT")
        keys = [{"url": f"https://example.com/{n}"} for n in range(3)]
        for key in keys:  # 这一次运行要的三条确实在缓存里：量的是命中（含解析）
            cache.put("page", key, "正文" * 500)
        timings = []
        for _ in range(rounds):
            started = time.perf_counter()
            for key in keys:
                assert cache.get("page", key) is not None
            timings.append(time.perf_counter() - started)
        opened = []
        for _ in range(5):
            started = time.perf_counter()
            SourceCache(directory).close()
            opened.append(time.perf_counter() - started)
        cache.close()
    return statistics.median(timings), statistics.median(opened)


def main():
    first, first_calls, second, second_calls = second_run_ratio()
    print(f"1. 第一遍 {first:.2f} 秒、{first_calls} 次秘塔调用；第二遍 {second:.3f} 秒、{second_calls} 次"
          f"（目标 0）；用时之比 {second / first:.4f}")
    lookups, opening = lookup_overhead()
    print(f"2. 缓存里有 10 000 条：3 次查找 {lookups * 1000:.2f} 毫秒，打开缓存 {opening * 1000:.2f} 毫秒，"
          f"合计 {(lookups + opening) * 1000:.2f} 毫秒（目标 < 10 毫秒）")
    return 0


if __name__ == "__main__":
    sys.exit(main())
