"""思考的那一条规则，从每一个读模型回复的入口走一遍：回答问题（流式和不流式）、--fix 的改写、--judge（回答问题时和
--verify 时）、--eval。落单的 </think> 之前是思考；没有结束的 <think> 之后的文字不是回答、不核对，但标明了显示、
写进 --json，退出码 3；评判模型的意见只从思考之后的回答里读，两个意见都说了算没有意见。"""
import json
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sourced_answers.steps.judge import parse_verdict
from tests.scripted_model import SCRIPTS
from tests.support import (
    GOOD_ANSWER,
    INVENTED,
    NAS_RECORD_SOURCES,
    WITH_INVENTION,
    cli_env,
    examples,
    run_cli,
)

QUESTION = "家用 NAS 怎么选"
# 模板自己写了 <think>：回复里只有 </think>，之前是思考（里面编了一句、引了不存在的资料 [9]）
TEMPLATE_OPENED = "好的，用户问 NAS。" + INVENTED + "资料 [9] 也许有用。\n</think>\n\n" + GOOD_ANSWER
# 写了 <think> 却没写 </think>：里面是一个引用齐全的回答
NEVER_CLOSED = "<think>" + GOOD_ANSWER
# 回答写完了，最后又开始想，没有想完
TRAILING_THOUGHT = GOOD_ANSWER + "\n\n<THINK>再想想 [9]：" + INVENTED


@pytest.fixture
def scripts(monkeypatch):
    """给脚本模型服务加几个模型（测试结束时去掉）：名字 → 脚本。"""
    def add(**named):
        for name, script in named.items():
            monkeypatch.setitem(SCRIPTS, name, script)
    return add


def ask(model_server, model, *flags):
    return run_cli("--demo", QUESTION, "--model", model, *flags, env=cli_env(None, model_server))


MODES = [("--stream",), ("--no-stream",), ("--json",)]


# ---------- 回答问题 ----------

@pytest.mark.parametrize("mode", MODES)
def test_text_before_a_lone_closing_tag_is_reasoning_in_every_mode(model_server, scripts, mode):
    scripts(**{"template-opened": {"content": TEMPLATE_OPENED}})
    result = ask(model_server, "template-opened", *mode)
    assert result.returncode == 0, result.stdout + result.stderr  # 编造的那句是思考，不核对
    if mode == ("--json",):
        data = json.loads(result.stdout)
        assert data["answer"] == GOOD_ANSWER and data["unfinished_reasoning"] is None
        assert not [c for c in data["claims"] if "群晖" in c["sentence"]]
    else:
        assert "✓ 引用核对通过" in result.stdout and "[9]" not in result.stdout.split("来源：")[1]


def test_streamed_reasoning_before_a_lone_closing_tag_is_marked_when_it_turns_out_to_be_reasoning(model_server,
                                                                                                  scripts):
    """流式时落单的 </think> 到了才知道之前是思考：已经显示的那段后面标明一句，回答从那里开始。"""
    scripts(**{"template-opened": {"content": TEMPLATE_OPENED}})
    shown = ask(model_server, "template-opened", "--stream").stdout
    reasoning, answer = shown.split("（以上是模型的思考过程，不是回答，不核对：它后面写了 `</think>`。回答从这里开始）")
    assert "群晖" in reasoning and GOOD_ANSWER in answer and "群晖" not in answer
    assert "</think>" not in reasoning


@pytest.mark.parametrize("mode", MODES)
def test_unfinished_reasoning_is_kept_marked_and_not_checked(model_server, scripts, mode):
    """<think> 之后没有 </think>：里面的文字不是回答（模型没想完），不核对；但不丢——标明了显示、写进 --json，
    退出码 3（模型没有给出回答），不是“空回答”。"""
    scripts(**{"never-closed": {"content": NEVER_CLOSED}})
    result = ask(model_server, "never-closed", *mode)
    assert result.returncode == 3
    assert "没有给出回答：回复停在没有结束的思考里" in result.stderr and "空回答" not in result.stderr
    if mode == ("--json",):
        data = json.loads(result.stdout)
        assert data["unfinished_reasoning"] == GOOD_ANSWER and data["answer"] == ""
        assert not data["passed"] and [p["kind"] for p in data["problems"]] == ["empty_answer"]
        assert "没有结束的思考过程" in data["problems"][0]["message"]
        assert len(data["sources"]) == 5  # 花钱得到的资料也在
    else:
        note, text = result.stdout.split("（以下是没有结束的思考过程：模型写了 `<think>`，没有写 `</think>`。它不是回答，没有核对）\n")
        assert GOOD_ANSWER in text and "来源：" in text
        assert "引用核对通过" not in result.stdout and "引用核对没通过" not in result.stdout


