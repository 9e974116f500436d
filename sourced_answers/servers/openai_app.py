"""OpenAI 兼容的 HTTP 服务（Starlette 应用）：聊天窗口（Open WebUI、Chatbox、Cherry Studio……）像问 OpenAI 一样问它，
拿到的是核对过的回答。

  POST /v1/chat/completions   最后一条 user 消息就是问题：搜索、读取、回答、核对（和命令行同一段代码）。
      choices[0].message.content 是终端上看到的回答、编号的来源和结论；顶层另有 citations（来源的链接，按编号）、
      search_results（标题、链接、日期）和 verification（--json 的 passed、problems、claims、unused）。
      stream: true 时是 OpenAI 格式的 SSE：边生成边发回答，再发来源和结论，最后一块带着 citations、
      search_results、verification，然后是 data: [DONE]。
  GET  /v1/models             模型服务里有的模型（请求里的 model 就是从这里挑一个），和不请模型写的 excerpts（摘录）。
  POST /v1/verify             一个保存下来的回答（--verify 读的格式），回 --verify --json 的那条记录。

出错时回 OpenAI 的错误对象 {"error": {"message", "type", "code"}}：400 请求不对，401 服务的密钥不对，404 没有这个地址，
413 请求太大，502 秘塔或模型服务出错，503 忙（同时在回答的和排队的都满了）或者模型服务连不上，504 超过了时限。
说明是中文的；从不带报错堆栈，也从不带密钥（回答、说明、流式的每一块都先遮掉环境里的每一个密钥）。
"""
import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import replace
from typing import Any, TypeVar

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from sourced_answers.api.answering import Answered, answer, answer_task
from sourced_answers.api.verifying import verify_answer
from sourced_answers.checker import strip_terminal, strip_think
from sourced_answers.core.conversation import is_background_task, recent, standalone_query, task_title, title_json
from sourced_answers.core.errors import AppError
from sourced_answers.core.masking import mask, searchable
from sourced_answers.core.options import Option
from sourced_answers.core.questions import clean_question, tidy
from sourced_answers.core.safe_output import SafeWriter
from sourced_answers.core.settings import EXCERPTS, SERVE_OPTIONS, ServeSettings, Settings, field_name, with_request
from sourced_answers.core.strings import json_value
from sourced_answers.model.preflight import probe_models
from sourced_answers.outputs.chat import ChatReply, chat_reply
from sourced_answers.outputs.records import json_problem
from sourced_answers.search.backend import Shared
from sourced_answers.search.gather import prepare
from sourced_answers.servers.background import AnswersFirst, Gate, in_background
from sourced_answers.servers.openai_protocol import (
    RequestProblem,
    conversation_of,
    error_body,
    last_user_message,
    problem_of,
    task_messages,
)
from sourced_answers.servers.replies import DONE, MaskedJSON, event_stream, new_id, sse, whole_reply

Log = Callable[[str], None]
T = TypeVar("T")
OWNER = "answer-with-sources"


