"""引用核对的速度：10 KB、100 KB、1 MB 的回答各核对一次，打印耗时和相互之间的比值。

线性的实现里，10 倍长的回答大约花 10 倍的时间（比值约 10）。
还测两种以前会变成平方复杂度的输入：一整行没有引用的长文字，和一整行都是引用。
再测资料长度：同一个回答对 10 KB 和 100 KB 的资料各核对一次。每条资料只建一次索引（每个词出现在哪几句），
一句话的代价只看它自己的词，不随资料变长：目标比值 ≤ 2。
最后是整个 --verify（在本进程里调用 main，含读文件、核对、“可以 --fix 几处”的提示和输出）对两种以前是平方复杂度的
输入：很多条资料（每句都引错了资料，要找更合适的一条）和很多个没有引用的列表项，以及写审阅页时的很多个列表项
（各不相同的、一模一样的）；输入多 10 倍，目标用时比值 ≤ 15。
还有各种“词”的形状：一长串数字、字母和数字交替、标点、“[”后面一长串空格、“月”后面一长串空格、全角字符，
各 1k / 10k / 100k 个字符，同时放在回答和资料里：每长 10 倍用时约长 10 倍（目标比值 ≤ 15），没有在长串上来回回溯的正则。
  python -m bench.benchmark_check
"""
import io
import json
import tempfile
import time
from pathlib import Path

import answer_with_sources
from fake_metaso import NAS_PAGES
from sourced_answers.checker import Source, check_answer
from sourced_answers.cli.context import Environment
from sourced_answers.core.collection import fewer_collections
from sourced_answers.model.prompts import fitted_prompt

SOURCES = [Source(title=p["title"], text=p["text"]) for p in NAS_PAGES]
PARAGRAPH = ("家用 NAS 至少选两盘位，方便做 RAID1 镜像 [1]。需要转码 4K 视频时选带核显的 Intel 型号 [2]。"
             "RAID5 至少三块盘，可以容忍一块盘损坏 [2]。\n\n- 远程访问优先使用 VPN 或 Tailscale [3]\n"
             "- 管理员账号要开启两步验证 [3]\n\n")


def answer_of_size(size):
    repeats = size // len(PARAGRAPH.encode("utf-8")) + 1
    return (PARAGRAPH * repeats).encode("utf-8")[:size].decode("utf-8", errors="ignore")


def distinct_answer(size):
    """约 size 字节、每句都不一样的回答（每句有自己的编号）：一模一样的句子只比较一次，这里要量的是每一句的代价。"""
    sentences, length, number = [], 0, 0
    while length < size:
        sentence = f"RAID5 至少需要三块硬盘，第 {number} 台 NAS 可以容忍一块硬盘损坏 [{number % 5 + 1}]。\n\n"
        sentences.append(sentence)
        length += len(sentence.encode("utf-8"))
        number += 1
    return "".join(sentences)


FRESH = iter(range(1_000_000))


def fresh(sources):
    """同样的资料换一个标题：核对会按（标题，正文）缓存资料的索引和结论，不换的话第二次量到的只是查缓存。"""
    tag = next(FRESH)
    return [Source(title=f"{source.title} #{tag}", text=source.text) for source in sources]


def timed(answer):
    sources = fresh(SOURCES)
    started = time.perf_counter()
    report = check_answer(answer, sources)
    return time.perf_counter() - started, len(report.problems)


