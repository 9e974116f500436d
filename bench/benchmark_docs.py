"""--docs（本地文档）的基准，同一次运行里并排测量：

  1. 标注的问题（bench/docs_questions.tsv，笔记在 bench/notes/）：应该找到的文件在前 3 条资料里的比例和
     Wilson 95% 区间，调参数用的 fit 一半和只用来报告的 report 一半分开报；
  2. 一万个文件（每个 10 段，共十万段）第一次建索引的用时（标准错误是终端时画进度条）；
  3. 同一个没变的文件夹第二次打开：用时和读了几个文件（目标 0）；服务里每个请求开始时的那遍 stat（改过的笔记下一个请求
     就搜得到）用时；
  4. 十万段里搜一个问题的中位用时（目标 < 100 ms）。
不联网；索引放在临时目录，不碰你的 ~/.cache。
  python -m bench.benchmark_docs            全部
  python -m bench.benchmark_docs --labelled 只跑标注的问题
"""
import math
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from sourced_answers.core.retrying import Deadline
from sourced_answers.core.settings import SearchSettings
from sourced_answers.search import docs_folder
from sourced_answers.search.docs_backend import DocsBackend

HERE = Path(__file__).parent
NOTES = HERE / "notes"
QUESTIONS = HERE / "docs_questions.tsv"
FILES = 10_000
PASSAGES_PER_FILE = 10


def wilson(successes: int, total: int, z: float = 1.96) -> tuple[float, float]:
    if total == 0:
        return 0.0, 1.0
    share = successes / total
    centre = (share + z * z / (2 * total)) / (1 + z * z / total)
    spread = z * math.sqrt(share * (1 - share) / total + z * z / (4 * total * total)) / (1 + z * z / total)
    return max(0.0, centre - spread), min(1.0, centre + spread)


def labelled_questions() -> list[tuple[str, str, str]]:
    rows = [line.split("\t") for line in QUESTIONS.read_text(encoding="utf-8").splitlines()
            if line and not line.startswith("#")]
    return [(question, file, half) for question, file, half in rows[1:]]


def top_files(backend: DocsBackend, question: str, count: int = 3) -> list[str]:
    hits, _ = backend.search(question, count)
    return [hit.title.split(":")[0] for hit in hits]


def labelled(cache: Path, show_misses: bool = True) -> dict[str, tuple[int, int]]:
    """每一半：(应该找到的文件在前 3 条里的问题数, 问题数)。"""
    search = SearchSettings(docs=(str(NOTES),), cache_dir=cache)
    backend = DocsBackend(search, lambda message: None, Deadline(None))
    results: dict[str, tuple[int, int]] = {}
    try:
        for question, expected, half in labelled_questions():
            found = top_files(backend, question)
            right, total = results.get(half, (0, 0))
            results[half] = (right + (expected in found), total + 1)
            if expected not in found and show_misses:
                print(f"  没找到（{half}）：{question} → {found}，应该是 {expected}")
    finally:
        backend.close()
    return results


def report_labelled(cache: Path) -> None:
    print(f"标注的问题（{NOTES.relative_to(HERE.parent)}，{sum(1 for _ in NOTES.rglob('*.*'))} 个文件）："
          "应该找到的文件在前 3 条资料里")
    for half, (right, total) in sorted(labelled(cache).items()):
        low, high = wilson(right, total)
        print(f"  {half:<6} {right}/{total} = {right / total:.0%}（95% 区间 {low:.0%}–{high:.0%}）")


TOPICS = ["备份", "硬盘", "路由器", "网络", "咖啡", "面包", "跑步", "睡眠", "签证", "火车", "打印机", "空调", "税",
          "公积金", "猫", "植物", "快照", "容器", "数据库", "正则"]
WORDS = ("the of and to in is for on with nas disk backup router coffee bread run sleep visa train printer plant "
         "snapshot container database regex weekly monthly config update restore install check").split()
HAN = ("的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后"
       "多定行学法所")


