"""OpenAI 兼容接口的约定（不依赖 Starlette）：请求不能回答时的错误（HTTP 状态码和 OpenAI 的错误对象）、
本程序的错误怎样变成状态码、服务的密钥、从 messages 里取出问题和之前的对话。"""
import hmac
from collections.abc import Mapping
from typing import Any

from sourced_answers.core.conversation import Turn
from sourced_answers.core.errors import AppError, ModelNotFound, ModelUnreachable, UsageError
from sourced_answers.outputs.chat import answer_in_reply


class RequestProblem(Exception):
    """一个请求不能回答：HTTP 状态码、OpenAI 的错误类型和中文说明。"""

    def __init__(self, status: int, message: str, kind: str = "invalid_request_error", code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.kind = kind
        self.code = code


def problem_of(error: AppError) -> RequestProblem:
    """本程序的错误 → HTTP：用法和输入的错是 400（问题本身的错带着自己的错误码，比如 question_too_long），
    没有这个模型是 404（和 OpenAI 一样），时限用完是 504，模型服务连不上是 503，别的服务出错是 502。"""
    if isinstance(error, UsageError):
        return RequestProblem(400, str(error), code=getattr(error, "code", None))
    if isinstance(error, ModelNotFound):
        return RequestProblem(404, str(error), "invalid_request_error", "model_not_found")
    if getattr(error, "timed_out", False):
        return RequestProblem(504, str(error), "timeout", "timeout")
    if isinstance(error, ModelUnreachable):
        return RequestProblem(503, str(error), "server_error", "model_unreachable")
    return RequestProblem(502, str(error), "server_error", "upstream_error")


def error_body(problem: RequestProblem) -> dict[str, Any]:
    return {"error": {"message": problem.message, "type": problem.kind, "param": None, "code": problem.code}}


def authorized(headers: Mapping[str, str], key: str) -> bool:
    """请求带着服务的密钥（Authorization: Bearer …）；没有设密钥时都放行。比较的时间和密钥的内容无关。"""
    if not key:
        return True
    given = headers.get("authorization", "")
    scheme, _, token = given.partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(token.strip().encode(), key.encode())


def last_user_message(body: Mapping[str, Any]) -> str:
    """messages 里最后一条 role 是 user 的消息的文字（content 是文字，或者 OpenAI 的内容片段列表里的 text 片段）。"""
    return conversation_of(body)[0]


def conversation_of(body: Mapping[str, Any]) -> tuple[str, list[Turn]]:
    """messages → (最后一条 user 消息的文字, 它之前的 user 和 assistant 消息)。system、tool 这些不算对话；
    之前的回答去掉本服务加上的来源和结论，只留回答本身。"""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise RequestProblem(400, "messages 应是一个不空的列表", code="invalid_messages")
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        content = text_of(message)
        if not content.strip():
            raise RequestProblem(400, "最后一条 user 消息里没有文字", code="invalid_messages")
        earlier = [Turn(message["role"], answer_in_reply(text_of(message)) if message["role"] == "assistant"
                        else text_of(message))
                   for message in messages[:index]
                   if isinstance(message, dict) and message.get("role") in ("user", "assistant")]
        return content, earlier
    raise RequestProblem(400, "messages 里没有 user 消息：问题是最后一条 user 消息", code="invalid_messages")


def text_of(message: Mapping[str, Any]) -> str:
    """一条消息的文字：content 是文字，或者 OpenAI 的内容片段列表里的 text 片段；别的（图片、没有 content）是空的。"""
    content = message.get("content")
    if isinstance(content, list):
        texts = [part.get("text") for part in content if isinstance(part, dict) and part.get("type") == "text"]
        content = " ".join(text for text in texts if isinstance(text, str))
    return content if isinstance(content, str) else ""


def task_messages(body: Mapping[str, Any]) -> list[Turn]:
    """后台任务原样交给模型的消息：system、user、assistant 的文字（别的角色和没有文字的不要）。"""
    messages = body.get("messages")
    return [Turn(message["role"], text_of(message)) for message in messages or []
            if isinstance(message, dict) and message.get("role") in ("system", "user", "assistant")
            and text_of(message).strip()]
