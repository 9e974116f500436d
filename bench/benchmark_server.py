"""OpenAI 兼容服务（--serve）的负载检查和开销，同一次运行里并排测量，打印比值：

  1. 负载：50 个请求、8 个客户端线程同时发（一半流式、一半不流式），3 个问题 × 3 个脚本模型混着问。
     每个都要回答（HTTP 200），而且回答、来源、结论都是这个请求自己的问题和模型的：和在本进程里用
     answer_question 问同一个问题、同一个模型（不用缓存）得到的一字不差——“串了”的个数目标 0；
     另有同样 50 个请求一个一个地发，两者的吞吐量之比；
  2. 开销：同一个问题一个一个地问，经过服务（官方 openai 客户端）的用时 / 在本进程里调用 answer_question 的用时；
  3. 同样的开销，模型换成自带的 llama.cpp + SmolLM2-135M（真的生成，不是马上回答的脚本模型）：本进程和服务问的是
     同一个 llama.cpp 服务（温度 0、关掉提示词缓存，两边生成一样的字），交替着问，各取中位数。
     目标：服务 / 本进程 ≤ 1.05。
     没装自带的模型时这一项跳过（bash quickstart.sh --test 会装）。

秘塔是 fake_metaso.FakeMetaso（NAS 的 5 页，加上这里写的咖啡、阳台种菜几页：三个问题搜到的网页互不相同），
模型是 tests/scripted_model.ScriptedModel（good、wrong-source 是写好的回答，echo-prompt 把提示词原样说回来：
回答里有这个请求自己的问题和资料），服务是真的子进程 python answer_with_sources.py --serve 0 --concurrency 8。
缓存开着（它是产品的一部分），放在临时目录，不碰你的 ~/.cache：负载检查从空缓存开始，同一个问题第二次起不再
调用秘塔；期望的结果不用缓存，所以命中缓存的回答也必须和它一样。开销一项两边的缓存都已经有这个问题（都不调用秘塔）。
只访问 127.0.0.1；有请求失败或者串了时退出码 1。
  python -m bench.benchmark_server
"""
import argparse
import json
import os
import queue
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import openai

from answer_with_sources import answer_question
from fake_metaso import NAS_PAGES, FakeMetaso
from sourced_answers.outputs.render import AGENT, CHAT
from tests.scripted_model import ScriptedModel

HERE = Path(__file__).resolve().parent.parent
REQUESTS = 50
CLIENTS = 8
MODELS = ("good", "wrong-source", "echo-prompt")
# 为这个基准编写的虚构页面：和 NAS 的页面、彼此的问题都没有共同的字二元组，三个问题搜到的网页互不相同
COFFEE_PAGES = [
    {"title": "手冲咖啡入门", "date": "2026年10月01日", "authors": ["咖啡札记"],
     "text": "# 手冲咖啡入门\n\n手冲咖啡的水温一般在 90 到 96 摄氏度之间，浅烘焙的豆子用高一点的水温。\n\n"
             "粉水比常用 1 比 15，一杯用 15 克咖啡粉配 225 毫升热水。"},
    {"title": "咖啡豆的烘焙程度", "date": "2026年09月20日",
     "text": "# 咖啡豆的烘焙程度\n\n深烘焙的豆子苦味重，水温降到 88 摄氏度左右可以少一点焦苦。\n\n"
             "烘焙后的豆子放一到两周风味最好。"},
    {"title": "手冲壶和滤杯", "date": "2026年08月11日",
     "text": "# 手冲壶和滤杯\n\n细口壶能控制水流，新手先练匀速注水。\n\n锥形滤杯流速快，平底滤杯萃取更均匀。"},
]
GARDEN_PAGES = [
    {"title": "阳台种菜指南", "date": "2026年04月03日",
     "text": "# 阳台种菜指南\n\n朝南阳台光照足，适合番茄、辣椒这类喜光蔬菜。\n\n朝北阳台光照少，可以种生菜、小葱。"},
    {"title": "盆栽番茄怎样浇水", "date": "2026年05月09日",
     "text": "# 盆栽番茄怎样浇水\n\n番茄盆土见干见湿，夏天早晚各浇一次。\n\n结果期要追肥，每两周一次。"},
]
PAGES = NAS_PAGES + COFFEE_PAGES + GARDEN_PAGES
# 问题 → 它应当搜到的网页（PAGES 里的下标）
QUESTIONS = {
    "家用 NAS 怎么选": range(0, 5),
    "手冲咖啡的水温": range(5, 8),
    "阳台种番茄": range(8, 10),
}
VERIFICATION = ("passed", "problems", "claims", "unused")


