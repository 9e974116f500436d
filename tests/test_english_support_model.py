"""英文的支持分模型：随包发布的 support_model_en.json 就是 bench/fit_english_support.py 在 AttributionBench 的 dev 上
算出来的（没人手改过），每条标注做成核对输入的办法和 CiteCheck 一样。

AttributionBench 不在 ../shared 里（没有许可证，不能放进仓库），所以重新拟合只在有那份仓库镜像的机器上跑；
没有时跳过，并说明原因。"""
import json

import pytest

from bench import evaluate_attributionbench, fit_english_support, fit_support_score
from bench.evaluate_citecheck import answer_of
from sourced_answers.checker import ENGLISH, ENGLISH_MODEL_FILE, FEATURES, support_model
from tests.across_workers import once, session_folder


@pytest.fixture(scope="module")
def refitted(tmp_path_factory):
    """重新拟合一次（一秒多，机器忙时好几秒）：一次测试会话只拟合一次，几个 xdist 进程共用结果。"""
    try:
        return once(session_folder(tmp_path_factory), "english_support_model_refit", fit_english_support.refit)
    except FileNotFoundError as missing:
        pytest.skip(f"没有 AttributionBench 的 dev 集（{missing}）：这份数据不在 shared 里、CI 上也没有，"
                    "英文模型的重新拟合只在有 AttributionBench 镜像的机器上跑")


def shipped():
    return json.loads(ENGLISH_MODEL_FILE.read_text(encoding="utf-8"))


@pytest.mark.slow  # 重新拟合整份 AttributionBench dev：整批数据的计算，留给整套测试
def test_shipped_english_weights_are_what_the_script_fits_on_dev(refitted):
    assert fit_support_score.differences(refitted, shipped()) == []


@pytest.mark.parametrize("name, edit", [("weights", lambda v: [w + 0.01 for w in v]), ("cut", lambda v: v - 0.02),
                                        ("judge_band", lambda v: [v[0], v[1] + 0.1]),
                                        ("cross_validation", lambda v: dict(v, recall=v["recall"] + 0.05))])
@pytest.mark.slow  # 重新拟合整份 AttributionBench dev：整批数据的计算，留给整套测试
def test_a_hand_edited_english_file_is_noticed(refitted, name, edit):
    edited = shipped()
    edited[name] = edit(edited[name])
    assert fit_support_score.differences(refitted, edited) == [name]


@pytest.mark.slow  # 重新拟合整份 AttributionBench dev：整批数据的计算，留给整套测试
def test_the_english_cut_meets_its_false_alarm_target_in_cross_validation(refitted):
    checked = refitted["cross_validation"]
    assert checked["false_alarm"] <= fit_english_support.FALSE_ALARM_TARGET
    assert refitted["fitted_on"]["rows"] > 0.99 * refitted["fitted_on"]["rows_read"]


def test_the_english_model_reads_the_features_the_checker_computes():
    model = support_model(ENGLISH)
    assert model.features == FEATURES
    assert 0 < model.cut < 1 and model.judge_band[0] <= model.cut < model.judge_band[1]


def test_a_row_becomes_the_same_checker_input_as_a_citecheck_statement():
    row = {"claim": "The bridge opened in 1932 [3].", "attribution_label": "attributable",
           "references": ["Title: Harbour bridge", "The bridge was opened in March 1932."]}
    example = fit_english_support.example_of(7, row)
    assert example.answer == answer_of(row["claim"])
    assert example.answer.endswith("[1]") and "[3]" not in example.answer
    assert example.source == "Title: Harbour bridge\n\nThe bridge was opened in March 1932."
    assert example.label == 1 and example.position == 7
    assert fit_english_support.example_of(0, dict(row, attribution_label="not attributable")).label == 0
    with pytest.raises(KeyError):
        fit_english_support.example_of(0, dict(row, attribution_label="maybe"))


@pytest.mark.slow
def test_a_missing_mirror_is_reported_not_fetched(tmp_path):
    with pytest.raises(FileNotFoundError):
        fit_english_support.read_data(None, tmp_path / "no-such-repo")


def test_a_data_file_can_be_given_instead_of_the_mirror(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps({"claim": "Water boils at 100 degrees.", "attribution_label": "attributable",
                                "references": ["At sea level water boils at 100 degrees Celsius."]}) + "\n",
                    encoding="utf-8")
    name, content = fit_english_support.read_data(path)
    [example] = fit_english_support.examples_in(content)
    assert name == "rows.jsonl" and example.label == 1


@pytest.mark.slow
def test_the_evaluation_goes_through_verify_and_compares_with_the_chinese_model(tmp_path, capsys):
    page = ("RAID 5 spreads parity across all disks, so an array needs at least three disks. It keeps working when "
            "one disk fails, but a second failure during the rebuild loses the data.")
    rows = [{"claim": "RAID 5 stores parity on every disk and tolerates the loss of a single disk.",
             "attribution_label": "attributable", "references": [page]},
            {"claim": "RAID 5 is faster than RAID 10 for databases with heavy random writes.",
             "attribution_label": "not attributable", "references": [page]}]
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    assert evaluate_attributionbench.main(["--data", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    [before] = [line.split() for line in lines if line.startswith("换成英文模型之前")]
    [now] = [line.split() for line in lines if line.startswith("现在")]
    # 中文模型把换了说法的那句也标出了（误报 100%）；英文模型只标出编的那句
    assert before[-3:] == ["50.0%", "100.0%", "100.0%"]
    assert now[-3:] == ["100.0%", "100.0%", "0.0%"]
