"""回答的结构（checker/structure.py）：表格的表头不是话、引出列表的一行连同列表一起判、列表项继承引出行的引用
并照样被核对、没有内容的句子不算一句话。中文和英文，也有小模型真会写成的样子（粗体的引出行、1. 编号、* 列表）。"""
import pytest

from sourced_answers.checker import DEFAULT_RULE, Source, analyse, check_answer
from sourced_answers.search.demo_pages import ENGLISH_PAGES, NAS_PAGES
from sourced_answers.steps.repair import fix_citations

NAS = [Source(title=page["title"], text=page["text"]) for page in NAS_PAGES]
NAS_EN = [Source(title=page["title"], text=page["text"]) for page in ENGLISH_PAGES]
INVENTED_ITEM = "RAID5 换盘后要重建阵列，大容量硬盘重建时间长"  # 在资料 [2]，不在 [1]


def kinds(answer, sources=NAS):
    return sorted({problem.kind for problem in check_answer(answer, sources).problems})


def sentences(answer):
    return [claim.text for claim in analyse(answer).claims]


# ---------- 表格 ----------

@pytest.mark.parametrize("table", [
    "| 型号规格 | 硬盘盘位数量 | 适合什么样的家庭 |\n| --- | :---: | ---: |\n| 两盘位 | 做 RAID1 镜像 [1] | 小家庭 [1] |",
    "型号规格 | 硬盘盘位数量 | 适合什么样的家庭\n--- | --- | ---\n两盘位 | 做 RAID1 镜像 [1] | 小家庭 [1]",
])
def test_a_table_header_and_its_separator_are_not_claims(table):
    assert not any("型号规格" in text or "---" in text for text in sentences(table))
    assert kinds(table) == []


def test_an_english_table_header_is_not_a_claim():
    table = ("| Which RAID level to pick | How many disks it needs |\n|---|---|\n"
             "| RAID 5 | needs at least three disks [2] |")
    assert kinds(table, NAS_EN) == []


def test_a_table_row_is_still_checked():
    table = "| 盘位 | 适合 |\n| --- | --- |\n| 两盘位 | 做 RAID1 镜像 [1] |\n| 四盘位 | 群晖的系统比威联通稳定得多 [1] |"
    assert kinds(table) == ["weak_support"]


# ---------- 引出列表的一行 ----------

@pytest.mark.parametrize("lead_in", [
    "根据资料，家用 NAS 在选购时需要重点考虑下面这几个方面 [1]：",
    "**选购家用 NAS 要看这几点 [1]：**",
    "选购家用 NAS 要看这几点：[1]",
    "[1] 家用 NAS 选购要点：",
])
def test_a_lead_in_is_judged_together_with_the_list_it_introduces(lead_in):
    answer = f"{lead_in}\n\n- 家用至少选两盘位，方便做 RAID1 镜像\n- 需要转码 4K 视频时选带核显的 Intel 型号"
    assert kinds(answer) == []


def test_an_english_lead_in_is_judged_together_with_its_list():
    answer = ("Based on the sources, when you choose a home NAS you should think about these points [1]:\n\n"
              "- pick at least two bays so that you can mirror your data with RAID 1\n"
              "- 8GB of RAM is a sensible start if you plan to run Docker containers")
    assert kinds(answer, NAS_EN) == []


@pytest.mark.parametrize("items", [
    "- 家用至少选两盘位，方便做 RAID1 镜像\n- {invented}",
    "1. 家用至少选两盘位，方便做 RAID1 镜像\n2. {invented}",
    "1、家用至少选两盘位，方便做 RAID1 镜像\n2、{invented}",
    "* 家用至少选两盘位，方便做 RAID1 镜像\n* {invented}",
    "- **硬盘位**：家用至少选两盘位，方便做 RAID1 镜像\n- **重建**：{invented}",
])
def test_an_uncited_item_inherits_the_lead_in_citation_and_is_flagged_alone(items):
    answer = "选购家用 NAS 要看这几点 [1]：\n" + items.format(invented=INVENTED_ITEM)
    report = check_answer(answer, NAS)
    [problem] = report.problems
    assert problem.kind == "weak_support" and INVENTED_ITEM in problem.sentence
    assert problem.message.endswith("可能应引用 [2]") and "继承自上文" in problem.message
    assert not any(text.strip() in ("1", "2") for text in sentences(answer))  # “1.”是编号，不是一句话