def main():
    results = {}
    print(f"{'输入':<28}{'字节':>10}{'秒':>10}{'问题数':>8}")
    for label, size in (("10 KB", 10_000), ("100 KB", 100_000), ("1 MB", 1_000_000)):
        answer = answer_of_size(size)
        seconds, problems = timed(answer)
        results[label] = seconds
        print(f"{label + ' 的回答':<28}{len(answer.encode('utf-8')):>10}{seconds:>10.3f}{problems:>8}")
    for label, answer in (("一行 16000 字、没有引用", "硬盘" * 8000),
                          ("一行 100000 个引用", "[1]" * 100_000),
                          ("1 MB 没有句号的中文", "RAID5 至少三块盘" * 50_000),
                          ("1 MB 一句话、句末一个引用", "RAID5 至少三块盘" * 50_000 + "[2]")):
        seconds, problems = timed(answer)
        print(f"{label:<28}{len(answer.encode('utf-8')):>10}{seconds:>10.3f}{problems:>8}")
    print(f"比值：100 KB / 10 KB = {results['100 KB'] / results['10 KB']:.1f}，"
          f"1 MB / 100 KB = {results['1 MB'] / results['100 KB']:.1f}（线性约为 10）")
    source_length()


def long_sources(size):
    """把内置页面的正文一遍遍接起来（每遍改一个编号，句子不完全重复），直到每条资料约 size 字节。"""
    sources = []
    for page in SOURCES:
        pieces = []
        length = 0
        copy = 0
        while length < size:
            piece = page.text.replace("。", f"（第 {copy} 份）。")
            pieces.append(piece)
            length += len(piece.encode("utf-8"))
            copy += 1
        sources.append(Source(title=page.title, text="\n\n".join(pieces)))
    return sources


def source_length(rounds=3):
    """资料变长时：每一句的代价只看它自己的词，不随资料变长；资料只在第一次用到时建一次索引（随资料总长线性）。
    每组资料上量两个长度的回答，两者之差就是多出来的那些句子的代价（索引在两次里各建一次，相减就抵消了）。"""
    small, large = distinct_answer(10_000), distinct_answer(100_000)
    marginal, total = {}, {}
    for label, size in (("10 KB", 10_000), ("100 KB", 100_000)):
        sources = long_sources(size)
        best = {}
        for name, answer in (("small", small), ("large", large)):
            best[name] = float("inf")
            for _ in range(rounds):
                renamed = fresh(sources)  # 新的资料：索引、比较结果都从头算
                started = time.perf_counter()
                check_answer(answer, renamed)
                best[name] = min(best[name], time.perf_counter() - started)
        marginal[label], total[label] = best["large"] - best["small"], best["large"]
        print(f"每条 {label} 的资料：10 KB 的回答 {best['small']:.3f} 秒，100 KB 的回答 {best['large']:.3f} 秒，"
              f"多出的 90 KB 回答用 {marginal[label]:.3f} 秒（{rounds} 次里最快的）")
    ratio = marginal["100 KB"] / marginal["10 KB"]
    print(f"比值：资料 100 KB / 10 KB 时，多出的那些句子的用时 = {ratio:.2f}（目标 ≤ 2）；"
          f"整次核对（含建索引）= {total['100 KB'] / total['10 KB']:.2f}（资料总长 10 倍，目标 ≤ 15）")


def many_sources(count):
    """count 条互不相同的资料；回答的第 i 句照抄第 i 条资料，却引用了第 i+1 条（每句都要找更合适的资料）。"""
    sources, sentences = [], []
    for number in range(count):
        page = NAS_PAGES[number % len(NAS_PAGES)]
        text = page["text"].replace("。", f"（型号 DS{number}）。")  # 每条资料有自己的型号：候选要靠它挑出来
        sources.append({"title": f"{page['title']} {number}", "text": text})
        first = text.split("。")[1].strip() if "。" in text else text
        sentences.append(f"{first} [{(number + 1) % count + 1}]。")
    return {"answer": "\n\n".join(sentences), "sources": sources}


def many_list_items(count):
    """count 个没有引用的列表项（每项都是资料里的一句话），资料是内置的 5 个页面。"""
    items = "\n".join(f"- RAID5 至少三块盘，可以容忍一块盘损坏（第 {number} 项）" for number in range(count))
    return {"answer": "以下几点：\n\n" + items, "sources": [{"title": s.title, "text": s.text} for s in SOURCES]}


