"""两个服务回给客户端的每一样东西都在这里编码：JSON 回应、SSE 的一块、错误对象。先遮掉密钥再编码
（core.masking.masked_json_bytes），所以一道新的门不经过遮挡就写不出东西——门模块（openai_app、openai_server、
mcp_server……）不直接用 Starlette 的 JSONResponse、StreamingResponse，也不直接 json.dumps
（tests/test_masking.py 读代码检查）。
"""
import time
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from starlette.responses import Response, StreamingResponse

from sourced_answers.core.masking import masked_json_bytes


class MaskedJSON(Response):
    """一个 JSON 回应：内容先遮掉 secrets 里的每个密钥再编码（状态码、额外的头照常）。"""
    media_type = "application/json"

    def __init__(self, content: Any, secrets: Sequence[str], status_code: int = 200,
                 headers: Mapping[str, str] | None = None) -> None:
        self.secrets = secrets
        super().__init__(content, status_code, headers)

    def render(self, content: Any) -> bytes:
        return masked_json_bytes(content, self.secrets)


def sse(data: Any, secrets: Sequence[str]) -> str:
    """SSE 的一块：data: 一行遮过密钥的 JSON，空一行。"""
    return f"data: {masked_json_bytes(data, secrets).decode('utf-8')}\n\n"


DONE = "data: [DONE]\n\n"


def event_stream(events: AsyncIterator[str], headers: Mapping[str, str] | None = None) -> StreamingResponse:
    """SSE 的回应。每一块都由 sse() 编码（遮过密钥），这里只是把它们按顺序送出去。"""
    return StreamingResponse(events, media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", **(headers or {})})


def new_id() -> str:
    return "chatcmpl-" + uuid.uuid4().hex[:24]


def whole_reply(model: str, text: str, finish: str, secrets: Sequence[str], stream: bool,
                tokens: int | None = None) -> Response:
    """一整块说完的回答（聊天程序的后台任务）：不流式时是 OpenAI 的 chat.completion；流式时是一块角色、一块文字、
    一块结束，然后 [DONE]。"""
    reply_id, created = new_id(), int(time.time())
    if not stream:
        message = {"role": "assistant", "content": text}
        return MaskedJSON({"id": reply_id, "created": created, "model": model, "object": "chat.completion",
                           "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                           **({"usage": {"completion_tokens": tokens}} if tokens else {})}, secrets)

    async def events() -> AsyncIterator[str]:
        for delta, reason in (({"role": "assistant", "content": ""}, None), ({"content": text}, None), ({}, finish)):
            yield sse({"id": reply_id, "object": "chat.completion.chunk", "created": created, "model": model,
                       "choices": [{"index": 0, "delta": delta, "finish_reason": reason}]}, secrets)
        yield DONE
    return event_stream(events())
