"""每一句对上了资料的哪几个字（evidence）、哪几个字资料里找不到（unmatched）：--json、--serve 的 verification、
审阅页和问题说明都读这一份（checker/evidence.py）。位置是在 answer 和资料 text 里的 Unicode 码位数。"""
import json

import pytest

from sourced_answers.checker import Source, check_answer
from tests.support import cli_env, run_cli

SOURCE = Source(title="NAS 的 Docker", text="这款 NAS 支持运行 Docker 容器和虚拟机，适合搭建家庭媒体服务器。")


def test_each_aligned_piece_points_into_the_answer_and_the_source():
    answer = "先说结论 [1]。这款 NAS 不支持运行 Docker 容器，还能挖矿 [1]。"
    [claim] = [c for c in check_answer(answer, [SOURCE]).claims if "不支持" in c.sentence]
    assert [(answer[e["answer_start"]:e["answer_end"]], SOURCE.text[e["start"]:e["end"]], e["text"], e["field"])
            for e in claim.evidence] == [("这款 NAS", "这款 NAS", "这款 NAS", "text"),
                                          ("支持运行 Docker 容器", "支持运行 Docker 容器", "支持运行 Docker 容器", "text")]
    assert [(answer[u["answer_start"]:u["answer_end"]], u["text"]) for u in claim.unmatched] == [
        ("不", "不"), ("还能挖矿", "还能挖矿")]


def test_offsets_count_code_points_after_an_emoji_and_survive_terminal_sequences():
    """表情是一个码位（JavaScript 里是两个 UTF-16 单元）；终端控制序列在核对之前去掉，位置仍指回原来的 answer。"""
    answer = "🎉\x1b[31m好消息\x1b[0m：这款 NAS 支持运行 Docker 容器 [1]。"
    [claim] = check_answer(answer, [SOURCE]).claims
    starts = [answer[e["answer_start"]:e["answer_end"]] for e in claim.evidence]
    assert "支持运行 Docker 容器" in starts[-1]
    assert all(answer[e["answer_start"]:e["answer_end"]] == e["text"] for e in claim.evidence)


def test_a_title_match_says_it_is_in_the_title():
    [claim] = check_answer("NAS 的 Docker 支持很好用 [1]。", [SOURCE]).claims
    assert any(e["field"] == "title" and SOURCE.title[e["start"]:e["end"]] == e["text"] for e in claim.evidence)


def test_function_words_and_words_the_source_has_are_not_listed_as_unmatched():
    [claim] = check_answer("NAS 还能挖矿赚钱了 [1]。", [SOURCE]).claims
    assert [u["text"] for u in claim.unmatched] == ["还能挖矿赚钱"]


def test_the_weak_support_message_names_the_words_the_source_does_not_have():
    [problem] = check_answer("这款 NAS 支持运行 Docker 容器，还能挖矿赚钱，号称永不宕机 [1]。", [SOURCE]).problems
    assert problem.kind == "weak_support"
    assert "里这几个字在资料 [1] 里找不到：“还能挖矿赚钱，号称永不宕机”" in problem.message


def test_english_claims_list_their_unmatched_words_too():
    source = Source(text="RAID 5 needs at least three disks and survives the failure of one disk.")
    report = check_answer("RAID 5 needs at least three disks, is faster than every SSD and never fails [1].", [source])
    assert [u["text"] for u in report.claims[0].unmatched] == ["is faster than every SSD and never fails"]


def test_json_and_the_server_verification_carry_the_spans(tmp_path):
    saved = tmp_path / "saved.json"
    saved.write_text(json.dumps({"answer": "这款 NAS 不支持运行 Docker 容器 [1]。",
                                 "sources": [{"title": SOURCE.title, "text": SOURCE.text}]}, ensure_ascii=False),
                     encoding="utf-8")
    result = run_cli("--verify", str(saved), "--json", env=cli_env())
    [claim] = json.loads(result.stdout)["claims"]
    assert [e["text"] for e in claim["evidence"]] == ["这款 NAS", "支持运行 Docker 容器"]
    assert [u["text"] for u in claim["unmatched"]] == ["不"]


@pytest.mark.parametrize("title, answer, text", [
    ("How to choose a home NAS", "How to choose a home NAS [1].", "Pick at least two bays."),
    ("How to choose a home NAS", "- how to choose a HOME NAS [1]", "Pick at least two bays."),
    ("家用 NAS 选购指南", "家用 NAS 选购指南 [1]。", "至少选两盘位。"),
])
def test_a_sentence_that_is_only_a_source_title_is_not_an_answer(title, answer, text):
    sources = [Source(title=title, text=text), Source(title="Other", text=text)]
    [problem] = check_answer(answer, sources).problems
    assert problem.kind == "title_only" and "只是资料 [1] 的标题，不是一句回答" in problem.message


def test_a_lead_in_that_names_its_source_is_not_title_only():
    sources = [Source(title="RAID 说明", text="RAID1 需要两块盘，做镜像。RAID5 至少三块盘。")]
    report = check_answer("[1] RAID 说明：\n\n- RAID1 需要两块盘，做镜像\n- RAID5 至少三块盘\n", sources)
    assert report.passed
