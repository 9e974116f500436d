"""--mcp：标准输入输出上的 MCP 服务（官方的 MCP Python SDK），给 Claude Desktop、Cherry Studio、Cursor 这类客户端用。

两个工具，都是 api 层上薄薄的一层：
  answer_question(question, context?, read?, size?)   搜索、读取、回答、核对（和命令行同一段代码）；context 是
                                            之前问过的问题，追问时搜索的问题接上它们；read、size 这样的参数是每个请求
                                            也能改的设置（core/settings.py 里写了 mcp=… 的），和命令行按同一份声明检查；
  verify_answer(answer, sources)            核对一个带 [n] 引用的回答，sources 是 [{title, link, text}]。
每个工具回的文字内容是回答、编号的来源和结论（Markdown：来源是链接，没有命令行的提示）；structuredContent 是
--json 的那条记录。
出错时回 isError 和一句中文说明（不带报错堆栈，也不带密钥）。标准输出是协议的通道：说明和日志都写在标准错误上。
"""
import inspect
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from typing import Any, TypeVar

from sourced_answers.api.answering import answer
from sourced_answers.api.results import Result, result_of
from sourced_answers.api.verifying import verify_answer
from sourced_answers.core.conversation import MAX_HISTORY_TURNS, Turn, recent, standalone_query
from sourced_answers.core.errors import AppError, ExitCode, UsageError, exit_code_of
from sourced_answers.core.masking import mask
from sourced_answers.core.questions import clean_question, tidy
from sourced_answers.core.settings import MCP_OPTIONS, SERVE_DEFAULTS, Settings, with_request
from sourced_answers.core.strings import literal
from sourced_answers.model.preflight import check_before_paying
from sourced_answers.search.backend import BACKENDS, Shared
from sourced_answers.search.gather import prepare
from sourced_answers.servers.background import in_background

Log = Callable[[str], None]
F = TypeVar("F", bound=Callable[..., Any])


def question_settings(settings: Settings, question: Any, options: Mapping[str, Any], context: Any = None) -> Settings:
    """一次 answer_question 调用的设置：问题、请求也能改的设置（read、size：和命令行按同一份声明检查，
    core.settings.with_request）、之前问过的问题（context，一行一个：追问时搜索的问题接上它们，回答的模型也看得到）；
    时限从这次调用算起。"""
    if not isinstance(question, str):
        raise UsageError("question 应是文字")
    if context is not None and not isinstance(context, str):
        raise UsageError("context 应是文字：之前问过的问题，一行一个")
    earlier = [tidy(line) for line in (context or "").splitlines() if tidy(line)][-MAX_HISTORY_TURNS:]
    settings = with_request(settings, options, MCP_OPTIONS)
    asked = clean_question(question, "question ")
    run = replace(settings.run, question=asked, query=standalone_query(asked, earlier),
                  history=recent([Turn("user", line) for line in earlier]), json=True, started=time.monotonic(),
                  timeout=settings.run.timeout or SERVE_DEFAULTS.request_timeout)
    return replace(settings, run=run)


def option_arguments(function: F) -> F:
    """answer_question 工具的参数表：question、context 之后是每个请求也能改的设置（core.settings 里写了 mcp=… 的），
    照着声明写进签名，SDK 从签名生成参数的 JSON Schema。strict：JSON 的 true、"2"、3.0 不是整数（pydantic 默认
    把它们悄悄变成 1、2、3，声明的检查就看不到了）。"""
    from typing import Annotated

    from pydantic import Field
    signature = inspect.signature(function)
    fixed = [parameter for parameter in signature.parameters.values()
             if parameter.kind is not inspect.Parameter.VAR_KEYWORD]
    declared = [inspect.Parameter(item.name, inspect.Parameter.KEYWORD_ONLY, default=None,
                                  annotation=Annotated[item.kind | None, Field(title=item.mcp, strict=True)])
                for item in MCP_OPTIONS]
    function.__signature__ = signature.replace(parameters=fixed + declared)  # type: ignore[attr-defined]
    return function