class Service:
    """一个服务的设置（启动时建好一次）和处理请求的办法。每个请求用自己的一份设置（问题、模型、时限），互不相干。"""

    def __init__(self, settings: Settings, serve: ServeSettings, log: Log) -> None:
        self.settings = settings
        self.serve = serve
        self.log = log
        self.secrets = settings.run.secrets
        self.gate = Gate(serve.concurrency, serve.queue)
        self.answers_first = AnswersFirst()  # 聊天程序的后台任务等正在做的回答
        # 各个请求共用、开到服务停止的东西（--demo 的演示服务：回答里的来源链接在服务运行时都能打开）
        self.shared = Shared()
        prepare(settings.search, log, self.shared)

    def close(self) -> None:
        self.shared.close()

    # ---------- 请求 → 一次运行的设置 ----------

    def request_settings(self, body: Mapping[str, Any]) -> Settings:
        """请求体 → 这个请求的设置：问题是最后一条 user 消息（追问时搜索的问题接上之前问过的，之前的几轮给回答的
        模型当上下文，见 core.conversation）；请求也能改的设置（model、max_tokens：声明里写了 serve=True 的）是
        同名的字段，和命令行按同一份声明检查（core.settings.with_request）。"""
        raw, earlier = conversation_of(body)
        question = clean_question(raw, "最后一条 user 消息")
        asked = [tidy(turn.text) for turn in earlier if turn.role == "user"]
        query = standalone_query(question, [text for text in asked if text])
        given, named = dict(body), field_name
        if given.get("model") in ("", OWNER):  # 聊天程序选了本服务的名字：用启动时的模型
            given.pop("model")
        if given.get("max_tokens") is None and "max_completion_tokens" in given:  # OpenAI 的新名字
            given["max_tokens"] = given["max_completion_tokens"]
            named = completion_tokens_named
        settings = with_request(self.settings, given, SERVE_OPTIONS, named)
        run = settings.run
        timeout = run.timeout or self.serve.request_timeout
        return replace(settings, run=replace(run, question=question, query=query, history=recent(earlier),
                                             timeout=timeout, started=time.monotonic(), json=True))

    # ---------- 回答 ----------

    async def completion(self, request: Request) -> Response:
        body = await json_body(request, self.serve.max_body)
        stream = body.get("stream", False)
        if not isinstance(stream, bool):
            raise RequestProblem(400, "stream 应是 true 或 false", code="invalid_value")
        if request.headers.get("x-task", "").strip() or is_background_task(last_user_message(body)):
            return await self.background_task(request, body)
        settings = self.request_settings(body)
        searched, cut = searchable(settings.run.query or "", self.secrets)  # 发给秘塔的文字（密钥去掉了）
        request.state.access_note = f"搜索：{searched}" + (f"（{cut}）" if cut else "")
        if stream:
            return await self.streamed(settings)
        try:
            answered = await self.admitted(answer, settings, quiet, None, self.shared, answering=True)
        except AppError as error:
            raise problem_of(error) from None
        reply = self.reply(answered, settings)
        message = {"role": "assistant", "content": reply.content, "annotations": reply.annotations}
        return MaskedJSON(self.envelope(settings, answered, {
            "object": "chat.completion",
            "choices": [{"index": 0, "message": message, "finish_reason": finish_reason(answered)}],
        }), self.secrets)

    async def background_task(self, request: Request, body: Mapping[str, Any]) -> Response:
        """聊天程序自己的后台任务（Open WebUI 的 “### Task:” 模板，或者请求头 X-Task）：不搜索、不核对。
        起标题的（Open WebUI 的模板）用对话里的第一个问题做标题，不问模型；别的等正在做的回答做完
        （回答优先，background.AnswersFirst），再原样问回答的模型，回它的话（流式的请求也回一整块）。"""
        note, stream = "聊天程序的后台任务：", bool(body.get("stream"))
        request.state.access_note = note + "只问模型，没有搜索"
        probe = self.request_settings({**body, "messages": [{"role": "user", "content": "后台任务"}]})
        title = task_title(last_user_message(body))
        if title is not None:
            request.state.access_note = note + "起标题，用对话里的第一个问题做标题，没有问模型"
            return whole_reply(probe.model.name, title_json(self.shown(title)), "stop", self.secrets, stream)
        messages = [{"role": turn.role, "content": turn.text} for turn in task_messages(body)]
        try:
            async with self.answers_first.task_turn(probe.run.deadline().remaining()) as waited:
                if waited:
                    request.state.access_note = note + f"等回答做完等了 {waited:.2f} 秒，只问模型，没有搜索"
                result = await self.admitted(answer_task, probe, messages)
        except AppError as error:
            raise problem_of(error) from None
        text, finish = self.shown(strip_think(result.text)), result.finish_reason or "stop"
        return whole_reply(probe.model.name, text, finish, self.secrets, stream, result.completion_tokens)

    def admit(self, call: Callable[..., T], *args: Any, answering: bool = False) -> "asyncio.Task[T]":
        """进门（满了是 503），在后台做 call(*args)：占着一个名额，直到那一步真的做完才离开——客户端走了、
        请求被取消了也一样（线程还在做，名额就还占着），所以同时在做的从不超过 --concurrency。
        answering：这是回答一个问题，从进门到做完，聊天程序的后台任务都等着它（回答优先）。"""
        self.gate.enter()
        if answering:
            self.answers_first.answer_started()

        async def run() -> T:
            try:
                async with self.gate.slots:
                    return await in_background(call, *args)
            finally:
                self.gate.leave()
                if answering:
                    self.answers_first.answer_finished()
        return asyncio.create_task(run())

    async def admitted(self, call: Callable[..., T], *args: Any, answering: bool = False) -> T:
        """admit 之后等它做完；等的这一方被取消时，后台的那一步照样占着名额做完（shield）。"""
        return await asyncio.shield(self.admit(call, *args, answering=answering))

    async def streamed(self, settings: Settings) -> Response:
        """流式回答。第一块文字（或出错）到了才开始回应：还没有回答一个字就出错时，照样回对应的状态码。"""
        loop = asyncio.get_running_loop()
        pieces: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        writer = SafeWriter(Sink(pieces, loop), self.secrets)  # 遮密钥、去控制序列：一个密钥可能被切在两块之间

        def show(piece: str) -> None:
            writer.write(piece)
            writer.flush()

        def answer_streaming() -> tuple[str, Any]:
            try:
                answered = answer(settings, quiet, show, self.shared)
            except AppError as error:
                return "error", problem_of(error)
            except Exception as error:  # noqa: BLE001  不能让一个请求的意外打断整个服务
                return "error", internal_problem(error)
            writer.finish()
            return "done", answered

        task = self.admit(answer_streaming, answering=True)
        task.add_done_callback(lambda done: loop.call_soon(pieces.put_nowait, done.result())
                               if not done.cancelled() and done.exception() is None else None)
        first = await pieces.get()
        if first[0] == "error":
            raise first[1]
        chunk_id = new_id()
        return event_stream(self.events(settings, chunk_id, first, pieces))

    async def events(self, settings: Settings, chunk_id: str, first: tuple[str, Any],
                     pieces: "asyncio.Queue[tuple[str, Any]]") -> AsyncIterator[str]:
        created = int(time.time())
        model = settings.model.name

        def chunk(delta: Mapping[str, Any], finish: str | None = None, **extra: Any) -> str:
            data = {"id": chunk_id, "object": "chat.completion.chunk", "created": created, "model": model,
                    "choices": [{"index": 0, "delta": dict(delta), "finish_reason": finish}], **extra}
            return sse(data, self.secrets)

        def failure(problem: RequestProblem) -> str:
            # 错误的说明可能带着服务回显的原话（模型服务在流里报的错）：和别处一样先遮掉密钥
            return sse(error_body(problem), self.secrets)

        yield chunk({"role": "assistant", "content": ""})
        item = first
        streamed: list[str] = []  # 已经发出的回答：结论之后的 annotations 按整个回答算位置
        while True:
            kind, value = item
            if kind == "text":
                streamed.append(value)
                yield chunk({"content": value})
            elif kind == "error":
                yield failure(value)
                break
            else:
                answered: Answered = value
                reply = self.reply(answered, settings, "".join(streamed))
                yield chunk({"content": reply.content})
                # 最后一块只有 annotations、没有 content（Cherry Studio 跳过 content 为空的 delta，LobeChat
                # 只在带 finish_reason 的这一块里读 annotations），顶层是 citations、search_results、verification
                yield chunk({"annotations": reply.annotations}, finish_reason(answered), **self.attachments(answered))
                break
            try:
                item = await pieces.get()
            except asyncio.CancelledError:
                # 服务要停了，回答才说了一半：说清楚这个回答没有说完（不然看起来像是完整的、只是没有结论），
                # 再结束这个流，取消照样往上传
                yield failure(RequestProblem(503, "服务正在停止，这个回答没有说完、没有核对：请稍后再问一次",
                                             "server_error", "shutting_down"))
                yield DONE
                raise
        yield DONE

    # ---------- 回答之外的附件 ----------

    def shown(self, text: str) -> str:
        """给聊天窗口看的文字：和终端上一样去掉控制序列、遮掉密钥。"""
        return mask(strip_terminal(text), self.secrets)

    def reply(self, answered: Answered, settings: Settings, streamed: str | None = None) -> ChatReply:
        """聊天窗口看到的回答（回答、来源、结论；流式时是已经发出的 streamed 之后的部分）和 annotations。
        先去掉控制序列、遮掉密钥，再算 annotations 的位置：位置指的是客户端真正收到的文字。"""
        checked = answered.checked
        truncated = settings.model.max_tokens if answered.result.truncated else None
        return chat_reply(checked, streamed, truncated, shown=self.shown, demo=settings.search.demo)

    def attachments(self, answered: Answered) -> dict[str, Any]:
        record = answered.record
        sources = record["sources"]
        return {
            "citations": [source["link"] for source in sources],
            "search_results": [{"title": source["title"], "url": source["link"], "date": source["date"] or None}
                               for source in sources],
            "verification": {**{name: record[name] for name in ("passed", "problems", "claims", "unused")},
                             "truncated": bool(record["truncated"]), "query": answered.query},
        }

    def envelope(self, settings: Settings, answered: Answered, body: Mapping[str, Any]) -> dict[str, Any]:
        usage = answered.result.completion_tokens
        return {"id": new_id(), "created": int(time.time()), "model": settings.model.name, **body,
                **({"usage": {"completion_tokens": usage}} if usage else {}), **self.attachments(answered)}

    # ---------- 模型列表、核对 ----------

    async def models(self, request: Request) -> Response:
        model = self.settings.model
        found = await in_background(probe_models, model.url, 5.0, model.key)
        # 摘录（excerpts）总在列表里：不请模型写，模型服务连不上时也能用
        names = list(dict.fromkeys([*(found.models or [model.name]), EXCERPTS])) if found.models is not None \
            else [EXCERPTS]
        return MaskedJSON({"object": "list", "data": [
            {"id": name, "object": "model", "created": 0, "owned_by": OWNER} for name in names]}, self.secrets)

    async def verify(self, request: Request) -> Response:
        body = await json_body(request, self.serve.max_body)
        answer_text = body.get("answer")
        sources = body.get("sources")
        if not isinstance(answer_text, str) or not isinstance(sources, list):
            raise RequestProblem(400, "请求体应是 --verify 读的格式：{\"answer\": 回答, "
                                      "\"sources\": [{\"title\", \"text\"}, …]}")
        question = body.get("question") if isinstance(body.get("question"), str) else None
        try:
            result = await self.admitted(verify_answer, answer_text, sources, self.settings.check, question,
                                         self.secrets)
        except AppError as error:
            raise problem_of(error) from None
        return MaskedJSON(result.record, self.secrets)


