"""项目的例子回答（bench/example_answers.py）：每一个都判得和一个认真的读者期待的一样；知道判不对的（miss）
仍然判错（判对了就该把 miss 去掉），而且伪装过的和原样的判得一样。"""
import pytest

from bench.example_answers import EXAMPLES
from sourced_answers.checker import Source, check_answer


def verdict(example):
    report = check_answer(example["answer"], [Source.from_json(source) for source in example["sources"]])
    return report, {problem.kind for problem in report.problems}


def as_expected(example, report, kinds):
    expect = example["expect"]
    if expect == "pass":
        return report.passed
    if expect == "flag":
        return not report.passed
    return set(expect) <= kinds


@pytest.mark.parametrize("example", EXAMPLES, ids=[example["id"] for example in EXAMPLES])
def test_every_example_is_judged_as_a_careful_reader_expects(example):
    report, kinds = verdict(example)
    if example.get("miss"):
        assert not as_expected(example, report, kinds), f"{example['id']} 现在判对了：把 miss 去掉"
    else:
        assert as_expected(example, report, kinds), [p.message for p in report.problems]


def test_the_disguised_flips_are_judged_exactly_like_the_plain_one():
    flips = {example["id"]: example for example in EXAMPLES if example["id"].startswith("zh-flip-")
             and example["id"] != "zh-flip-traditional"}
    plain, _ = verdict(next(example for example in EXAMPLES if example["id"] == "zh-flip"))
    for name, example in flips.items():
        report, _ = verdict(example)
        assert [(c.score, c.status, c.contradicts) for c in report.claims] == \
            [(c.score, c.status, c.contradicts) for c in plain.claims], name
    assert plain.claims[0].contradicts


def test_every_example_id_is_unique_and_every_expectation_is_known():
    assert len({example["id"] for example in EXAMPLES}) == len(EXAMPLES)
    for example in EXAMPLES:
        assert example["expect"] in ("pass", "flag") or isinstance(example["expect"], tuple)