def options_described() -> str:
    """工具说明里的一句：每个请求也能改的设置和它能取的值。"""
    return "，".join(f"{item.name}：{item.mcp}" + (f"（{item.within.text()}）" if item.within else "")
                    for item in MCP_OPTIONS)


TOOLS = ("answer_question", "verify_answer")
# 客户端给人看的名字：工具的标题，和它的参数表单的标题（SDK 默认用函数名加 Arguments，比如 verify_toolArguments）
TOOL_TITLES = {"answer_question": "回答问题并核对引用", "verify_answer": "核对带引用的回答"}
INPUT_TITLES = {"answer_question": "要回答的问题", "verify_answer": "要核对的回答和资料"}
# pydantic 的错误类型 → 中文（别的类型都说“格式不对”）
ARGUMENT_PROBLEMS = {"int_parsing": "应是整数", "int_type": "应是整数", "int_from_float": "应是整数",
                     "string_type": "应是文字", "list_type": "应是列表",
                     "dict_type": "应是 {title, link, text} 这样的对象"}


def arguments_problem(tool: str, error: Any) -> str:
    """SDK 检查参数时的 ValidationError → 一句中文：哪个参数、哪里不对（不带收到的值：那是调用方的数据）。"""
    parts = []
    for item in error.errors():
        where = "".join(f" 的第 {part + 1} 项" if isinstance(part, int) else literal(part, 40) for part in item["loc"])
        parts.append(f"缺少 {where}" if item["type"] == "missing"
                     else f"{where} {ARGUMENT_PROBLEMS.get(item['type'], '的格式不对')}")
    return f"{tool} 的参数不对：{'；'.join(parts)}"


def build_server(settings: Settings, shared: Shared | None = None) -> Any:
    """MCP 服务和它的两个工具。shared：各次调用共用、开到服务停止的东西（--demo 的演示服务）。"""
    from typing import Annotated

    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp_types import CallToolResult, TextContent
    from pydantic import Field, ValidationError

    secrets = settings.run.secrets

    def reply(result: Result) -> CallToolResult:
        return CallToolResult(content=[TextContent(type="text", text=result.markdown)],
                              structured_content=result.record)

    def failed(error: AppError) -> CallToolResult:
        return CallToolResult(content=[TextContent(type="text", text="✗ " + mask(str(error), secrets))], is_error=True)

    class Server(MCPServer):
        async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
            """SDK 对参数的检查（类型不对、缺少）和“没有这个工具”说的是英文、带着 pydantic 的链接：换成中文。"""
            if name not in TOOLS:
                return failed(UsageError(f"没有工具 {literal(name)}：只有 {'、'.join(TOOLS)}"))
            try:
                return await super().call_tool(name, arguments, context)
            except ToolError as error:
                if isinstance(error.__cause__, ValidationError):
                    return failed(UsageError(arguments_problem(name, error.__cause__)))
                raise

        async def list_tools(self) -> list[Any]:
            """参数表单的标题换成给人看的（SDK 从函数名生成，没有别的办法指定）。"""
            return [tool.model_copy(update={"input_schema": {**tool.input_schema, "title": INPUT_TITLES[tool.name]}})
                    for tool in await super().list_tools()]

    source = BACKENDS[settings.search.backend]
    server = Server("answer-with-sources", log_level="CRITICAL",
                    instructions="回答问题并核对每一处引用：answer_question 搜索、回答、核对；"
                                 "verify_answer 核对一个带 [n] 引用的回答。结构化结果就是 --json 的记录。")

    @server.tool(title=TOOL_TITLES["answer_question"],
                 description=f"搜索{source.label}、读取{source.unit}、请本地模型写带 [n] 引用的回答，"
                             "并由程序逐句核对引用。"
                             f"{options_described()}，context：之前问过的问题"
                             "（一行一个，可选；追问时搜索的问题接上它们）。"
                             "文字是回答、来源和结论；结构化结果是 --json 的记录（passed、problems、claims、unused……）"
                             "加上 search_query（搜索用的问题）")
    @option_arguments
    async def answer_question(
            question: Annotated[str, Field(title="问题")],
            context: Annotated[str | None, Field(title="之前问过的问题（一行一个）")] = None,
            **options: Any) -> CallToolResult:
        try:
            asked = question_settings(settings, question, options, context)
            answered = await in_background(answer, asked, quiet, None, shared)
        except AppError as error:
            return failed(error)
        truncated = asked.model.max_tokens if answered.result.truncated else None
        result = result_of(answered.checked, answered.record, secrets, truncated, asked.search.demo)
        joined = asked.run.query != asked.run.question
        searched = f"搜索的问题（接上了 context）：{answered.query}\n\n" if joined else ""
        searched += f"{answered.key_cut}\n\n" if answered.key_cut else ""
        return CallToolResult(content=[TextContent(type="text", text=mask(searched, secrets) + result.markdown)],
                              structured_content={**result.record, "search_query": mask(answered.query, secrets)})

    @server.tool(name="verify_answer", title=TOOL_TITLES["verify_answer"],
                 description="核对一个带 [n] 引用的回答（不搜索、不调用模型）：sources 的第 n 条就是 [n]，"
                             "每条是 {title, link, text}。文字是来源和结论；结构化结果和 --verify --json 一样")
    async def verify_tool(
            answer: Annotated[str, Field(title="带 [n] 引用的回答")],
            sources: Annotated[list[dict[str, Any]], Field(title="资料（第 n 条就是 [n]）")]) -> CallToolResult:
        try:
            result = await in_background(verify_answer, answer, sources, settings.check, None, secrets)
        except AppError as error:
            return failed(error)
        return reply(result)

    return server


