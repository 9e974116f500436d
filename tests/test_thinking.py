"""思考的那一条规则（checker.thinking）：<think>…</think>、落单的 </think>、没有结束的 <think>；标签的各种写法；
流式输出里被切成任意片段时和整段一样；去掉思考之后不会拼出新的标签（再拆一遍还是同一个回答）。"""
from datetime import timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sourced_answers.checker import ThinkFilter, check_answer, split_reply, strip_think, without_thinking
from sourced_answers.checker.thinking import think_spans
from tests.support import GOOD_ANSWER, NAS_SOURCES, examples

GUARD = settings(deadline=timedelta(seconds=5), max_examples=examples(150))


def filtered(pieces):
    think = ThinkFilter()
    return "".join(think.feed(p) for p in pieces) + think.finish()


def fed(text, size):
    """按 size 个字一片喂进去：返回 (显示出来的文字, 过滤器)。"""
    think = ThinkFilter()
    shown = "".join(think.feed(text[i:i + size]) for i in range(0, len(text), size)) + think.finish()
    return shown, think


def test_think_block_removed_whole():
    assert filtered(["<think>想一想 [9]</think>回答 [1]。"]) == "回答 [1]。"


def test_think_block_removed_at_every_split():
    text = "前言<think>想 [9] 想</think>回答 [1]。<think>再想</think>完"
    for size in range(1, len(text) + 1):
        pieces = [text[i:i + size] for i in range(0, len(text), size)]
        assert filtered(pieces) == "前言回答 [1]。完", size


def test_unclosed_think_hides_the_rest():
    assert filtered(["回答 [1]。<thi", "nk>没想完"]) == "回答 [1]。"


def test_stray_closing_tag_at_the_start_is_dropped():
    assert filtered(["</think>\n\n回答 [1]。"]) == "\n\n回答 [1]。"


def test_text_that_only_looks_like_a_tag_is_kept():
    assert filtered(["a <thin", "g> b <", "/th", "ing>"]) == "a <thing> b </thing>"
    assert without_thinking("<thinking>是</thinking> a < b，x<think3>") == "<thinking>是</thinking> a < b，x<think3>"


# ---------- 落单的 </think>：之前的一切都是思考过程（Qwen3、DeepSeek-R1 的模板自己写了 <think>） ----------

def test_everything_before_a_lone_closing_tag_is_reasoning():
    reply = split_reply("好的，用户问 NAS。资料 [7] 说……我编一句 [9]。\n</think>\n\n" + GOOD_ANSWER)
    assert reply.answer == GOOD_ANSWER
    assert reply.reasoning == "好的，用户问 NAS。资料 [7] 说……我编一句 [9]。"
    assert reply.state == "closed" and reply.unfinished is None


def test_every_lone_closing_tag_moves_the_boundary():
    reply = split_reply("一<think>二</think>三</think>四")
    assert (reply.answer, reply.reasoning) == ("四", "一二三")


def test_the_checker_never_checks_reasoning_before_a_lone_closing_tag():
    """--verify 一条原样保存的回复：落单的 </think> 之前编造的句子不算回答，不核对，也不会被“找到”在回答里。"""
    report = check_answer("群晖的 NAS 系统比威联通稳定得多 [1]。</think>" + GOOD_ANSWER, NAS_SOURCES)
    assert report.passed, report.problems
    assert all("群晖" not in check.sentence for check in report.claims)


# ---------- 没有结束的 <think>：不是回答，但文字留着 ----------

def test_unfinished_reasoning_is_kept_apart_from_the_answer():
    reply = split_reply("<think>" + GOOD_ANSWER)
    assert reply.answer == "" and reply.unfinished == GOOD_ANSWER and reply.state == "unfinished"
    reply = split_reply("回答 [1]。<think>等等，再想想")
    assert (reply.answer, reply.unfinished, reply.state) == ("回答 [1]。", "等等，再想想", "unfinished")


