"""默认的结论用支持分：每个带引用的句子都有一个 0 到 1 的支持分，--json、文字输出和审阅页都能看到；
--threshold 是支持分的下限；--rule tutorial 换回原教程的规则；--fix 用同一个支持分判断改引之后是否有依据。"""
import json
import re

from sourced_answers.checker import DEFAULT_RULE, SupportRule, check_answer, support_model
from sourced_answers.steps.repair import fix_citations
from tests.support import NAS_RECORD_SOURCES, NAS_SOURCES, cli_env, run_cli

NAS = NAS_SOURCES
GOOD = "RAID5 至少三块盘，可以容忍一块盘损坏 [2]。"
PARAPHRASE = "NAS 的盘位越多越好，建议四盘位 [1]。"          # 有一部分依据：支持分不高不低
LOOSE = "备份要保存三份，其中一份要放在别的地方 [5]。"             # 换了说法的 3-2-1 原则
WRONG = "需要转码 4K 视频时选带核显的 Intel 型号 [2]。"             # 其实出自资料 1
ENGLISH = [{"title": "RAID levels", "text": "RAID 5 needs at least three disks and survives the failure of one disk."}]


def saved(tmp_path, answer, sources=NAS_RECORD_SOURCES):
    path = tmp_path / "saved.json"
    path.write_text(json.dumps({"question": "家用 NAS 怎么选", "answer": answer, "sources": sources},
                               ensure_ascii=False), encoding="utf-8")
    return str(path)


def test_every_cited_sentence_has_a_score_in_json(tmp_path):
    answer = f"{GOOD}{WRONG}\n\n资料提到 [1]。\n\nRAID 5 survives the failure of one disk [1]。"
    sources = NAS_RECORD_SOURCES[:2] + ENGLISH
    result = run_cli("--verify", saved(tmp_path, answer.replace("disk [1]", "disk [3]"), sources), "--json",
                     env=cli_env())
    record = json.loads(result.stdout)
    claims = {claim["sentence"]: claim for claim in record["claims"]}
    assert len(record["claims"]) == 4
    assert claims["RAID5 至少三块盘，可以容忍一块盘损坏 [2]"]["status"] == "supported"
    assert claims["RAID5 至少三块盘，可以容忍一块盘损坏 [2]"]["score"] > 0.9
    wrong = claims["需要转码 4K 视频时选带核显的 Intel 型号 [2]"]
    assert wrong["status"] == "weak_support" and wrong["score"] < support_model().cut
    assert claims["资料提到 [1]"]["status"] == "too_short" and 0 <= claims["资料提到 [1]"]["score"] <= 1
    english = claims["RAID 5 survives the failure of one disk [3]"]
    # 英文句子引英文资料：英文模型打的分，照着资料写的一句高过询问区间（评判模型不必问）
    assert english["status"] == "supported" and english["calibration"] == "en"
    assert english["score"] >= support_model("en").judge_band[1]
    assert claims["RAID5 至少三块盘，可以容忍一块盘损坏 [2]"]["calibration"] == "zh"
    [problem] = record["problems"]
    assert problem["score"] == wrong["score"]


def test_a_cross_language_sentence_has_no_score(tmp_path):
    answer = "RAID5 至少三块盘，可以容忍一块盘损坏 [1]。"
    record = json.loads(run_cli("--verify", saved(tmp_path, answer, ENGLISH), "--json", env=cli_env()).stdout)
    [claim] = record["claims"]
    assert claim["status"] == "cross_language" and claim["score"] is None


def test_flagged_sentences_show_their_score_in_the_text_output(tmp_path):
    result = run_cli("--verify", saved(tmp_path, f"{GOOD}\n\n{WRONG}"), env=cli_env())
    assert result.returncode == 1
    [flagged] = [line for line in result.stdout.splitlines() if "需要转码 4K" in line and "重合度" in line]
    assert "（支持分 0.0" in flagged
    assert "支持分" not in "".join(line for line in result.stdout.splitlines() if "RAID5 至少三块盘" in line)


def test_the_review_page_shows_the_score_next_to_each_sentence(tmp_path):
    page = tmp_path / "review.html"
    run_cli("--verify", saved(tmp_path, f"{GOOD}\n\n{WRONG}"), "--html", str(page), env=cli_env())
    text = page.read_text(encoding="utf-8")
    assert text.count('class="score high"') == 1 and text.count('class="score low"') == 1
    # 被标出的那一句的支持分在它旁边显示一次；原因就写在它下面，不再重复这个数
    low = re.search(r'class="score low"[^>]*>([\d.]+)<', text).group(1)
    assert low.startswith("0.0") and f"支持分 {low}" not in text


def test_threshold_is_the_lowest_score_that_passes():
    score = check_answer(PARAPHRASE, NAS).claims[0].score
    assert support_model().cut <= score < 0.5
    assert check_answer(PARAPHRASE, NAS).passed
    assert not check_answer(PARAPHRASE, NAS, SupportRule("score", 0.5)).passed
    # 切点 0：支持分什么都不标出，确定的规则照样（资料 2 里没有 4K）
    assert [p.kind for p in check_answer(WRONG, NAS, SupportRule("score", 0.0)).problems] == ["number_mismatch"]


def test_threshold_on_the_command_line(tmp_path):
    path = saved(tmp_path, PARAPHRASE)
    assert run_cli("--verify", path, env=cli_env()).returncode == 0
    assert run_cli("--verify", path, "--threshold", "0.5", env=cli_env()).returncode == 1


def test_the_tutorial_rule_is_the_bigram_overlap(tmp_path):
    assert check_answer(LOOSE, NAS).passed
    tutorial = check_answer(LOOSE, NAS, SupportRule("tutorial", 0.6))
    [problem] = tutorial.problems
    assert problem.kind == "weak_support" and "重合度只有 56%" in problem.message
    assert tutorial.claims[0].overlap == 0.5625  # 9 / 16 个字二元组
    result = run_cli("--verify", saved(tmp_path, WRONG), "--rule", "tutorial", env=cli_env())
    assert result.returncode == 1 and "重合度只有" in result.stdout
    assert run_cli("--verify", saved(tmp_path, LOOSE), "--rule", "tutorial", env=cli_env()).returncode == 0


def test_fix_recites_by_the_same_score():
    fixed, [repair], report = fix_citations(WRONG, NAS, DEFAULT_RULE)
    assert report.passed and fixed.startswith("需要转码 4K 视频时选带核显的 Intel 型号 [1]")
    assert repair.score_before < support_model().cut <= repair.score_after
    # 同样的回答，切点高到原来的资料也过不了时，就没有能改引的资料
    _, repairs, report = fix_citations(WRONG, NAS, SupportRule("score", 0.999))
    assert repairs == [] and not report.passed
