"""同一处说反了（slots.py 的 polarity）：句子照抄了资料的一段，只在它前面加上或去掉了否定。例子都是为这条规则自己写的。

它是确定的规则（polarity_mismatch）：支持分多高都标出，评判模型不问、也撤不掉它；说明写出资料和回答各自的说法。
说的不是同一件事、或者不是断言的（问句、选择、委婉的说法、另一件事、标题、假设）不算说反。中文和英文都用这条规则。"""
import json

import pytest

from sourced_answers.checker import Source, SupportRule, check_answer
from tests.support import cli_env, run_cli

RAID = Source(title="RAID 的几种级别", text=(
    "RAID5 至少要三块盘，可以容忍一块盘损坏，容量利用率较高。这款 NAS 自带两块硬盘，开箱即用。"
    "RAID 不是备份，重要的数据还要另外备份。RAID6 可以容忍两块盘损坏，不能容忍三块盘损坏。"))
ENGLISH = Source(title="RAID levels", text=(
    "RAID 5 tolerates a single disk failure. RAID is not a backup, so keep another copy of important files. "
    "The NAS has built-in drives and works out of the box."))
FLIPPED = "RAID5 至少要三块盘，不能容忍一块盘损坏 [1]。"
CONTRADICTIONS = {"polarity_mismatch", "opposite_mismatch", "name_mismatch"}


def contradicts(answer, source=RAID):
    """核对这句话时发现它和资料在同一处说反了（claims 里的 contradicts）。"""
    return [claim.contradicts for claim in check_answer(answer, [source]).claims]


def contradiction_kinds(claim, source):
    """claim 当作回答里引用 source 的一句话时，同一处的矛盾有哪几种。"""
    report = check_answer(f"{claim} [1]。", [Source(text=source)])
    return {problem.kind for problem in report.problems} & CONTRADICTIONS


@pytest.mark.parametrize("answer", [
    FLIPPED,
    "这款 NAS 没有自带硬盘，开箱即用 [1]。",
    "RAID 是备份，重要的数据还要另外备份 [1]。",
    "RAID5 至少要三块盘，无法容忍一块盘损坏 [1]。",
    "RAID5 至少要三块盘，可以容忍一块盘损坏，容量利用率不高 [1]。",
])
def test_the_same_words_with_the_opposite_polarity_are_found(answer):
    assert contradicts(answer) == [True]
    [problem] = check_answer(answer, [RAID]).problems
    assert problem.kind == "polarity_mismatch"


@pytest.mark.parametrize("answer", [
    "RAID5 至少要三块盘，可以容忍一块盘损坏 [1]。",       # 两边都肯定
    "RAID 不是备份，重要的数据还要另外备份 [1]。",         # 两边都否定
    "RAID6 不能容忍三块盘损坏 [1]。",                     # 资料同一处也否定
    "这款 NAS 不仅自带两块硬盘，而且开箱即用 [1]。",        # “不仅”不是否定
])
def test_the_same_polarity_on_both_sides_is_not_a_contradiction(answer):
    assert contradicts(answer) == [False]
    assert check_answer(answer, [RAID]).passed


def test_only_the_same_place_counts_when_the_source_says_both():
    """资料里“容忍”一处肯定（两块）、一处否定（三块）：同一处（两块）是肯定的，所以“不能容忍两块”说反了；
    “不能容忍三块”和资料同一处一样。"""
    assert contradicts("RAID6 不能容忍两块盘损坏 [1]。") == [True]
    assert contradicts("RAID6 不能容忍三块盘损坏 [1]。") == [False]


@pytest.mark.parametrize("answer", [
    "RAID 5 does not tolerate a single disk failure [1].",
    "RAID 5 doesn't tolerate a single disk failure [1].",
    "RAID is a backup, so keep another copy of important files [1].",
    "The NAS has no built-in drives and works out of the box [1].",
])
def test_english_flips_are_found_the_same_way_but_only_recorded(answer):
    """英文句子的同一处说反了照样找得到（claims 里的 contradicts，--judge 时一定问），但不单独下结论：这条规则在
    英文的留出数据（AttributionBench test、ood）上不够准（docs/checker.md）。"""
    assert contradicts(answer, ENGLISH) == [True]
    assert not {problem.kind for problem in check_answer(answer, [ENGLISH]).problems} & CONTRADICTIONS