def test_unfinished_reasoning_that_ran_out_of_tokens_says_what_to_do(model_server, scripts):
    scripts(**{"thinks-too-long": {"content": "<think>用户问 NAS，我得先想想盘位、RAID……", "finish_reason": "length"}})
    result = ask(model_server, "thinks-too-long", "--json")
    assert result.returncode == 3 and "加大 --max-tokens" in result.stderr
    assert json.loads(result.stdout)["unfinished_reasoning"] == "用户问 NAS，我得先想想盘位、RAID……"


@pytest.mark.parametrize("mode", MODES)
def test_an_answer_followed_by_unfinished_reasoning_is_checked_and_the_rest_kept(model_server, scripts, mode):
    scripts(**{"trailing-thought": {"content": TRAILING_THOUGHT}})
    result = ask(model_server, "trailing-thought", *mode)
    assert result.returncode == 0, result.stdout  # 回答照常核对；没结束的思考（编的那句）不核对
    assert "停在没有结束的思考里" in result.stderr
    if mode == ("--json",):
        data = json.loads(result.stdout)
        assert data["answer"] == GOOD_ANSWER and data["unfinished_reasoning"] == "再想想 [9]：" + INVENTED
    else:
        assert "（以下是没有结束的思考过程" in result.stdout and INVENTED in result.stdout
        assert "✓ 引用核对通过" in result.stdout


def test_the_record_of_unfinished_reasoning_survives_verify(model_server, scripts, tmp_path):
    """--json 的记录交给 --verify：没结束的思考原样带着，结论还是“没有回答”（空回答，退出码 1）。"""
    scripts(**{"never-closed": {"content": NEVER_CLOSED}})
    path = tmp_path / "saved.json"
    path.write_text(ask(model_server, "never-closed", "--json").stdout, encoding="utf-8")
    result = run_cli("--verify", str(path), "--json", env=cli_env(None, model_server))
    data = json.loads(result.stdout)
    assert result.returncode == 1 and data["unfinished_reasoning"] == GOOD_ANSWER
    assert [p["kind"] for p in data["problems"]] == ["empty_answer"]


def test_the_review_page_shows_unfinished_reasoning_marked_and_escaped(model_server, scripts, tmp_path):
    scripts(**{"never-closed": {"content": NEVER_CLOSED + "<script>alert(1)</script>"}})
    page = tmp_path / "page.html"
    result = ask(model_server, "never-closed", "--html", str(page))
    html = page.read_text(encoding="utf-8")
    assert result.returncode == 3
    assert "<h3>没有结束的思考过程</h3>" in html and "家用 NAS 至少选两盘位" in html
    assert "<script>alert" not in html and "&lt;script&gt;alert(1)" in html


def test_a_reply_with_only_finished_reasoning_is_still_an_empty_answer(model_server):
    result = ask(model_server, "empty", "--json")
    assert result.returncode == 3 and "空回答：只有思考过程，没有回答" in result.stderr


# ---------- --fix 的改写 ----------

@pytest.mark.parametrize("rewrite, kept", [
    ("删掉编造的那句。</think>" + GOOD_ANSWER, True),     # 模板开头的思考：改写是 </think> 之后的
    ("<Think >删掉编造的那句</Think>" + GOOD_ANSWER, True),
    ("<think>" + GOOD_ANSWER, False),                    # 改写停在没结束的思考里：不算改写，保留上一版
])
def test_the_fix_rewrite_is_read_by_the_same_rule(model_server, scripts, rewrite, kept):
    scripts(**{"fix-thinks": {"contents": [WITH_INVENTION, rewrite]}})
    result = ask(model_server, "fix-thinks", "--fix", "--json")
    data = json.loads(result.stdout)
    assert data["original_answer"] == WITH_INVENTION
    if kept:
        assert result.returncode == 0 and data["answer"] == GOOD_ANSWER
    else:
        assert result.returncode == 1 and data["answer"] == WITH_INVENTION
        assert "改写的回复停在没有结束的思考里" in result.stderr


# ---------- --judge：意见只从思考之后的回答里读 ----------

UNSURE_ANSWER = GOOD_ANSWER + "\n\nNAS 的盘位越多越好，建议四盘位 [1]。RAID5 重建阵列很快，不会影响使用 [2]。"


def judged(model_server, judge, *args):
    return run_cli(*args, "--judge", judge, "--judge-all", "--json", env=cli_env(None, model_server))


def verify_with(model_server, tmp_path, judge, answer=GOOD_ANSWER):
    path = tmp_path / "saved.json"
    path.write_text(json.dumps({"answer": answer, "sources": NAS_RECORD_SOURCES}, ensure_ascii=False), encoding="utf-8")
    return judged(model_server, judge, "--verify", str(path))


@pytest.mark.parametrize("reply", ["是</think>不是", "想了想，是的。</think>不是", "Yes</think>No",
                                   "<think>Yes, supported.</think>No", "yes YES 是 支持</THINK >否。"])
