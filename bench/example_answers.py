"""项目的例子回答：核对要判对的各种结构、各种伪装，以及小模型真会写成的样子，中文和英文都有。

每个例子是一条 --verify 的输入（answer、sources）加上一个认真的读者期待的结论：
  expect = "pass"           这个回答应当通过；
  expect = ("kind", …)      应当被标出，而且问题里有这几种（可以还有别的）；
  expect = "flag"           应当被标出（哪一种都行：比如编造的一句话，说“对不上”“数字不符”都对）；
  miss = "为什么"           核对现在判不对它（知道的漏判、误报，写明原因）：测试断言它仍然判错，哪天判对了测试会提醒
                            把 miss 去掉。
bench/compare_verdicts.py 在两个版本上跑它们（连同 CiteCheck dev），列出结论变了的；tests/test_example_answers.py
断言每一个都符合期待。新的形状、新的伪装、用户报来的回答，都加在这里。
这些回答和资料是为本项目写的（资料大多是 --demo 的虚构网页），不来自任何数据集。
"""
from typing import Any

from sourced_answers.search.demo_pages import ENGLISH_PAGES, NAS_PAGES

NAS = [{"title": page["title"], "text": page["text"]} for page in NAS_PAGES]
NAS_EN = [{"title": page["title"], "text": page["text"]} for page in ENGLISH_PAGES]
PRICE = [{"title": "某四盘位 NAS 评测", "text": "这款四盘位 NAS 售价 2999 元，内置 4GB 内存，可以扩展到 16GB。"}]
EVENTS = [{"title": "颁奖礼回顾", "text": (
    "第60届格莱美奖颁奖典礼于2018年1月28日在纽约举行。布鲁诺·马尔斯获得年度专辑，这是他第二次获得该奖项。"
    "本届比赛于10月15日至16日进行决赛，共有12支队伍参加。")}]
ECONOMY = [{"title": "年度统计公报", "text": (
    "全年国内生产总值为27.21万亿元，比上年增长5.2%。全年社会消费品零售总额30782.9亿元。"
    "全国铁路营业里程达到3万公里，其中高铁2.5万公里。")}]
FACTS = [{"title": "物理变化与化学变化", "text": (
    "石蜡熔化属于化学变化吗？石蜡熔化只是状态改变，没有生成新物质，属于物理变化。"
    "汽车的驱动方式有两种：全时四驱系统或者非全时四驱系统，城市 SUV 多用适时四驱。"
    "手指受伤后患者不能握紧拳头，需要休息两周。")}]

