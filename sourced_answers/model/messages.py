"""对话的数据：发出去的消息（Message）和收回来的结果（ChatResult）。

只有标准库：提示词、评判和核对一条保存的记录只要这些类型，不必导入模型服务的客户端（model_client）。"""
from dataclasses import dataclass

Message = dict[str, str]

# 整个回答在这么短的时间里就到了：量不出生成速度
MIN_GENERATION_SECONDS = 0.05


@dataclass
class ChatResult:
    text: str
    finish_reason: str | None
    completion_tokens: int | None  # 服务报告的生成 token 数；没报告时为 None
    seconds: float  # 从发出请求到收完回答
    first_text_seconds: float | None = None  # 流式时，从发出请求到收到第一段回答
    pieces: int = 0  # 流式时收到的片段数（每段大约一个 token）
    # 服务报告的、实际回答的模型（回答里的 model 字段；没报告时为 None）。llama.cpp 这类服务不管请求哪个名字，
    # 都用它加载的那一个模型回答：两个名字可能是同一个模型
    served_model: str | None = None

    @property
    def truncated(self) -> bool:
        """回答达到 max_tokens 的上限被截断了（finish_reason 是 length）。"""
        return self.finish_reason == "length"

    @property
    def generated_tokens(self) -> int | None:
        return self.completion_tokens if self.completion_tokens else self.pieces or None

    @property
    def tokens_per_second(self) -> float | None:
        """生成速度：不算读提示词的时间（流式时从第一段回答算起）。"""
        tokens = self.generated_tokens
        started = self.first_text_seconds or 0.0
        if not tokens or self.seconds - started < MIN_GENERATION_SECONDS:
            return None  # 整个回答一段就到了：量不出速度（除出来会是几万 token/秒）
        return tokens / (self.seconds - started)
