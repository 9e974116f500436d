"""支持分的模型：随包发布的权重、切点和询问区间就是拟合脚本在 dev 上算出来的（没人手改过），推断和拟合一致。"""
import json
import os
from pathlib import Path

import pytest

from bench import fit_support_score
from bench.evaluate_citecheck import DEFAULT_DATA
from sourced_answers.checker import FEATURES, MODEL_FILE, SupportModel, support_model
from tests.across_workers import once, session_folder


@pytest.fixture(scope="module")
def refitted(tmp_path_factory):
    """重新拟合一次（不到一秒，机器忙时好几秒）：一次测试会话只拟合一次，几个 xdist 进程共用结果。"""
    if not Path(DEFAULT_DATA).exists():
        if os.environ.get("CI"):
            pytest.fail(f"CI 里必须有 {DEFAULT_DATA}：没有它就不能确认随包的权重是拟合出来的")
        pytest.skip("没有 shared/citecheck/dev.jsonl")
    return once(session_folder(tmp_path_factory), "support_model_refit",
                lambda: fit_support_score.refit(Path(DEFAULT_DATA)))


def shipped():
    return json.loads(MODEL_FILE.read_text(encoding="utf-8"))


@pytest.mark.slow  # 重新拟合整份 CiteCheck dev：整批数据的计算，留给整套测试
def test_shipped_weights_are_what_the_script_fits_on_dev(refitted):
    assert fit_support_score.differences(refitted, shipped()) == []


@pytest.mark.parametrize("name, edit", [("weights", lambda v: [w + 0.01 for w in v]), ("cut", lambda v: v - 0.02),
                                        ("judge_band", lambda v: [v[0], v[1] + 0.1])])
@pytest.mark.slow  # 重新拟合整份 CiteCheck dev：整批数据的计算，留给整套测试
def test_a_hand_edited_file_is_noticed(refitted, name, edit):
    edited = shipped()
    edited[name] = edit(edited[name])
    assert fit_support_score.differences(refitted, edited) == [name]


@pytest.mark.slow  # 重新拟合整份 CiteCheck dev：整批数据的计算，留给整套测试
def test_the_recorded_fitting_settings_are_compared_too(refitted):
    edited = shipped()
    edited["fitted_on"] = dict(edited["fitted_on"], seed=1)
    assert fit_support_score.differences(refitted, edited) == ["fitted_on"]


def test_the_shipped_model_reads_the_features_the_checker_computes():
    model = support_model()
    assert model.features == fit_support_score.MODEL_FEATURES
    assert 0 < model.cut < 1 and model.judge_band[0] <= model.cut < model.judge_band[1]


def test_score_is_a_probability_that_grows_with_overlap():
    model = support_model()
    low = dict.fromkeys(FEATURES, 0.0)
    high = dict(low, window_recall=1.0, unit_recall=1.0, weakest_third=1.0)
    assert 0.0 <= model.score(low) < model.cut < model.score(high) <= 1.0


def test_folds_are_stratified_and_fixed():
    rows = [fit_support_score.Row(idx, idx % 2) for idx in range(100)]
    folds = fit_support_score.folds_of(rows)
    assert folds == fit_support_score.folds_of(rows)
    for k in range(fit_support_score.FOLDS):
        members = [row for row, fold in zip(rows, folds, strict=True) if fold == k]
        assert len(members) == 20 and sum(row.label for row in members) == 10


def test_newton_fit_matches_a_known_logistic_regression():
    # 一维、可分得不完全的数据：L2 很小时，拟合的斜率是正的、截距接近 0（数据关于 0 对称）
    samples = [[x] for x in (-2.0, -1.0, -0.5, 0.5, 1.0, 2.0, -1.5, 1.5)]
    labels = [0, 0, 1, 0, 1, 1, 0, 1]
    model = fit_support_score.fit(samples, labels, l2=1e-6)
    assert model.weights[0] > 0 and abs(model.bias) < 1e-6
    assert isinstance(model, SupportModel)
