"""回答优先：聊天程序的后台任务（Open WebUI 起标题、打标签、猜后续问题）不拖慢正在做的回答。同一次运行里并排测量：

  1. 一个回答单独问（流式，和 Open WebUI 一样）：从发出请求到流结束的用时；
  2. 同一个回答，在它读网页的时候（模拟秘塔收到了这个问题的搜索之后）同时发来 Open WebUI 的三个后台任务：
     起标题、打标签、猜后续问题（不流式，max_completion_tokens 1000，和 Open WebUI 0.12.4 发的一样）。
     目标：有后台任务时的回答用时 ≤ 单独问的用时 + 0.5 秒。

模型是一个只有一个推理槽的替身（tests/scripted_model.ScriptedModel 的 one_at_a_time：一个一个地回答，每个用
MODEL_SECONDS 秒，像只加载了一个模型的 llama.cpp、默认设置的 Ollama）：后台任务先到了模型那里，回答就要排在它们后面。
模拟秘塔的每个请求用 METASO_SECONDS 秒（搜索、读网页），服务是真的子进程 python answer_with_sources.py --serve 0
--no-cache（每次都真的搜索、读网页）。两种情况交替问 --rounds 次，各取中位数。

每个后台任务的回答都按 Open WebUI 读它的办法检查：从第一个 { 到最后一个 } 取出 JSON，起标题要有不空的 "title"，
打标签要有 "tags" 列表，猜后续问题要有 "follow_ups" 列表；读不出来就算失败。
只访问 127.0.0.1；没达到目标、有请求失败时退出码 1。
  python -m bench.benchmark_answers_first
"""
import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

from bench.benchmark_server import Server, new_client
from fake_metaso import NAS_PAGES, FakeMetaso
from tests.scripted_model import ScriptedModel

MODEL = "answers-and-tasks"  # 问题照常回答，后台任务按模板要的 JSON 回答（tests/scripted_model.py）
MODEL_SECONDS = 1.0
METASO_SECONDS = 0.3
QUESTION = "家用 NAS 怎么选"
TARGET_SECONDS = 0.5
# Open WebUI 的后台任务：它的默认模板的样子（“### Task:” 开头、要的 JSON 格式、最后是对话记录，每条一行
# “USER: …”“ASSISTANT: …”），这里只留下判断要用的部分
HISTORY = (f"<chat_history>\nUSER: {QUESTION}\n"
           "ASSISTANT: 家用 NAS 至少选两盘位，方便做 RAID1 镜像 [1]。\n</chat_history>")
TASKS = {
    "title": "### Task:\nGenerate a concise title summarizing the chat history.\n### Output:\n"
             'JSON format: { "title": "your concise title here" }\n### Chat History:\n' + HISTORY,
    "tags": "### Task:\nGenerate 1-3 broad tags categorizing the main themes of the chat history.\n### Output:\n"
            'JSON format: { "tags": ["tag1", "tag2", "tag3"] }\n### Chat History:\n' + HISTORY,
    "follow_ups": "### Task:\nPredict 3-5 useful messages this user might naturally send next.\n### Output:\n"
                  'JSON format: { "follow_ups": ["Suggested next message 1"] }\n### Chat History:\n' + HISTORY,
}


def log(message):
    print(message, file=sys.stderr)


def environment(fake, model_server, cache):
    env = {name: value for name, value in os.environ.items()
           if not name.startswith(("METASO_", "ANS_", "OLLAMA_")) and name not in ("NO_COLOR", "FORCE_COLOR")}
    env.update(METASO_BASE=fake.base_url, METASO_API_KEY=fake.key, OLLAMA_URL=model_server.url, ANS_MODEL=MODEL,
               XDG_CACHE_HOME=cache, PYTHONIOENCODING="utf-8", NO_PROXY="127.0.0.1,localhost")
    return env


def as_open_webui_reads(name, content):
    """Open WebUI 读后台任务回答的办法：从第一个 { 到最后一个 } 当作 JSON，取出任务要的键；读不出来是 None。"""
    try:
        value = json.loads(content[content.find("{"):content.rfind("}") + 1]).get(name)
    except (ValueError, AttributeError):
        return None
    if name == "title":
        return value if isinstance(value, str) and value.strip() else None
    return value if isinstance(value, list) and all(isinstance(item, str) for item in value) else None


