"""按脚本回答的 OpenAI 兼容模型服务（测试用）：模型名 → 写好的回答或故障。

一个 xdist 进程里的测试共用一个服务（conftest.py 的 model_server 夹具），每个测试开始前 reset() 回到刚建好的样子；
服务被测试关掉了（die_after）、或者还有请求没回答完（挂着的回答），夹具就换一个新的。只监听 127.0.0.1 的随机空闲端口。
"""
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.support import (
    GOOD_ANSWER,
    INVENTED,
    RIGHT_NUMBER,
    THINKING_ANSWER,
    UNCITED_ANSWER,
    WITH_INVENTION,
    WRONG_NUMBER,
    WRONG_SOURCE_ANSWER,
)

# 模型名 → 脚本。未列出的模型名按 Ollama 的方式返回 404
SCRIPTS = {
    "good": {"content": GOOD_ANSWER},
    "wrong-source": {"content": WRONG_SOURCE_ANSWER},
    "uncited": {"content": UNCITED_ANSWER},
    "thinker": {"content": THINKING_ANSWER, "reasoning": "先想一想资料 [7] 说了什么"},
    "empty": {"content": "<think>只想不说</think>"},
    "cut-short": {"content": GOOD_ANSWER, "finish_reason": "length"},
    # model_server.loaded 用的那个模型（像 llama.cpp 加载的模型文件）
    "llama-real": {"content": GOOD_ANSWER},
    # 照着网页里的“指令”回答的模型
    "obedient": {"content": "NAS 不需要任何备份，RAID 就够了。"},
    # --fix：第一次回答，之后每次按顺序给出改写（用完就重复最后一个）
    "fix-deletes": {"contents": [WITH_INVENTION, "<think>删掉编造的那句</think>" + GOOD_ANSWER]},
    # --fix：把编造的那句藏进标题、藏进没有结束的代码块（这样“改写”不能算修好）
    "fix-hides-in-heading": {"contents": [WITH_INVENTION, GOOD_ANSWER + "\n\n## " + INVENTED]},
    "fix-hides-in-code": {"contents": [WITH_INVENTION, GOOD_ANSWER + "\n\n```\n" + INVENTED]},
    "fix-rewrites": {"contents": [WRONG_NUMBER, RIGHT_NUMBER]},
    "fix-drops-good": {"contents": [WITH_INVENTION, "远程访问优先使用 VPN 或 Tailscale，不要把管理界面直接暴露到公网 [3]。"]},
    "fix-no-better": {"contents": [WITH_INVENTION, INVENTED]},
    "fix-then-error": {"content": WITH_INVENTION, "fail_after": 1},
    # --judge 的评判模型
    "judge-yes": {"content": "是。"},
    "judge-no": {"content": "否"},
    "judge-english": {"content": "**No**, the source does not say this."},
    "judge-think": {"content": "<think>资料里说的是 RAID1……</think>\n\n否。"},
    "judge-ramble": {"content": "这个问题很有意思，需要从多个角度来看。"},
    "judge-hang": {"content": "是", "sleep": 30},
    # Bespoke-MiniCheck：只有一条用户消息“Document: …\nClaim: …”、没有系统说明时才答 Yes，否则答非所问
    "bespoke-minicheck": {"minicheck": True},
    "bespoke-minicheck:7b": {"minicheck": True},
    # 故障
    "server-error-json": {"status": 500, "error": {"error": {"message": "CUDA out of memory", "type": "server_error"}}},
    "server-error-text": {"status": 500, "error": "Internal Server Error"},
    "bad-request": {"status": 400, "error": {"error": {"message": "max_tokens is too large", "type": "invalid_request_error"}}},
    "overloaded": {"status": 503, "error": {"error": "server busy"}},
    "invalid-json": {"raw": "<html>502 Bad Gateway</html>"},
    "cut-stream": {"content": GOOD_ANSWER, "cut_after": 6},
    "flaky": {"content": GOOD_ANSWER, "fail_first": 1},
    "slow-stream": {"content": GOOD_ANSWER, "delay": 0.3},
    # 回答末尾是一串空白（空格、换行、制表符、全角空格）：流式按 7 个字一段切开，空白自己占一两段
    "trailing-space": {"content": GOOD_ANSWER + " \n \t\n  \u3000\n"},
    "echo-prompt": {"echo": True},
    # 把请求头里的密钥回显进回答（流式时按 7 个字一段切开：密钥跨好几段）
    "echo-auth": {"echo_auth": True},
    # 同样回显，只是密钥的每两个字之间夹着 model_server.echo_separator（零宽空格、软连字符……：看起来还是那个密钥）
    "echo-auth-hidden": {"echo_auth": True, "hidden": True},
    # 同样回显，只是请求头先经 model_server.echo_disguise 改写（写成实体、夹着标签、全角字母：渲染出来还是那个密钥）
    "echo-auth-disguised": {"echo_auth": True, "disguised": True},
    # 流式回答说了两段之后在流里报错，错误的说明里回显请求头（带着密钥）
    "error-echoes-auth": {"content": GOOD_ANSWER, "error_after": 2},
    # 还没回答就报错（500），错误的说明里回显请求头，密钥的每两个字之间夹着 model_server.echo_separator
    "fail-echoes-auth": {"status_echo": 500},
    # 各种不守规矩的 OpenAI 兼容服务
    "parts": {"content": GOOD_ANSWER, "as_parts": True},                 # content 是“内容片段”列表
    "content-number": {"content": GOOD_ANSWER, "content_value": 42},     # content 是个数字
    "content-object": {"content": GOOD_ANSWER, "content_value": {"text": "?"}},
    "usage-strings": {"content": GOOD_ANSWER, "usage": {"completion_tokens": "50", "prompt_tokens": "x"}},
    "choices-object": {"content": GOOD_ANSWER, "choices_value": {"0": "?"}},
    "truncated": {"content": GOOD_ANSWER, "truncate": True},             # 声明的长度比实际发的长，然后断开
    "slow-answer": {"content": GOOD_ANSWER, "sleep": 5},
    "fuzz": {"content": "", "fuzz": True},                               # 回复由测试放进 model_server.fuzz_reply
    # 聊天程序（Open WebUI）的后台任务按模板要的 JSON 回答（起标题、打标签、猜后续问题），别的问题照常回答
    "answers-and-tasks": {"content": GOOD_ANSWER, "tasks": True},
    "terminal-tricks": {"content": "\x1b[31m家用 NAS 至少选两盘位\x1b[0m，方便做 RAID1 镜像 [1]。\r\x1b]8;;http://evil.example/\x07"
                                   "点我\x1b]8;;\x07\u202e需要转码 4K 视频时选带核显的 Intel 型号 [1]。"},
}


