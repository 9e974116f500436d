"""重试和总时限，秘塔客户端和模型客户端共用。

暂时性的失败（连不上、超时、HTTP 429/5xx、秘塔的 500/5000）最多试 3 次，两次之间按指数退避并加随机抖动；
所有请求共用一个总时限（--timeout），剩下的时间不够再等一轮就不再重试。
"""
import random
import time
from collections.abc import Callable
from typing import TypeVar

from sourced_answers.core.errors import DeadlineExceeded

T = TypeVar("T")

TRIES = 3
BACKOFF_BASE = 0.5  # 秒：第 1 次重试前约 0.5 秒，第 2 次约 1 秒
BACKOFF_CAP = 4.0


class Deadline:
    """一次运行的总时限；seconds 为 None 表示不限。started：从什么时候算起（time.monotonic()，默认现在）。"""

    def __init__(self, seconds: float | None = None, started: float | None = None) -> None:
        self.seconds = seconds
        self.end = (time.monotonic() if started is None else started) + seconds if seconds else None

    def remaining(self) -> float | None:
        return None if self.end is None else self.end - time.monotonic()

    def timeout(self, connect: float, read: float) -> tuple[float, float]:
        """给一次请求用的 (连接超时, 读取超时)：不超过剩下的时间。"""
        left = self.remaining()
        if left is None:
            return connect, read
        if left <= 0:
            raise DeadlineExceeded(f"超过了总时限 {self.seconds:g} 秒（--timeout）")
        return min(connect, left), min(read, left)

    def allows(self, delay: float) -> bool:
        """再等 delay 秒后重试是否还来得及（至少还要留 1 秒给请求本身）。"""
        left = self.remaining()
        return left is None or left > delay + 1


def backoff(attempt: int, rng: Callable[[], float] = random.random) -> float:
    """第 attempt 次重试前等多久：指数增长，取一半固定、一半随机（抖动），避免大家同时重试。"""
    delay = min(BACKOFF_CAP, BACKOFF_BASE * 2 ** attempt)
    return delay / 2 + rng() * delay / 2


def is_transient(error: BaseException) -> bool:
    """两个客户端的错误都带 transient 属性：True 表示可以重试。"""
    return bool(getattr(error, "transient", False))


def with_retries(call: Callable[[], T], deadline: Deadline, on_retry: Callable[[str], None] | None = None) -> T:
    """调用 call()，遇到暂时性的失败（is_transient）就重试，最多 TRIES 次。

    每次重试前调用 on_retry(一句中文说明)。"""
    for attempt in range(TRIES):
        try:
            return call()
        except Exception as error:  # noqa: BLE001  由 is_transient 判断，其余原样抛出
            if not is_transient(error) or attempt == TRIES - 1:
                raise
            delay = backoff(attempt)
            if not deadline.allows(delay):
                raise
            if on_retry:
                # MetasoError 的 message 不含“下一步”的建议，重试时只说发生了什么
                reason = getattr(error, "message", str(error))
                on_retry(f"{reason}，{delay:.1f} 秒后重试（第 {attempt + 2} 次，共 {TRIES} 次）")
            time.sleep(delay)
    raise AssertionError("unreachable")