# ---------- 请求体 ----------

async def json_body(request: Request, limit: int) -> dict[str, Any]:
    """读请求体（最多 limit 个字节，多了是 413），解析成 JSON 对象（不是对象是 400）。"""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise RequestProblem(413, f"请求体太大（{declared} 个字节，最多 {limit} 个字节）", code="request_too_large")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise RequestProblem(413, f"请求体太大（超过 {limit} 个字节）", code="request_too_large")
        chunks.append(chunk)
    try:
        data = json_value(b"".join(chunks).decode("utf-8"))
    except UnicodeDecodeError:
        raise RequestProblem(400, "请求体不是 UTF-8 编码的 JSON", code="invalid_json") from None
    except (ValueError, RecursionError) as error:
        # 说明用 --verify 的那一套中文（json 模块的英文说明、Python 的“maximum recursion depth”不给客户端看）
        line = f"第 {error.lineno} 行" if isinstance(error, json.JSONDecodeError) and error.lineno > 1 else ""
        raise RequestProblem(400, f"请求体不是合法的 JSON：{line}{json_problem(error)}", code="invalid_json") from None
    if not isinstance(data, dict):
        raise RequestProblem(400, "请求体应是一个 JSON 对象", code="invalid_json")
    return data


# ---------- 小零件 ----------

