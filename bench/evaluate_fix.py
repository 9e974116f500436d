"""衡量 --fix 的确定性修正：引错、没引的句子能不能改到对的资料上；没有依据的句子会不会被“修”成通过。

标注集是这样做出来的（中文来自 CiteCheck dev，英文和中文 NAS 句子来自内置的模拟页面）：
  · 每条陈述和 3 条别的陈述的资料放在一起，共 4 条资料，它自己的资料放在随机的位置——对的来源是已知的；
  · 有依据的陈述（label 1）做成两种坏回答：引错编号（miscited）和不写引用（uncited）；
  · 没有依据的陈述（label 0）和手写的编造句子也做成这两种，外加引用它自己的资料（fabricated）。
按 idx 的奇偶分成两半：修正的常数只在偶数一半上选，另一半的数字才是结果。

  python -m bench.evaluate_fix                      # 两半各自的结果
  python -m bench.evaluate_fix --coverage 0.5,0.6   # 扫描修正用的覆盖率门槛
"""
import argparse
import json
import random
from pathlib import Path

from fake_metaso import ENGLISH_PAGES, PAGE_SETS
from sourced_answers.checker import Source, SupportRule, citations_in, strip_citation_marks
from sourced_answers.steps.repair import REPAIR_COVERAGE, fix_citations

HERE = Path(__file__).resolve().parent.parent  # 仓库根目录
DEFAULT_DATA = HERE.parent / "shared" / "citecheck" / "dev.jsonl"
POOL = 4

# 模拟页面上的句子：(资料序号, 句子, 有没有依据)。有依据的基本照着页面写，没依据的是手写的编造或歪曲。
NAS_CASES = [
    (0, "家用至少选两盘位，方便做 RAID1 镜像", True),
    (0, "需要转码 4K 视频时选带核显的 Intel 型号，核显可以硬件解码", True),
    (0, "跑 Docker 或虚拟机建议 8GB 内存起步，最好选可以自己加内存条的机型", True),
    (1, "RAID5 至少三块盘，可以容忍一块盘损坏", True),
    (1, "RAID 不是备份，误删文件时 RAID 会把错误同步到所有盘上", True),
    (3, "组 RAID 的 NAS 建议用 CMR 硬盘，SMR 硬盘重建阵列时写入很慢", True),
    (4, "数据至少保存三份，放在两种不同的介质上，其中一份放在异地", True),
    (1, "NAS 不需要任何备份，RAID 就够了", False),
    (0, "群晖的 NAS 系统比威联通稳定得多，适合所有家庭", False),
    (3, "SMR 硬盘比 CMR 硬盘更适合组建 RAID 阵列", False),
    (2, "把管理界面直接暴露到公网是最方便也最安全的做法", False),
]
NAS_EN_CASES = [
    (0, "A two-bay NAS lets you mirror your data with RAID 1", True),
    (1, "RAID 5 needs at least three disks and survives the loss of one disk", True),
    (1, "RAID is not a backup, because deleted files disappear from every disk at once", True),
    (2, "Do not expose the NAS admin page directly to the internet; use a VPN instead", True),
    (3, "Use CMR drives in a RAID array, because SMR drives rebuild very slowly", True),
    (4, "Keep three copies of your data on two kinds of media, with one copy off site", True),
    (1, "RAID 5 works perfectly with only two disks and never needs a rebuild", False),
    (0, "Every home NAS should run a full Windows Server licence for best results", False),
    (3, "SMR drives are the best choice for any RAID array you build at home", False),
]


def citecheck_rows(path):
    rows = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        statement = " ".join(strip_citation_marks(row["statement"]).split()).rstrip("。.")
        quote = strip_citation_marks(row["quote"])
        rows.append({"idx": row["idx"], "statement": statement, "own": quote, "supported": row["label"] == 1})
    return rows


def page_rows(cases, pages, start):
    texts = [page["title"] + "\n" + page["text"] for page in pages]
    return [{"idx": start + number, "statement": sentence, "own": texts[source], "supported": supported,
             "pages": texts, "right": source}
            for number, (source, sentence, supported) in enumerate(cases)]


