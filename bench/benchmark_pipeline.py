"""整条流程的基准，全部在同一次运行里并排测量，打印比值：

  1. 整条流程（搜索、读取、回答、核对、输出）的用时 / 用同样提示词直接调一次模型的用时 —— 目标 ≤ 1.05；
  2. 流式输出第一个字的时间 / 非流式拿到完整回答的时间；
  3. --read N（N = 1…5，模拟读取接口每次延迟 1 秒）的读取用时，和真的一个个读比 ——
     目标：用时 ≤ 1.1 ×（搜索 + 读一页）；
  4. 付费之前的预检（GET /v1/models）用时的中位数 / 整条流程的用时。

模型服务：默认在本机启动 llama.cpp + SmolLM2-135M（pip install '.[model]'）；
也可以用 --url 和 --model 指向你自己的服务（比如 Ollama）。只访问 127.0.0.1。
  python -m bench.benchmark_pipeline
  python -m bench.benchmark_pipeline --url http://127.0.0.1:11434 --model qwen2.5:1.5b
"""
import argparse
import io
import statistics
import sys
import time

import requests

import answer_with_sources
import metaso_search
from fake_metaso import ENGLISH_PAGES, FakeMetaso
from sourced_answers.core.settings import (
    DEFAULT_MODEL,
    SEARCH_DEFAULTS,
    ModelSettings,
    RunSettings,
    SearchSettings,
    Settings,
)
from sourced_answers.model.llama_server import LocalModelServer
from sourced_answers.model.model_client import chat, chat_url
from sourced_answers.model.preflight import check_models
from sourced_answers.model.prompts import build_messages
from sourced_answers.search.gather import gather

QUESTION = "How should I choose a home NAS?"
MAX_TOKENS = 160


def log(message):
    print(message, file=sys.stderr)


def flush_prompt_cache(url, model):
    """llama.cpp 会复用上一个请求的提示词。先发一个不同的短请求，让下一次计时的请求像用户第一次提问一样
    从头读提示词。"""
    requests.post(chat_url(url), json={"model": model, "messages": [{"role": "user", "content": "Say hi."}],
                                       "max_tokens": 1, "temperature": 0}, timeout=600).raise_for_status()


def pipeline_vs_bare_call(fake, url, model, rounds):
    """整条流程和裸调用交替跑 rounds 次，取用时的中位数。流程的配置直接构造（不用缓存：每次都真的请求）。"""
    client = metaso_search.Client(fake.key, fake.base_url)
    sources = gather(QUESTION, SEARCH_DEFAULTS.size, SEARCH_DEFAULTS.read,
                     SEARCH_DEFAULTS.max_chars, client, lambda message: None)
    body = {"model": model, "messages": build_messages(QUESTION, sources),
            "temperature": 0, "max_tokens": MAX_TOKENS, "stream": False}
    config = Settings(run=RunSettings(question=QUESTION, models=(model,)),
                      search=SearchSettings(key=fake.key, base=fake.base_url, no_cache=True),
                      model=ModelSettings(name=model, url=url, max_tokens=MAX_TOKENS, stream=False))
    pipeline_times, bare_times = [], []
    for _ in range(rounds):
        flush_prompt_cache(url, model)
        started = time.perf_counter()
        code = answer_with_sources.run_question(config, io.StringIO(), lambda message: None)
        pipeline_times.append(time.perf_counter() - started)
        if code not in (0, 1):
            raise SystemExit(f"流程失败（退出码 {code}）")
        flush_prompt_cache(url, model)
        started = time.perf_counter()
        requests.post(chat_url(url), json=body, timeout=600).raise_for_status()
        bare_times.append(time.perf_counter() - started)
    return statistics.median(pipeline_times), statistics.median(bare_times)