EXAMPLES: list[dict[str, Any]] = [
    # ---------- 中文：基本的结论 ----------
    {"id": "zh-good", "sources": NAS, "expect": "pass", "answer": (
        "家用 NAS 至少选两盘位，方便做 RAID1 镜像 [1]。需要转码 4K 视频时选带核显的 Intel 型号 [1]。\n\n"
        "RAID5 至少三块盘，可以容忍一块盘损坏 [2]。RAID 不是备份，重要数据仍然要另外备份 [2]。\n\n"
        "远程访问优先使用 VPN 或 Tailscale，不要把管理界面直接暴露到公网 [3]。")},
    {"id": "zh-wrong-source", "sources": NAS, "expect": ("weak_support",), "answer": (
        "家用 NAS 至少选两盘位，方便做 RAID1 镜像 [1]。\n\n需要转码 4K 视频时选带核显的 Intel 型号 [2]。")},
    {"id": "zh-uncited", "sources": NAS, "expect": ("uncited_paragraph",), "answer": (
        "家用 NAS 至少选两盘位，方便做 RAID1 镜像。\n\n需要转码 4K 视频时选带核显的 Intel 型号。")},
    {"id": "zh-invented", "sources": NAS, "expect": "flag", "answer": (
        "家用 NAS 至少选两盘位，方便做 RAID1 镜像 [1]。\n\n群晖的 NAS 系统比威联通稳定得多，适合所有家庭 [1]。")},
    {"id": "zh-wrong-number", "sources": NAS, "expect": ("number_mismatch",), "answer": (
        "家用 NAS 至少选两盘位，方便做 RAID1 镜像 [1]。\n\nRAID5 至少两块盘就能容忍一块盘损坏 [2]。")},
    {"id": "zh-missing-source", "sources": NAS, "expect": ("missing_source",), "answer": (
        "家用 NAS 至少选两盘位，方便做 RAID1 镜像 [7]。")},
    {"id": "zh-thinking", "sources": NAS, "expect": "pass", "answer": (
        "<think>用户问 NAS，我先想想 [9]。</think>\n\n家用 NAS 至少选两盘位，方便做 RAID1 镜像 [1]。")},
    {"id": "zh-copied-tags", "sources": NAS, "expect": ("copied_markup",), "answer": (
        '<source id="1">家用 NAS 至少选两盘位，方便做 RAID1 镜像。</source>')},
    # ---------- 说反了，以及否定的各种伪装 ----------
    {"id": "zh-flip", "sources": NAS, "expect": "flag", "answer": "RAID5 至少三块盘，不能容忍一块盘损坏 [2]。"},
    {"id": "zh-flip-bold", "sources": NAS, "expect": "flag", "answer": "RAID5 至少三块盘，**不**能容忍一块盘损坏 [2]。"},
    {"id": "zh-flip-html", "sources": NAS, "expect": "flag", "answer": "RAID5 至少三块盘，<b>不</b>能容忍一块盘损坏 [2]。"},
    {"id": "zh-flip-zero-width", "sources": NAS, "expect": "flag",
     "answer": "RAID5 至少三块盘，不\u200b能容忍一块盘损坏 [2]。"},
    {"id": "zh-flip-space", "sources": NAS, "expect": "flag", "answer": "RAID5 至少三块盘，不 能容忍一块盘损坏 [2]。"},
    {"id": "zh-flip-brackets", "sources": NAS, "expect": "flag", "answer": "RAID5 至少三块盘，（不）能容忍一块盘损坏 [2]。"},
    {"id": "zh-flip-traditional", "sources": NAS, "expect": "flag",
     "answer": "NAS 並不適合作為家裡的主備份，電腦和手機裡的照片沒有必要同步到 NAS 上 [5]。"},
    {"id": "zh-negation-agrees", "sources": NAS, "expect": "pass",
     "answer": "不要把 NAS 的管理界面直接暴露到公网，端口映射会让扫描器很快找到你的设备 [3]。"},
    {"id": "zh-source-question", "sources": FACTS, "expect": "pass",
     "answer": "石蜡熔化没有生成新物质，不属于化学变化，属于物理变化 [1]。"},
    {"id": "zh-source-alternative", "sources": FACTS, "expect": "pass",
     "answer": "汽车的驱动方式分为全时四驱系统和非全时四驱系统 [1]。"},
    {"id": "zh-hedge", "sources": FACTS, "expect": "pass", "answer": "手指受伤后患者很难握紧拳头，需要休息两周 [1]。"},
    # ---------- 数字的写法 ----------
    {"id": "zh-price", "sources": PRICE, "expect": "pass", "answer": "这款四盘位 NAS 售价 2999 元，内置 4GB 内存 [1]。"},
    {"id": "zh-price-spaced", "sources": PRICE, "expect": "pass", "answer": "这款四盘位 NAS 售价 2 999 元，内置 4GB 内存 [1]。"},
    {"id": "zh-price-comma", "sources": PRICE, "expect": "pass", "answer": "这款四盘位 NAS 售价 2,999 元，内置 4GB 内存 [1]。"},
    {"id": "zh-price-math-digits", "sources": PRICE, "expect": ("number_mismatch",),
     "answer": "这款四盘位 NAS 售价 𝟑𝟗𝟗𝟗 元，内置 4GB 内存 [1]。"},
    {"id": "zh-price-arabic-indic", "sources": PRICE, "expect": ("number_mismatch",),
     "answer": "这款四盘位 NAS 售价 ٣٩٩٩ 元，内置 4GB 内存 [1]。"},
    {"id": "zh-price-devanagari", "sources": PRICE, "expect": ("number_mismatch",),
     "answer": "这款四盘位 NAS 售价 ३९९९ 元，内置 4GB 内存 [1]。"},
    {"id": "zh-price-superscript", "sources": PRICE, "expect": ("number_mismatch",),
     "answer": "这款四盘位 NAS 售价 ³⁹⁹⁹ 元，内置 4GB 内存 [1]。"},
    {"id": "zh-price-full-width", "sources": PRICE, "expect": ("number_mismatch",),
     "answer": "这款四盘位 NAS 售价 ３９９９ 元，内置 4GB 内存 [1]。"},
    {"id": "zh-price-example", "sources": PRICE, "expect": "pass",
     "answer": "这款四盘位 NAS 内置 4GB 内存，可以扩展到 16GB，比如再加一条 8GB 内存条 [1]。"},
    {"id": "zh-ordinal-chinese", "sources": EVENTS, "expect": "pass",
     "answer": "第六十届格莱美奖颁奖典礼于2018年1月28日在纽约举行 [1]。"},
    {"id": "zh-ordinal-second", "sources": EVENTS, "expect": "pass",
     "answer": "布鲁诺·马尔斯获得年度专辑，这是他第2次获得该奖项 [1]。"},
    {"id": "zh-ordinal-wrong", "sources": EVENTS, "expect": ("number_mismatch",),
     "answer": "第五十届格莱美奖颁奖典礼于2018年1月28日在纽约举行 [1]。"},
    {"id": "zh-day-of-range", "sources": EVENTS, "expect": "pass", "answer": "本届比赛10月16日进行决赛，共有12支队伍参加 [1]。"},
    {"id": "zh-wrong-day", "sources": EVENTS, "expect": ("number_mismatch",),
     "answer": "第60届格莱美奖颁奖典礼于2018年1月29日在纽约举行 [1]。"},
    {"id": "zh-magnitude", "sources": ECONOMY, "expect": "pass",
     "answer": "全年国内生产总值为272100亿元，比上年增长5.2% [1]。"},
    {"id": "zh-magnitude-2", "sources": ECONOMY, "expect": "pass", "answer": "全年社会消费品零售总额约3.07829万亿元 [1]。"},
    {"id": "zh-magnitude-3", "sources": ECONOMY, "expect": "pass", "answer": "全国铁路营业里程达到30000公里，其中高铁2.5万公里 [1]。"},
    {"id": "zh-magnitude-wrong", "sources": ECONOMY, "expect": ("number_mismatch",),
     "answer": "全年国内生产总值为27.12万亿元，比上年增长5.2% [1]。"},
    # ---------- 结构 ----------
    {"id": "zh-table", "sources": NAS, "expect": "pass", "answer": (
        "| 盘位 | 适合 |\n| --- | --- |\n| 两盘位 | 做 RAID1 镜像 [1] |\n| 四盘位 | 照片和视频多的家庭，留出扩容空间 [1] |")},
    {"id": "zh-lead-in-list", "sources": NAS, "expect": "pass", "answer": (
        "选购家用 NAS 要看这几点 [1]：\n\n- 家用至少选两盘位，方便做 RAID1 镜像\n"
        "- 需要转码 4K 视频时选带核显的 Intel 型号\n- 跑 Docker 或虚拟机建议 8GB 内存起步")},
    {"id": "zh-lead-in-list-wrong-item", "sources": NAS, "expect": ("weak_support",), "answer": (
        "选购家用 NAS 要看这几点 [1]：\n\n- 家用至少选两盘位，方便做 RAID1 镜像\n"
        "- RAID5 换盘后要重建阵列，大容量硬盘重建时间长")},
    {"id": "zh-title-line-list", "sources": NAS, "expect": ("weak_support",), "answer": (
        "[2] RAID1 和 RAID5 的区别：\n- RAID5 至少三块盘，可以容忍一块盘损坏\n"
        "- 管理员账号要开启两步验证，关闭默认的 admin 账号")},
    {"id": "zh-title-line-no-colon-wrong-disks", "sources": NAS, "expect": ("number_mismatch",), "answer": (
        "[2] RAID 说明\n- RAID1 需要六块盘\n- RAID5 至少五块盘")},
    {"id": "zh-bold-title-line-no-colon", "sources": NAS, "expect": "pass", "answer": (
        "**[2] RAID1 和 RAID5 的区别**\n\n- RAID1 是镜像，两块盘存同样的数据\n- RAID5 至少三块盘，可以容忍一块盘损坏")},
    {"id": "zh-book-title-line-wrong-item", "sources": NAS, "expect": ("weak_support",), "answer": (
        "[2]《RAID1 和 RAID5 的区别》\n- RAID5 至少三块盘，可以容忍一块盘损坏\n- 管理员账号要开启两步验证，关闭默认的 admin 账号")},
    {"id": "zh-bold-title-colon-bold-items", "sources": NAS, "expect": ("number_mismatch",), "answer": (
        "**[2] RAID 说明**:\n1. **RAID1**：需要三块盘\n2. **RAID5**：至少五块盘")},
    {"id": "zh-nested-lead-in-items", "sources": NAS, "expect": ("number_mismatch",), "answer": (
        "1. **RAID** [2]：\n   - RAID1 需要六块盘\n   - RAID5 至少三块盘，可以容忍一块盘损坏\n"
        "2. **硬盘位** [1]：\n   - 家用至少选两盘位，方便做 RAID1 镜像")},
    {"id": "zh-lead-in-items-cite-themselves", "sources": NAS, "expect": "pass", "answer": (
        "RAID 有几种常见的级别 [2]：\n- RAID1 是镜像，两块盘存同样的数据 [2]\n- RAID5 至少三块盘，可以容忍一块盘损坏 [2]")},
    {"id": "zh-title-line-after-a-cited-sentence", "sources": NAS, "expect": ("weak_support",), "answer": (
        "家用 NAS 至少选两盘位，方便做 RAID1 镜像 [1]。\n[2] RAID 说明：\n- 跑 Docker 或虚拟机建议 8GB 内存起步")},
    {"id": "zh-emoji-citation", "sources": NAS, "expect": ("uncited_paragraph",),
     "answer": "群晖的 NAS 系统比威联通稳定得多，适合所有家庭。👍 [1]"},
    {"id": "zh-table-long-header", "sources": NAS, "expect": "pass", "answer": (
        "| 型号规格 | 硬盘盘位数量 | 适合什么样的家庭 |\n| --- | :---: | ---: |\n| 两盘位 | 做 RAID1 镜像 [1] | 小家庭 [1] |")},
    {"id": "zh-long-lead-in", "sources": NAS, "expect": "pass", "answer": (
        "根据资料，家用 NAS 在选购时需要重点考虑下面这几个方面 [1]：\n\n- 家用至少选两盘位，方便做 RAID1 镜像\n"
        "- 需要转码 4K 视频时选带核显的 Intel 型号")},
    {"id": "zh-bold-lead-in-numbered", "sources": NAS, "expect": ("weak_support",), "answer": (
        "**选购家用 NAS 要看这几点 [1]：**\n1. 家用至少选两盘位，方便做 RAID1 镜像\n2. RAID5 换盘后要重建阵列，大容量硬盘重建时间长")},
    {"id": "zh-numbered-citation-first", "sources": NAS, "expect": "pass", "answer": (
        "1. [2] RAID1 是镜像，两块盘存同样的数据\n2. [2] RAID5 至少三块盘，可以容忍一块盘损坏")},
    {"id": "zh-closing-quote-citation", "sources": NAS, "expect": "pass",
     "answer": "“家用 NAS 至少选两盘位！方便做 RAID1 镜像！”[1]"},
    {"id": "en-emoji-citation", "sources": NAS_EN, "expect": ("uncited_paragraph",),
     "answer": "A NAS is the best device for every family. 👍 [1]"},
    {"id": "zh-heading-and-bold", "sources": NAS, "expect": "pass", "answer": (
        "## 硬盘位\n\n**家用至少选两盘位**，方便做 RAID1 镜像 [1]。\n\n## 安全\n\n"
        "管理员账号要**开启两步验证**，关闭默认的 admin 账号 [3]。")},
    # ---------- 小模型常写的样子 ----------
    {"id": "zh-small-model-sources-line", "sources": NAS, "expect": "pass", "answer": (
        "根据资料，家用 NAS 至少选两盘位，方便做 RAID1 镜像 [1]。\n\n"
        "RAID5 至少三块盘，可以容忍一块盘损坏 [2]。\n\n参考资料：[1] [2]")},
    {"id": "zh-small-model-repeats", "sources": NAS, "expect": "flag", "answer": (
        "NAS 是一种存储设备 [1][2][3][4][5]。NAS 是一种存储设备 [1][2][3][4][5]。NAS 可以存储数据 [1]。")},
    # 卡在循环里：每一句都引对了，同一段却写了八遍
    {"id": "zh-loop-cited", "sources": NAS, "expect": ("repeated",), "answer": (
        "家用 NAS 至少选两盘位，方便做 RAID1 镜像 [1]。\n\n" * 8)},
    # ---------- 英文 ----------
    {"id": "en-loop-cited", "sources": NAS_EN, "expect": ("repeated",), "answer": (
        "RAID 5 needs at least three disks and survives the failure of one disk [2].\n\n" * 5)},
    {"id": "en-good", "sources": NAS_EN, "expect": "pass", "answer": (
        "Pick at least two bays so that you can mirror your data with RAID 1 [1].\n\n"
        "RAID 5 needs at least three disks and survives the failure of one disk [2].")},
    {"id": "en-wrong-number", "sources": NAS_EN, "expect": ("number_mismatch",),
     "miss": "英文句子的数不单独下结论：同一处换了数、找不到的数在英文的留出数据（AttributionBench）上不够准；"
             "two 在资料别处出现过，支持分也看不出",
     "answer": "RAID 5 needs at least two disks and survives the failure of one disk [2]."},
    {"id": "en-table", "sources": NAS_EN, "expect": "pass", "answer": (
        "| Level | Disks |\n|---|---|\n| RAID 5 | needs at least three disks [2] |")},
    {"id": "en-numbered-citation-first", "sources": NAS_EN, "expect": "pass", "answer": (
        "1. [2] RAID 1 mirrors the same data on two disks\n2. [2] RAID 5 needs at least three disks")},
    {"id": "en-lead-in-list", "sources": NAS_EN, "expect": "pass", "answer": (
        "When choosing a home NAS, consider the following [1]:\n\n"
        "- pick at least two bays so that you can mirror your data with RAID 1\n"
        "- 8GB of RAM is a sensible start if you plan to run Docker containers")},
    {"id": "en-lead-in-list-wrong-item", "sources": NAS_EN, "expect": ("weak_support",), "answer": (
        "When choosing a home NAS, consider the following [1]:\n\n"
        "- pick at least two bays so that you can mirror your data with RAID 1\n"
        "- turn on two-factor authentication for the admin account and disable the default admin user")},
    {"id": "en-title-line-no-colon-wrong-disks", "sources": NAS_EN, "expect": ("weak_support",), "answer": (
        "[2] RAID 1 vs RAID 5 explained\n- RAID 1 is faster than any other level for every workload\n"
        "- RAID 5 needs at least three disks")},
    {"id": "en-title-line-no-colon", "sources": NAS_EN, "expect": "pass", "answer": (
        "[1] How to choose a home NAS\n\n- pick at least two bays so that you can mirror your data with RAID 1\n"
        "- 8GB of RAM is a sensible start if you plan to run Docker containers")},
    {"id": "en-nested-lead-in-items", "sources": NAS_EN, "expect": ("weak_support",), "answer": (
        "1. **RAID levels** [2]:\n   - RAID 1 mirrors the same data on two disks\n"
        "   - RAID 5 works best with cheap USB sticks")},
    {"id": "en-lead-in-items-cite-themselves", "sources": NAS_EN, "expect": "pass", "answer": (
        "Storage Notes explains what each level gives you [2]:\n"
        "- RAID 1 mirrors the same data on two disks [2]\n- RAID 5 needs at least three disks [2]")},
    {"id": "en-title-line-after-a-cited-sentence", "sources": NAS_EN, "expect": ("weak_support",), "answer": (
        "Pick at least two bays so that you can mirror your data with RAID 1 [1].\n[2] RAID 1 vs RAID 5 explained:\n"
        "- 8GB of RAM is a sensible start if you plan to run Docker containers")},
    {"id": "en-small-model", "sources": NAS_EN, "expect": "flag", "answer": (
        "**Answer:** A NAS is a great device for every family and it never fails [1].\n\n"
        "Sources: [1] How to choose a home NAS")},
]
