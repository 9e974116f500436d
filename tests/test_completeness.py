"""回答本身完不完整（checker/completeness.py）：被长度上限截断的回答、卡在循环里一字不差地重复的回答，每一句都引对了
也不通过。每个入口都一样：命令、--verify、Python API、--serve。例子都是为这些规则自己写的。"""
import json

from answer_with_sources import verify_answer
from sourced_answers.batch.verification import verify_record
from sourced_answers.checker import check_answer
from sourced_answers.checker.completeness import places
from tests.serving import InProcess
from tests.support import NAS_RECORD_SOURCES, NAS_SOURCES, cli_env, run_cli

NAS = NAS_SOURCES
GOOD = "家用 NAS 至少选两盘位，方便做 RAID1 镜像 [1]。"


def write_json(tmp_path, record):
    path = tmp_path / "saved.json"
    path.write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")
    return str(path)


def kinds(report):
    return [problem.kind for problem in report.problems]


def test_the_same_cited_paragraph_written_eight_times_does_not_pass():
    report = check_answer((GOOD + "\n\n") * 8, NAS)
    assert kinds(report) == ["repeated"]
    [problem] = report.problems
    assert problem.message.startswith("第 2 段：和前面的第 1 段一字不差，这段话一共写了 8 遍（第 1–8 段）")
    assert problem.paragraph == 2


def test_a_sentence_written_again_in_another_paragraph_is_said_once():
    answer = f"{GOOD}需要转码 4K 视频时选带核显的 Intel 型号 [1]。\n\n{GOOD}\n\n跑 Docker 建议 8GB 内存 [1]。{GOOD}"
    repeated = [p for p in check_answer(answer, NAS).problems if p.kind == "repeated"]
    assert len(repeated) == 1 and "一共写了 3 遍（第 1–3 段）" in repeated[0].message


def test_short_replies_and_different_sentences_are_not_repetition():
    assert kinds(check_answer("是的 [1]。\n\n是的 [1]。", NAS)) == []
    assert "repeated" not in kinds(check_answer(GOOD + "\n\n需要转码 4K 视频时选带核显的 Intel 型号 [1]。", NAS))


def test_places_are_written_as_ranges():
    assert places([1, 2, 3, 5, 7, 8]) == "第 1–3、5、7–8 段"
    assert places([4]) == "第 4 段"


def test_a_saved_record_marked_truncated_fails_in_verify_and_the_python_api(tmp_path):
    record = {"answer": GOOD, "sources": NAS_RECORD_SOURCES, "truncated": True}
    result = run_cli("--verify", write_json(tmp_path, record), "--json", env=cli_env())
    assert result.returncode == 1
    [problem] = json.loads(result.stdout)["problems"]
    assert problem["kind"] == "truncated" and "停在“…" in problem["message"] and "RAID1 镜像" in problem["message"]
    assert not verify_record(record)["passed"]
    assert verify_record(dict(record, truncated=False))["passed"]
    assert verify_answer(GOOD, NAS_RECORD_SOURCES).record["passed"]


def test_a_truncated_or_looping_answer_fails_in_the_servers_verification(backends, tmp_path):
    backends.reset()
    app = InProcess(backends.env(tmp_path / "cache"))
    try:
        truncated = app.post("/chat/completions", {"model": "cut-short",
                                                   "messages": [{"role": "user", "content": "家用 NAS 怎么选"}]}).json()
    finally:
        app.close()
    verification = truncated["verification"]
    assert verification["passed"] is False and "truncated" in [p["kind"] for p in verification["problems"]]
    assert truncated["choices"][0]["finish_reason"] == "length"
