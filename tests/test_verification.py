"""--verify：核对保存下来的回答，不搜索、不调用模型。"""
import json

import pytest

from fake_metaso import NAS_PAGES
from sourced_answers.batch.verification import verify_record
from sourced_answers.core.errors import InputError
from tests.support import (
    GOOD_ANSWER,
    NAS_RECORD_SOURCES,
    WRONG_SOURCE_ANSWER,
    cli_env,
    run_cli,
)

SOURCES = NAS_RECORD_SOURCES


def record(answer, **extra):
    return dict({"answer": answer, "sources": SOURCES}, **extra)


def verify(tmp_path, content, *args):
    path = tmp_path / "saved.json"
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return run_cli("--verify", str(path), *args, env=cli_env())


def test_saved_json_output_verifies_to_the_same_verdict(fake_metaso, model_server, tmp_path):
    run = run_cli("家用 NAS 怎么选", "--json", env=cli_env(fake_metaso, model_server, ANS_MODEL="wrong-source"))
    checked = verify(tmp_path, run.stdout, "--json")
    assert checked.returncode == run.returncode == 1
    assert json.loads(checked.stdout) == json.loads(run.stdout)


def test_single_object_text_output(tmp_path):
    result = verify(tmp_path, json.dumps(record(GOOD_ANSWER)))
    assert result.returncode == 0
    assert result.stdout.startswith(GOOD_ANSWER)
    assert "[4] NAS 硬盘怎么选：CMR 与 SMR（未被引用）" in result.stdout
    assert "✓ 引用核对通过" in result.stdout


def test_a_single_object_gets_the_summary_too(tmp_path):
    """docs/usage.md：--verify 结束时在标准错误里给一段汇总。一个 JSON 对象和只有一行的 JSON Lines 是同样的一条记录，
    汇总也一样（以前一个对象什么也不说，--summary 的文件却照样写了）。"""
    uncited = "家用 NAS 至少选两盘位 [1]。\n\n群晖的系统更好用。"
    result = verify(tmp_path, json.dumps(record(uncited), ensure_ascii=False, indent=2), "--json")
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert lines[0].startswith("汇总：1 条，通过 0，没通过 1（用时 ")
    assert "  问题按种类（个）：没有引用 uncited_paragraph 1" in lines


def test_json_lines_give_one_result_per_line(tmp_path):
    lines = [json.dumps(record(GOOD_ANSWER, question="q1")), "",
             json.dumps(record(WRONG_SOURCE_ANSWER, question="q2"))]
    result = verify(tmp_path, "\n".join(lines) + "\n", "--json")
    assert result.returncode == 1
    outputs = [json.loads(line) for line in result.stdout.splitlines()]
    assert [o["question"] for o in outputs] == ["q1", "q2"]
    assert [o["passed"] for o in outputs] == [True, False]
    assert outputs[1]["problems"][0]["kind"] == "weak_support"
    assert outputs[0]["model"] is None


def test_json_lines_text_output_names_each_line(tmp_path):
    lines = [json.dumps(record(GOOD_ANSWER)), json.dumps(record(WRONG_SOURCE_ANSWER))]
    result = verify(tmp_path, "\n".join(lines))
    assert result.returncode == 1
    assert "── 第 1 行 ──" in result.stdout and "── 第 2 行 ──" in result.stdout
    assert result.stdout.count("✓ 引用核对通过") == 1


def test_stdin_is_accepted():
    result = run_cli("--verify", "-", "--json", env=cli_env(), stdin=json.dumps(record(GOOD_ANSWER)))
    assert result.returncode == 0 and json.loads(result.stdout)["passed"] is True


def test_titles_and_links_are_optional(tmp_path):
    content = json.dumps({"answer": "RAID1 是镜像，两块盘存同样的数据 [1]。", "sources": [{"text": NAS_PAGES[1]["text"]}]})
    result = verify(tmp_path, content, "--json")
    assert result.returncode == 0
    assert json.loads(result.stdout)["sources"][0]["title"] == ""


def test_malformed_line_is_named(tmp_path):
    content = json.dumps(record(GOOD_ANSWER)) + "\n{not json\n"
    result = verify(tmp_path, content)
    assert result.returncode == 2
    assert result.stderr.startswith(f"✗ {tmp_path / 'saved.json'} 第 2 行不是合法的 JSON：")
    assert result.stderr.count("\n") == 1  # 一行说明，说到哪一列、为什么
    assert result.stdout == ""


def test_malformed_single_object_names_its_line(tmp_path):
    result = verify(tmp_path, '{\n  "answer": "x",\n  "sources": [\n}\n')
    assert result.returncode == 2 and "第 4 行不是合法的 JSON" in result.stderr


def test_missing_fields_are_named(tmp_path):
    cases = [({"sources": SOURCES}, "缺少字符串字段 answer"),
             ({"answer": "x"}, "缺少列表字段 sources"),
             ({"answer": "x", "sources": [{"title": "t"}]}, "sources 的第 1 项缺少字符串字段 text"),
             ([1, 2], "应是一个 JSON 对象")]
    for content, expected in cases:
        result = verify(tmp_path, json.dumps(content))
        assert result.returncode == 2 and expected in result.stderr, (content, result.stderr)


def test_missing_field_on_a_later_line_names_the_line(tmp_path):
    content = json.dumps(record(GOOD_ANSWER)) + "\n" + json.dumps({"answer": "x"}) + "\n"
    result = verify(tmp_path, content)
    assert result.returncode == 2 and "第 2 行：缺少列表字段 sources" in result.stderr


def test_not_utf8_and_missing_file_and_empty_file(tmp_path):
    assert "不是 UTF-8" in verify(tmp_path, "答案".encode("gbk") + b'{"a"').stderr
    result = run_cli("--verify", str(tmp_path / "nope.json"), env=cli_env())
    assert result.returncode == 2 and "读不了" in result.stderr
    empty = verify(tmp_path, "  \n")
    assert empty.returncode == 2 and "是空的" in empty.stderr


def test_verify_takes_no_question(tmp_path):
    path = tmp_path / "a.json"
    path.write_text(json.dumps(record(GOOD_ANSWER)), encoding="utf-8")
    result = run_cli("家用 NAS", "--verify", str(path), env=cli_env())
    assert result.returncode == 2


@pytest.mark.parametrize("field, value", [("truncated", "yes"), ("truncated", 1), ("served_model", 42)])
def test_answer_fields_of_the_wrong_type_are_named(tmp_path, field, value):
    result = verify(tmp_path, json.dumps(record(GOOD_ANSWER, **{field: value})))
    assert result.returncode == 2
    expected = {"truncated": "truncated 应是 true 或 false", "served_model": "served_model 应是字符串"}[field]
    assert result.stderr == f"✗ {tmp_path / 'saved.json'}：{expected}\n"


@pytest.mark.parametrize("given", [None, 5, "不是记录", b"{}", [("answer", "RAID1 是镜像 [1]。")], object()],
                         ids=["None", "int", "str", "bytes", "pairs", "object"])
def test_verify_record_of_something_that_is_not_a_mapping_is_an_input_error(given):
    with pytest.raises(InputError, match="记录：应是一个 JSON 对象"):
        verify_record(given)