def test_an_answer_that_is_only_unfinished_reasoning_says_so():
    problem, = check_answer("<think>" + GOOD_ANSWER, NAS_SOURCES).problems
    assert problem.kind == "empty_answer" and "没有结束的思考过程" in problem.message


# ---------- 标签的写法 ----------

@pytest.mark.parametrize("opening, closing", [
    ("<think>", "</think>"), ("<THINK>", "</THINK>"), ("<Think>", "</Think>"), ("<think >", "</think >"),
    ("< think>", "< /think>"), ("<think\n>", "</ think\n>"), ('<think type="reasoning">', "</think>"),
])
def test_tag_spellings(opening, closing):
    text = f"{opening}想一想 [9]{closing}回答 [1]。"
    assert without_thinking(text) == "回答 [1]。"
    assert without_thinking(f"想一想 [9]{closing}回答 [1]。") == "回答 [1]。"
    assert split_reply(f"回答 [1]。{opening}没想完").unfinished == "没想完"


def test_an_empty_self_closing_tag_changes_nothing():
    assert split_reply("<think/>回答 [1]。") .answer == "回答 [1]。"


def test_removing_reasoning_never_builds_a_new_tag():
    """“<th” + 思考 + “ink>”：去掉思考接起来是“<think>”。再拆一遍（核对、--verify 读记录时都会）后面的话就不见了——
    显示出来却没有核对。“<”改成了全角，拆多少遍都是同一个回答，编造的那句照样核对。"""
    text = GOOD_ANSWER + "<th<think>x</think>ink>群晖的 NAS 系统比威联通稳定得多 [1]。"
    answer = without_thinking(text)
    assert without_thinking(answer) == answer and "群晖" in answer
    assert not check_answer(text, NAS_SOURCES).passed
    assert not check_answer(answer, NAS_SOURCES).passed


# ---------- 流式：任意切法都和整段一样 ----------

MIXED = "草稿 [9]</THINK >\n回答一 [1]。<think a='1'>想</think>回答二 [2]。<th<think>x</think>ink>尾巴<Think>没想完 [3]"


def test_streaming_at_every_split_gives_the_same_reply():
    whole = split_reply(MIXED)
    assert whole.answer == "回答一 [1]。回答二 [2]。＜think>尾巴" and whole.unfinished == "没想完 [3]"
    for size in range(1, len(MIXED) + 1):
        shown, think = fed(MIXED, size)
        assert think.reply() == whole and think.spans() == think_spans(MIXED), size
        assert think.lone_closes == 1


FRAGMENTS = st.sampled_from([
    "<think>", "</think>", "<THINK >", "</ Think>", "<think/>", "<", "<th", "ink>", "/think>", "<thinking>",
    "回答 [1]。", "想一想", " ", "\n", "a", ">", "<t",
])


@GUARD
@given(st.lists(FRAGMENTS, max_size=30), st.integers(1, 12))
def test_any_chunking_gives_the_same_reply(fragments, size):
    text = "".join(fragments)
    _, think = fed(text, size)
    assert think.reply() == split_reply(text)
    assert think.spans() == think_spans(text)


@GUARD
@given(st.lists(FRAGMENTS, max_size=30))
def test_the_answer_has_no_reasoning_left_in_it(fragments):
    """回答再按规则拆一遍还是它自己：里面没有标签，也没有拼出来的标签。"""
    answer = without_thinking("".join(fragments))
    again = split_reply(answer)
    assert again.answer == answer and again.state == "none"
    assert strip_think(answer).strip() == answer


@GUARD
@given(st.text(st.characters(blacklist_characters="<>"), max_size=80), st.text(max_size=40))
def test_reasoning_before_a_closing_tag_never_reaches_the_answer(reasoning, answer):
    for text in (reasoning + "</think>" + answer, "<think>" + reasoning + "</think>" + answer):
        assert split_reply(text).answer == without_thinking(answer)
