"""有风险的句子（checker/risky.py）：资料里一字不差地找不到的数字、名称、否定说法；找得到的不算。"""
import pytest

from sourced_answers.checker import Risk, SourceTerms, risks_in, risky, seen


def risks(claim: str, *sources: str) -> list[Risk]:
    return risks_in(seen(claim), [SourceTerms(seen(text)) for text in sources])


def test_a_number_missing_from_the_source_is_a_risk():
    assert risks("李煜于978年被毒死于汴京", "李煜于公元九七八年死于汴京") == [Risk("number", "978")]


def test_a_year_the_number_rule_ignores_is_still_a_risk():
    assert risks("2017年美国总统是特朗普", "特朗普在2016年当选美国总统") == [Risk("number", "2017")]


@pytest.mark.parametrize("claim, source", [
    ("这家公司去年营收 120 亿元", "这家公司去年营收120亿元"),
    ("营收 27,400 万元", "营收27400万元"),
    ("营收２７４００万元", "营收 27400 万元"),
    ("在2017年举办", "2017年"),
])
def test_the_same_number_written_with_spaces_commas_or_full_width_is_not_a_risk(claim, source):
    assert risks(claim, source) == []


def test_list_numbers_are_not_risks():
    assert risks("它的优点包括：1)降低价格；2)管控成本", "优点是降低价格、管控成本") == []


def test_an_english_name_missing_from_the_source_is_a_risk():
    found = risks("作曲者是 Radiohead 的超级粉丝", "作曲者是摇滚乐队的超级粉丝")
    assert found == [Risk("name", "Radiohead")]


def test_an_english_name_present_in_another_case_is_not_a_risk():
    assert risks("远程访问优先使用 VPN 或 Tailscale", "远程访问优先使用 vpn 或 TAILSCALE 这类工具") == []


def test_ordinary_english_words_are_not_names():
    claim = "The NAS survives one failed disk."
    assert risks(claim, "RAID 5 on a NAS survives the failure of one disk.") == []


def test_a_model_number_is_a_name():
    assert risks("Synology DS920+ has four bays.", "Synology DS918+ has four bays.") == [Risk("name", "DS920")]


@pytest.mark.parametrize("claim, source, risk", [
    ("英国的制度和《权利法案》的颁布有关", "英国的制度和《大宪章》有关", "权利法案"),
    ("耶稣在《古兰经》中被称为“尔撒”", "耶稣在《古兰经》中被称为“麦西哈”", "尔撒"),
    ("他在决赛中击败了扬尼克·辛纳", "他在决赛中击败了对手", "尼克·辛纳"),
])
def test_a_marked_chinese_name_missing_from_the_source_is_a_risk(claim, source, risk):
    assert risks(claim, source) == [Risk("name", risk)]


def test_a_marked_chinese_name_present_verbatim_is_not_a_risk():
    assert risks("他在决赛中击败了扬尼克 · 辛纳，这和《权利法案》无关",
                 "决赛中，扬尼克·辛纳输了。《权利法案》无关胜负") == []


@pytest.mark.parametrize("claim, source, risk", [
    ("RAID5 至少三块盘，不能容忍一块盘损坏", "RAID5 至少三块盘，可以容忍一块盘损坏", "不能容忍"),
    ("这款 NAS 没有自带硬盘", "这款 NAS 自带两块硬盘", "没有自带"),
    ("RAID 5 does not survive one failed disk.", "RAID 5 survives one failed disk.", "not survive"),
    ("RAID 5 doesn't need three disks.", "RAID 5 needs at least three disks.", "n't need"),
])
def test_a_negation_missing_from_the_source_is_a_risk(claim, source, risk):
    assert risks(claim, source) == [Risk("polarity", risk)]


@pytest.mark.parametrize("claim, source", [
    ("快照不能代替异地备份", "快照和原数据在同一组硬盘上，不能代替异地备份"),
    ("RAID 不是备份", "要注意，RAID 不是备份"),
    ("RAID is not a backup.", "Remember that RAID is not a backup."),
    ("两种格式不同，速度非常快，未来还会更快", "这两种格式的速度都很快"),
])
def test_a_negation_the_source_also_says_or_a_word_that_only_looks_negative_is_not_a_risk(claim, source):
    assert risks(claim, source) == []


def test_what_any_cited_source_says_counts():
    assert risks("RAID5 不能容忍两块盘损坏，DS920 有 4 盘位", "RAID5 不能容忍两块盘损坏", "DS920 有 4 个盘位") == []


def test_risks_come_by_kind_each_once():
    claim = "Synology 在2020年和2021年都没有推出新款，Synology 不再更新"
    found = risks(claim, "群晖每年都推出新款")
    assert found == [Risk("number", "2020"), Risk("number", "2021"), Risk("name", "Synology"),
                     Risk("polarity", "没有推出"), Risk("polarity", "不再更")]


def test_no_sources_no_risks():
    assert risks("2017年美国总统是特朗普") == []


def test_a_long_source_is_read_once(monkeypatch):
    """一条长资料只在建 SourceTerms 时读一遍（取数字、单词、否定说法）；之后每句话只读这句话本身。按读了哪些文字
    判断，不按墙上时间（速度在 bench/benchmark_check.py 里量）。"""
    read = []
    for name in ("numbers_of", "latin_words", "english_negations", "chinese_negations", "marked_names"):
        original = getattr(risky, name)
        monkeypatch.setattr(risky, name, lambda text, original=original: read.append(len(text)) or original(text))
    long = "资料里的一句话，不能代替备份，型号 DS920，2017年。" * 40_000
    source = SourceTerms(seen(long))
    assert read.count(len(long)) == 3 and len(read) == 3
    for _ in range(2_000):
        assert risks_in(seen("资料里的一句话，不能代替备份，型号 DS920，2017年"), [source]) == []
    assert max(read[3:]) < 100