def quiet(message: str) -> None:
    """MCP 服务里不打印每次调用的进度。"""


def serve_mcp(settings: Settings, log: Log) -> int:
    """在标准输入输出上做 MCP 服务，直到客户端关掉它（退出码 0）或 Ctrl-C（130）。"""
    try:
        import mcp.server.mcpserver  # noqa: F401
    except ImportError:
        raise UsageError("没有安装 --mcp 要的包：pip install '.[serve]'（官方的 MCP Python SDK）") from None
    import anyio

    from sourced_answers.servers.mcp_stdio import serve_stdio  # 它在导入时就要 SDK
    if sys.stdin is None:  # 启动时就关着（<&-）：号码 0 之后会分给别的文件，不能当成协议去读、去改
        raise UsageError("--mcp 的请求从标准输入来，可它是关着的：没有客户端，服务没有开始")
    model = settings.model
    # 开始之前：模型服务在、模型都有（和回答问题时付费之前的检查是同一个）
    check_before_paying(model, [model.name], settings.judge, settings.run.deadline())
    logging.getLogger("mcp").setLevel(logging.CRITICAL + 1)  # SDK 自己的英文日志不混进标准错误
    shared = Shared()
    try:
        prepare(settings.search, log, shared)  # --docs：接受调用之前建好索引（文件夹不对就不起服务）
    except BaseException:
        shared.close()
        raise
    server = build_server(settings, shared)
    log(f"MCP 服务在标准输入输出上（回答用的模型 {model.name}）：工具 answer_question、verify_answer")
    with interrupts_end_at_once(log):
        # 不用 server.run("stdio")：SDK 的 stdio_server 对格式不对的行不回话。底层的服务还没有公开的名字，
        # SDK 自己的内存客户端也这样取用它
        try:
            anyio.run(serve_stdio, server._lowlevel_server, log, settings.run.secrets)
        finally:
            shared.close()
    return ExitCode.PASSED


@contextmanager
def interrupts_end_at_once(log: Log) -> Iterator[None]:
    """服务期间 Ctrl-C、SIGTERM 马上结束：“已中断”，退出码 130（SIGHUP 由 cli/launch.py 交给接 SIGTERM 的这里），
    不经过收尾（取消任务、关流）。
    没有要收尾的：标准输出是协议的通道，回答过的都已经发出去了，缓存（SQLite）不怕中途结束。"""
    if threading.current_thread() is not threading.main_thread():  # 信号只能在主线程里接
        yield
        return

    def stop(signum: int, frame: object) -> None:
        try:
            exit_code_of(KeyboardInterrupt(), log)
        finally:
            os._exit(ExitCode.INTERRUPTED)

    previous = {number: signal.signal(number, stop) for number in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
