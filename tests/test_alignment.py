"""对齐（checker/alignment.py）：一句话的每一段对上了资料的哪几个字，哪里只差一个槽，哪几段找不到。"""
from sourced_answers.checker.alignment import Window, align, units_of
from sourced_answers.checker.reading import read


def aligned(claim, *sentences):
    """(对上的几段：(句子里的字, 第几句, 资料里的字)，槽：(句子里的字, 资料里的字)，找不到的几段)。"""
    text = read(claim).text
    seen = [read(sentence).text for sentence in sentences]
    found = align(text, Window([(1, number, units_of(sentence)) for number, sentence in enumerate(seen)]))
    pieces = [(text[slice(*p.claim)], p.sentence, seen[p.sentence][slice(*p.span)]) for p in found.pieces]
    slots = [(text[slice(*s.claim)], seen[s.sentence][slice(*s.span)]) for s in found.slots]
    return pieces, slots, [text[slice(*span)] for span in found.unmatched]


def test_an_inserted_negation_is_a_slot_between_two_pieces():
    pieces, slots, missing = aligned("这款 NAS 不支持运行 Docker 容器", "这款 NAS 支持运行 Docker 容器和虚拟机")
    assert [piece[0] for piece in pieces] == ["这款 NAS", "支持运行 Docker 容器"]
    assert slots == [("不", "")] and missing == ["不"]


def test_a_swapped_number_stays_with_the_sentence_whose_words_it_copies():
    """“RAID5 至少需要”来自第 2 句：“四”对的是第 2 句同一处的“三”，不是第 1 句（RAID6）里的“四块盘”。"""
    pieces, slots, _ = aligned("RAID5 至少需要四块盘", "RAID6 至少需要四块盘。", "RAID5 至少需要三块盘。")
    assert {piece[1] for piece in pieces} == {1} and slots == [("四", "三")]


def test_a_longer_match_elsewhere_wins_over_the_most_similar_sentence():
    """最像的一句说的是 2022 年，另一句一字不差地说了 2023 年：用后一句，不是一个换了年份的槽。"""
    pieces, slots, missing = aligned("该公司2023年营收增长了15%", "该公司2022年营收增长了10%", "2023年营收增长了15%")
    assert pieces[-1] == ("2023年营收增长了15", 1, "2023年营收增长了15") and not slots and not missing


def test_a_claim_may_draw_on_several_sentences():
    pieces, _, missing = aligned("RAID1 需要两块盘，RAID5 至少需要三块盘", "RAID1 需要两块盘。", "RAID5 至少需要三块盘。")
    assert [piece[1] for piece in pieces] == [0, 1] and not missing


def test_the_last_word_of_a_clause_can_be_a_one_character_piece():
    _, slots, _ = aligned("香港和苏联两队将争夺第一名", "香港和苏联两队将争夺第三名")
    assert slots == [("一", "三")]


def test_leading_and_trailing_slots():
    assert aligned("不会推进农村危房改造", "继续推进农村危房改造")[1] == [("不会", "继续")]
    assert aligned("治理和保护环境工作的力度减弱", "治理和保护环境工作的力度加大")[1] == [("减弱", "加大")]
    assert aligned("Samsung released the first iPhone in 2007", "Apple released the first iPhone in 2007.")[1] == [
        ("Samsung", "Apple")]


def test_english_is_aligned_on_words_case_and_plural_aside():
    pieces, _, missing = aligned("the NAS supports two drives", "The NAS support two drive bays.")
    assert pieces == [("the NAS supports two drives", 0, "The NAS support two drive")] and not missing


def test_words_that_are_nowhere_in_the_source_are_unmatched():
    _, _, missing = aligned("这款 NAS 支持运行 Docker 容器，还能挖矿赚钱", "这款 NAS 支持运行 Docker 容器和虚拟机")
    assert missing == ["还能挖矿赚钱"]


def test_an_empty_claim_or_window_aligns_nothing():
    assert align(read("").text, Window([])).pieces == ()
    assert align(read("硬盘").text, Window([])).unmatched == ((0, 2),)