@pytest.mark.parametrize("answer", [
    "RAID 5 tolerates a single disk failure [1].",
    "RAID is not a backup, so keep another copy of important files [1].",
    "The NAS does not need extra drives because it has built-in drives [1].",
])
def test_english_sentences_that_agree_are_not_flips(answer):
    assert contradicts(answer, ENGLISH) == [False]


def test_a_flip_is_flagged_whatever_the_score_and_the_threshold():
    """支持分很高（每个字资料里都有）也标出：这是确定的规则，不看支持分；阈值放到 0 也一样。"""
    for rule in (SupportRule(), SupportRule("score", 0.0), SupportRule("score", 1.0)):
        [problem] = check_answer(FLIPPED, [RAID], rule).problems
        assert problem.kind == "polarity_mismatch" and problem.claim == 0
    assert check_answer(FLIPPED, [RAID]).claims[0].score > 0.9


def test_the_message_quotes_both_sides_in_chinese():
    [problem] = check_answer(FLIPPED, [RAID]).problems
    assert "资料 [1] 说的是“容忍一块盘损坏”" in problem.message
    assert "回答写成“不能容忍一块盘损坏”" in problem.message and problem.message.endswith("意思正好相反")


def test_the_message_quotes_the_sentence_as_the_user_wrote_it():
    [problem] = check_answer("RAID5 至少要三块盘，**不**能容忍一块盘损坏 [1]。", [RAID]).problems
    assert "回答写成“**不**能容忍一块盘损坏”" in problem.message


def judged(tmp_path, model_server, judge):
    saved = tmp_path / "saved.json"
    saved.write_text(json.dumps({"answer": FLIPPED, "sources": [{"title": RAID.title, "text": RAID.text}]},
                                ensure_ascii=False), encoding="utf-8")
    result = run_cli("--verify", str(saved), "--json", "--judge", judge, "--judge-all", env=cli_env(None, model_server))
    return result, json.loads(result.stdout)


@pytest.mark.parametrize("judge", ["judge-yes", "judge-no"])
def test_the_judge_is_not_asked_and_cannot_clear_a_flip_because_it_is_a_certain_rule(tmp_path, model_server, judge):
    result, record = judged(tmp_path, model_server, judge)
    assert record["claims"][0]["contradicts"] is True and record["claims"][0]["certain"] is True
    assert record["judge"]["calls"] == []
    assert result.returncode == 1 and [p["kind"] for p in record["problems"]] == ["polarity_mismatch"]


@pytest.mark.parametrize("claim, source", [
    ("这个做法不要求额外的硬盘 [1]。", "这个做法要求额外的硬盘。"),
    ("RAID5 不一定能容忍两块盘损坏 [1]。", "RAID5 一定能容忍两块盘损坏。"),
    ("这个设置对 RAID5 无效 [1]。", "这个设置对 RAID5 有效。"),
    ("这块硬盘从来不会丢数据 [1]。", "这块硬盘会丢数据。"),
    ("别把管理界面暴露到公网 [1]。", "把管理界面暴露到公网更方便。"),
    ("请勿把管理界面暴露到公网 [1]。", "请把管理界面暴露到公网。"),
    ("这款 NAS 并非支持运行 Docker 容器 [1]。", "这款 NAS 支持运行 Docker 容器和虚拟机。"),
    ("这款 NAS 不曾支持运行 Docker 容器 [1]。", "这款 NAS 支持运行 Docker 容器和虚拟机。"),
    ("这款 NAS 未支持运行 Docker 容器 [1]。", "这款 NAS 支持运行 Docker 容器和虚拟机。"),
    ("这款 NAS 无法运行 Docker 容器 [1]。", "这款 NAS 可以运行 Docker 容器和虚拟机。"),
    ("这款 NAS 没有运行 Docker 容器的功能 [1]。", "这款 NAS 有运行 Docker 容器的功能。"),
])
def test_every_written_form_of_negation_follows_the_same_rule(claim, source):
    assert contradicts(claim, Source(title="t", text=source)) == [True]


