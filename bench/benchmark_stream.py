"""读模型的流式回答（model_client.read_stream）的速度，和 requests 的 iter_lines（以前的切行）在同一次运行里并排比：

  1. 正常的流：一个个小事件（"data: {…}"，一个事件几十个字节），1 万个和 10 万个：
     整个读流（切行、解析 JSON、交出文字）的用时，现在的和以前的比值应在 1 附近；
  2. 一直不换行的一行：1 MB、4 MB、16 MB（正好在上限 MAX_EVENT_BYTES 以下）：
     现在是线性的（每长 4 倍用时约长 4 倍）；以前 iter_lines 每收到 512 个字节把没结束的那一行整个重拼一次，
     是平方的——只量到 4 MB（16 MB 要几分钟）。小的两格常常比单独量时快（内存是热的），16 MB 那一格要新分配内存：
     比值看起来比 4 大；单独量 1 / 2 / 4 / 8 / 16 MB 是 1.8 / 3.7 / 7.7 / 16.8 / 33.9 毫秒（2026-12-05），是线性的。

不连网络：回答放在内存里（requests 的 Response 读一个 BytesIO）。
  python -m bench.benchmark_stream
"""
import io
import json
import time
from collections.abc import Callable, Iterator

import requests

from sourced_answers.model.model_client import MAX_EVENT_BYTES, STREAM_CHUNK, read_stream, stream_lines

DELTA = {"choices": [{"delta": {"content": "家用 NAS 至少选两盘位"}}]}
EVENT = "data: " + json.dumps(DELTA, ensure_ascii=False) + "\n\n"


def response(data: bytes) -> requests.Response:
    made = requests.models.Response()
    made.raw = io.BytesIO(data)
    made.status_code = 200
    return made


def best_of(runs: int, work: Callable[[], object]) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return min(times)


def old_lines(data: bytes) -> Iterator[bytes]:
    return response(data).iter_lines()


def new_lines(data: bytes) -> Iterator[bytes]:
    return stream_lines(response(data).iter_content(STREAM_CHUNK), MAX_EVENT_BYTES)


def main() -> None:
    print("1. 正常的流：整个 read_stream（现在） / 同样的流只用 iter_lines 切行再解析（以前的做法）")
    for count in (10_000, 100_000):
        data = (EVENT * count).encode() + b"data: [DONE]\n\n"
        now = best_of(3, lambda data=data: read_stream(response(data), lambda text: None))
        cut_now = best_of(3, lambda data=data: sum(1 for _ in new_lines(data)))
        cut_before = best_of(3, lambda data=data: sum(1 for _ in old_lines(data)))
        print(f"   {count} 个事件（{len(data) / 1e6:.1f} MB）：read_stream {now * 1000:.0f} 毫秒；其中切行 现在 "
              f"{cut_now * 1000:.1f} 毫秒、以前 {cut_before * 1000:.1f} 毫秒（切行占整个读流的 "
              f"{cut_now / now:.0%}，以前的切行换成现在的多花整个读流的 {(cut_now - cut_before) / now:+.1%}）")
    print("2. 一直不换行的一行（每长 4 倍，线性的实现约 4 倍）")
    lines = {megabytes: b"data: " + b"x" * (megabytes * 1024 * 1024 - 100) + b"\n\n" for megabytes in (1, 4, 16)}
    now = {size: best_of(5, lambda data=data: sum(1 for _ in new_lines(data))) for size, data in lines.items()}
    before = {size: best_of(1, lambda data=data: sum(1 for _ in old_lines(data))) for size, data in lines.items()
              if size <= 4}  # 16 MB 以前要几分钟
    for size in lines:
        line = f"   {size} MB：现在 {now[size] * 1000:.1f} 毫秒"
        if size > 1:
            line += f"（比值 {now[size] / now[size // 4]:.1f}）"
        if size in before:
            line += f"；以前 {before[size] * 1000:.0f} 毫秒" + (
                f"（比值 {before[size] / before[size // 4]:.1f}）" if size > 1 else "")
        else:
            line += "；以前的没有量（平方的，要几分钟）"
        print(line)


if __name__ == "__main__":
    main()
