"""问题带着它那一句的下标（--json 的 problems[i].claim 指进 claims）：说一句话的问题都有，没有引用的块没有；
旧版本存下的记录没有这个字段，--verify 和 --html 重新核对回答，照样有。"""
import json

from sourced_answers.checker import check_answer
from tests.support import NAS_RECORD_SOURCES, NAS_SOURCES, cli_env, run_cli
from tests.test_review_page import MANY_PROBLEMS, reading, write_input


def verify_json(tmp_path, *records):
    result = run_cli("--verify", write_input(tmp_path, *records), "--json", env=cli_env())
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_every_sentence_problem_in_json_has_the_index_of_its_sentence(tmp_path):
    [record] = verify_json(tmp_path, MANY_PROBLEMS)
    kinds = [p["kind"] for p in record["problems"]]
    assert sorted(set(kinds)) == ["missing_source", "number_mismatch", "uncited_paragraph", "weak_support"]
    for problem in record["problems"]:
        assert "claim" in problem
        if problem["kind"] == "uncited_paragraph":
            assert problem["claim"] is None  # 没有引用的句子不在 claims 里
            continue
        index = problem["claim"]
        assert type(index) is int
        assert record["claims"][index]["sentence"] == problem["sentence"]
        assert record["claims"][index]["paragraph"] == problem["paragraph"]
    missing = next(p for p in record["problems"] if p["kind"] == "missing_source")
    assert record["claims"][missing["claim"]]["status"] == "missing_source"


def test_sentences_in_code_blocks_headings_and_quotes_do_not_shift_the_index():
    """代码块、短标题不核对，引用块、写成一句话的标题照样核对：下标数的是 claims 里真有的那些句子。"""
    answer = ("## 选购要点\n\n```\n需要转码 4K 视频时选带核显的 Intel 型号 [2]。\n```\n\n"
              "> 家用 NAS 至少选两盘位，方便做 RAID1 镜像 [1]。\n\n"
              "## RAID5 至少两块盘就能容忍一块盘损坏 [2]。\n\n"
              "没有引用的一句。\n\n选购要点 [1]：\n\n- 数据至少保存三份，放在两种不同的介质上")
    report = check_answer(answer, NAS_SOURCES)
    sentences = [check.sentence for check in report.claims]
    assert sentences == ["家用 NAS 至少选两盘位，方便做 RAID1 镜像 [1]", "RAID5 至少两块盘就能容忍一块盘损坏 [2]",
                         "选购要点 [1]",
                         "- 数据至少保存三份，放在两种不同的介质上"]  # 只剩“：”的那一截没有内容，不是一句话；列表项继承引用
    found = {p.kind: p.claim for p in report.problems}
    assert found == {"uncited_paragraph": None, "number_mismatch": 1, "weak_support": 3}


def test_a_record_saved_before_the_index_existed_is_checked_again_and_gets_it(tmp_path):
    """旧版本的 --json 记录：problems 里没有 claim（这里还故意留着过时的问题）。--verify 不看存下的结论，
    从回答和资料重新核对，输出里每个问题都有 claim；--html 也照样把原因标在那一句上。"""
    sentence = "RAID5 至少三块盘，可以容忍一块盘损坏"
    old = {"question": "q", "model": "m", "answer": f"{sentence} [4]。{sentence} [2]。", "sources": NAS_RECORD_SOURCES,
           "problems": [{"kind": "weak_support", "message": "过时的说明", "paragraph": 1,
                         "sentence": f"{sentence} [2]", "citations": [2]}],
           "claims": [], "unused": [], "passed": False}
    [record] = verify_json(tmp_path, old)
    [problem] = [p for p in record["problems"] if p["kind"] != "repeated"]
    assert problem["claim"] == 0 and problem["message"] != "过时的说明"
    # 同一句话写了两遍（引用不同也是两遍）：第二句另有一个 repeated
    assert [(p["kind"], p["claim"]) for p in record["problems"] if p["kind"] == "repeated"] == [("repeated", 1)]
    page = tmp_path / "review.html"
    result = run_cli("--verify", write_input(tmp_path, old), "--html", str(page), env=cli_env())
    assert result.returncode == 1
    items = reading(page.read_text(encoding="utf-8"))
    assert [(kind, "flagged" in css) for kind, css, _ in items] == [("claim", True), ("reason", False),
                                                                    ("claim", True), ("reason", False)]
    assert "过时的说明" not in page.read_text(encoding="utf-8")