@pytest.mark.parametrize("negation", ["\uf967", "⽊不", "「不」", "“不”", "沒有", "並不", "無法", "不\u200b"])
def test_disguised_and_traditional_negations_are_negations(negation):
    """兼容汉字（U+F967 读成“不”）、引号里的“不”、繁体的否定词、夹着零宽字符的，读出来都是否定。"""
    claim = f"这款 NAS {negation}支持运行 Docker 容器 [1]。".replace("⽊", "")
    source = Source(title="t", text="这款 NAS 支持运行 Docker 容器和虚拟机。")
    assert contradicts(claim, source) == [True]


@pytest.mark.parametrize("sentence", ["这个牌子的硬盘特别耐用 [1]。", "不错的选择是两盘位 [1]。", "区别在于校验盘的数量 [1]。"])
def test_words_that_only_contain_a_negation_character_are_not_negations(sentence):
    assert contradicts(sentence, Source(title="t", text=sentence.replace(" [1]", ""))) == [False]


# ---------- 不是同一件事，或者不是断言：不算说反 ----------

@pytest.mark.parametrize("claim, source", [
    # 资料里的否定在问句里
    ("石蜡熔化不属于化学变化", "石蜡熔化属于化学变化吗？石蜡熔化只是状态改变。"),
    ("石蜡熔化不属于化学变化", "石蜡熔化属于化学变化吗，我们来看一看。"),
    ("这种情况不会好转", "这种情况是否会好转，目前还不清楚。"),
    ("他不能参加比赛", "他能不能参加比赛要看医生的意见。"),
    ("为什么不尝试用另一种方式来表达", "尝试用另一种方式来表达。"),
    # 选择里的一项
    ("汽车的驱动方式是全时四驱系统", "汽车的驱动方式有全时四驱系统或者非全时四驱系统。"),
    ("这个接口不支持热插拔", "这个接口支持热插拔还是不支持热插拔，要看主板。"),
    # 委婉的说法，不是相反的意思
    ("手指受伤后患者很难握紧拳头", "手指受伤后患者不能握紧拳头。"),
    ("患者不能握紧拳头", "患者难以握紧拳头，需要休息。"),
    ("这种盘很少出现坏道", "这种盘不会出现坏道。"),
    ("水军无法通过集中点赞控制评分", "上线新功能是为了避免水军通过集中点赞控制评分。"),
    ("公司没有足够的资金", "公司缺乏足够的资金。"),
    # 否定的是另加的词，不是资料的说法
    ("我不确定你的意思是说应该封顶", "你的意思是说应该封顶对不对"),
    ("他说我们那个硬盘不够大", "他说我们那个硬盘太小啦"),
    ("现在这样太笼统了", "咱现在不能这样，太笼统了"),
    # 另一件事：否定的是别的东西
    ("他的审计专业知识需要提高", "作为一名非审计专业学生，我一开始无从下手。"),
    ("ADSL 是非对称数字用户环路", "ADSL 线路是非对称数字网。"),
    ("适合移民的人群主要是年轻人", "功成名就的老板基本也不适合移民。"),
    # 假设、让步、转述
    ("孩子尝试和异性交往", "即使孩子真的不和异性交往，处理不当也会留下阴影。"),
    ("系统会自动备份", "如果不开启这个选项，系统不会自动备份。"),
    ("美国卷入战争的可能性很大", "如果他再次入主白宫，经济状况会更好，美国也不会卷入战争。"),
    ("这款 NAS 不支持运行 Docker 容器", "有人认为这款 NAS 支持运行 Docker 容器。"),
    # 以前、还没有：和资料说的现在不是相反的意思
    ("之前没有《企业国有资产监督管理暂行条例》", "制定了《企业国有资产监督管理暂行条例》等 28 部行政法规。"),
    ("尚无存款保险制度", "建立存款保险制度，健全金融机构风险处置机制。"),
])
def test_what_is_not_the_same_assertion_is_not_a_contradiction(claim, source):
    assert not contradiction_kinds(claim, source)
    assert not contradiction_kinds(source, claim)


def test_a_contrast_that_the_source_rules_out_is_a_contradiction():
    """资料说“关键在于自身的奋斗而非良好的环境”：回答说“关键在于良好的环境”正是资料否定了的说法。"""
    source = "青年成才的关键在于自身的奋斗而非良好的环境。"
    assert contradiction_kinds("青年成才的关键在于良好的环境", source) == {"polarity_mismatch"}


