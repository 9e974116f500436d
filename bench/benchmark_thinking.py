"""思考规则（checker.thinking）的用时和回复的长度成正比，标签再多也一样。同一次运行里并排量、打印比值：

  · 整段拆开（split_reply，--verify、--fix、评判读回复时）和按 7 个字一片流式喂进去（ThinkFilter，边收边显示时）；
  · 回复里每 30 个字就有 3 个标签，长度放大 10 倍时用时的比值（目标：约 10，平方级会是约 100）；
  · 有 git 历史时，同样的输入也量一遍这次改动之前的版本（main 上的 thinking.py：每遇到一个标签复制一遍剩下的文字）。
  python -m bench.benchmark_thinking
"""
import importlib.util
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from sourced_answers.checker import thinking

HERE = Path(__file__).resolve().parent.parent
BEFORE = "aefc7ec"  # 这条规则之前
UNIT = "回答 [1]。<think>想</think></think><th"  # 30 个字，3 个标签，结尾还有半个


def old_version() -> ModuleType | None:
    """这次改动之前的 thinking.py（它只用到 checker.text，本包里的那个还在）；没有 git 历史时为 None。"""
    try:
        source = subprocess.run(["git", "show", f"{BEFORE}:sourced_answers/checker/thinking.py"], cwd=HERE,
                                capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    path = Path(tempfile.mkdtemp()) / "old_thinking.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("old_thinking", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def best_of(runs: int, work: Callable[[ModuleType, str], None], module: ModuleType, text: str) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        work(module, text)
        times.append(time.perf_counter() - started)
    return min(times)


def whole(module: ModuleType, text: str) -> None:
    module.ThinkFilter().feed(text)


def streamed(module: ModuleType, text: str) -> None:
    think = module.ThinkFilter()
    for start in range(0, len(text), 7):
        think.feed(text[start:start + 7])
    think.finish()


def main() -> int:
    versions = {"现在": thinking}
    old = old_version()
    if old is not None:
        versions[f"之前（{BEFORE}）"] = old
    small, large = UNIT * 5_000, UNIT * 50_000  # 15 万字、150 万字
    print(f"{'版本':<16}{'方式':<8}{'15 万字（秒）':>14}{'150 万字（秒）':>16}{'比值（目标约 10）':>20}")
    for name, module in versions.items():
        for way, work in (("整段", whole), ("流式", streamed)):
            first = best_of(3, work, module, small)
            second = best_of(2, work, module, large)
            print(f"{name:<16}{way:<8}{first:>14.3f}{second:>16.3f}{second / first:>20.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
