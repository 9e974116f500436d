"""起 --serve 的真进程（测试 OpenAI 兼容的服务用）：等它在标准错误上说出地址，读出端口；标准错误由一个线程
一行一行收着（访问日志、说明），测试随时能看。只听 127.0.0.1。--serve 的应用、--mcp 的整个服务也能放在测试进程里
（InProcess、McpInProcess）。"""
import json
import os
import platform
import re
import subprocess
import threading
import time
import unicodedata
from pathlib import Path

from fake_metaso import FakeMetaso
from tests.scripted_model import ScriptedModel
from tests.support import CANARY_KEY, cli_command, cli_env

# 官方的 openai 客户端第一次发请求时问 platform.platform()，它在 Linux 上起一个 uname -p 的子进程（结果会留着）：
# 导入时先问一次，快的测试里用官方客户端就不起进程
platform.platform()

# 本程序认得的每一种密钥都放一个“金丝雀”：任何回应、任何一行标准错误里都不该出现它们
MODEL_KEY = "sk-MODEL-CANARY-0123456789"
SERVER_KEY = "sv-SERVER-CANARY-0123456789abcdef"
KEYS = (CANARY_KEY, MODEL_KEY, SERVER_KEY)
LISTENING = re.compile(r"OpenAI 兼容的服务在 http://127\.0\.0\.1:(\d+)/v1")
START_SECONDS = 30


class Backends:
    """一个服务进程自己的模拟秘塔和脚本模型服务（不和别的测试共用：测试可以关掉它们、让它们出错）。"""

    def __init__(self) -> None:
        self.metaso = FakeMetaso(key=CANARY_KEY).start()
        self.model = ScriptedModel()

    def reset(self) -> None:
        self.metaso.reset()
        self.model.reset()

    def env(self, cache: Path, **extra: str) -> dict[str, str]:
        env = cli_env(self.metaso, self.model, **{"ANS_MODEL": "good", "ANS_API_KEY": MODEL_KEY, **extra})
        env["XDG_CACHE_HOME"] = str(cache)
        return env

    def close(self) -> None:
        self.metaso.close()
        self.model.close()


class LineLog:
    """服务写在标准错误上的一行一行（访问日志、说明）：真进程由读它标准错误的线程 add，本进程里的应用直接 add。
    mark、since、access_lines 在两种服务上一样用。"""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.changed = threading.Condition()

    def add(self, line: str) -> None:
        with self.changed:
            self.lines.append(line)
            self.changed.notify_all()

    @property
    def stderr(self) -> str:
        with self.changed:
            return "\n".join(self.lines)

    def mark(self) -> int:
        """现在有几行（之后 since(mark) 取出新写的行）。"""
        with self.changed:
            return len(self.lines)

    def since(self, mark: int) -> list[str]:
        with self.changed:
            return self.lines[mark:]

    def access_lines(self, mark: int, count: int, seconds: float = 5) -> list[str]:
        """等第 mark 行之后出现 count 行访问日志（访问日志在回应发完后才写）。"""
        def found() -> list[str]:
            return [line for line in self.lines[mark:] if ACCESS.fullmatch(line)]
        with self.changed:
            self.changed.wait_for(lambda: len(found()) >= count, seconds)
            return found()