def test_a_negation_in_the_source_title_or_a_heading_is_not_a_contradiction():
    source = Source(title="为什么 RAID 不是备份", text="# RAID 不能代替备份\n\nRAID 把数据写到几块盘上。")
    assert contradicts("RAID 是备份 [1]。", source) == [False]
    assert contradicts("RAID 能代替备份 [1]。", source) == [False]


# ---------- 双重否定、情态词、另加的否定的评价 ----------

@pytest.mark.parametrize("claim, source", [
    # 资料是双重否定（肯定），回答只留下一个否定
    ("升级固件前不能备份数据", "升级固件前不能不备份数据，否则出错时无法恢复。"),
    # 否定的是“需要”“用”“必”“敢”这类情态词，后面照抄了资料要做的事
    ("家用 NAS 不需要定期做坏道检测", "家用 NAS 要定期做坏道检测。"),
    ("新盘到手不用先做一次完整的坏道检测", "新盘到手先做一次完整的坏道检测。"),
    ("RAID 重建期间无需避免大量写入", "RAID 重建期间尽量避免大量写入。"),
    # 照抄了资料要做的事，后面另加一个否定的评价
    ("管理员账号开启两步验证没有必要", "管理员账号要开启两步验证。"),
    ("定期做恢复演练没什么用", "备份要定期做恢复演练，才知道备份能不能用。"),
    ("硬盘的缓存大小与读写速度无关", "硬盘的缓存大小会影响读写速度。"),
])
def test_a_negation_removed_from_a_double_negative_or_added_to_a_copied_duty_is_a_flip(claim, source):
    assert contradiction_kinds(claim, source) == {"polarity_mismatch"}


@pytest.mark.parametrize("claim, source", [
    ("Regular restore drills are not necessary", "Backups need regular restore drills."),
    ("Enabling two-factor authentication has no effect", "Enabling two-factor authentication blocks most attacks."),
])
def test_an_english_verdict_added_to_a_copied_duty_is_recorded_as_a_flip(claim, source):
    assert contradicts(f"{claim} [1].", Source(title="t", text=source)) == [True]


@pytest.mark.parametrize("claim, source", [
    ("升级固件前不能不备份数据", "升级固件前不能不备份数据，否则出错时无法恢复。"),   # 两边一样的双重否定
    ("我没讲段巾泰的事", "只是讲我没没讲段巾泰的事。"),                             # 说话时重复了一遍“没”
    ("管理员账号开启两步验证没有必要", "管理员账号开启两步验证没有必要，改强密码就够了。"),  # 资料也这么说
    ("这个插件没什么用", "这个插件用处不大。"),                                     # 资料是委婉的说法
    ("定期做恢复演练没有必要吗", "备份要定期做恢复演练。"),                          # 问句
])
def test_the_same_double_negative_a_stutter_or_an_evaluation_the_source_shares_is_not_a_flip(claim, source):
    assert not contradiction_kinds(claim, source)


def test_a_two_character_opposite_counts_whatever_is_written_before_it():
    """“会减少”对“及时增加”：两个字的反义词本身就是词，前面的字不一样也算（一个字的“多”“少”仍要两边前面一样）。"""
    assert contradiction_kinds("农资价格上涨会减少农资综合补贴", "根据农资价格上涨幅度，及时增加农资综合补贴。") == \
        {"opposite_mismatch"}
    assert not contradiction_kinds("许多人选择两盘位", "不少人选择两盘位。")


@pytest.mark.parametrize("before, after, flip", [
    ("", "", True),
    ("如果", "", False),        # 假设：在很长的一句话的开头
    ("", "吗", False),          # 问句：在很长的一句话的末尾
    ("有人认为", "", False),     # 转述
])
def test_a_very_long_sentence_is_read_by_the_same_rules(before, after, flip):
    """一句话很长、中间没有标点（几千字）时，问句、假设、转述照样按整句认：标点和这些词的位置只找一遍，
    不是每一处都从头找（那样一句 1 MB 的话要核对很久）。"""
    filler = "照片视频文档音乐" * 400
    claim = f"{before}{filler}这款 NAS 不支持运行 Docker 容器{after}"
    source = "这款 NAS 支持运行 Docker 容器和虚拟机。"
    assert bool(contradiction_kinds(claim, source)) is flip
