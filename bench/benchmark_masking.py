"""遮密钥的基准：文字长 10 倍，用时也只长 10 倍左右（线性），最坏的输入也一样。同一次运行里并排测量，打印比值：

  · 普通的中文网页正文（没有密钥）、密钥夹着零宽空格出现了很多次、每行都很短（很多换行）、“aaaa…”那样自己和自己
    重叠的密钥遇上一长串 a、很长的密钥（4096 个字符，边界允许的上限）；
  · 每种输入量 100 KB 和 1 MB 两种长度，打印用时和比值（线性时约 10，平方时约 100）。
  · 聊天回答的样子（Markdown 粗体、行内代码、HTML 实体、全角字母，没有密钥）和写成渲染出来才看得到的密钥
    （实体、夹着空标签和强调记号、全角字母）很多次：遮密钥要读渲染出来的样子，这两种最吃它；
  · 流式输出：一个字一个字地写 2 000 字，和一次写完比（每次写都要看末尾是不是半个密钥）；普通正文、
    Markdown 回答各一次。
  python -m bench.benchmark_masking
"""
import io
import time

from sourced_answers.core.masking import mask
from sourced_answers.core.safe_output import SafeWriter
from sourced_answers.core.settings import MAX_KEY_LENGTH

KEY = "sk-MODEL-CANARY-0123456789"
PAGE = "家用 NAS 至少选两盘位，方便做 RAID1 镜像。需要转码 4K 视频时选带核显的 Intel 型号。\n"
MARKDOWN = "**家用 NAS** 至少选两盘位 &amp; 用 `mdadm` 做 <b>RAID1</b> 镜像；ｓｋｉｐ 转码时选 *Intel* 型号 [1]。\n"
RENDERED_KEY = "ｓｋ－&#77;O<b></b>DEL-*CANARY*-0123456789"


def inputs(size: int) -> dict[str, tuple[str, list[str]]]:
    hidden_key = "\u200b".join(KEY)
    long_key = "k" * (MAX_KEY_LENGTH - 1) + "x"
    return {
        "中文正文，没有密钥": ((PAGE * (size // len(PAGE) + 1))[:size], [KEY]),
        "夹着零宽空格的密钥很多次": (((PAGE + hidden_key) * (size // (len(PAGE) + len(hidden_key)) + 1))[:size], [KEY]),
        "很多换行": (("一\n" * size)[:size], [KEY]),
        "自己重叠的密钥": ("a" * size, ["a" * 16]),
        "4096 个字符的密钥，差最后一个字": ("k" * size, [long_key]),
        "Markdown 回答，没有密钥": ((MARKDOWN * (size // len(MARKDOWN) + 1))[:size], [KEY]),
        "渲染写法的密钥很多次": (((MARKDOWN + RENDERED_KEY) * (size // (len(MARKDOWN) + len(RENDERED_KEY)) + 1))[:size],
                          [KEY]),
    }


def timed(text: str, secrets: list[str], rounds: int = 3) -> float:
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        mask(text, secrets)
        best = min(best, time.perf_counter() - started)
    return best


def streamed(text: str, piece: int) -> float:
    started = time.perf_counter()
    writer = SafeWriter(io.StringIO(), [KEY])
    for position in range(0, len(text), piece):
        writer.write(text[position:position + piece])
    writer.finish()
    return time.perf_counter() - started


def main() -> None:
    small, large = inputs(100_000), inputs(1_000_000)
    print(f"{'输入':<34}{'100 KB':>10}{'1 MB':>10}{'比值':>8}")
    for name in small:
        first, second = timed(*small[name]), timed(*large[name])
        print(f"{name:<30}{first * 1000:>9.1f}ms{second * 1000:>9.1f}ms{second / first:>8.1f}")
    for name, line in (("普通正文", PAGE), ("Markdown 回答", MARKDOWN)):
        text = (line * 50)[:2000]
        one, each = streamed(text, len(text)), streamed(text, 1)
        print(f"流式（{name}）：2 000 字一次写完 {one * 1000:.2f} ms，一个字一个字地写 {each * 1000:.1f} ms"
              f"（每个字 {each / 2000 * 1e6:.0f} µs）")


if __name__ == "__main__":
    main()