@pytest.mark.parametrize("door", ["verify", "question"])
def test_the_judge_reads_its_verdict_after_the_reasoning(model_server, scripts, tmp_path, reply, door):
    scripts(**{"judge-thinks": {"content": reply}})
    result = (verify_with(model_server, tmp_path, "judge-thinks") if door == "verify"
              else judged(model_server, "judge-thinks", "--demo", QUESTION, "--model", "good"))
    data = json.loads(result.stdout)
    assert result.returncode == 1
    assert {call["verdict"] for call in data["judge"]["calls"]} == {False}
    assert [p["kind"] for p in data["problems"]] == ["judge_unsupported"] * 5
    assert "它的回答：" + reply.rsplit(">", 1)[1] + "）" in data["problems"][0]["message"]  # 引的是回答，不是思考


@pytest.mark.parametrize("reply", ["是……不是", "是的。不支持", "Yes … not supported", "Yes and no",
                                   "否</think>是。不过，不支持", "<think>是的，资料支持"])
@pytest.mark.parametrize("door", ["verify", "question"])
def test_a_judge_that_says_both_or_only_thinks_has_no_opinion(model_server, scripts, tmp_path, reply, door):
    """两个意见都说了、只想没答：没有意见，这句按字面核对的结论，不改（GOOD_ANSWER 字面全都通过）。"""
    scripts(**{"judge-mixed": {"content": reply}})
    result = (verify_with(model_server, tmp_path, "judge-mixed") if door == "verify"
              else judged(model_server, "judge-mixed", "--demo", QUESTION, "--model", "good"))
    data = json.loads(result.stdout)
    assert result.returncode == 0 and data["passed"]
    assert [call["verdict"] for call in data["judge"]["calls"]] == [None] * 5


def test_no_opinion_keeps_the_lexical_flag_too(model_server, scripts, tmp_path):
    """没有意见不等于“是”：字面核对标出的那句照样标着。"""
    scripts(**{"judge-mixed": {"content": "是的。不支持"}})
    data = json.loads(verify_with(model_server, tmp_path, "judge-mixed", UNSURE_ANSWER).stdout)
    assert [p["kind"] for p in data["problems"]] == ["weak_support"]


def test_eval_reads_the_answer_and_the_judge_by_the_same_rule(model_server, scripts, tmp_path):
    scripts(**{"template-opened": {"content": TEMPLATE_OPENED}, "never-closed": {"content": NEVER_CLOSED},
               "judge-thinks": {"content": "Yes</think>No"}})
    questions = tmp_path / "questions.txt"
    questions.write_text(QUESTION + "\n", encoding="utf-8")
    result = run_cli("--demo", "--eval", str(questions), "--models", "template-opened,never-closed", "--json",
                     env=cli_env(None, model_server))
    records = {r["model"]: r for r in map(json.loads, result.stdout.splitlines())}
    assert records["template-opened"]["passed"] and records["template-opened"]["error"] is None
    assert not records["never-closed"]["passed"]
    assert "停在没有结束的思考里" in records["never-closed"]["error"]
    judged_run = run_cli("--demo", "--eval", str(questions), "--models", "template-opened", "--json",
                         "--judge", "judge-thinks", "--judge-all", env=cli_env(None, model_server))
    record, = map(json.loads, judged_run.stdout.splitlines())
    assert record["problems"] == {"judge_unsupported": 5}


# ---------- 意见的解析：性质 ----------

YES_FORMS = ["是", "是。", "是的", "**是**", "Yes", "yes.", "YES", "支持", "Supported", "答案：是", "“是”"]
NO_FORMS = ["否", "否。", "不是", "不支持", "No", "no.", "**No**", "Not supported", "不完全支持", "答案：否", "“否”"]
SEPARATORS = ["……", "。", "，", " … ", "\n", "; ", " and ", "，但是", "。不过，", " but "]
GUARD = settings(max_examples=examples(150), deadline=None)
REASONING = st.text(st.characters(blacklist_characters="<>"), max_size=60)


@GUARD
@given(REASONING, st.sampled_from(YES_FORMS + NO_FORMS + ["这个问题很有意思", "Maybe", ""]))
def test_any_reasoning_never_changes_the_verdict(reasoning, answer):
    expected = parse_verdict(answer)
    assert parse_verdict(reasoning + "</think>" + answer) is expected
    assert parse_verdict("<think>" + reasoning + "</think>\n" + answer) is expected
    assert parse_verdict("<think>" + reasoning + answer) is None  # 没结束的思考：没有回答，也就没有意见


@GUARD
@given(st.sampled_from(YES_FORMS), st.sampled_from(NO_FORMS), st.sampled_from(SEPARATORS), st.booleans())
def test_saying_both_is_no_opinion(yes, no, separator, yes_first):
    reply = yes + separator + no if yes_first else no + separator + yes
    assert parse_verdict(reply) is None


def test_the_forms_themselves_are_read():
    assert Counter(parse_verdict(form) for form in YES_FORMS) == {True: len(YES_FORMS)}
    assert Counter(parse_verdict(form) for form in NO_FORMS) == {False: len(NO_FORMS)}
