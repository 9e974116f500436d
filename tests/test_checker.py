"""核对要读懂真实模型写出来的回答：各种引用写法、结构、数字、证据（原教程五个测试之外的部分）。"""
import pytest

from sourced_answers.checker import Source, check_answer, numbers_in, seen, support_model
from sourced_answers.checker.quantities import quantities_in
from tests.support import NAS_SOURCES

NAS = NAS_SOURCES
DISKS = "家用 NAS 至少选两盘位，方便做 RAID1 镜像"       # 出自资料 1
TRANSCODE = "需要转码 4K 视频时选带核显的 Intel 型号"     # 出自资料 1
RAID5 = "RAID5 至少三块盘，可以容忍一块盘损坏"             # 出自资料 2
ENGLISH = [
    Source(title="Choosing a NAS", text="A two-bay NAS can run RAID 1, which mirrors the same data on both "
                                        "drives. Pick an Intel CPU with integrated graphics if you want to "
                                        "transcode 4K video."),
    Source(title="RAID levels", text="RAID 0 stripes data across disks for speed but offers no redundancy. "
                                     "RAID 1 mirrors data on two disks. RAID 5 needs at least three disks and "
                                     "survives the failure of one disk."),
]


def full_width(text):
    return text.translate(str.maketrans("0123456789", "０１２３４５６７８９"))


# 每种写法：(模板, 它引用的编号)。{a}、{b} 换成具体编号
CITATION_FORMS = [
    ("[{a}]", lambda a, b: [a]),
    ("[ {a} ]", lambda a, b: [a]),
    ("【{a}】", lambda a, b: [a]),
    ("［{fa}］", lambda a, b: [a]),
    ("[{a}, {b}]", lambda a, b: [a, b]),
    ("[{a}，{b}]", lambda a, b: [a, b]),
    ("[{a}-{b}]", lambda a, b: list(range(a, b + 1))),
    ("[{a}–{b}]", lambda a, b: list(range(a, b + 1))),
    ("[^{a}]", lambda a, b: [a]),
    ("[{a}][{b}]", lambda a, b: [a, b]),
]
FORM_IDS = [form for form, _ in CITATION_FORMS]


def mark(form, a, b=None):
    b = a if b is None else b
    return form.format(a=a, b=b, fa=full_width(str(a)))


@pytest.mark.parametrize("form, numbers", CITATION_FORMS, ids=FORM_IDS)
def test_citation_form_is_read_as_its_numbers(form, numbers):
    report = check_answer(f"{DISKS} {mark(form, 1, 2)}。\n\n{RAID5} {mark(form, 2, 3)}。", NAS)
    assert report.passed, report.problems
    assert report.cited == set(numbers(1, 2)) | set(numbers(2, 3))
    assert report.unused == [n for n in range(1, 6) if n not in report.cited]


@pytest.mark.parametrize("form, numbers", CITATION_FORMS, ids=FORM_IDS)
def test_citation_form_to_missing_source_is_reported(form, numbers):
    report = check_answer(f"{DISKS} {mark(form, 8, 9)}。", NAS)
    missing = [n for p in report.problems if p.kind == "missing_source" for n in p.citations]
    assert missing == sorted(set(numbers(8, 9)))


@pytest.mark.parametrize("form, numbers", CITATION_FORMS, ids=FORM_IDS)
def test_citation_form_to_wrong_source_is_flagged(form, numbers):
    report = check_answer(f"{TRANSCODE} {mark(form, 2, 2)}。", NAS)
    [problem] = report.problems
    assert problem.kind == "weak_support"
    assert problem.better_source == 1


def test_heading_rule_and_code_need_no_citation():
    answer = f"## 选购建议\n\n---\n\n```\nraid --level 5 [9]\n```\n\n{DISKS} [1]。"
    report = check_answer(answer, NAS)
    assert report.passed, report.problems
    assert report.cited == {1}


def test_heading_directly_above_text_is_not_the_text():
    report = check_answer(f"### 盘位\n{DISKS} [1]。", NAS)
    assert report.passed


def test_thinking_is_never_checked():
    answer = f"<think>先想想，资料 [9] 说 NAS 要十二块盘</think>{DISKS} [1]。"
    report = check_answer(answer, NAS)
    assert report.passed and report.cited == {1}


