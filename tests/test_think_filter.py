"""<think>…</think> 在流式输出里被切成任意片段时也要去干净。"""
from sourced_answers.checker import ThinkFilter


def filtered(pieces):
    think = ThinkFilter()
    return "".join(think.feed(p) for p in pieces) + think.finish()


def test_think_block_removed_whole():
    assert filtered(["<think>想一想 [9]</think>回答 [1]。"]) == "回答 [1]。"


def test_think_block_removed_at_every_split():
    text = "前言<think>想 [9] 想</think>回答 [1]。<think>再想</think>完"
    for size in range(1, len(text) + 1):
        pieces = [text[i:i + size] for i in range(0, len(text), size)]
        assert filtered(pieces) == "前言回答 [1]。完", size


def test_unclosed_think_hides_the_rest():
    assert filtered(["回答 [1]。<thi", "nk>没想完"]) == "回答 [1]。"


def test_stray_closing_tag_is_dropped():
    assert filtered(["</think>\n\n回答 [1]。"]) == "\n\n回答 [1]。"


def test_text_that_only_looks_like_a_tag_is_kept():
    assert filtered(["a <thin", "g> b <", "/th", "ing>"]) == "a <thing> b </thing>"
