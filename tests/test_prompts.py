"""每个发给模型的提示词（回答、--fix 的改写、--judge 的评判）都放得进上下文窗口：放不下时缩短资料，
只留和问题、句子最相关的段落；连资料都不要也放不下时才提醒。"""
from sourced_answers.checker import Problem, Report, Source
from sourced_answers.model.prompts import (
    JUDGE_MAX_TOKENS,
    build_messages,
    context_warning,
    estimate_tokens,
    fitted_prompt,
    judge_messages,
    prompt_tokens,
    rewrite_messages,
)
from tests.support import cli_env, run_cli

FILLER = "这一段讲的是机箱的颜色和外观设计，和硬盘没有关系。" * 40  # 约 1000 字的无关段落
EVIDENCE = "RAID5 至少需要三块硬盘，可以容忍一块硬盘损坏。"


def long_sources(count: int = 5) -> list[Source]:
    # 每条资料约 4000 字，证据在最后一段：只截开头会把它丢掉
    return [Source(text="\n\n".join([FILLER] * 4 + [EVIDENCE]), title=f"页面 {n}") for n in range(count)]


def test_the_answer_prompt_is_shortened_to_fit_and_keeps_the_relevant_passage():
    sources = long_sources()
    assert prompt_tokens(build_messages("RAID5 要几块硬盘", sources)) + 1024 > 4096  # 不缩就放不下
    messages, limit = fitted_prompt("RAID5 要几块硬盘", sources, 1024, 4096)
    assert limit is not None and prompt_tokens(messages) + 1024 <= 4096
    assert messages[-1]["content"].count(EVIDENCE) == 5  # 每条资料里最相关的那段留下了
    assert context_warning(messages, 1024, 4096) is None


def test_a_prompt_that_fits_is_left_alone():
    sources = [Source(text=EVIDENCE, title="短页面")]
    messages, limit = fitted_prompt("RAID5 要几块硬盘", sources, 1024, 4096)
    assert limit is None and messages == build_messages("RAID5 要几块硬盘", sources)


def test_when_nothing_fits_the_prompt_is_kept_and_the_user_is_warned():
    sources = long_sources(1)
    messages, limit = fitted_prompt("RAID5 要几块硬盘", sources, 5000, 4096)  # 回答上限本身就比窗口大
    assert limit is None and messages == build_messages("RAID5 要几块硬盘", sources)
    assert "可能超过模型的上下文窗口 4096" in (context_warning(messages, 5000, 4096) or "")


def test_the_repair_prompt_fits_the_window_with_the_answer_and_the_problem_list():
    sources = long_sources()
    answer = ("RAID5 至少需要三块硬盘 [1]。" * 60).strip()
    report = Report(problems=[Problem("weak_support", f"第 {n} 句对不上", paragraph=1) for n in range(30)])
    messages, note = rewrite_messages("RAID5 要几块硬盘", sources, answer, report, 1024, 4096)
    assert note and "修正的提示词放不下" in note and prompt_tokens(messages) + 1024 <= 4096
    assert messages[-2] == {"role": "assistant", "content": answer} and "第 29 句对不上" in messages[-1]["content"]
    assert EVIDENCE in messages[1]["content"]


def test_the_judge_prompt_fits_a_small_window_and_shows_the_evidence_not_the_start():
    source = "\n\n".join([FILLER] * 20 + [EVIDENCE])  # 约 2 万字，证据在最后
    sentence = "RAID5 至少需要三块硬盘。"
    for model in ("qwen2.5:1.5b", "bespoke-minicheck"):
        for window in (1024, 4096):
            messages = judge_messages(model, sentence, source, window)
            assert prompt_tokens(messages) + JUDGE_MAX_TOKENS <= window, (model, window)
            assert EVIDENCE in messages[0]["content"] and sentence in messages[0]["content"]
    short = judge_messages("qwen2.5:1.5b", sentence, EVIDENCE, 4096)
    assert EVIDENCE in short[0]["content"]


def test_a_repair_prompt_that_cannot_fit_even_without_sources_is_warned():
    """当前回答和问题清单本身就比窗口大：资料缩到没有也放不下，这时要提醒（不能悄悄发一个放不下的提示词）。"""
    answer = " ".join(f"Sentence number {n} says something no source supports [1]." for n in range(400))
    report = Report(problems=[Problem("weak_support", f"sentence {n} is unsupported", paragraph=1) for n in range(400)])
    messages, note = rewrite_messages("How should I choose a NAS?", long_sources(), answer, report, 1024, 2048)
    assert note is not None and "可能超过模型的上下文窗口 2048" in note


def test_the_token_estimate_never_undercounts_chinese():
    assert estimate_tokens("汉字" * 100) >= 200


def test_fix_tells_the_user_once_that_the_repair_prompt_was_shortened(fake_metaso, model_server):
    env = cli_env(fake_metaso, model_server, ANS_MODEL="fix-rewrites")
    result = run_cli("家用 NAS 怎么选", "--fix", "--context-window", "1400", "--max-tokens", "300", env=env)
    notes = [line for line in result.stderr.splitlines() if "修正的提示词放不下模型的上下文窗口 1400" in line]
    assert len(notes) == 1, result.stderr
    rewrite = [r for r in model_server.requests if r["body"]["messages"][-1]["role"] == "user"
               and r["body"]["messages"][-2]["role"] == "assistant"]
    assert rewrite and all(prompt_tokens(r["body"]["messages"]) + 300 <= 1400 for r in rewrite)