def inherited_list_items(count):
    """“[2] RAID 说明”下面 count 个没写引用的列表项：每项继承资料 [2]、照样核对（引出行连同它列出的项一起判，
    一起判的项数有上限，不能每多一项就把引出行重判一遍）。"""
    items = "\n".join(f"- RAID5 至少三块盘，可以容忍一块盘损坏（第 {number} 项）" for number in range(count))
    return {"answer": "[2] RAID 说明\n\n" + items, "sources": [{"title": s.title, "text": s.text} for s in SOURCES]}


def same_list_items(count):
    """count 个一模一样、没有引用的列表项（审阅页要把每个问题对到它那一项上，不能每项对所有问题）。"""
    items = "\n".join("- NAS 两盘位" for _ in range(count))
    return {"answer": "家用 NAS 两盘位 [1]。\n\n" + items, "sources": [{"title": "资料", "text": "家用 NAS 两盘位。"}]}


def missing_numbers(count):
    """一句话引了 count 个不存在的编号（每个编号一个问题、每个都带着整句话时，输出是平方级的）。"""
    answer = "RAID 1 mirrors data " + "".join(f"[{n}]" for n in range(2, count + 2)) + "."
    return {"answer": answer, "sources": [{"title": "资料", "text": "RAID 1 mirrors data across two drives."}]}


def numeric_sentences(count):
    """count 句带数字的话，引同一条有 count 个数字的资料（每句都要和资料里的全部数字比：不能每句重算一遍）。"""
    text = "".join(f"第{n}号设备甲乙丙的价格是{n}元。" for n in range(count))
    answer = "".join(f"第{n}号设备甲乙丙的价格是{n + 1}元 [1]。" for n in range(count))
    return {"answer": answer, "sources": [{"title": "价格表", "text": text}]}


def verify_seconds(record, rounds=3, page=False):
    """整个 --verify 的用时（rounds 次里最快的）。每次的资料换一个标题：核对按（标题，正文）留着资料的索引和同一组资料上
    的结论，不换的话第二次量到的只是查缓存。"""
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "saved.json"
        extra = ["--html", str(Path(directory) / "page.html")] if page else []
        best = float("inf")
        for _ in range(rounds):
            tag = next(FRESH)
            renamed = dict(record, sources=[dict(source, title=f"{source.get('title', '')} #{tag}")
                                            for source in record["sources"]])
            path.write_text(json.dumps(renamed, ensure_ascii=False), encoding="utf-8")
            started = time.perf_counter()
            answer_with_sources.main(["--verify", str(path), "--json", *extra],
                                     Environment(stdout=io.StringIO(), stderr=io.StringIO(), environ={}))
            best = min(best, time.perf_counter() - started)
    return best


def verify_scaling():
    for label, build, small, page in (("条资料（每句都引错）", many_sources, 200, False),
                                      ("个没有引用的列表项", many_list_items, 2000, False),
                                      ("个没有引用的列表项，写审阅页", many_list_items, 1000, True),
                                      ("个继承“[2] RAID 说明”的引用的列表项", inherited_list_items, 1000, False),
                                      ("个一样的列表项，写审阅页", same_list_items, 5000, True),
                                      ("个不存在的编号（都在一句话里），写审阅页", missing_numbers, 2000, True),
                                      ("句带数字的话对一条有同样多数字的资料", numeric_sentences, 400, False)):
        first = verify_seconds(build(small), page=page)
        second = verify_seconds(build(small * 10), page=page)
        print(f"--verify {small} {label}：{first:.3f} 秒；{small * 10} {label}：{second:.3f} 秒；"
              f"比值 {second / first:.1f}（线性约为 10，目标 ≤ 15）")