def test_list_items_are_checked_one_at_a_time():
    answer = f"选购要点：\n- {DISKS} [1]\n- 远程访问优先使用 VPN 或 Tailscale 这类组网工具"
    [problem] = check_answer(answer, NAS).problems
    assert problem.kind == "uncited_paragraph"
    assert problem.message.startswith("第 1 段第 2 项没有引用")


def test_list_items_inherit_the_lead_in_citation_and_are_checked_against_it():
    answer = f"选购要点 [1]：\n- {DISKS}\n- 远程访问优先使用 VPN 或 Tailscale 这类组网工具，只有自己的设备才能连进家里"
    [problem] = check_answer(answer, NAS).problems
    assert problem.kind == "weak_support"
    assert problem.sentence.startswith("- 远程访问")
    assert "继承自上文" in problem.message
    assert problem.better_source == 3


def test_smollm_raid_list_is_checked_against_the_source_that_introduces_it():
    # SmolLM2-135M 真实写出的形态：带引用的引出行，空一行，下面是没有引用的列表
    answer = ("[2] RAID levels explained:\n\n- RAID 0 stripes data across disks for speed\n"
              "- RAID5 uses two drives\n")
    report = check_answer(answer, ENGLISH)
    assert "uncited_paragraph" not in {problem.kind for problem in report.problems}
    item = next(check for check in report.claims if check.sentence == "- RAID5 uses two drives")
    assert item.citations == [2] and item.calibration == "en"
    # 英文句子的数不单独下结论（同一处换了数的规则在英文的留出数据上不够准，docs/checker.md）：同样的形态在中文里照样拦下
    [problem] = check_answer("[2] RAID 的几种级别：\n\n- RAID5 至少两块盘\n", NAS).problems
    assert problem.kind == "number_mismatch" and problem.citations == [2]
    assert "在同一处说的是“三块”，回答写成“两块”" in problem.message


def test_numbers_that_contradict_the_source_are_flagged_despite_high_overlap():
    [problem] = check_answer("RAID5 至少四块盘，可以容忍一块盘损坏 [2]。", NAS).problems
    assert problem.kind == "number_mismatch"
    assert problem.score >= support_model().cut  # 支持分放过了它，是数字把它拦下的
    assert "在同一处说的是“三块”，回答写成“四块”" in problem.message  # 两边的写法都写出来
    assert "RAID5 至少三块盘" in problem.evidence


@pytest.mark.parametrize("sentence, passes", [
    ("跑 Docker 或虚拟机建议 8GB 内存起步 [1]", True),
    ("跑 Docker 或虚拟机建议 16GB 内存起步 [1]", False),
    ("预算够的话选 2.5GbE 网口，配合 2.5G 交换机速度更快 [1]", True),
    ("预算够的话选 5GbE 网口，配合 5G 交换机速度更快 [1]", False),
    ("需要转码 4K 视频时选带核显的 Intel 型号 [1]", True),
    ("需要转码 8K 视频时选带核显的 Intel 型号 [1]", False),
    ("RAID5 至少 3 块盘，可以容忍一块盘损坏 [2]", True),
    ("RAID5 至少五块盘，可以容忍一块盘损坏 [2]", False),
    ("RAID5 至少两块盘，可以容忍一块盘损坏 [2]", False),  # “两块盘”在资料里说的是 RAID1
])
def test_numbers_compare_values_not_spellings(sentence, passes):
    assert check_answer(sentence, NAS).passed is passes


def test_chinese_numerals_percentages_and_decimals():
    source = [Source(title="价格", text="这台 NAS 售价 3000 元，功耗约 12.5 瓦，年故障率低于 2%，保修十二个月。")]
    assert check_answer("这台 NAS 售价三千元，功耗约 12.5 瓦 [1]。", source).passed
    assert check_answer("这台 NAS 保修 12 个月，年故障率低于 2% [1]。", source).passed
    assert not check_answer("这台 NAS 售价五千元，功耗约 12.5 瓦 [1]。", source).passed
    assert not check_answer("这台 NAS 功耗约 15.5 瓦，年故障率低于 2% [1]。", source).passed
    assert not check_answer("这台 NAS 售价 3000 元，年故障率低于 5% [1]。", source).passed