def paragraph(rng: random.Random, topic: str) -> str:
    han = "".join(rng.choice(HAN) for _ in range(rng.randint(40, 120)))
    words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 20)))
    return f"{topic}{han[:30]}{topic}{han[30:]} {words} {rng.randint(1, 9999)}。"


def make_folder(folder: Path) -> None:
    rng = random.Random(7)
    for number in range(FILES):
        topic = rng.choice(TOPICS)
        sub = folder / f"{number // 500:02d}"
        sub.mkdir(exist_ok=True)
        sections = [f"## 第 {section} 节\n\n{paragraph(rng, topic)}\n" for section in range(PASSAGES_PER_FILE)]
        (sub / f"note-{number:05d}.md").write_text(f"# {topic} 笔记 {number}\n\n" + "\n".join(sections),
                                                   encoding="utf-8")


class CountingReads:
    """数 --docs 读了几个文件：它读文件只经过 docs_folder.read_bytes。"""

    def __init__(self) -> None:
        self.count = 0
        self.original = docs_folder.read_bytes

    def __enter__(self) -> "CountingReads":
        def counted(path: Path, *args: object) -> bytes:
            self.count += 1
            return self.original(path)
        docs_folder.read_bytes = counted  # type: ignore[assignment]
        return self

    def __exit__(self, *exc: object) -> None:
        docs_folder.read_bytes = self.original


def open_timed(search: SearchSettings) -> tuple[DocsBackend, float, int]:
    with CountingReads() as reads:
        started = time.perf_counter()
        backend = DocsBackend(search, lambda message: None, Deadline(None))
        took = time.perf_counter() - started
    return backend, took, reads.count


def scale(root: Path) -> None:
    folder = root / "notes"
    folder.mkdir()
    started = time.perf_counter()
    make_folder(folder)
    print(f"造了 {FILES} 个文件（每个 {PASSAGES_PER_FILE} 段），{time.perf_counter() - started:.1f} 秒")
    progress = sys.stderr if sys.stderr.isatty() else None
    search = SearchSettings(docs=(str(folder),), cache_dir=root / "cache", progress=progress)
    first, first_seconds, first_reads = open_timed(search)
    files, passages = first.folders[0].index.counts()
    first.close()
    second, second_seconds, second_reads = open_timed(search)
    rescans = []
    for _ in range(5):
        started = time.perf_counter()
        second.folders[0].refresh(lambda message: None)
        rescans.append(time.perf_counter() - started)
    questions = [f"{a}{b} {w}" for a, b, w in zip(TOPICS, reversed(TOPICS), WORDS, strict=False)]
    questions += ["怎么恢复数据库的备份", "路由器的网络设置在哪里", "how do I restore a weekly backup"]
    timings = []
    for question in questions * 3:
        started = time.perf_counter()
        second.search(question, 5)
        timings.append(time.perf_counter() - started)
    second.close()
    size = sum(path.stat().st_size for path in (root / "cache" / "docs").glob("*.sqlite3"))
    print(f"第一次建索引：{files} 个文件、{passages} 段，{first_seconds:.1f} 秒，读了 {first_reads} 个文件；"
          f"索引 {size / 1024 / 1024:.0f} MB")
    print(f"第二次打开（没变）：{second_seconds:.2f} 秒，读了 {second_reads} 个文件（目标 0）；"
          f"是第一次的 {second_seconds / first_seconds:.1%}")
    print(f"服务里每个请求的那遍 stat（{files} 个文件）：中位 {statistics.median(rescans) * 1000:.0f} ms")
    median = statistics.median(timings) * 1000
    print(f"在 {passages} 段里搜一个问题：中位 {median:.1f} ms，最慢 {max(timings) * 1000:.1f} ms"
          f"（{len(timings)} 次，目标 < 100 ms）")


def main() -> None:
    with tempfile.TemporaryDirectory() as directory:
        report_labelled(Path(directory) / "labelled-cache")
        if "--labelled" not in sys.argv:
            scale(Path(directory))


if __name__ == "__main__":
    main()