def first_character_vs_total(fake, url, model, rounds):
    client = metaso_search.Client(fake.key, fake.base_url)
    sources = gather(QUESTION, SEARCH_DEFAULTS.size, SEARCH_DEFAULTS.read,
                     SEARCH_DEFAULTS.max_chars, client, lambda message: None)
    messages = build_messages(QUESTION, sources)
    firsts, totals = [], []
    for _ in range(rounds):
        flush_prompt_cache(url, model)
        streamed = chat(messages, ModelSettings(name=model, url=url, max_tokens=MAX_TOKENS), stream=True)
        firsts.append(streamed.first_text_seconds)
        flush_prompt_cache(url, model)
        totals.append(chat(messages, ModelSettings(name=model, url=url, max_tokens=MAX_TOKENS)).seconds)
    return statistics.median(firsts), statistics.median(totals)


def concurrent_reads():
    """模拟读取接口每次请求延迟 1 秒（搜索也一样）。"""
    rows = []
    with FakeMetaso(ENGLISH_PAGES, delay=1.0) as fake:
        client = metaso_search.Client(fake.key, fake.base_url)
        started = time.perf_counter()
        client.search(QUESTION, 5)
        client.read_page(fake.link(0))
        one_read_and_search = time.perf_counter() - started
        for count in range(1, 6):
            started = time.perf_counter()
            gather(QUESTION, 5, count, 2000, client, lambda message: None)
            concurrent = time.perf_counter() - started
            started = time.perf_counter()
            client.search(QUESTION, 5)
            for index in range(count):
                client.read_page(fake.link(index))
            sequential = time.perf_counter() - started
            rows.append((count, concurrent, sequential, concurrent / one_read_and_search))
    return one_read_and_search, rows


def preflight_seconds(url, model, rounds=20):
    timings = []
    for _ in range(rounds):
        started = time.perf_counter()
        check_models(url, [model])
        timings.append(time.perf_counter() - started)
    return statistics.median(timings)


def main(argv=None):
    parser = argparse.ArgumentParser(description="整条流程的基准（打印比值）。")
    parser.add_argument("--url", help="用这个模型服务，而不是在本机启动 llama.cpp")
    parser.add_argument("--model", help="模型名（和 --url 一起用）")
    parser.add_argument("--rounds", type=int, default=5, help="每项重复几次，取中位数（默认 5）")
    args = parser.parse_args(argv)

    print("3. 并发读取（模拟读取接口每次延迟 1 秒）")
    base, rows = concurrent_reads()
    print(f"   搜索 + 读一页：{base:.2f} 秒")
    print("   N  并发读取(秒)  逐个读取(秒)  并发 / (搜索+读一页)")
    for count, concurrent, sequential, ratio in rows:
        print(f"   {count}  {concurrent:10.2f}  {sequential:12.2f}  {ratio:14.2f}", flush=True)
    worst = max(ratio for *_, ratio in rows)
    print(f"   最差比值 {worst:.2f}（目标 ≤ 1.10）")

    server = None
    if args.url:
        url, model = args.url, args.model or DEFAULT_MODEL
    else:
        log("启动本机 llama.cpp + SmolLM2-135M …")
        server = LocalModelServer(prompt_cache=False).start()
        url, model = server.url, server.model
    try:
        with FakeMetaso(ENGLISH_PAGES) as fake:
            chat(build_messages(QUESTION, []), ModelSettings(name=model, url=url, max_tokens=8))  # 预热
            pipeline, bare = pipeline_vs_bare_call(fake, url, model, args.rounds)
            first, total = first_character_vs_total(fake, url, model, args.rounds)
            preflight = preflight_seconds(url, model)
    finally:
        if server:
            server.close()
    print(f"1. 整条流程 {pipeline:.2f} 秒 / 直接调用模型 {bare:.2f} 秒 = {pipeline / bare:.3f}"
          f"（目标 ≤ 1.05；模型 {model}，{args.rounds} 次的中位数）")
    print(f"2. 流式第一个字 {first:.2f} 秒 / 非流式完整回答 {total:.2f} 秒 = {first / total:.3f}")
    print(f"4. 预检 {preflight * 1000:.1f} 毫秒（20 次的中位数）/ 整条流程 {pipeline:.2f} 秒 "
          f"= {preflight / pipeline:.5f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