def test_fix_recites_an_inherited_item_that_its_lead_in_does_not_support():
    answer = f"选购家用 NAS 要看这几点 [1]：\n\n- 家用至少选两盘位，方便做 RAID1 镜像\n- {INVENTED_ITEM}"
    fixed, repairs, report = fix_citations(answer, NAS, DEFAULT_RULE)
    assert fixed.endswith(f"- {INVENTED_ITEM} [2]") and report.passed
    assert [repair.kind for repair in repairs] == ["recite"]


def test_a_list_under_a_source_title_line_inherits_its_number():
    answer = "[2] RAID1 和 RAID5 的区别：\n- RAID5 至少三块盘，可以容忍一块盘损坏\n- 管理员账号要开启两步验证，关闭默认的 admin 账号"
    [problem] = check_answer(answer, NAS).problems
    assert problem.kind == "weak_support" and "管理员账号" in problem.sentence and "可能应引用 [3]" in problem.message


# ---------- 写着资料编号和标题、没有冒号的一行，列表项引出的列表 ----------

WRONG_DISKS = ("RAID1 需要六块盘", "RAID5 至少五块盘")  # 资料 [2]：RAID1 是两块盘（六块盘哪里都没说），RAID5 至少三块盘
# 英文句子的数不单独下结论（只拉低支持分，见 docs/checker.md）：英文的错项用资料里没有的说法
WRONG_DISKS_EN = ("RAID 1 is faster than any other level for every workload", "RAID 5 works best with cheap USB sticks")


def flagged_against_source(answer, sources, items):
    """每一项都按资料被标出（对不上或者数字不符），而且没有“没有引用”。"""
    problems = check_answer(answer, sources).problems
    assert "uncited_paragraph" not in {problem.kind for problem in problems}
    for item in items:
        assert any(problem.kind in ("weak_support", "number_mismatch") and item in problem.sentence
                   and "继承自上文" in problem.message for problem in problems), item


@pytest.mark.parametrize("title", [
    "[2] RAID1 和 RAID5 的区别",
    "[2]RAID1 和 RAID5 的区别",
    "**[2] RAID1 和 RAID5 的区别**",
    "[2] **RAID1 和 RAID5 的区别**",
    "[2]《RAID1 和 RAID5 的区别》",
    "RAID1 和 RAID5 的区别 [2]",
    "来源 [2]：RAID1 和 RAID5 的区别",
    "## RAID1 和 RAID5 的区别 [2]",
    "### [2] RAID 说明",
])
@pytest.mark.parametrize("gap", ["\n", "\n\n"])
def test_a_list_under_a_source_title_line_without_a_colon_is_checked_against_that_source(title, gap):
    answer = f"{title}{gap}- {WRONG_DISKS[0]}\n- {WRONG_DISKS[1]}"
    flagged_against_source(answer, NAS, WRONG_DISKS)


@pytest.mark.parametrize("items", [
    "1. {0}\n2. {1}",
    "1、{0}\n2、{1}",
    "- **RAID1**：{0}\n- **RAID5**：{1}",
    "* {0}。\n* {1}。",
])
def test_items_in_any_list_style_under_a_title_line_are_checked_against_its_source(items):
    answer = "[2] RAID1 和 RAID5 的区别\n" + items.format(*WRONG_DISKS)
    flagged_against_source(answer, NAS, [item.split(" ", 1)[1] for item in WRONG_DISKS])


@pytest.mark.parametrize("line", ["[2] RAID 说明", "[2] RAID 说明：", "RAID1 和 RAID5 的区别 [2]："])
def test_items_under_a_line_are_checked_against_that_line_s_source_not_the_whole_paragraph_s(line):
    """“……[1]。”后面换行写“[2] RAID 说明”：下面的项是对资料 [2] 说的，资料 [1] 支持它也不算。"""
    answer = f"家用 NAS 至少选两盘位，方便做 RAID1 镜像 [1]。\n{line}\n- 跑 Docker 或虚拟机建议 8GB 内存起步"
    [problem] = check_answer(answer, NAS).problems
    assert problem.kind == "weak_support" and "Docker" in problem.sentence and "可能应引用 [1]" in problem.message


@pytest.mark.parametrize("title", ["[2] RAID 1 vs RAID 5 explained", "**[2] RAID 1 vs RAID 5 explained**",
                                   "Source [2]: RAID 1 vs RAID 5 explained", "## RAID levels [2]"])
