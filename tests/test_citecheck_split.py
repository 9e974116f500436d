"""CiteCheck dev 的拟合 / 验证两部分（bench/citecheck_split.py）：按固定的种子分一次、验证部分的 idx 随仓库提交，
拟合脚本从不读验证部分。"""
import json
import os
from pathlib import Path

import pytest

from bench import citecheck_split, fit_support_score


@pytest.fixture(scope="module")
def dev_rows():
    if not citecheck_split.DEFAULT_DATA.exists():
        if os.environ.get("CI"):
            pytest.fail(f"CI 里必须有 {citecheck_split.DEFAULT_DATA}")
        pytest.skip("没有 shared/citecheck/dev.jsonl")
    return citecheck_split.load()


def test_the_committed_validation_ids_are_the_seeded_split_of_dev(dev_rows):
    assert citecheck_split.validation_ids() == frozenset(citecheck_split.split_ids(dev_rows))


def test_the_validation_part_is_about_thirty_percent_and_balanced(dev_rows):
    held = citecheck_split.validation_part(dev_rows)
    fitting = citecheck_split.fitting_part(dev_rows)
    assert len(held) + len(fitting) == len(dev_rows)
    assert {row["idx"] for row in held}.isdisjoint(row["idx"] for row in fitting)
    assert abs(len(held) / len(dev_rows) - citecheck_split.VALIDATION_SHARE) < 0.01
    assert sum(row["label"] for row in held) * 2 == len(held)


def test_the_split_does_not_depend_on_the_order_of_the_file(dev_rows):
    assert citecheck_split.split_ids(list(reversed(dev_rows))) == citecheck_split.split_ids(dev_rows)


def test_the_fitting_script_never_reads_a_validation_row(dev_rows, tmp_path, monkeypatch):
    """拟合脚本算特征的唯一入口是 row_of：验证部分的行连它都到不了。"""
    seen = []
    monkeypatch.setattr(fit_support_score, "row_of", lambda data: seen.append(data["idx"]))
    path = tmp_path / "dev.jsonl"
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in dev_rows), encoding="utf-8")
    fit_support_score.load_rows(Path(path))
    assert len(seen) == len(dev_rows) - len(citecheck_split.validation_ids())
    assert not set(seen) & citecheck_split.validation_ids()


def test_the_script_can_check_the_committed_file(dev_rows, capsys):
    assert citecheck_split.main(["--check"]) == 0