class ServerProcess(LineLog):
    """python answer_with_sources.py --serve 127.0.0.1:0 …（或别的参数）的真进程。"""

    def __init__(self, env: dict[str, str], *flags: str, serve: str = "127.0.0.1:0") -> None:
        super().__init__()
        self.process = subprocess.Popen(cli_command("--serve", serve, *flags), env=env, stdin=subprocess.DEVNULL,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, encoding="utf-8")
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        first = self.wait_for_line(lambda line: True, START_SECONDS)
        found = LISTENING.search(first or "")
        if not found:
            self.stop()
            raise AssertionError(f"服务没有起来：{self.stderr!r}")
        self.port = int(found.group(1))
        self.origin = f"http://127.0.0.1:{self.port}"
        self.base = self.origin + "/v1"

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.add(line.rstrip("\n"))
        with self.changed:
            self.changed.notify_all()

    def wait_for_line(self, wanted, seconds: float = 10, start: int = 0) -> str | None:
        """等到标准错误上有一行（从第 start 行起）满足 wanted；进程结束或超时返回 None。"""
        limit = time.monotonic() + seconds
        with self.changed:
            while True:
                for line in self.lines[start:]:
                    if wanted(line):
                        return line
                left = limit - time.monotonic()
                if left <= 0 or (not self.reader.is_alive() and self.process.poll() is not None):
                    return None
                self.changed.wait(min(left, 0.1))

    def stop(self, seconds: float = 15) -> int:
        if self.process.poll() is None:
            self.process.terminate()
        try:
            self.process.wait(seconds)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)
        self.reader.join(5)
        return self.process.returncode


# 一行访问日志：方法 路径 状态码 毫秒
# 方法、路径、状态码、毫秒，和接口写下的一句（回答问题时是“搜索：……”）
ACCESS = re.compile(r"(GET|POST|PUT|DELETE|HEAD|OPTIONS|PATCH) (\S+) (\d{3}|-) (\d+) ms(?: (\S.*))?")


def shows(text: str, *keys: str) -> bool:
    """看这段文字的人认得出其中某个密钥吗：去掉看不见的字符（控制、格式、组合附加符号）以后还找得到它就算。
    （参照的做法，和程序遮密钥的实现无关。）"""
    visible = "".join(char for char in text if unicodedata.category(char) not in ("Cc", "Cf", "Mn", "Me", "Zl", "Zp"))
    return any(key in visible for key in keys)


def the_only_line(stderr: str) -> str:
    """在测试进程里运行的命令行（run_cli），错误由 main 唯一的那一处（errors.exit_code_of）说出来：标准错误上只有
    一行“✗ 说明”。那里没有报错堆栈可看——没接住的错误在测试进程里是抛出的异常，不是一段文字。"""
    lines = stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("✗ "), stderr
    return lines[0]