# answers-and-tasks 对后台任务的回答：模板要的 JSON 键 → 回答（Open WebUI 从第一个 { 到最后一个 } 取出 JSON）
TASK_REPLIES = {
    "follow_ups": '{ "follow_ups": ["RAID5 至少要几块盘？", "NAS 放在哪里散热好？"] }',
    "tags": '{ "tags": ["科技", "数据存储"] }',
    "title": '{ "title": "家用 NAS 选购" }',
}


def task_reply(prompt):
    """answers-and-tasks 的回答：以 “### Task:” 开头的是后台任务，按模板要的 JSON 键回答；不是后台任务是 None。"""
    if not prompt.lstrip().startswith("### Task:"):
        return None
    for key, reply in TASK_REPLIES.items():
        if f'"{key}"' in prompt:
            return reply
    return "{}"


def content_of(script, text):
    """回答里 content 字段的样子：平常是文字；as_parts 时是内容片段列表；content_value 时是别的值。"""
    if script.get("as_parts"):
        return [{"type": "text", "text": text}, {"type": "image_url", "image_url": {"url": "x"}}]
    return script.get("content_value", text)


def chunks(text, size=7):
    return [text[i:i + size] for i in range(0, len(text), size)] or [""]


class Hold:
    """模型服务的闸门：对话请求到了就停在这里（arrived 设上），测试 release() 了才回答——不用很慢的模型（睡几秒）
    也能在“模型正在回答”的时候做点什么。最多停 HOLD_SECONDS 秒：测试忘了放行也不会一直挂着。"""

    def __init__(self) -> None:
        self.arrived = threading.Event()
        self.released = threading.Event()
        self.count = 0  # 到了闸门的对话请求
        self.counted = threading.Condition()

    def wait(self) -> None:
        with self.counted:
            self.count += 1
            self.counted.notify_all()
        self.arrived.set()
        self.released.wait(HOLD_SECONDS)

    def arrivals(self, count: int, seconds: float = 10) -> bool:
        """最多等 seconds 秒，等到一共有 count 个对话请求到了闸门。"""
        with self.counted:
            return self.counted.wait_for(lambda: self.count >= count, seconds)

    def release(self) -> None:
        self.released.set()


