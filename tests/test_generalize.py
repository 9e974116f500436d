"""核对在没调过参的数据上：去掉的误报和保留的抓获，各用 CiteCheck dev 里的真实陈述做回归测试。

整段编造规则只在整体重合度低于 NOVEL_GATE 时才判（常数在 idx 为偶数的一半上选定）。"""
import json
from pathlib import Path

import pytest

from bench.evaluate_citecheck import DEFAULT_DATA, verify_line
from sourced_answers.checker import Source, check_answer
from sourced_answers.checker.features import NOVEL_GATE


@pytest.fixture(scope="module")
def dev():
    if not Path(DEFAULT_DATA).exists():
        pytest.skip("没有 shared/citecheck/dev.jsonl")
    return {row["idx"]: row for row in map(json.loads, Path(DEFAULT_DATA).read_text(encoding="utf-8").splitlines())}


def verdict(row):
    record = json.loads(verify_line(row))
    return check_answer(record["answer"], [Source.from_json(source) for source in record["sources"]])


@pytest.mark.parametrize("idx", [6999, 5521])
def test_supported_statement_with_high_overlap_is_no_longer_a_false_alarm(dev, idx):
    row = dev[idx]
    assert row["label"] == 1 and idx % 2 == 1  # 留出的一半里的误报
    assert verdict(row).passed


@pytest.mark.parametrize("idx", [10024, 3283, 2041])
def test_invented_run_in_a_low_overlap_sentence_is_still_caught(dev, idx):
    row = dev[idx]
    [problem] = verdict(row).problems
    assert row["label"] == 0
    assert problem.kind == "weak_support" and "找不到" in problem.message and problem.overlap < NOVEL_GATE