def run_with_debug(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """真的进程，加 --debug：没接住的错误这时打出 Python 的报错堆栈（退出码 4），所以“没有 Traceback”是能失败的检查。"""
    return subprocess.run(cli_command(*args, "--debug"), env=env, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, encoding="utf-8", timeout=60)


class InProcess(LineLog):
    """--serve 的整个应用（门加接口）在测试进程里，经 Starlette 的测试客户端请求：协议、错误、流式、门的规矩都这样测，
    不起进程、不开端口。主机名是 127.0.0.1（服务在听的地址；别的主机名门会拒绝）。log 收着访问日志和说明（就是服务
    进程写在标准错误上的那些行，LineLog），mark、since、access_lines 和 ServerProcess 的一样用。

    测试客户端整个用一个事件循环（进了它的 with）：几个线程同时发的请求在同一个循环里并发，和 uvicorn 一样。"""

    def __init__(self, env: dict[str, str], *flags: str) -> None:
        from starlette.testclient import TestClient

        from sourced_answers.api.config import build_settings
        from sourced_answers.cli.parser import build_parser
        from sourced_answers.servers.openai_server import asgi_app
        settings = build_settings(build_parser("answer-with-sources").parse_args(["--serve", "127.0.0.1:0", *flags]),
                                  env, [])
        super().__init__()
        self.app, self.closing = asgi_app(settings, self.add)
        self.origin = "http://127.0.0.1"
        self.base = self.origin + "/v1"
        self.client = TestClient(self.app, base_url=self.origin, raise_server_exceptions=False)
        self.client.__enter__()

    @property
    def service(self):
        """接口背后的 openai_app.Service（Starlette 应用的 state 里放着它）。"""
        return self.app.app.state.service

    def tasks_waiting(self, count: int, seconds: float = 10) -> bool:
        """最多等 seconds 秒，等到正好有 count 个后台任务在服务里等着问模型（回答优先，servers/background.py；
        在应用的事件循环里等它的 changed 事件）。"""
        import asyncio
        first = self.service.answers_first

        async def counted() -> bool:
            try:
                async with asyncio.timeout(seconds):
                    while first.waiting != count:
                        await first.changed.wait()
            except TimeoutError:
                pass
            return first.waiting == count

        assert self.client.portal is not None
        return self.client.portal.call(counted)

    def post(self, path: str, body: object = None, **options: object):
        return self.client.post("/v1" + path, json=body, **options)

    def openai_client(self, key: str = "no-key-needed"):
        """官方的 openai 客户端，请求经测试客户端交给这个应用（不走网络）。"""
        import openai
        return openai.OpenAI(base_url=self.base, api_key=key, max_retries=0, timeout=60, http_client=self.client)

    def asked_then_left(self, path: str, body: object) -> "Leaving":
        """发一个请求，客户端什么时候走由测试决定（见 Leaving）。"""
        return Leaving(self, path, body)

    def close(self) -> None:
        self.client.__exit__(None, None, None)
        self.closing()


class Leaving:
    """直接交给应用的一个请求（测试客户端做不到半路走掉）：请求体一次给完；门读完请求体、把请求交给应用之后，
    开始看客户端走没走（再要下一条消息）：那时 watched 设上，请求已经在应用里（在做，或者在排队）。leave() 之后
    门看到的是客户端断开了，和真的连接断了时 uvicorn 给的一样。done 是应用处理完这个请求的 Future。"""

    def __init__(self, app: InProcess, path: str, body: object) -> None:
        import anyio
        self.portal = app.client.portal
        assert self.portal is not None
        self.watched = threading.Event()
        self.left = self.portal.call(anyio.Event)
        self.messages: list[dict] = []
        data = json.dumps(body).encode()
        scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
                 "scheme": "http", "path": path, "raw_path": path.encode(), "root_path": "", "query_string": b"",
                 "headers": [(b"host", b"127.0.0.1"), (b"content-type", b"application/json"),
                             (b"content-length", str(len(data)).encode())],
                 "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 80)}
        given = [False]

        async def receive() -> dict:
            if not given[0]:
                given[0] = True
                return {"type": "http.request", "body": data, "more_body": False}
            self.watched.set()
            await self.left.wait()
            return {"type": "http.disconnect"}

        async def send(message: dict) -> None:
            self.messages.append(message)

        self.done = self.portal.start_task_soon(app.app, scope, receive, send)

    def leave(self) -> None:
        self.portal.call(self.left.set)


class McpInProcess(LineLog):
    """--mcp 的整个服务（mcp_server.build_server 建的服务，mcp_stdio.serve_wire 读写）在测试进程的一个线程里，
    经两根管道说字节，和真进程的标准输入输出一样：send(消息)、reply()（下一行回应）、stop_reading()（客户端关掉
    读回应的那一端）、close()（关掉标准输入，等服务结束）。服务写在标准错误上的行收在 LineLog 里。
    max_line 给一个小的上限，测太长的行不用真的发 16 MB。"""

    def __init__(self, env: dict[str, str], *flags: str, max_line: int | None = None,
                 handshake: bool = True) -> None:
        import anyio

        from sourced_answers.api.config import build_settings
        from sourced_answers.cli.parser import build_parser
        from sourced_answers.servers.mcp_server import build_server
        from sourced_answers.servers.mcp_stdio import MAX_LINE, serve_wire
        super().__init__()
        settings = build_settings(build_parser("answer-with-sources").parse_args(["--mcp", *flags]), env, [])
        server = build_server(settings)._lowlevel_server
        server_in, self.stdin = os.pipe()
        self.stdout, server_out = os.pipe()
        self.wires = (os.fdopen(server_in, "rb"), os.fdopen(server_out, "wb"))
        self.received = b""
        self.ended = threading.Event()
        self.failure: BaseException | None = None

        def serve() -> None:
            try:
                anyio.run(serve_wire, server, *self.wires, self.add, settings.run.secrets, max_line or MAX_LINE)
            except BaseException as error:  # noqa: BLE001  close() 再抛给测试
                self.failure = error
            finally:
                self.ended.set()

        threading.Thread(target=serve, name="mcp-in-process", daemon=True).start()
        if handshake:
            self.send({"jsonrpc": "2.0", "id": "握手", "method": "initialize",
                       "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                  "clientInfo": {"name": "测试", "version": "1"}}})
            assert self.reply()["result"]["serverInfo"]["name"] == "answer-with-sources"
            self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: object) -> None:
        """一个消息（dict 编成一行 JSON，bytes 原样）加换行。"""
        line = message if isinstance(message, bytes) else json.dumps(message, ensure_ascii=False).encode()
        os.write(self.stdin, line + b"\n")

    def send_large(self, line: bytes) -> None:
        """很长的一行：服务一边读，这里一边写（管道只放得下 64 KB）。"""
        view = memoryview(line + b"\n")
        while view:
            view = view[os.write(self.stdin, view[:1 << 20]):]

    def call(self, request_id: object, tool: str, arguments: dict) -> None:
        self.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                   "params": {"name": tool, "arguments": arguments}})

    def reply(self, seconds: float = 10) -> dict:
        """下一行回应（最多等 seconds 秒：这是出错时的时限，不是在量快慢）。"""
        import select
        limit = time.monotonic() + seconds
        while b"\n" not in self.received:
            left = limit - time.monotonic()
            assert left > 0 and select.select([self.stdout], [], [], left)[0], f"{seconds} 秒之内没有回应"
            chunk = os.read(self.stdout, 1 << 16)
            assert chunk, "服务关掉了标准输出"
            self.received += chunk
        line, self.received = self.received.split(b"\n", 1)
        return json.loads(line)

    def ping(self, request_id: str) -> None:
        """发一个 ping，下一行回应就是它的：在它之前收到的消息，服务都已经处理过了（回应按顺序写）。"""
        self.send({"jsonrpc": "2.0", "id": request_id, "method": "ping"})
        assert self.reply() == {"jsonrpc": "2.0", "id": request_id, "result": {}}

    def noted(self, start: str, seconds: float = 10) -> bool:
        """等到标准错误上有一行以 start 开头（最多 seconds 秒：出错时的时限）。"""
        with self.changed:
            return self.changed.wait_for(lambda: any(line.startswith(start) for line in self.lines), seconds)

    def stop_reading(self) -> None:
        """客户端不再读回应：关掉标准输出读的那一端。"""
        os.close(self.stdout)
        self.stdout = -1

    def close(self, seconds: float = 10) -> None:
        """关掉标准输入（客户端走了），等服务结束，关掉管道；服务里出的错在这里抛出。"""
        if self.stdin >= 0:
            os.close(self.stdin)
            self.stdin = -1
        assert self.ended.wait(seconds), "关掉标准输入之后服务没有结束"
        if self.stdout >= 0:
            self.stop_reading()
        for wire in self.wires:
            try:
                wire.close()
            except BrokenPipeError:  # 回应写到一半时客户端不读了：剩在缓冲里的那些本来就送不到
                pass
        if self.failure is not None:
            raise self.failure


def join_paid_work(seconds: float = 30) -> None:
    """等回答问题的守护线程（servers.background 用函数名给线程命名：answer）都做完：之后数秘塔、模型收到的请求，
    就是这次调用付过的全部。"""
    for thread in threading.enumerate():
        if thread.name == "answer":
            thread.join(seconds)
            assert not thread.is_alive(), "回答问题的线程没有做完"
