"""英文句子引英文资料时用英文的支持分模型（权重、切点、询问区间），其余一切照旧用中文的。"""
import json
import os
from pathlib import Path

import pytest

from bench.evaluate_citecheck import DEFAULT_DATA, answer_of
from sourced_answers.checker import (
    CHINESE,
    DEFAULT_RULE,
    ENGLISH,
    ClaimCheck,
    Source,
    SupportRule,
    check_answer,
    support_model,
)
from sourced_answers.steps.judge import band_of, to_ask
from tests.support import NAS_SOURCES

RAID_PAGE = Source(title="RAID levels", text=(
    "RAID 5 spreads parity across all disks, so an array needs at least three disks. It keeps working when one disk "
    "fails, but a second failure during the rebuild loses the data. Rebuilding a large array can take a day or more."))
# 换了说法、意思和资料一样：中文模型给它的分远低于中文的切点（以前的误报），英文模型放过它
PARAPHRASE = "RAID 5 stores parity on every disk and tolerates the loss of a single disk [1]."
# 资料里没有的说法：英文模型的分落在中文切点和英文切点之间
INVENTED = "RAID 5 is faster than RAID 10 for databases with heavy random writes [1]."


def only_claim(answer: str, sources: list[Source], rule: SupportRule = DEFAULT_RULE) -> ClaimCheck:
    [claim] = [check for check in check_answer(answer, sources, rule).claims if check.status != "too_short"]
    return claim


def test_an_english_sentence_against_an_english_source_gets_the_english_cut():
    chinese, english = support_model(CHINESE), support_model(ENGLISH)
    claim = only_claim(INVENTED, [RAID_PAGE])
    assert claim.calibration == ENGLISH
    # 按中文的切点它会通过；按英文的切点它被标出
    assert chinese.cut <= claim.score < english.cut
    assert claim.status == "weak_support"


def test_a_faithful_english_paraphrase_passes():
    claim = only_claim(PARAPHRASE, [RAID_PAGE])
    assert claim.calibration == ENGLISH and claim.status == "supported"
    assert check_answer(PARAPHRASE, [RAID_PAGE]).passed


def test_threshold_is_the_same_floor_for_english_sentences():
    score = only_claim(INVENTED, [RAID_PAGE]).score
    below, above = round(score - 0.01, 4), round(score + 0.01, 4)
    assert only_claim(INVENTED, [RAID_PAGE], SupportRule("score", below)).status == "supported"
    assert only_claim(INVENTED, [RAID_PAGE], SupportRule("score", above)).status == "weak_support"


def test_a_chinese_sentence_keeps_the_chinese_model():
    answer = "RAID5 至少三块盘，可以容忍一块盘损坏 [2]。"
    claim = only_claim(answer, NAS_SOURCES)
    assert claim.calibration == CHINESE and claim.status == "supported"


def test_an_english_sentence_citing_a_chinese_page_with_english_text_uses_the_chinese_model():
    # 中英对照的网页主要是中文：英文句子和它能按字面比较，但用中文模型（拟合中文模型的数据里就有这样的资料）
    english = " ".join(["RAID 5 needs at least three disks and keeps working when one disk fails."] * 3)
    chinese = "RAID5 至少需要三块盘，坏一块盘时仍能工作，重建期间再坏一块就会丢数据。" * 3
    page = Source(title="RAID 级别", text=chinese + "\n" + english)
    claim = only_claim("RAID 5 needs at least three disks and keeps working when one disk fails [1].", [page])
    assert claim.calibration == CHINESE


def test_an_english_sentence_citing_an_english_and_a_chinese_page_uses_the_chinese_model():
    answer = "RAID 5 keeps working when one disk fails [1][2]."
    claim = only_claim(answer, [RAID_PAGE, NAS_SOURCES[1]])
    assert claim.calibration == CHINESE


def test_the_judge_asks_an_english_sentence_by_the_english_band():
    chinese, english = support_model(CHINESE).judge_band, support_model(ENGLISH).judge_band
    # 一个在英文区间里、不在中文区间里的分（两个区间的上端不一样）
    score = (min(chinese[1], english[1]) + max(chinese[1], english[1])) / 2
    inside = CHINESE if chinese[0] <= score < chinese[1] else ENGLISH
    outside = ENGLISH if inside == CHINESE else CHINESE
    check = ClaimCheck(1, "RAID 5 keeps working when one disk fails [1]", [1], score, 0.8, 1, "supported")
    check.calibration = inside
    assert to_ask(check, band_of(check, SupportRule()), "band")
    check.calibration = outside
    assert not to_ask(check, band_of(check, SupportRule()), "band")


@pytest.mark.slow  # 读整份 CiteCheck dev：整批数据的计算，留给整套测试
def test_every_citecheck_sentence_is_still_scored_by_the_chinese_model():
    """中文的结果不变：CiteCheck dev 的每一句都还是中文模型打的分，用的是中文模型的切点。"""
    if not Path(DEFAULT_DATA).exists():
        if os.environ.get("CI"):
            pytest.fail(f"CI 里必须有 {DEFAULT_DATA}")
        pytest.skip("没有 shared/citecheck/dev.jsonl")
    rows = [json.loads(line) for line in Path(DEFAULT_DATA).read_text(encoding="utf-8").splitlines() if line.strip()]
    chinese = support_model(CHINESE)
    for row in rows:
        report = check_answer(answer_of(row["statement"]), [Source(text=row["quote"])])
        for claim in report.claims:
            assert claim.calibration in (CHINESE, None), row["idx"]
            if claim.status == "weak_support":
                assert claim.score < chinese.cut