HOLD_SECONDS = 30

# 关闭时 serve_forever 最多再等一个轮询间隔才停下（die_after 的测试、换新服务时要等它）
POLL_SECONDS = 0.01


def unchanged(header):
    return header


class ScriptedModel:
    """按模型名返回预先写好的回答的 OpenAI 兼容服务，流式和非流式都支持。"""

    def __init__(self):
        self.lock = threading.Lock()
        self.idle = threading.Condition(self.lock)  # 回答完一个请求时通知（wait_until_reusable 等它）
        self.busy = 0  # 正在回答的请求数：不为 0 时 reusable() 是假（上一个测试留下了挂着的回答）
        self.closed = False
        self.serial = threading.Lock()  # one_at_a_time 时，同一时刻只回答一个对话请求
        self.reset()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, args=(POLL_SECONDS,), daemon=True).start()

    def reset(self):
        """回到刚建好时的样子（同一个进程里的测试共用一个服务，每个测试开始前调用）。

        测试能改的状态只在这里设初值（__init__ 也调用它）：新加一个状态写在这里，就不会漏掉。"""
        self.requests = []
        self.counts = {}
        self.models_reply = None  # (状态, 文字, 类型)：让 /v1/models 回答别的东西
        self.models_delay = 0.0  # /v1/models 先等这么多秒再回答
        self.fuzz_reply = ("{}", "application/json")  # 模型名 fuzz 的回复：(原样的文字, 类型)
        # 要密钥的服务：required_key 非空时，没带或带错密钥的请求得到 401（样子按 flavor：各家服务的错误体不同）
        self.required_key = ""
        self.flavor = "openai"
        self.authorizations = []  # 每个请求带的 Authorization 头
        self.models_listed = None  # 非 None 时 /v1/models 只列出这些名字（像 vLLM、LM Studio、云端服务那样）
        # 像 llama.cpp 那样只加载了一个模型：不管请求哪个名字，都由脚本 loaded 回答，回答里的 model 是它的名字
        self.loaded = None
        self.served_as: object = None  # 非 None 时回答里的 model 字段写这个（任意值：测试对方乱报的名字）
        # 回答完第 die_after 个对话请求就关掉（之后连不上），像半路退出的模型服务
        self.die_after = None
        # 接口前缀：模型列表在 前缀/models、对话在 前缀/chat/completions（像网关、云端服务那样放在某个路径下面）
        self.prefix = "/v1"
        self.probes = []  # 每个 GET 请求的路径
        self.echo_separator = "\u200b"  # echo-auth-hidden 夹在密钥每两个字之间的字符
        self.echo_disguise = unchanged  # echo-auth-disguised 把请求头改写成什么样子
        # 非 None 时（一个 Hold）：对话请求记下之后先停在这里，测试放行了才回答（“模型正在回答”的时候做点什么）
        self.hold: Hold | None = None
        # 非 None 时：像只有一个推理槽的本地模型（llama.cpp、Ollama 默认）那样，对话请求一个一个地回答，
        # 每个都用这么多秒（基准用：后台任务和回答抢同一个模型）
        self.one_at_a_time: float | None = None

    def reusable(self):
        """能不能交给下一个测试：没被关掉（die_after、测试自己 close），也没有还在回答的请求。"""
        with self.lock:
            return not self.closed and self.busy == 0

    def wait_until_reusable(self, seconds):
        """最多等 seconds 秒，等还在回答的请求答完；返回 reusable()。"""
        with self.idle:
            self.idle.wait_for(lambda: self.closed or self.busy == 0, seconds)
            return not self.closed and self.busy == 0

    @contextmanager
    def answering(self) -> Iterator[None]:
        with self.lock:
            self.busy += 1
        try:
            yield
        finally:
            with self.lock:
                self.busy -= 1
                self.idle.notify_all()

    @property
    def url(self):
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def close(self):
        with self.lock:
            if self.closed:
                return
            self.closed = True
        self.server.shutdown()
        self.server.server_close()

    def _handler_class(self):
        model_server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def handle(self):
                try:
                    super().handle()
                except (BrokenPipeError, ConnectionResetError):
                    pass  # 客户端不等了（超时、Ctrl-C、走掉的流）：回答没人要，不是服务的错，不打报错堆栈

            def send_text(self, status, text, content_type):
                data = text.encode()
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def send_body(self, status, payload):
                self.send_text(status, json.dumps(payload, ensure_ascii=False), "application/json")

            def refused(self):
                """要密钥而没给对：按 flavor 回答 401，和对应的真服务一样。"""
                model_server.authorizations.append(self.headers.get("Authorization") or "")
                if not model_server.required_key or \
                        self.headers.get("Authorization") == f"Bearer {model_server.required_key}":
                    return False
                bodies = {  # 各家服务 401 的样子
                    "openai": {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error",
                                         "code": "invalid_api_key"}},
                    "llamacpp": {"error": {"message": "Invalid API Key", "type": "authentication_error", "code": 401}},
                    "vllm": {"error": "Unauthorized"},
                }
                self.send_body(401, bodies[model_server.flavor])
                return True

            def do_GET(self):
                with model_server.answering():
                    self.answer_get()

            def do_POST(self):
                with model_server.answering():
                    if model_server.one_at_a_time is None:
                        self.answer_post()
                        return
                    with model_server.serial:  # 一次只回答一个，每个用固定的时间
                        time.sleep(model_server.one_at_a_time)
                        self.answer_post()

            def answer_get(self):
                model_server.probes.append(self.path)
                models = model_server.prefix + "/models"
                if self.path in (models, "/api/version") and self.refused():
                    return
                # 和 Ollama、llama.cpp 一样列出模型（quickstart.py 用它判断服务在不在）
                if self.path == models and model_server.loaded is not None:
                    self.send_body(200, {"object": "list", "models": [{"name": model_server.loaded}], "data": [
                        {"id": model_server.loaded, "object": "model", "owned_by": "llamacpp"}]})
                elif self.path == models and model_server.models_listed is not None:
                    self.send_body(200, {"object": "list", "data": [
                        {"id": name, "object": "model", "owned_by": "vllm"} for name in model_server.models_listed]})
                elif self.path == models:
                    time.sleep(model_server.models_delay)
                    if model_server.models_reply is not None:
                        self.send_text(*model_server.models_reply)
                        return
                    self.send_body(200, {"object": "list", "data": [
                        {"id": name, "object": "model", "owned_by": "scripted"} for name in SCRIPTS]})
                elif self.path == "/api/version" and model_server.models_listed is None:  # 像 Ollama 一样表明身份
                    self.send_body(200, {"version": "0.0.0-scripted"})
                else:
                    self.send_body(404, {"error": "404 page not found"})

            def reported(self):
                """回答里的 model 字段：通常是回答的那个模型，served_as 可以换成任何值。"""
                return model_server.served_as if model_server.served_as is not None else self.served

            def answer_post(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if self.refused():
                    return
                model_server.requests.append({"path": self.path, "body": body})
                if model_server.hold is not None:
                    model_server.hold.wait()
                self.served = model_server.loaded or body.get("model")  # 回答里的 model：哪个模型回答的
                script = SCRIPTS.get(self.served)
                count = model_server.counts[self.served] = model_server.counts.get(self.served, 0) + 1
                if model_server.die_after is not None and len(model_server.requests) >= model_server.die_after:
                    model_server.close()  # 先停止接受新连接，再回答这一个：之后的请求一定连不上
                if script and script.get("echo_auth"):
                    header = self.headers.get("Authorization") or ""
                    if script.get("hidden"):
                        header = model_server.echo_separator.join(header)
                    if script.get("disguised"):
                        header = model_server.echo_disguise(header)
                    script = {"content": "家用 NAS 至少选两盘位，方便做 RAID1 镜像 [1]。回显 "
                                         f"{header} 这里 [1]。"}
                if script and script.get("echo"):
                    script = {"content": body["messages"][-1]["content"]}
                if script and script.get("tasks"):
                    prompt = str(body["messages"][-1].get("content") or "")
                    script = {"content": task_reply(prompt) or script["content"]}
                if script and script.get("status_echo"):
                    header = model_server.echo_separator.join(self.headers.get("Authorization") or "")
                    script = {"status": script["status_echo"],
                              "error": {"error": {"message": f"上游出错，收到的请求头：{header}"}}}
                if script and script.get("minicheck"):
                    messages = body["messages"]
                    trained_form = (len(messages) == 1 and messages[0]["role"] == "user"
                                    and messages[0]["content"].startswith("Document: ")
                                    and "\nClaim: " in messages[0]["content"])
                    script = {"content": "Yes" if trained_form else "I am not sure what you are asking."}
                if script and "contents" in script:
                    script = {"content": script["contents"][min(count, len(script["contents"])) - 1]}
                if self.path != model_server.prefix + "/chat/completions":
                    self.send_body(404, {"error": "404 page not found"})
                elif script and "status" in script:
                    error = script["error"]
                    if isinstance(error, str):
                        self.send_text(script["status"], error, "text/plain")
                    else:
                        self.send_body(script["status"], error)
                elif script and count <= script.get("fail_first", 0):
                    self.send_body(503, {"error": {"message": "loading model"}})
                elif script and count > script.get("fail_after", count):
                    self.send_body(400, {"error": {"message": "context window exceeded"}})
                elif script and "raw" in script:
                    self.send_text(200, script["raw"], "text/html")
                elif script and script.get("fuzz"):
                    self.send_text(200, *model_server.fuzz_reply)
                elif script and script.get("truncate"):
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", "5000")
                    self.end_headers()
                    self.wfile.write(b'{"choices": [{"message": {"content": "')
                    self.wfile.flush()
                    self.close_connection = True
                elif script is None:
                    message = f'model "{body.get("model")}" not found, try pulling it first'
                    self.send_body(404, {"error": {"message": message, "type": "api_error",
                                                   "param": None, "code": None}})
                elif body.get("stream"):
                    self.stream(script)
                else:
                    time.sleep(script.get("sleep", 0))
                    message = {"role": "assistant", "content": content_of(script, script["content"])}
                    if "reasoning" in script:
                        message["reasoning_content"] = script["reasoning"]
                    choices = [{"index": 0, "message": message, "finish_reason": script.get("finish_reason", "stop")}]
                    self.send_body(200, {"id": "x", "object": "chat.completion", "model": self.reported(),
                                         "choices": script.get("choices_value", choices),
                                         "usage": script.get("usage", {"prompt_tokens": 100, "completion_tokens": 50,
                                                                       "total_tokens": 150})})

            def stream(self, script):
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                events = []
                if "reasoning" in script:
                    events += [{"reasoning_content": piece} for piece in chunks(script["reasoning"])]
                events += [{"content": content_of(script, piece)} for piece in chunks(script["content"])]
                for number, delta in enumerate(events):
                    if number == script.get("cut_after"):
                        return  # 连接在回答中途断开：没有 finish_reason，也没有 [DONE]
                    if number == script.get("error_after"):
                        header = self.headers.get("Authorization") or ""
                        self.event({"error": {"message": f"上游出错，收到的请求头：Authorization: {header}",
                                              "type": "server_error"}})
                        return
                    self.event({"choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
                    time.sleep(script.get("delay", 0))
                self.event({"choices": [{"index": 0, "delta": {},
                                         "finish_reason": script.get("finish_reason", "stop")}],
                            **({"usage": script["usage"]} if "usage" in script else {})})
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()

            def event(self, payload):
                payload = {"model": self.reported(), **payload}
                self.wfile.write(b"data: " + json.dumps(payload, ensure_ascii=False).encode() + b"\n\n")
                self.wfile.flush()

        return Handler