def test_an_english_list_under_a_source_title_line_without_a_colon_is_checked_against_that_source(title):
    answer = f"{title}\n- {WRONG_DISKS_EN[0]}\n- {WRONG_DISKS_EN[1]}"
    flagged_against_source(answer, NAS_EN, WRONG_DISKS_EN)


@pytest.mark.parametrize("title", ["[2] RAID1 和 RAID5 的区别", "**[2] RAID1 和 RAID5 的区别**", "## RAID 说明 [2]"])
def test_a_faithful_list_under_a_source_title_line_without_a_colon_passes(title):
    answer = f"{title}\n\n- RAID1 是镜像，两块盘存同样的数据\n- RAID5 至少三块盘，可以容忍一块盘损坏"
    assert kinds(answer) == []


def test_a_faithful_english_list_under_a_source_title_line_passes():
    answer = "[2] RAID 1 vs RAID 5 explained\n- RAID 1 mirrors the same data on two disks\n- RAID 5 needs at least three disks"
    assert kinds(answer, NAS_EN) == []


@pytest.mark.parametrize("lead", ["1. **RAID** [2]：", "1. [2] RAID 说明：", "- [2] RAID1 和 RAID5 的区别"])
def test_a_list_item_that_introduces_a_nested_list_passes_its_citation_down(lead):
    answer = f"{lead}\n   - {WRONG_DISKS[0]}\n   - {WRONG_DISKS[1]}\n2. 家用至少选两盘位，方便做 RAID1 镜像 [1]"
    flagged_against_source(answer, NAS, WRONG_DISKS)


def test_bullets_right_under_a_numbered_lead_in_item_belong_to_it():
    answer = f"1. [2] RAID 说明：\n- {WRONG_DISKS[0]}\n- {WRONG_DISKS[1]}"
    flagged_against_source(answer, NAS, WRONG_DISKS)


@pytest.mark.parametrize("lead", ["- [2] RAID 说明：", "1. RAID 的几种级别 [2]："])
def test_a_list_item_ending_in_a_colon_introduces_the_items_after_it(lead):
    second = "- " if lead.startswith("-") else "2. "
    third = "- " if lead.startswith("-") else "3. "
    answer = f"{lead}\n{second}{WRONG_DISKS[0]}\n{third}{WRONG_DISKS[1]}"
    flagged_against_source(answer, NAS, WRONG_DISKS)


def test_an_english_list_item_that_introduces_a_nested_list_passes_its_citation_down():
    answer = f"1. **RAID levels** [2]:\n   - {WRONG_DISKS_EN[0]}\n   - {WRONG_DISKS_EN[1]}"
    flagged_against_source(answer, NAS_EN, WRONG_DISKS_EN)


@pytest.mark.parametrize("lead", ["RAID 有几种常见的级别 [2]：", "**RAID 有几种常见的级别 [2]：**"])
def test_a_lead_in_whose_items_carry_their_own_citations_is_not_flagged(lead):
    answer = f"{lead}\n- RAID1 是镜像，两块盘存同样的数据 [2]\n- RAID5 至少三块盘，可以容忍一块盘损坏 [2]"
    assert kinds(answer) == []


def test_an_english_lead_in_whose_items_carry_their_own_citations_is_not_flagged():
    answer = ("Storage Notes explains what each level gives you [2]:\n"
              "- RAID 1 mirrors the same data on two disks [2]\n- RAID 5 needs at least three disks [2]")
    assert kinds(answer, NAS_EN) == []


@pytest.mark.parametrize("title", ["[2] RAID1 和 RAID5 的区别", "### [1] 家用 NAS 选购要点"])
def test_a_title_line_that_only_names_a_source_above_cited_items_is_not_flagged(title):
    answer = f"{title}\n\n- RAID5 至少三块盘，可以容忍一块盘损坏 [2]\n- 家用至少选两盘位，方便做 RAID1 镜像 [1]"
    assert kinds(answer) == []


@pytest.mark.parametrize("title", ["[2] RAID 说明", "[2] RAID 说明："])
def test_items_that_are_only_names_under_a_title_line_are_not_flagged(title):
    assert kinds(f"{title}\n- RAID1\n- RAID5\n- RAID10") == []


def test_a_short_line_without_a_citation_still_leaves_its_list_uncited():
    answer = "RAID1 和 RAID5 的区别\n- RAID1 是镜像，两块盘存同样的数据\n- RAID5 至少三块盘，可以容忍一块盘损坏"
    assert [problem.kind for problem in check_answer(answer, NAS).problems] == ["uncited_paragraph"] * 3