def prompt_fitting():
    """提示词放不下上下文窗口时缩短资料（prompts.fitted_prompt）：5 条资料每条 20 KB / 200 KB，两种形状。"""
    shapes = {"中文句子": lambda n: "RAID5 至少三块盘，可以容忍一块盘损坏。" * (n // 20),
              "一长串“!”": lambda n: "!" * n}
    for label, make in shapes.items():
        timings = []
        for size in (20_000, 200_000):
            sources = [Source(title=f"页面 {n}", text=make(size)) for n in range(5)]
            started = time.perf_counter()
            fitted_prompt("RAID5 要几块盘", sources, 1024, 4096)
            timings.append(time.perf_counter() - started)
        print(f"缩短资料放进上下文窗口（{label}）：每条 20 KB {timings[0]:.3f} 秒，200 KB {timings[1]:.3f} 秒，"
              f"比值 {timings[1] / timings[0]:.1f}（线性约为 10，目标 ≤ 15）")


SHAPES = {
    "数字": lambda n: "1234567890" * (n // 10),
    "字母和数字交替": lambda n: "a1" * (n // 2),
    "大写字母": lambda n: "RAID" * (n // 4),
    "标点": lambda n: "。，！？；、" * (n // 6),
    "[ 后面的空格": lambda n: "[" + " " * (n - 1),
    "月 后面的空格": lambda n: "月" + " " * (n - 1),
    "全角": lambda n: "ＲＡＩＤ５，" * (n // 6),
    "中文数字": lambda n: "三千二百" * (n // 4) + "块",
    # 照抄的提示词标签（copied_markup），完整的和没写完的；问题里引用的句子要变成一行（quote）
    "<source> 标签": lambda n: '<source id="1">' * (n // 15),
    "<source id=": lambda n: '<source id="1' * (n // 13),
    "分行符": lambda n: "\u2028\r" * (n // 2),
    # 说反了的规则（polarity）找否定词和它否定的词；“太短”按内容的字数算时去掉引导语用的词；数字前后的空格；
    # 终端控制序列整个去掉
    "否定词": lambda n: "不能容忍没有自带" * (n // 8),
    "引导语用的词": lambda n: "资料提到如下所示" * (n // 8),
    "数字和单位间的空格": lambda n: "120 亿元 " * (n // 7),
    "终端控制序列": lambda n: "\x1b[31m红\x1b[0m" * (n // 10),
    # 一种读法（reading.py）要去掉、换掉的写法：强调记号、零宽字符、HTML 标签和实体、链接、上标、千位分隔、
    # 汉字之间的空格、括号里的否定词；说反了的范围规则（问句、选择、委婉说法）；表格的分隔行
    "强调记号": lambda n: "**不**能" * (n // 7),
    "零宽字符": lambda n: "不\u200b能" * (n // 3),
    "HTML 标签": lambda n: "<b>不</b>能" * (n // 9),
    "HTML 实体": lambda n: "&#x4e0d;能" * (n // 9),
    "Markdown 链接": lambda n: "[RAID](http://x.y/z)" * (n // 20),
    "上标数字": lambda n: "售价 ³⁹⁹⁹ 元" * (n // 10),
    "千位分隔的数字": lambda n: "2 999 " * (n // 6),
    "汉字之间的空格": lambda n: "不 能 容 忍 " * (n // 8),
    "括号里的否定词": lambda n: "（不）能" * (n // 4),
    "问句和选择": lambda n: "是否或者非很难吗？" * (n // 9),
    "表格的分隔行": lambda n: "| --- " * (n // 6),
}


def token_shapes():
    """每种形状 1k、10k、100k 个字符：放进回答的一句话和它引用的资料里，核对一遍的用时（3 次取最快）。"""
    print(f"{'形状':<14}{'1k 秒':>9}{'10k 秒':>9}{'100k 秒':>9}{'10k/1k':>8}{'100k/10k':>9}（线性约为 10，目标 ≤ 15）")
    for label, make in SHAPES.items():
        timings = []
        for size in (1_000, 10_000, 100_000):
            run = make(size)
            sources = [Source(title="资料", text=f"RAID5 至少三块盘。{run}。可以容忍一块盘损坏。")]
            answer = f"RAID5 至少三块盘，{run}，可以容忍一块盘损坏 [1]。"
            best = float("inf")
            for attempt in range(3):
                # 每次换一个编号：同样的回答和资料第二次核对会用上缓存（拆好的结构、建好的索引），那就不是在量核对了
                fresh = [Source(title=f"资料 {attempt}", text=source.text) for source in sources]
                with fewer_collections():  # 和每道门一样（check_and_fix）：核对期间少做垃圾回收
                    started = time.perf_counter()
                    check_answer(f"{attempt} {answer}", fresh)
                    best = min(best, time.perf_counter() - started)
            timings.append(best)
        print(f"{label:<14}{timings[0]:>9.4f}{timings[1]:>9.4f}{timings[2]:>9.4f}"
              f"{timings[1] / timings[0]:>8.1f}{timings[2] / timings[1]:>9.1f}")


def copied_with_one_change(count):
    """count 句各不相同、照抄资料又各换了一处的话（对齐、同一处的规则每句都要从头做：没有一模一样的句子可以复用），
    和它们引用的一条同样长的资料。"""
    source = "".join(f"第 {n} 台 NAS 支持运行 Docker 容器和虚拟机，至少三块盘。" for n in range(count))
    answer = "".join(f"第 {n} 台 NAS {'不' if n % 2 else ''}支持运行 Docker 容器和虚拟机，"
                     f"至少{'四' if n % 3 else '三'}块盘 [1]。" for n in range(count))
    return answer, [Source(title="资料", text=source)]


def alignment_scaling():
    """对齐是线性的：照抄资料又各换了一处的句子 200 → 2000 → 20000 句；一整篇没有句号、句末一个引用的“一句话”
    55 KB → 550 KB（同一处的规则只看前 edges.MAX_PIECES 段，支持分照样算整句）。各 3 次取最快。"""
    print(f"{'对齐':<24}{'小':>9}{'中':>9}{'大':>9}{'中/小':>8}{'大/中':>8}（线性约为 10，目标 ≤ 15）")
    shapes = {"照抄又各换一处的句子": [copied_with_one_change(count) for count in (200, 2000, 20000)],
              "没有句号的一句话": [("RAID5 至少三块盘" * count + "[2]", SOURCES) for count in (500, 5000, 50000)]}
    for label, inputs in shapes.items():
        timings = []
        for answer, sources in inputs:
            best = float("inf")
            for _ in range(3):
                renamed = fresh(sources)
                with fewer_collections():
                    started = time.perf_counter()
                    check_answer(answer, renamed)
                    best = min(best, time.perf_counter() - started)
            timings.append(best)
        print(f"{label:<24}{timings[0]:>9.3f}{timings[1]:>9.3f}{timings[2]:>9.3f}"
              f"{timings[1] / timings[0]:>8.1f}{timings[2] / timings[1]:>8.1f}")
    repeated_character()


def repeated_character():
    """最容易退化成平方级的形状：同一个字重复几万次的一句话和一条资料，直接量对齐本身（1、4、16 段 CLAIM_CHUNK）。
    各 5 次取最快。"""
    from sourced_answers.checker.alignment import CLAIM_CHUNK, Window, align, units_of
    from sourced_answers.checker.reading import read
    timings = []
    for size in (CLAIM_CHUNK, 4 * CLAIM_CHUNK, 16 * CLAIM_CHUNK):
        text = read("硬" * size).text
        window = Window([(1, 0, units_of(read("硬" * size).text))])
        best = float("inf")
        for _ in range(5):
            started = time.perf_counter()
            align(text, window)
            best = min(best, time.perf_counter() - started)
        timings.append(best)
    print(f"{'同一个字重复（长 4 倍）':<20}{timings[0]:>9.3f}{timings[1]:>9.3f}{timings[2]:>9.3f}"
          f"{timings[1] / timings[0]:>8.1f}{timings[2] / timings[1]:>8.1f}（线性约为 4，目标 ≤ 6）")


if __name__ == "__main__":
    main()
    verify_scaling()
    token_shapes()
    alignment_scaling()
    prompt_fitting()