def test_what_is_not_a_number():
    # 列表序号、“十分”“一些”、RAID5 这样的名称都不是数量；日期的月和日作为一个整体，年份是单位为“年份”的数量，
    # 百分之几是百分数
    assert numbers_in(seen("1) 十分重要的一些设置；2) RAID5 和 USB 3 接口")) == set()
    assert quantities_in(seen("2023年发布")) == {(2023.0, "年份")}
    assert quantities_in(seen("2023年3月1日")) == {(301.0, "日期"), (2023.0, "年份")}
    assert quantities_in(seen("百分之五十的人")) == {(50.0, "%")}


def test_evidence_and_better_source_point_to_the_fix():
    [problem] = check_answer(f"{RAID5} [1]。", NAS).problems
    assert problem.kind == "weak_support"
    assert problem.better_source == 2
    assert "可能应引用 [2]" in problem.message
    assert problem.evidence is not None


def test_unsupported_tail_is_named():
    sentence = "RAID5 至少三块盘，可以容忍一块盘损坏，而且重建阵列只需要几分钟并且完全不影响家里看电影和打游戏的体验 [2]"
    [problem] = check_answer(sentence, NAS).problems
    assert problem.kind == "weak_support"
    assert "只需要几分钟" in problem.message and "找不到" in problem.message


def test_unrelated_english_sentences_do_not_pass_on_shared_letters():
    assert not check_answer("The weather in Paris is lovely during the spring season [2].", ENGLISH).passed
    assert check_answer("RAID 1 mirrors data on two disks [2].", ENGLISH).passed
    assert check_answer("Pick an Intel CPU with integrated graphics to transcode 4K video [1].", ENGLISH).passed


def test_mixed_chinese_and_english_sentences():
    source = [Source(title="群晖", text="群晖 DS224+ 是两盘位 NAS，支持 Btrfs 文件系统和快照功能。")]
    assert check_answer("群晖 DS224+ 支持 Btrfs 文件系统和快照功能 [1]。", source).passed
    assert not check_answer("威联通 TS-464 支持 ZFS 存储池和重复数据删除 [1]。", source).passed


def test_added_year_is_not_judged():
    # CiteCheck 上只因补了年份而对不上的句子，标注里支持和不支持各占一半：不拿年份判错
    assert check_answer("2026年，家用 NAS 至少选两盘位，方便做 RAID1 镜像 [1]。", NAS).passed


def test_select_passages_skips_navigation_and_keeps_page_order():
    from fake_metaso import LONG_PAGES
    from sourced_answers.search.passages import select_passages
    text = LONG_PAGES[1]["text"]
    chosen = select_passages(text, "RAID5 最少几块盘", 600)
    assert "RAID5 至少三块盘" in chosen and "热门推荐" not in chosen and len(chosen) <= 600
    positions = [text.index(block) for block in chosen.split("\n\n")]
    assert positions == sorted(positions)
    assert select_passages("短文本", "问题", 600) == "短文本"


def test_selection_brings_answer_sentences_into_the_prompt():
    from bench.evaluate_context import CASES, share
    from fake_metaso import LONG_PAGES
    from sourced_answers.search.passages import select_passages
    assert share(LONG_PAGES, 600, lambda text, question, size: text[:size]) == 0
    assert share(LONG_PAGES, 600, select_passages) == 1
    assert len(CASES) >= 10


def test_number_said_elsewhere_in_the_source_does_not_support_a_claim():
    # 资料 2 说“RAID1 …两块盘”和“RAID5 至少三块盘”：两块盘不能支持 RAID5 的说法，但 RAID1 的说法照样通过
    [problem] = check_answer("RAID5 至少两块盘 [2]。", NAS).problems
    assert problem.kind == "number_mismatch" and "2" in problem.message
    assert "RAID5 至少三块盘" in problem.evidence
    assert check_answer("RAID1 是镜像，两块盘存同样的数据 [2]。", NAS).passed


def test_chained_range_in_one_bracket_does_not_crash():
    # hypothesis 找到的：[0-0-0] 曾让 int("0-0-0") 报错
    report = check_answer(f"{DISKS} [0-0-0]。\n\n{RAID5} [1-2-3]。", NAS)
    assert [p.citations for p in report.problems if p.kind == "missing_source"] == [[0]]
    assert report.cited == {0, 1, 2, 3}


