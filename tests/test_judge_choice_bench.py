"""bench/evaluate_judge_choice.py 核对 CiteCheck 的方式：换成随包的权重时，和 check_answer 一字不差。"""
import pytest

from bench.evaluate_judge_choice import cv_report, sampled
from sourced_answers.checker import check_answer, support_model
from tests.support import GOOD_ANSWER, NAS_SOURCES
from tests.test_judge_ask import RISKY_ANSWER, UNSURE


@pytest.mark.parametrize("answer", [RISKY_ANSWER, GOOD_ANSWER + "\n\n" + UNSURE + UNSURE])
def test_the_benchmark_checks_like_check_answer_when_given_the_shipped_weights(answer):
    """每一折用自己的权重核对；换成随包的权重时，句子的结果和问题都要和 check_answer 的一样。"""
    expected = check_answer(answer, NAS_SOURCES)
    found = cv_report(answer, NAS_SOURCES, support_model())
    assert [check.to_dict() for check in found.claims] == [check.to_dict() for check in expected.claims]
    assert [problem.to_dict() for problem in found.problems] == [problem.to_dict() for problem in expected.problems]


def test_the_sample_is_stratified_fixed_and_in_the_original_order():
    from bench.evaluate_judge_choice import Case
    from sourced_answers.checker import Report
    cases = [Case(idx, idx % 2, [], Report()) for idx in range(100)]
    first, again = sampled(cases, 20), sampled(cases, 20)
    assert [case.idx for case in first] == [case.idx for case in again]
    assert sum(case.label == 0 for case in first) == sum(case.label == 1 for case in first) == 10
    assert [case.idx for case in first] == sorted(case.idx for case in first)
