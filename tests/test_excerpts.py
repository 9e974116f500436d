"""摘录（steps/excerpts.py、--excerpts、quickstart 没有会写中文的模型时）：不请模型写，从资料里摘出和问题最相关的
几句原话，带着编号，核对照常。例子都是为摘录自己写的。"""
import json

import pytest

from sourced_answers.checker import Source, check_answer
from sourced_answers.search.demo_pages import ENGLISH_PAGES, NAS_PAGES
from sourced_answers.steps.excerpts import excerpt_answer
from tests.support import cli_env, run_cli

NAS = [Source(title=page["title"], text=page["text"]) for page in NAS_PAGES]
NAS_EN = [Source(title=page["title"], text=page["text"]) for page in ENGLISH_PAGES]


def excerpted_lines(question, sources):
    return [line for line in excerpt_answer(question, sources).splitlines() if line]


def test_excerpts_are_the_sources_own_sentences_with_their_numbers_and_pass_the_check():
    answer = excerpt_answer("RAID5 最少要几块盘", NAS)
    assert "- RAID5 至少三块盘，数据和校验分散在各块盘上，可以容忍一块盘损坏，可用容量是总容量减去一块盘 [2]。" in answer
    report = check_answer(answer, NAS)
    assert report.passed, [problem.message for problem in report.problems]


def test_the_excerpt_a_person_would_pick_comes_first_in_english_too():
    lines = excerpted_lines("Is RAID a backup?", NAS_EN)
    assert lines[0] == "- RAID is not a backup: deleted files and ransomware damage are copied to every disk [2]."
    assert check_answer("\n".join(lines), NAS_EN).passed


def test_titles_headings_and_navigation_are_never_excerpted():
    answer = excerpt_answer("NAS 远程访问安全", NAS)
    assert answer and "# " not in answer and "首页 |" not in answer and "当前位置" not in answer
    assert "- NAS 远程访问安全 [3]" not in answer  # 标题只加分，不摘
    english = excerpt_answer("remote access to the NAS", NAS_EN)
    assert "You are here" not in english and "Home |" not in english


def test_a_page_about_the_question_lends_its_sentences_the_title():
    """“怎么选”的那一页（标题就是这个问题）：它的选购建议排在前面，哪怕句子里没有“家用 NAS”这几个字。"""
    lines = excerpted_lines("How should I choose a home NAS?", NAS_EN)
    assert any("pick at least two bays" in line for line in lines)


def test_different_sources_are_preferred_when_they_are_relevant():
    lines = excerpted_lines("RAID 和备份", NAS)
    assert len({line.rsplit("[", 1)[1] for line in lines}) >= 2


def test_a_question_the_sources_do_not_answer_gets_no_excerpts():
    assert excerpt_answer("今天北京的天气怎么样", NAS) == ""
    assert excerpt_answer("怎么", NAS) == ""  # 只有问句的词


def test_the_command_says_it_is_excerpts_and_needs_no_model_server(tmp_path):
    result = run_cli("家用 NAS 怎么选", "--demo", "--excerpts", "--json", env=cli_env(OLLAMA_URL="http://127.0.0.1:9"))
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)
    assert record["model"] == "excerpts" and record["served_model"] == "excerpts" and record["passed"]
    assert "至少选两盘位" in record["answer"]
    text = run_cli("家用 NAS 怎么选", "--demo", "--excerpts", env=cli_env(OLLAMA_URL="http://127.0.0.1:9"))
    assert text.stdout.startswith("（摘录：") and "✓ 引用核对通过" in text.stdout


def test_no_relevant_sentence_is_said_plainly_and_fails():
    result = run_cli("今天北京的天气怎么样", "--demo", "--excerpts", env=cli_env(OLLAMA_URL="http://127.0.0.1:9"))
    assert result.returncode == 1
    assert "资料里没有找到回答这个问题的句子" in result.stderr and "回答是空的" in result.stdout


def test_excerpts_and_a_model_are_a_usage_error():
    for extra in (["--local-model"], ["--model", "qwen2.5:7b"]):
        result = run_cli("家用 NAS 怎么选", "--demo", "--excerpts", *extra, env=cli_env())
        assert result.returncode == 2 and "--excerpts 不请模型写" in result.stderr


@pytest.mark.slow
def test_quickstart_answers_a_chinese_question_with_excerpts_when_there_is_no_model_server():
    """没有 Ollama、没有秘塔的密钥：中文问题不去装、不去启动只会英文的自带模型，改用摘录，并说怎样得到写出来的回答。"""
    env = cli_env(OLLAMA_URL="http://127.0.0.1:9")
    result = run_cli("家用 NAS 怎么选", env=env, module="sourced_answers.quickstart")
    assert result.returncode == 0, result.stderr
    assert "改用摘录" in result.stderr and "ollama pull" in result.stderr
    assert "SmolLM2-135M（--local-model" not in result.stderr and "正在本机启动" not in result.stderr
    assert result.stdout.startswith("（摘录：") and "✓ 引用核对通过" in result.stdout
