"""摘录答没答到问题：在内置的演示页面上问 25 个问题（中文 13 个、英文 12 个），每个问题事先写好一个人会挑的那一句
（下面的 QUESTIONS，写在实现摘录之前；之后没有再改），看摘录里有没有它；并排的是自带的 SmolLM2-135M 写的回答
（--with-model：每个问题十几秒）。都走用户的那条路：--demo --json。内置的模拟秘塔不按相关程度排搜索结果（每个问题
都是同样的顺序，真的秘塔会把讲这件事的网页排在前面），所以默认读全部 5 个网页（--read 5）：量的是摘录在读到的网页里
挑得对不对；--read 2 时（quickstart 的默认）也打印一行，那时讲这件事的网页常常没读到，只有它的摘要。

  python -m bench.evaluate_excerpts                # 只量摘录（几秒）
  python -m bench.evaluate_excerpts --with-model   # 并排量自带的模型（要先装好：--install-local-model）

打印每个问题：摘录有没有那一句、核对通没通过；自带的模型同样两项。最后是比例（目标：摘录有那一句的 ≥ 80%）。
"""
import argparse
import io
import json
import sys

import answer_with_sources
from sourced_answers.cli.context import Environment

# (问题, 一个人会挑的那一句里的一段)
QUESTIONS = [
    ("家用 NAS 怎么选", "家用至少选两盘位"),
    ("NAS 买几盘位的好", "家用至少选两盘位"),
    ("想用 NAS 转码 4K 视频要什么 CPU", "需要转码 4K 视频时选带核显的 Intel 型号"),
    ("NAS 跑 Docker 要多大内存", "跑 Docker 或虚拟机建议 8GB 起步"),
    ("RAID5 最少要几块盘", "RAID5 至少三块盘"),
    ("RAID1 和 RAID5 有什么区别", "RAID1 是镜像，两块盘存同样的数据"),
    ("做了 RAID 还需要备份吗", "RAID 不是备份"),
    ("怎么安全地远程访问家里的 NAS", "远程访问优先使用 VPN 或 Tailscale"),
    ("NAS 管理员账号怎么设置更安全", "管理员账号要开启两步验证"),
    ("NAS 该用 CMR 还是 SMR 硬盘", "组 RAID 的 NAS 建议用 CMR 硬盘"),
    ("什么是 3-2-1 备份原则", "数据至少保存三份"),
    ("新买的硬盘要先做什么", "新盘到手先做一次完整的坏道检测"),
    ("快照能代替异地备份吗", "不能代替异地备份"),
    ("How should I choose a home NAS?", "pick at least two bays"),
    ("How many disks does RAID 5 need?", "RAID 5 needs at least three disks"),
    ("Is RAID a backup?", "RAID is not a backup"),
    ("How much RAM do I need to run Docker on a NAS?", "8GB of RAM is a sensible start"),
    ("Which CPU should I get to transcode 4K video?", "pick an Intel CPU with integrated graphics"),
    ("How can I access my NAS remotely and safely?", "Use a VPN or a mesh tool such as Tailscale"),
    ("Should I use CMR or SMR drives in a NAS?", "Use CMR drives in a RAID array"),
    ("What is the 3-2-1 backup rule?", "Keep at least three copies of your data"),
    ("Do snapshots replace an off-site backup?", "do not replace an off-site copy"),
    ("What is the difference between RAID 1 and RAID 5?", "RAID 1 mirrors the same data on two disks"),
    ("How fast is a gigabit port?", "a gigabit port tops out at about 110 MB/s"),
    ("Are 7200 rpm drives louder than 5400 rpm drives?", "7200 rpm drive is faster but louder"),
]
TARGET = 0.8


def answered(question: str, *args: str) -> dict:
    """在本进程里运行一次 --demo --json，返回记录（出错时是空的记录）。"""
    out = io.StringIO()
    environment = Environment(stdout=out, stderr=io.StringIO(), environ={"PATH": ""})
    answer_with_sources.main([question, "--demo", "--json", *args], environment)
    try:
        return json.loads(out.getvalue())
    except ValueError:
        return {"answer": "", "passed": False}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="摘录答没答到问题（并排：自带的模型）。")
    parser.add_argument("--with-model", action="store_true", help="并排量自带的 SmolLM2-135M（每个问题十几秒）")
    args = parser.parse_args(argv)
    columns = [("摘录", ["--excerpts", "--read", "5"]), ("摘录（--read 2）", ["--excerpts", "--read", "2"])]
    columns += [("SmolLM2-135M", ["--local-model", "--read", "5"])] if args.with_model else []
    found = {name: [] for name, _ in columns}
    passed = {name: [] for name, _ in columns}
    for question, wanted in QUESTIONS:
        cells = []
        for name, extra in columns:
            record = answered(question, *extra)
            hit = wanted.lower() in (record.get("answer") or "").lower()
            found[name].append(hit)
            passed[name].append(bool(record.get("passed")))
            cells.append(f"{name}：{'有' if hit else '没有'}那一句、核对{'通过' if record.get('passed') else '没通过'}")
        print(f"{question}（{wanted}）——" + "；".join(cells), flush=True)
    for name, _ in columns:
        share = sum(found[name]) / len(QUESTIONS)
        target = f"（目标 ≥ {TARGET:.0%}）" if name == "摘录" else ""
        print(f"{name}：{sum(found[name])} / {len(QUESTIONS)} = {share:.0%} 的问题有那一句，"
              f"{sum(passed[name])} / {len(QUESTIONS)} 通过核对{target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
