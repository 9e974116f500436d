"""整批 --verify 的基准，同一次运行里并排测量，打印比值：

  1. 内存：同样的记录重复到 20 MB 和 200 MB，--verify --json 的峰值内存（RSS）之比 —— 目标 ≤ 1.5（一行一行地读写，
     内存不随输入变大）；
  2. 多核：同一份输入（20 MB），--jobs 1 和 --jobs 2 每秒核对的记录数之比 —— 目标 ≥ 1.7（这台机器 2 核）。

每一项都以子进程运行真正的命令（输出丢进 /dev/null），峰值内存取命令里最大的那个进程。只在临时目录里写输入文件。
  python -m bench.benchmark_corpus
"""
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from fake_metaso import NAS_PAGES

HERE = Path(__file__).resolve().parent.parent
SOURCES = [{"title": page["title"], "text": page["text"]} for page in NAS_PAGES]
ANSWERS = [
    "家用 NAS 至少选两盘位，方便做 RAID1 镜像 [1]。需要转码 4K 视频时选带核显的 Intel 型号 [1]。\n\n"
    "RAID5 至少三块盘，可以容忍一块盘损坏 [2]。RAID 不是备份，重要数据仍然要另外备份 [2]。",
    "家用 NAS 至少选两盘位，方便做 RAID1 镜像 [1]。\n\n需要转码 4K 视频时选带核显的 Intel 型号 [2]。",
    "远程访问优先使用 VPN 或 Tailscale，不要把管理界面直接暴露到公网 [3]。群晖的系统比威联通稳定得多 [3]。",
]


def small_records(size):
    """小记录（一句回答、一条短资料），重复到 size 字节：量内存时要很多行。"""
    line = json.dumps({"answer": "RAID1 是镜像，两块盘存同样的数据 [1]。",
                       "sources": [{"text": "RAID1 是镜像，两块盘存同样的数据，一块盘坏了数据还在。"}]},
                      ensure_ascii=False) + "\n"
    return line * (size // len(line.encode("utf-8")) + 1)


def full_records(size):
    """像真实日志一样的记录（几段回答、5 条资料），重复到 size 字节：量吞吐量时核对占大头。"""
    lines = [json.dumps({"question": "家用 NAS 怎么选", "answer": answer, "sources": SOURCES}, ensure_ascii=False)
             for answer in ANSWERS]
    block = "\n".join(lines) + "\n"
    return block * (size // len(block.encode("utf-8")) + 1), len(lines) * (size // len(block.encode("utf-8")) + 1)


def run_verify(path, *args):
    """在一个新的 Python 进程里跑 --verify，返回 (秒, 峰值 RSS MB)。外面包一层，RUSAGE_CHILDREN 只数这一次。"""
    command = [sys.executable, str(HERE / "answer_with_sources.py"), "--verify", str(path), "--json", *args]
    probe = ("import resource, subprocess, sys, time; started = time.perf_counter(); "
             f"subprocess.run({command!r}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); "
             "print(time.perf_counter() - started, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    seconds, kilobytes = done.stdout.split()
    return float(seconds), int(kilobytes) / 1024


def main():
    with tempfile.TemporaryDirectory() as folder:
        rss = {}
        for label, size in (("20 MB", 20_000_000), ("200 MB", 200_000_000)):
            path = Path(folder) / f"small-{label[:-3]}.jsonl"
            path.write_text(small_records(size), encoding="utf-8")
            seconds, peak = run_verify(path, "--jobs", "2")
            rss[label] = peak
            print(f"1. {label} 输入：{seconds:.1f} 秒，峰值内存 {peak:.1f} MB", flush=True)
            path.unlink()
        print(f"   峰值内存之比 200 MB / 20 MB = {rss['200 MB'] / rss['20 MB']:.2f}（目标 ≤ 1.5）")
        text, count = full_records(20_000_000)
        path = Path(folder) / "full.jsonl"
        path.write_text(text, encoding="utf-8")
        speed = {}
        for jobs in (1, 2):
            seconds, _ = run_verify(path, "--jobs", str(jobs))
            speed[jobs] = count / seconds
            print(f"2. --jobs {jobs}：{count} 条 {seconds:.1f} 秒，{speed[jobs]:.0f} 条/秒", flush=True)
        print(f"   --jobs 2 / --jobs 1 = {speed[2] / speed[1]:.2f}（目标 ≥ 1.7）")
    return 0


if __name__ == "__main__":
    started = time.perf_counter()
    code = main()
    print(f"（全部用时 {time.perf_counter() - started:.0f} 秒）", file=sys.stderr)
    sys.exit(code)
