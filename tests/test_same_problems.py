"""outputs/same_problems.py：哪些问题算同样的、合起来怎样说出所有的地方。"""
from sourced_answers.outputs.same_problems import places_text, same_problems, split_place


def uncited(paragraph, text="群晖好用。", item=None):
    where = f"第 {paragraph} 段" + (f"第 {item} 项" if item else "")
    return {"kind": "uncited_paragraph", "message": f"{where}没有引用：“{text}”", "paragraph": paragraph}


def weak(paragraph, score=0.01, evidence="家用 NAS 选购要点"):
    return {"kind": "weak_support", "message": "“群晖比威联通稳定 [1]” 和资料 [1] 的重合度只有 14%",
            "paragraph": paragraph, "citations": [1], "overlap": 0.14, "score": score, "evidence": evidence}


def test_consecutive_paragraphs_become_a_range_and_the_others_a_list():
    assert places_text([(1, None), (2, None), (3, None), (5, None)]) == "第 1–3、5 段"
    assert places_text([(1, None), (3, None), (5, None)]) == "第 1、3、5 段"
    assert places_text([(4, None), (5, None)]) == "第 4、5 段"  # 两个连着的写成列举，读起来更顺


def test_list_items_are_named_under_their_paragraph():
    assert places_text([(2, 1), (2, 2), (2, 3)]) == "第 2 段第 1–3 项"
    assert places_text([(1, None), (2, 1), (2, 3), (4, None)]) == "第 1 段、第 2 段第 1、3 项、第 4 段"


def test_the_place_comes_from_the_message_when_the_message_starts_with_it():
    assert split_place(uncited(3, item=2)) == ((3, 2), "没有引用：“群晖好用。”")
    assert split_place(weak(4)) == ((4, None), "：“群晖比威联通稳定 [1]” 和资料 [1] 的重合度只有 14%")
    assert split_place({"kind": "empty_answer", "message": "回答是空的"}) == (None, "回答是空的")


def test_identical_problems_are_one_said_with_all_their_places():
    [said] = same_problems([uncited(n) for n in range(1, 11)])
    assert said.members == tuple(range(10)) and said.text() == "第 1–10 段没有引用：“群晖好用。”"


def test_a_different_quote_score_or_evidence_keeps_problems_apart():
    problems = [uncited(1), uncited(2, "威联通好用。"), weak(3), weak(4, score=0.02), weak(5, evidence="另一句"), weak(6)]
    assert [said.members for said in same_problems(problems)] == [(0,), (1,), (2, 5), (3,), (4,)]


def test_a_problem_without_a_paragraph_is_never_merged():
    empty = {"kind": "empty_answer", "message": "回答是空的"}
    assert [said.text() for said in same_problems([empty, empty])] == ["回答是空的", "回答是空的"]


def test_one_problem_reads_as_before():
    assert [said.text() for said in same_problems([uncited(2, item=1), weak(3)])] == [
        "第 2 段第 1 项没有引用：“群晖好用。”", "第 3 段：“群晖比威联通稳定 [1]” 和资料 [1] 的重合度只有 14%"]


def test_under_its_paragraph_the_place_is_not_repeated():
    [items] = same_problems([uncited(2, item=n) for n in (1, 2, 3)])
    assert items.text_in(2) == "第 1–3 项没有引用：“群晖好用。”"
    [twice] = same_problems([weak(3), weak(3)])
    assert twice.text_in(3) == "“群晖比威联通稳定 [1]” 和资料 [1] 的重合度只有 14%（共 2 处）"