def build_case(row, rows, kind, rng):
    """一条陈述 → (回答, 资料, 对的编号)。kind：miscited、uncited、own（引用它自己的资料）。"""
    if "pages" in row:
        sources = [Source(text=text) for text in row["pages"]]
        right = row["right"] + 1
    else:
        others = [r["own"] for r in rng.sample(rows, POOL + 2) if r["own"] != row["own"]][:POOL - 1]
        texts = others[:]
        right = rng.randrange(POOL)
        texts.insert(right, row["own"])
        sources = [Source(text=text) for text in texts]
        right += 1
    if kind == "uncited":
        answer = row["statement"] + "。"
    elif kind == "own":
        answer = f"{row['statement']} [{right}]。"
    else:
        wrong = rng.choice([n for n in range(1, len(sources) + 1) if n != right])
        answer = f"{row['statement']} [{wrong}]。"
    return answer, sources, right


def evaluate(rows, all_rows, rule, coverage, seed=7):
    rng = random.Random(seed)
    counts = {"bad_supported": 0, "repaired": 0, "repaired_right": 0, "unsupported": 0, "made_to_pass": 0,
              "passing_untouched": 0, "passing": 0}
    for row in rows:
        kinds = ["miscited", "uncited"] + ([] if row["supported"] else ["own"])
        for kind in kinds:
            answer, sources, right = build_case(row, all_rows, kind, rng)
            fixed, repairs, report = fix_citations(answer, sources, rule, coverage_needed=coverage)
            if row["supported"]:
                counts["bad_supported"] += 1
                if repairs:
                    counts["repaired"] += 1
                    counts["repaired_right"] += citations_in(fixed) == [right]
            else:
                counts["unsupported"] += 1
                counts["made_to_pass"] += bool(repairs) and report.passed
        if row["supported"]:
            answer, sources, right = build_case(row, all_rows, "own", rng)
            fixed, repairs, report = fix_citations(answer, sources, rule, coverage_needed=coverage)
            counts["passing"] += 1
            counts["passing_untouched"] += fixed == answer
    return counts


def summary(name, counts):
    bad = counts["bad_supported"] or 1
    repaired = counts["repaired"] or 1
    return (f"{name}：有依据但引错/没引的 {counts['bad_supported']} 句，修正了 {counts['repaired']} 句"
            f"（{counts['repaired'] / bad:.1%}），其中改到对的资料 {counts['repaired_right']} 句"
            f"（{counts['repaired_right'] / repaired:.1%}）；没有依据的 {counts['unsupported']} 句，"
            f"被修成通过 {counts['made_to_pass']} 句；原本就引对的 {counts['passing']} 句里没被改动的 "
            f"{counts['passing_untouched']} 句")


def main(argv=None):
    parser = argparse.ArgumentParser(description="衡量 --fix 的确定性修正。")
    parser.add_argument("--data", default=str(DEFAULT_DATA))
    parser.add_argument("--coverage", default=str(REPAIR_COVERAGE), help="逗号分隔的覆盖率门槛")
    parser.add_argument("--threshold", type=float, default=None, help="支持分的下限（默认用拟合的切点）")
    args = parser.parse_args(argv)
    rule = SupportRule("score", args.threshold)
    rows = citecheck_rows(args.data)
    pages = page_rows(NAS_CASES, PAGE_SETS["nas"], 10_000_000) + page_rows(NAS_EN_CASES, ENGLISH_PAGES, 20_000_000)
    for coverage in (float(value) for value in args.coverage.split(",")):
        print(f"覆盖率门槛 {coverage}")
        for parity, name in ((0, "调参的一半（idx 偶数）"), (1, "留出的一半（idx 奇数）")):
            half = [r for r in rows if r["idx"] % 2 == parity]
            print("  " + summary(f"CiteCheck {name}", evaluate(half, rows, rule, coverage)))
        print("  " + summary("模拟页面（中文 + 英文，手写）", evaluate(pages, rows, rule, coverage)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