def log(message):
    print(message, file=sys.stderr)


def plain(value):
    """比较用：经过一次 JSON（元组变列表），和客户端收到的一样。"""
    return json.loads(json.dumps(value, ensure_ascii=False))


def expected_reply(result, model, question):
    """本进程里 answer_question 的结果 → 服务对同一个问题、同一个模型应当给出的东西（聊天窗口的文字是 Markdown：
    和 Result.markdown 一样，只是列不下的问题指向 verification）。"""
    sources = result.record["sources"]
    content = result.markdown.replace(AGENT.all_problems_at, CHAT.all_problems_at)
    return plain({"model": model, "content": content,
                  "citations": [source["link"] for source in sources],
                  "search_results": [{"title": source["title"], "url": source["link"], "date": source["date"] or None}
                                     for source in sources],
                  "verification": {**{name: result.record[name] for name in VERIFICATION},
                                   "truncated": bool(result.record["truncated"]), "query": question}})


def environment(fake, model_server, cache):
    """服务和本进程的 answer_question 用的环境变量：只有模拟秘塔、脚本模型和临时的缓存目录。"""
    env = {name: value for name, value in os.environ.items()
           if not name.startswith(("METASO_", "ANS_", "OLLAMA_")) and name not in ("NO_COLOR", "FORCE_COLOR")}
    env.update(METASO_BASE=fake.base_url, METASO_API_KEY=fake.key, OLLAMA_URL=model_server.url, ANS_MODEL=MODELS[0],
               XDG_CACHE_HOME=cache, PYTHONIOENCODING="utf-8", NO_PROXY="127.0.0.1,localhost")
    return env


