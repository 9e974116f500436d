"""挑选段落有没有用：问题的答案句有多大比例进了提示词，直接截前 N 个字 vs 挑选相关段落。

用内置的两组页面：nas（短页面，整页都放得下）和 nas-long（同样的正文，前面加了约 1900 字的导航、
推荐列表和评论，像很多真实网页那样）。每个问题对应一个页面里能回答它的那一句话。
  python -m bench.evaluate_context
"""
import sys

from fake_metaso import PAGE_SETS
from sourced_answers.search.passages import select_passages

# (问题, 页面序号, 能回答它的那句话里的一段)
CASES = [
    ("家用 NAS 要几个盘位", 0, "家用至少选两盘位，方便做 RAID1 镜像"),
    ("转码 4K 视频选什么 CPU", 0, "需要转码 4K 视频时选带核显的 Intel 型号"),
    ("NAS 内存多大合适", 0, "跑 Docker 或虚拟机建议 8GB 起步"),
    ("NAS 网口选千兆还是 2.5G", 0, "预算够的话选 2.5GbE 网口"),
    ("RAID5 最少几块盘", 1, "RAID5 至少三块盘"),
    ("RAID 能代替备份吗", 1, "RAID 不是备份"),
    ("RAID5 重建有什么风险", 1, "重建期间如果再坏一块盘，数据就会丢失"),
    ("NAS 怎么安全地远程访问", 2, "远程访问优先使用 VPN 或 Tailscale"),
    ("NAS 管理员账号怎么设置", 2, "管理员账号要开启两步验证"),
    ("NAS 硬盘选 CMR 还是 SMR", 3, "组 RAID 的 NAS 建议用 CMR 硬盘"),
    ("硬盘转速选 5400 还是 7200", 3, "5400 转的盘安静省电"),
    ("新硬盘到手要做什么", 3, "新盘到手先做一次完整的坏道检测"),
    ("3-2-1 备份原则是什么", 4, "数据至少保存三份，放在两种不同的介质上"),
    ("快照能代替异地备份吗", 4, "不能代替异地备份"),
]


def share(pages, budget, choose):
    found = sum(answer in choose(pages[index]["text"], question, budget) for question, index, answer in CASES)
    return found / len(CASES)


def main():
    print("答案句进入提示词的比例（每页预算 = --max-chars）")
    print(f"{'页面':<10}{'预算':>6}{'截前 N 字':>12}{'挑选段落':>10}")
    for name in ("nas", "nas-long"):
        for budget in (300, 600, 1000, 2000):
            before = share(PAGE_SETS[name], budget, lambda text, question, size: text[:size])
            after = share(PAGE_SETS[name], budget, select_passages)
            print(f"{name:<10}{budget:>6}{before:>12.0%}{after:>12.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