def test_an_uncited_sentence_in_a_citing_paragraph_is_checked_against_the_paragraph():
    # 编造的一句没写引用，同一段里另一句写了：它不能悄悄通过
    answer = f"{DISKS} [1]。群晖的 NAS 系统比威联通稳定得多，适合所有家庭。"
    report = check_answer(answer, NAS)
    [problem] = report.problems
    assert problem.kind == "weak_support" and problem.sentence == "群晖的 NAS 系统比威联通稳定得多，适合所有家庭"
    assert "（本段的引用）" in problem.message and problem.citations == [1]
    # 一段末尾写一个引用、前面几句都出自它：每一句都拿它核对，都通过
    assert check_answer(f"{DISKS}。{TRANSCODE}。[1]", NAS).passed


def test_a_chinese_page_behind_a_long_english_menu_is_still_chinese():
    menu = " ".join(["Home", "News", "Reviews", "Forum", "Login", "Register", "Shop", "Deals"] * 82)  # 约 4100 个字符
    page = Source(title="NAS 硬盘", text=menu + "\n\n组 RAID 的 NAS 建议用 CMR 硬盘，SMR 硬盘重建阵列时写入很慢。")
    assert len(menu) > 4000
    report = check_answer("组 RAID 的 NAS 建议用 CMR 硬盘，SMR 硬盘重建阵列时写入很慢 [1]。", [page])
    assert report.passed, report.problems


def test_changing_the_sentences_of_one_check_does_not_change_the_next():
    from sourced_answers.checker import analyse
    answer = f"{DISKS} [1]。"
    analyse(answer).claims[0].citations.append(7)
    assert check_answer(answer, NAS).passed


def test_a_sentence_of_function_words_only_is_not_judged_by_the_score():
    report = check_answer("可以这样，但是还要看情况而定，所以也不一定 [2]。", NAS)
    [check] = report.claims
    assert check.status == "too_short" and report.passed


@pytest.mark.parametrize("answer", ["## 选购要点", "```\nls -l /volume1\n```", "---\n\n# 总结\n\n***"])
def test_an_answer_with_nothing_to_check_never_passes(answer):
    report = check_answer(answer, NAS)
    assert not report.passed and [p.kind for p in report.problems] == ["empty_answer"]


def test_a_heading_that_states_something_is_checked_and_a_short_title_is_not():
    titled = check_answer("## 选购要点\n\nRAID5 至少三块盘，可以容忍一块盘损坏 [2]。", NAS)
    assert titled.passed
    stated = check_answer("## RAID5 可以容忍两块盘损坏 [2]。\n\nRAID5 至少三块盘，可以容忍一块盘损坏 [2]。", NAS)
    assert not stated.passed and any("两块盘" in (p.sentence or "") for p in stated.problems)


def test_an_unclosed_code_fence_does_not_hide_what_follows():
    report = check_answer("RAID5 至少三块盘，可以容忍一块盘损坏 [2]。\n\n```\n群晖的 NAS 系统比威联通稳定得多 [1]。", NAS)
    assert not report.passed and any("群晖" in (p.sentence or "") for p in report.problems)


# ---------- “太短、不判”按内容的字数算 ----------

@pytest.mark.parametrize("answer", ["C" * 5000 + " [1]。", "x9" * 200 + " [2]", "`rm -rf /` [1]",
                                    "火星NAS每天能省下好多电费还能煮咖啡 [2]。"])
def test_one_long_token_or_blob_with_a_citation_is_content_and_is_checked(answer):
    report = check_answer(answer, NAS)
    assert [check.status for check in report.claims] != ["too_short"] and not report.passed


@pytest.mark.parametrize("lead_in", ["资料 [3] 提到：", "根据资料 [1] 的说法，", "是的 [2]。", "如下所示 [1]：",
                                     "According to the source [2]:", "As shown below [1]:"])
def test_a_short_lead_in_stays_exempt(lead_in):
    report = check_answer(f"{lead_in}\n\n{DISKS} [1]。", NAS)
    assert report.claims[0].status == "too_short" and report.passed, [p.message for p in report.problems]


def test_content_is_counted_in_characters_not_tokens():
    from sourced_answers.checker.tokens import content_characters
    assert content_characters(seen("C" * 50)) == 50 and content_characters(seen("rm -rf /")) == 6
    assert content_characters(seen("资料  提到")) == content_characters(seen("According to the source,")) == 0