def test_a_full_sentence_above_a_list_does_not_pass_its_citation_down():
    """引出列表的是以冒号结尾或者像标题的一行；一句说完了的话（有句号）后面的列表项照样要有自己的引用。"""
    answer = "RAID5 至少三块盘，可以容忍一块盘损坏 [2]。\n- RAID1 是镜像，两块盘存同样的数据"
    assert kinds(answer) == ["uncited_paragraph"]


# ---------- 编号后面先写引用的列表项 ----------

@pytest.mark.parametrize("answer, sources", [
    ("1. [2] RAID1 是镜像，两块盘存同样的数据\n2. [2] RAID5 至少三块盘，可以容忍一块盘损坏", NAS),
    ("1. [2] RAID 1 mirrors the same data on two disks\n2. [2] RAID 5 needs at least three disks", NAS_EN),
])
def test_the_number_of_an_item_that_starts_with_its_citation_is_not_a_sentence(answer, sources):
    assert not any(text.strip().startswith(("1.", "2.")) and "RAID" not in text for text in sentences(answer))
    assert kinds(answer, sources) == []


# ---------- 没有内容的句子 ----------

@pytest.mark.parametrize("empty", ["👍 [1]", "🙂🎉 [1][2]", "**👍** [1]", "✅ [1]"])
def test_a_sentence_without_content_carries_no_claim_and_its_citation_counts_for_nothing(empty):
    answer = f"群晖的 NAS 系统比威联通稳定得多，适合所有家庭。{empty}"
    report = check_answer(answer, NAS)
    assert [problem.kind for problem in report.problems] == ["uncited_paragraph"]
    assert report.claims == [] and report.unused == [1, 2, 3, 4, 5]


def test_an_english_sentence_without_content_carries_no_claim():
    report = check_answer("A NAS is the best device for every family. 👍 [1]", NAS_EN)
    assert [problem.kind for problem in report.problems] == ["uncited_paragraph"] and report.claims == []


@pytest.mark.parametrize("answer", [
    "家用 NAS 至少选两盘位，方便做 RAID1 镜像 [1]。🎉🎉 [1]",
    "家用 NAS 至少选两盘位，方便做 RAID1 镜像 [1]。👍👍👍 [2]。",
    "家用 NAS 要看这几点 [1]：\n- 👍👍👍 [2]\n- 至少选两盘位，方便做 RAID1 镜像 [1]",
], ids=["after-a-sentence", "other-source", "list-item-under-a-lead-in"])
def test_an_emoji_only_sentence_that_writes_a_citation_is_flagged_once(answer):
    """它没说出资料里的任何内容，引用给不了它依据：同一段别处有引用时它也不能悄悄通过。"""
    report = check_answer(answer, NAS)
    [problem] = [problem for problem in report.problems if "表情" in problem.message]
    assert problem.kind == "weak_support" and "只有表情或符号" in problem.message
    assert report.claims[problem.claim].status == "weak_support" and report.claims[problem.claim].certain


def test_the_number_of_a_list_item_is_not_content():
    """“2. 👍👍👍 [2]”：编号不是这一项说的话，这一项只有表情，它写的 [2] 不算，说它没有引用并说出为什么。"""
    report = check_answer("1. 家用 NAS 至少选两盘位，方便做 RAID1 镜像 [1]\n2. 👍👍👍 [2]", NAS)
    [problem] = report.problems
    assert problem.kind == "uncited_paragraph" and "第 2 项没有引用（只有表情或符号的一截写的引用不算）" in problem.message


def test_an_emoji_without_a_citation_is_an_ornament_not_a_problem():
    assert kinds("家用 NAS 至少选两盘位，方便做 RAID1 镜像 [1]。🎉🎉") == []


@pytest.mark.parametrize("tail", ["”[1]", "**[1]**", "）[1]"])
def test_a_citation_after_closing_punctuation_belongs_to_the_sentence_before_it(tail):
    """“……以后一定常来！”[1]”：引号后面的引用是前面那几句的，不是一句没有内容的话。"""
    answer = f"“家用 NAS 至少选两盘位！方便做 RAID1 镜像！{tail}"
    report = check_answer(answer, NAS)
    assert "uncited_paragraph" not in {problem.kind for problem in report.problems} and 1 not in report.unused


def test_a_nonexistent_number_behind_an_emoji_is_still_reported():
    assert "missing_source" in kinds("家用 NAS 至少选两盘位，方便做 RAID1 镜像 [1]。👍 [9]")