def completion_tokens_named(declared: Option) -> str:
    """请求写的是 max_completion_tokens（OpenAI 的新名字）时，说明里也这样写。"""
    return "max_completion_tokens" if declared.name == "max_tokens" else declared.name


class Sink:
    """SafeWriter 写进来的文字放进异步队列（从回答的线程里，交给事件循环）。"""

    def __init__(self, queue: "asyncio.Queue[tuple[str, Any]]", loop: asyncio.AbstractEventLoop) -> None:
        self.queue = queue
        self.loop = loop

    def write(self, text: str) -> int:
        if text:
            self.loop.call_soon_threadsafe(self.queue.put_nowait, ("text", text))
        return len(text)

    def flush(self) -> None:
        pass


def quiet(message: str) -> None:
    """服务里不打印每个请求的进度（标准错误上只有访问日志）。"""


def internal_problem(error: Exception) -> RequestProblem:
    """程序自己的 bug：500 和一句中文说明（只有异常的类名，没有报错堆栈）。"""
    return RequestProblem(500, f"程序内部出错（{type(error).__name__}）", "server_error", "internal_error")


def finish_reason(answered: Answered) -> str:
    """模型到了长度上限被截断时是 "length"（和 OpenAI 一样），否则是 "stop"。"""
    return "length" if answered.result.truncated else "stop"