def ask_answer(client):
    """流式地问 QUESTION，返回用时（秒）和接起来的回答。"""
    started = time.perf_counter()
    pieces = []
    for chunk in client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": QUESTION}],
                                                stream=True):
        if chunk.choices and chunk.choices[0].delta.content:
            pieces.append(chunk.choices[0].delta.content)
    return time.perf_counter() - started, "".join(pieces)


def ask_task(client, name):
    """像 Open WebUI 那样发一个后台任务，返回 (用时, 按 Open WebUI 的办法读出来的值或 None)。"""
    started = time.perf_counter()
    reply = client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": TASKS[name]}],
                                           stream=False, max_completion_tokens=1000)
    return time.perf_counter() - started, as_open_webui_reads(name, reply.choices[0].message.content or "")


def searched(fake, since):
    return any("search" in path for _, path in fake.requests[since:])


def with_tasks(client, fake, pool):
    """问 QUESTION；模拟秘塔收到它的搜索以后（回答正在搜索、读网页），同时发三个后台任务。
    返回回答的用时、回答，和每个任务的 (用时, 读出来的值)。"""
    since = len(fake.requests)
    answer = pool.submit(ask_answer, client)
    limit = time.monotonic() + 30
    while not searched(fake, since) and time.monotonic() < limit and not answer.done():
        time.sleep(0.005)
    tasks = {name: pool.submit(ask_task, client, name) for name in TASKS}
    seconds, text = answer.result()
    return seconds, text, {name: future.result() for name, future in tasks.items()}


def main(argv=None):
    parser = argparse.ArgumentParser(description="回答优先：后台任务和回答一起来时，回答的用时（打印差和比值）。")
    parser.add_argument("--rounds", type=int, default=5, help="两种情况各问几次，取中位数（默认 5）")
    args = parser.parse_args(argv)

    model_server = ScriptedModel()
    model_server.one_at_a_time = MODEL_SECONDS
    alone, together, failures = [], [], []
    task_seconds: dict[str, list[float]] = {name: [] for name in TASKS}
    with tempfile.TemporaryDirectory() as directory, FakeMetaso(NAS_PAGES, delay=METASO_SECONDS) as fake:
        env = environment(fake, model_server, os.path.join(directory, "cache"))
        log("启动服务：python answer_with_sources.py --serve 0 --no-cache …")
        server = Server(env, flags=("--no-cache",))
        try:
            client = new_client(server.base_url)
            ask_answer(client)  # 预热：服务和客户端的连接、第一次导入
            with ThreadPoolExecutor(max_workers=len(TASKS) + 1) as pool:
                for _ in range(args.rounds):
                    seconds, text = ask_answer(client)
                    alone.append(seconds)
                    seconds, other, results = with_tasks(client, fake, pool)
                    together.append(seconds)
                    if other != text:
                        failures.append("有后台任务时的回答和单独问时的不一样")
                    for name, (took, value) in results.items():
                        task_seconds[name].append(took)
                        if value is None:
                            failures.append(f"{name} 的回答 Open WebUI 读不出来")
            client.close()
        finally:
            code = server.close()
    model_server.close()
    tracebacks = sum("Traceback" in line for line in server.lines)

    single, both = statistics.median(alone), statistics.median(together)
    print(f"模型替身：一次只回答一个请求，每个 {MODEL_SECONDS:g} 秒；模拟秘塔每个请求 {METASO_SECONDS:g} 秒；"
          f"问题“{QUESTION}”（流式），{args.rounds} 次的中位数；服务退出码 {code}")
    print("   情况                                   回答用时(秒)   最慢(秒)")
    print(f"   单独问                                 {single:10.2f}   {max(alone):8.2f}")
    print(f"   读网页时同时来了起标题、打标签、猜后续 {both:10.2f}   {max(together):8.2f}")
    print(f"   差 {both - single:+.2f} 秒（目标 ≤ +{TARGET_SECONDS:g}），比值 {both / single:.2f}")
    print("   后台任务从发出到收到回答（中位数）：" + "，".join(
        f"{name} {statistics.median(values):.2f} 秒" for name, values in task_seconds.items()))
    print(f"   Open WebUI 读不出来的后台任务回答 {sum('读不出来' in text for text in failures)} 个，"
          f"服务的报错堆栈 {tracebacks} 个")
    for text in sorted(set(failures))[:5]:
        print(f"   ✗ {text}")
    return 1 if failures or tracebacks or both - single > TARGET_SECONDS else 0


if __name__ == "__main__":
    sys.exit(main())