class Server:
    """真的服务进程：--serve 0 让系统挑端口，地址从标准错误的第一行读出来；之后的访问日志一直收着。"""

    def __init__(self, env, wait=60.0, flags=()):
        self.process = subprocess.Popen(
            [sys.executable, str(HERE / "answer_with_sources.py"), "--serve", "0", "--concurrency", str(CLIENTS),
             "--queue", str(REQUESTS), *flags],
            env=env, cwd=HERE, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            text=True, encoding="utf-8")
        self.lines = []
        arrived = queue.Queue()
        threading.Thread(target=self.collect, args=(arrived,), daemon=True).start()
        started = time.perf_counter()
        try:
            first = arrived.get(timeout=wait)
        except queue.Empty:
            first = f"{wait:.0f} 秒里什么也没说"
        self.start_seconds = time.perf_counter() - started
        if "http://" not in first:
            self.close()
            raise SystemExit(f"服务没有起来：{first.strip() or '（没有输出就退出了）'}")
        self.base_url = "http://" + first.split("http://", 1)[1].split("（", 1)[0].strip()

    def collect(self, arrived):
        """第一行交给 arrived（地址），其余的是访问日志；进程退出时没说过话，交出空字符串。"""
        for number, line in enumerate(self.process.stderr):
            if number == 0:
                arrived.put(line)
            else:
                self.lines.append(line.rstrip("\n"))
        arrived.put("")

    def close(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode


def new_client(base_url):
    """官方 openai 客户端。不重试：503、断开都要算作失败，不能被悄悄地重发掩盖。"""
    return openai.OpenAI(base_url=base_url, api_key="not-needed", max_retries=0, timeout=60.0,
                         http_client=openai.DefaultHttpxClient(trust_env=False))


def ask(client, question, model, stream):
    """发一个请求，返回客户端收到的东西（和 expected_reply 一样的字段）；流式时把每一块拼起来，并检查每一块的
    model、id 都一样。"""
    messages = [{"role": "user", "content": question}]
    if not stream:
        reply = client.chat.completions.create(model=model, messages=messages)
        extra = reply.model_extra or {}
        return {"model": reply.model, "content": reply.choices[0].message.content,
                **{name: extra.get(name) for name in ("citations", "search_results", "verification")}}
    pieces, models, ids, last = [], set(), set(), None
    for chunk in client.chat.completions.create(model=model, messages=messages, stream=True):
        models.add(chunk.model)
        ids.add(chunk.id)
        if chunk.choices and chunk.choices[0].delta.content:
            pieces.append(chunk.choices[0].delta.content)
        last = chunk
    extra = (last.model_extra if last is not None else None) or {}
    if len(ids) != 1:
        raise ValueError(f"流式的各块 id 不一样：{sorted(ids)}")
    return {"model": models.pop() if len(models) == 1 else sorted(models), "content": "".join(pieces),
            **{name: extra.get(name) for name in ("citations", "search_results", "verification")}}


def plan(seed=32):
    """50 个请求：问题、模型轮着来（9 种组合），奇数个流式；再打乱次序。"""
    questions = list(QUESTIONS)
    requests = [(questions[i % len(questions)], MODELS[(i // len(questions)) % len(MODELS)], i % 2 == 1)
                for i in range(REQUESTS)]
    random.Random(seed).shuffle(requests)
    return requests


def judge(request, reply, expected):
    """一个回答对不对：对返回 None；不对时说哪里不对，是串成了哪个问题、哪个模型的（认得出的话）。"""
    question, model, _ = request
    own = expected[question, model]
    wrong = [name for name in own if reply.get(name) != own[name]]
    if not wrong:
        return None
    alike = [f"{other_question}/{other_model}" for (other_question, other_model), other in expected.items()
             if (other_question, other_model) != (question, model) and
             all(reply.get(name) == other[name] for name in wrong if name != "model")]
    return f"{'、'.join(wrong)} 不对" + (f"（像是 {'、'.join(alike)} 的）" if alike else "")


def run_load(base_url, requests, expected, clients):
    """clients 个线程发完 requests，返回 (用时, 失败的 [(请求, 说明)], 串了的 [(请求, 说明)], 每个请求的用时)。"""
    client = new_client(base_url)
    failed, mixed, seconds = [], [], []
    lock = threading.Lock()

    def one(request):
        started = time.perf_counter()
        try:
            reply = ask(client, *request)
        except Exception as error:  # noqa: BLE001  任何异常都是这个请求失败：记下来，接着发别的
            status = getattr(error, "status_code", None)
            with lock:
                failed.append((request, f"{type(error).__name__}{f' HTTP {status}' if status else ''}：{error}"))
            return
        took = time.perf_counter() - started
        problem = judge(request, plain(reply), expected)
        with lock:
            seconds.append(took)
            if problem:
                mixed.append((request, problem))

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=clients) as pool:
        list(pool.map(one, requests))
    wall = time.perf_counter() - started
    client.close()
    return wall, failed, mixed, seconds


def overhead(base_url, env, question, rounds):
    """同一个问题、同一个模型一个一个地问：本进程里的 answer_question、经过服务（非流式、流式）交替，各取中位数。
    两边的缓存里都已经有这个问题。"""
    client = new_client(base_url)
    messages = [{"role": "user", "content": question}]
    answer_question(question, model=MODELS[0], environ=env)  # 预热：本进程的缓存里也有这个问题
    in_process, served, streamed = [], [], []
    for _ in range(rounds):
        started = time.perf_counter()
        answer_question(question, model=MODELS[0], environ=env)
        in_process.append(time.perf_counter() - started)
        started = time.perf_counter()
        client.chat.completions.create(model=MODELS[0], messages=messages)
        served.append(time.perf_counter() - started)
        started = time.perf_counter()
        for _chunk in client.chat.completions.create(model=MODELS[0], messages=messages, stream=True):
            pass
        streamed.append(time.perf_counter() - started)
    client.close()
    return statistics.median(in_process), statistics.median(served), statistics.median(streamed)


# 第 3 项：回答的上限（token），够 SmolLM2 说上几句，一次几秒
LOCAL_MAX_TOKENS = 96


def llama_overhead(fake, directory, rounds):
    """第 3 项：(本进程, 服务非流式, 服务流式) 的中位数秒数，和 llama.cpp 服务的说明；没装自带的模型时是 None。"""
    from sourced_answers.model import llama_server
    if not llama_server.server_installed() or not llama_server.bundled_model_path():
        return None
    question = "How should I choose a home NAS?"  # SmolLM2 只会英文
    with llama_server.LocalModelServer(prompt_cache=False) as llama:
        env = {name: value for name, value in os.environ.items()
               if not name.startswith(("METASO_", "ANS_", "OLLAMA_")) and name not in ("NO_COLOR", "FORCE_COLOR")}
        env.update(METASO_BASE=fake.base_url, METASO_API_KEY=fake.key, OLLAMA_URL=llama.url, ANS_MODEL=llama.model,
                   XDG_CACHE_HOME=os.path.join(directory, "llama"), PYTHONIOENCODING="utf-8",
                   NO_PROXY="127.0.0.1,localhost")
        server = Server(env, flags=("--max-tokens", str(LOCAL_MAX_TOKENS)))
        try:
            client = new_client(server.base_url)
            messages = [{"role": "user", "content": question}]
            options = {"model": llama.model, "messages": messages, "max_tokens": LOCAL_MAX_TOKENS}
            answer_question(question, environ=env, max_tokens=LOCAL_MAX_TOKENS)  # 预热：两边的缓存里都有这个问题
            client.chat.completions.create(**options)
            in_process, served, streamed = [], [], []
            words = set()
            for _ in range(rounds):
                started = time.perf_counter()
                words.add(answer_question(question, environ=env, max_tokens=LOCAL_MAX_TOKENS).answer)
                in_process.append(time.perf_counter() - started)
                started = time.perf_counter()
                reply = client.chat.completions.create(**options)
                served.append(time.perf_counter() - started)
                words.add(reply.choices[0].message.content.split("\n\n来源：", 1)[0].strip())
                started = time.perf_counter()
                for _chunk in client.chat.completions.create(**options, stream=True):
                    pass
                streamed.append(time.perf_counter() - started)
            client.close()
        finally:
            server.close()
        about = (f"{llama.model}，{llama.threads} 个线程生成，回答上限 {LOCAL_MAX_TOKENS} token，"
                 f"两边生成的回答 {len(words)} 种")
    return statistics.median(in_process), statistics.median(served), statistics.median(streamed), about


def check_pages(fake):
    """三个问题搜到的网页互不相同（不然“串了”查不出来）。"""
    for question, wanted in QUESTIONS.items():
        found = [result["link"] for result in fake.search({"q": question, "size": 10})["webpages"]]
        if found != [fake.link(index) for index in wanted]:
            raise SystemExit(f"基准自己的页面不对：“{question}”搜到了 {found}")


def report(title, requests, result):
    wall, failed, mixed, seconds = result
    streamed = sum(1 for *_, stream in requests if stream)
    print(f"{title}：{len(requests)} 个请求（{streamed} 个流式），{wall:.2f} 秒，每秒 {len(requests) / wall:.1f} 个；"
          f"失败 {len(failed)}，串了 {len(mixed)}（目标都是 0）")
    if seconds:
        ordered = sorted(seconds)
        print(f"   每个请求的用时：中位数 {statistics.median(ordered) * 1000:.1f} 毫秒，"
              f"最慢 {ordered[-1] * 1000:.1f} 毫秒")
    for (question, model, stream), text in (failed + mixed)[:10]:
        print(f"   ✗ {question} / {model}{'（流式）' if stream else ''}：{text}")


def main(argv=None):
    parser = argparse.ArgumentParser(description="OpenAI 兼容服务的负载检查和开销（打印比值）。")
    parser.add_argument("--rounds", type=int, default=20, help="开销一项重复几次，取中位数（默认 20）")
    parser.add_argument("--llama-rounds", type=int, default=5,
                        help="第 3 项（自带的 llama.cpp）重复几次，取中位数（默认 5；0 跳过）")
    args = parser.parse_args(argv)

    model_server = ScriptedModel()
    with tempfile.TemporaryDirectory() as directory, FakeMetaso(PAGES) as fake:
        check_pages(fake)
        served_env = environment(fake, model_server, os.path.join(directory, "served"))
        local_env = environment(fake, model_server, os.path.join(directory, "local"))
        # 期望的结果：本进程里问同一个问题、同一个模型，不用缓存
        expected = {(question, model): expected_reply(answer_question(question, model=model, environ=local_env,
                                                                      no_cache=True), model, question)
                    for question in QUESTIONS for model in MODELS}
        if len({json.dumps(reply["content"], ensure_ascii=False) for reply in expected.values()}) != len(expected):
            raise SystemExit("基准自己的问题和模型不对：有两种组合的回答一样，串了也看不出来")
        log("启动服务：python answer_with_sources.py --serve 0 …")
        server = Server(served_env)
        try:
            requests = plan()
            before = len(fake.requests)
            concurrent = run_load(server.base_url, requests, expected, CLIENTS)
            metaso_calls = len(fake.requests) - before
            sequential = run_load(server.base_url, requests, expected, 1)
            in_process, served, streamed = overhead(server.base_url, local_env, next(iter(QUESTIONS)), args.rounds)
        finally:
            code = server.close()
        llama = llama_overhead(fake, directory, args.llama_rounds) if args.llama_rounds else None
    model_server.close()
    tracebacks = sum("Traceback" in line for line in server.lines)
    access = [line for line in server.lines if line.startswith(("POST ", "GET "))]
    not_ok = [line for line in access if " 200 " not in line]

    print(f"服务启动（含付费之前的预检）{server.start_seconds:.2f} 秒；同时回答 {CLIENTS} 个，最多排队 {REQUESTS} 个；"
          f"退出码 {code}（Ctrl-C、SIGTERM 是 130）")
    report(f"1. {CLIENTS} 个同时", requests, concurrent)
    print(f"   秘塔调用 {metaso_calls} 次（缓存开着、从空缓存开始；一个一个地问只要 {len(QUESTIONS) * 3} 次："
          "同一个问题同时在问、缓存里还没有时，各自都调用）")
    report("   一个一个", requests, sequential)
    print(f"   吞吐量 {CLIENTS} 个同时 / 一个一个 = {sequential[0] / concurrent[0]:.2f}"
          f"（这台机器 {os.cpu_count()} 核；模拟秘塔、脚本模型和客户端在同一个进程里）")
    print(f"2. 同一个问题一个一个地问（“{next(iter(QUESTIONS))}”，模型 {MODELS[0]}，{args.rounds} 次的中位数，"
          "都命中缓存）：")
    print("   方式                     用时(毫秒)   / 本进程")
    print(f"   本进程 answer_question   {in_process * 1000:9.1f}   {1:8.2f}")
    print(f"   经过服务（非流式）       {served * 1000:9.1f}   {served / in_process:8.2f}")
    print(f"   经过服务（流式）         {streamed * 1000:9.1f}   {streamed / in_process:8.2f}")
    print(f"   服务的开销：每个请求多 {(served - in_process) * 1000:.1f} 毫秒（非流式）、"
          f"{(streamed - in_process) * 1000:.1f} 毫秒（流式）")
    if llama is None:
        print("3. 自带的 llama.cpp：跳过（没装自带的模型，或者 --llama-rounds 0）")
    else:
        local, served_local, streamed_local, about = llama
        print(f"3. 同一个问题，模型是自带的 llama.cpp（{about}；{args.llama_rounds} 次的中位数）：")
        print("   方式                     用时(毫秒)   / 本进程")
        print(f"   本进程 answer_question   {local * 1000:9.1f}   {1:8.2f}")
        print(f"   经过服务（非流式）       {served_local * 1000:9.1f}   {served_local / local:8.2f}   （目标 ≤ 1.05）")
        print(f"   经过服务（流式）         {streamed_local * 1000:9.1f}   {streamed_local / local:8.2f}")
    print(f"服务的标准错误：{len(access)} 行访问日志，不是 200 的 {len(not_ok)} 行，"
          f"报错堆栈 {tracebacks} 个")
    bad = concurrent[1] or concurrent[2] or sequential[1] or sequential[2] or tracebacks or not_ok
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