def build_app(service: Service) -> Starlette:
    """Starlette 应用：三个接口；任何请求的错误都变成 OpenAI 的错误对象（见模块说明）。"""

    def handled(handler: Callable[[Request], Any]) -> Callable[[Request], Any]:
        async def endpoint(request: Request) -> Response:
            try:
                return await handler(request)
            except RequestProblem as problem:
                failed = problem
            except AppError as error:  # 例如问题里没有文字（clean_question 的 UsageError）：400，不是 500
                failed = problem_of(error)
            except Exception as error:  # noqa: BLE001  程序自己的 bug 也回错误对象，不回英文的纯文字 500
                failed = internal_problem(error)
            return MaskedJSON(error_body(failed), service.secrets, failed.status)
        return endpoint

    async def not_found(request: Request, error: Exception) -> Response:
        status = getattr(error, "status_code", 404)
        text = "没有这个接口：只有 POST /v1/chat/completions、GET /v1/models、POST /v1/verify" if status in (404, 405) \
            else "请求不对"
        return MaskedJSON(error_body(RequestProblem(status, text, code="not_found" if status == 404 else None)),
                          service.secrets, status)

    routes = [Route("/v1/chat/completions", handled(service.completion), methods=["POST"]),
              Route("/v1/models", handled(service.models), methods=["GET"]),
              Route("/v1/verify", handled(service.verify), methods=["POST"])]
    app = Starlette(routes=routes, exception_handlers={404: not_found, 405: not_found})
    app.state.service = service  # 测试在进程里看它（比如有几个后台任务在等）
    # 不把 /v1/models/ 重定向到 /v1/models：重定向的地址取自请求的 Host 头（别人可以随便写），回 404 的错误对象就好
    app.router.redirect_slashes = False
    return app




