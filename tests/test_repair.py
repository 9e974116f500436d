"""--fix：确定性修正（改引、补引用）、模型改写（采用和不采用）、文字和 JSON 输出、--verify --fix、--eval --fix。"""
import json

import pytest

from sourced_answers.checker import DEFAULT_RULE, Source, check_answer
from sourced_answers.outputs.render import verdict_lines
from sourced_answers.search.demo_pages import ENGLISH_PAGES
from sourced_answers.steps import repair
from sourced_answers.steps.repair import HINT_BUDGET, fix_citations, repairable
from tests.support import (
    GOOD_ANSWER,
    INVENTED,
    NAS_RECORD_SOURCES,
    NAS_SOURCES,
    RIGHT_NUMBER,
    WITH_INVENTION,
    cli_env,
    run_cli,
)

NAS = NAS_SOURCES
NAS_EN = [Source(title=page["title"], text=page["text"]) for page in ENGLISH_PAGES]


def ask(model_server, *args, model):
    env = cli_env(None, model_server, ANS_MODEL=model)
    return run_cli("--demo", "家用 NAS 怎么选", *args, env=env)


def saved(tmp_path, *answers):
    path = tmp_path / "saved.jsonl"
    path.write_text("\n".join(json.dumps({"answer": a, "sources": NAS_RECORD_SOURCES}, ensure_ascii=False) for a in answers) + "\n",
                    encoding="utf-8")
    return str(path)


# ---------- 确定性修正 ----------

def test_miscited_sentence_is_recited_to_the_source_that_supports_it():
    answer = "家用 NAS 至少选两盘位，方便做 RAID1 镜像 [1]。\n\n需要转码 4K 视频时选带核显的 Intel 型号 [2]。"
    fixed, repairs, report = fix_citations(answer, NAS, DEFAULT_RULE)
    assert fixed == answer.replace("型号 [2]", "型号 [1]")
    assert report.passed
    [repair] = repairs
    assert (repair.kind, repair.paragraph, repair.overlap_before, repair.overlap_after) == ("recite", 2, 0.0, 1.0)


def test_citation_to_a_missing_number_goes_to_the_source_that_passes():
    fixed, repairs, report = fix_citations("RAID5 至少三块盘，可以容忍一块盘损坏【7】。", NAS, DEFAULT_RULE)
    assert fixed == "RAID5 至少三块盘，可以容忍一块盘损坏[2]。"
    assert report.passed and repairs[0].kind == "recite" and "[7]" in repairs[0].reason


def test_uncited_paragraph_gets_the_citation_at_the_end_of_each_sentence():
    answer = "RAID5 至少三块盘，可以容忍一块盘损坏。RAID 不是备份，重要数据仍然要另外备份。"
    fixed, repairs, report = fix_citations(answer, NAS, DEFAULT_RULE)
    assert fixed == "RAID5 至少三块盘，可以容忍一块盘损坏 [2]。RAID 不是备份，重要数据仍然要另外备份 [2]。"
    assert report.passed and [r.kind for r in repairs] == ["add_citation", "add_citation"]


def test_uncited_list_item_gets_its_citation():
    answer = "- 需要转码 4K 视频时选带核显的 Intel 型号 [1]\n- 组 RAID 的 NAS 建议用 CMR 硬盘"
    fixed, repairs, report = fix_citations(answer, NAS, DEFAULT_RULE)
    assert fixed == answer + " [4]"
    assert report.passed and [r.kind for r in repairs] == ["add_citation"]


def test_list_item_whose_inherited_citation_fails_gets_its_own():
    answer = "选购要点 [1]：\n\n- 需要转码 4K 视频时选带核显的 Intel 型号\n- 数据至少保存三份，放在两种不同的介质上"
    fixed, repairs, report = fix_citations(answer, NAS, DEFAULT_RULE)
    assert fixed == answer + " [5]"
    assert report.passed and repairs[0].kind == "recite" and "继承" in repairs[0].reason


def test_an_item_under_a_source_title_line_that_source_does_not_support_gets_its_own():
    answer = "[1] 家用 NAS 选购要点\n- 家用至少选两盘位，方便做 RAID1 镜像\n- RAID5 换盘后要重建阵列，大容量硬盘重建时间长"
    fixed, repairs, report = fix_citations(answer, NAS, DEFAULT_RULE)
    assert fixed == answer + " [2]"
    assert report.passed and [r.kind for r in repairs] == ["recite"] and "继承" in repairs[0].reason


def test_each_sentence_of_an_inherited_item_gets_the_source_that_supports_it():
    answer = "选购要点 [1]：\n- 家用至少选两盘位，方便做 RAID1 镜像\n- RAID5 换盘后要重建阵列。大容量硬盘重建时间长。"
    fixed, repairs, report = fix_citations(answer, NAS, DEFAULT_RULE)
    assert fixed.endswith("- RAID5 换盘后要重建阵列 [2]。大容量硬盘重建时间长 [2]。")
    assert report.passed and [r.kind for r in repairs] == ["recite", "recite"]


def test_a_supported_sentence_in_a_recited_item_keeps_its_inherited_citation_written_out():
    """同一项里另一句改引了 [2]：这一句不写上 [1] 的话，就会改用这一项自己的 [2] 核对。"""
    answer = "选购要点 [1]：\n- 家用至少选两盘位。RAID5 换盘后要重建阵列。"
    fixed, repairs, report = fix_citations(answer, NAS, DEFAULT_RULE)
    assert fixed.endswith("- 家用至少选两盘位 [1]。RAID5 换盘后要重建阵列 [2]。") and report.passed
    assert sorted(r.kind for r in repairs) == ["add_citation", "recite"]


def test_an_english_item_with_two_sentences_under_a_title_line_is_recited():
    answer = ("[1] How to choose a home NAS\n- pick at least two bays so that you can mirror your data with RAID 1\n"
              "- Turn on two-factor authentication for the admin account. Disable the default admin user.")
    fixed, repairs, report = fix_citations(answer, NAS_EN, DEFAULT_RULE)
    assert fixed.endswith("- Turn on two-factor authentication for the admin account [3]. Disable the default admin user. [3]")
    assert report.passed and [r.kind for r in repairs] == ["recite", "recite"]


@pytest.mark.parametrize("marker", ["二、", "②", "2）"])
def test_an_unmarked_line_under_a_lead_in_gets_the_source_that_supports_it(marker):
    """“一、”“②”“1）”不是列表记号：这些行和引出行是一块，用它的引用；支持不了时在句末写上能支持它的资料。"""
    answer = f"选购要点 [1]：\n家用至少选两盘位，方便做 RAID1 镜像\n{marker}RAID5 换盘后要重建阵列，大容量硬盘重建时间长"
    fixed, repairs, report = fix_citations(answer, NAS, DEFAULT_RULE)
    assert fixed == answer + " [2]"
    assert report.passed and [r.kind for r in repairs] == ["recite"] and "本段的引用 [1]" in repairs[0].reason


@pytest.mark.parametrize("answer, sources, fixed", [
    ("RAID5 至少三块盘，可以容忍一块盘损坏 [2]。远程访问优先使用 VPN 或 Tailscale 这类组网工具。", NAS,
     "RAID5 至少三块盘，可以容忍一块盘损坏 [2]。远程访问优先使用 VPN 或 Tailscale 这类组网工具 [3]。"),
    ("RAID 5 needs at least three disks [2]. Use a VPN or a mesh tool such as Tailscale for remote access.", NAS_EN,
     "RAID 5 needs at least three disks [2]. Use a VPN or a mesh tool such as Tailscale for remote access. [3]"),
])
def test_a_sentence_checked_against_its_paragraphs_citation_gets_the_source_that_supports_it(answer, sources, fixed):
    got, repairs, report = fix_citations(answer, sources, DEFAULT_RULE)
    assert got == fixed and report.passed and [r.kind for r in repairs] == ["recite"]


def test_an_inherited_item_no_source_supports_is_left_as_it_is_and_stays_flagged():
    answer = "选购要点 [1]：\n- 家用至少选两盘位，方便做 RAID1 镜像\n- 群晖的 NAS 系统比威联通稳定得多，适合所有家庭"
    fixed, repairs, report = fix_citations(answer, NAS, DEFAULT_RULE)
    assert fixed == answer and repairs == []
    [problem] = report.problems
    assert problem.kind == "weak_support" and "群晖" in problem.sentence and "继承自上文" in problem.message


def test_invented_sentence_stays_as_it_is_and_stays_flagged():
    fixed, repairs, report = fix_citations(WITH_INVENTION, NAS, DEFAULT_RULE)
    assert fixed == WITH_INVENTION and repairs == []
    assert [p.kind for p in report.problems] == ["weak_support"]


def test_a_sentence_that_only_shares_keywords_with_a_source_gets_no_citation():
    # 内容词重合 75%，核对本身会放过；但它和资料说的正相反，修正不能替它挑一个来源
    answer = "NAS 不需要任何备份，RAID 就够了。"
    fixed, repairs, report = fix_citations(answer, NAS, DEFAULT_RULE)
    assert fixed == answer and repairs == [] and not report.passed


def test_uncited_paragraph_is_left_alone_when_one_of_its_sentences_has_no_source():
    # 只补一半会让没有来源的那句躲过“没有引用”的检查
    answer = "RAID5 至少三块盘，可以容忍一块盘损坏。群晖的 NAS 系统比威联通稳定得多，适合所有家庭。"
    fixed, repairs, report = fix_citations(answer, NAS, DEFAULT_RULE)
    assert fixed == answer and repairs == []
    assert [p.kind for p in report.problems] == ["uncited_paragraph"]


# 一遍修正之后还有能修的：改了同段里另一句的引用之后，这一句引的 [4][7] 才有一条能单独通过（以前要 --fix 两次）
NOT_DONE_IN_ONE_PASS = [
    ("The weather in Paris is lovely in spring 。\n\n组 RAID 的 NAS 建议用 CMR 硬盘 。组 RAID 的 NAS 建议用 CMR 硬盘 [2]。"
     "资料提到 [2][3]。\n\n备份要定期做恢复演练 。RAID5 至少三块盘，可以容忍一块盘损坏 [4][5]。\n\n"
     "家用 NAS 至少选两盘位，方便做 RAID1 镜像 [4][7]。需要转码 4K 视频时选带核显的 Intel 型号 [6][7]。"),
    ("远程访问优先使用 VPN 或 Tailscale 。RAID5 至少三块盘，可以容忍一块盘损坏 [7]。\n\n组 RAID 的 NAS 建议用 CMR 硬盘 [2]。"
     "\n\n数据至少保存三份，放在两种不同的介质上 [3]。\n\n远程访问优先使用 VPN 或 Tailscale [1][4]。组 RAID 的 NAS 建议用 CMR 硬盘 。"
     "RAID 不是备份，重要数据仍然要另外备份 [3]。"),
]


@pytest.mark.parametrize("answer", NOT_DONE_IN_ONE_PASS)
def test_one_fix_reaches_the_fixed_point(answer):
    once, repairs, _ = fix_citations(answer, NAS, DEFAULT_RULE)
    twice, more, _ = fix_citations(once, NAS, DEFAULT_RULE)
    assert repairs and twice == once and more == []


def test_the_mirror_sentence_citing_a_missing_source_is_recited_in_the_same_run():
    once, _, report = fix_citations(NOT_DONE_IN_ONE_PASS[0], NAS, DEFAULT_RULE)
    assert "镜像 [1]。" in once and "[7]" not in once
    assert "missing_source" not in {p.kind for p in report.problems}


def long_uncited_list(count):
    """count 个没有引用的列表项，每项都能改引资料 [2]（同样的几句话轮流出现）。"""
    sentences = ["RAID5 至少三块盘，可以容忍一块盘损坏", "RAID1 是镜像，两块盘存同样的数据",
                 "两盘位的 NAS 只能做 RAID1"]
    return "以下几点：\n\n" + "\n".join(f"- {sentences[n % len(sentences)]}" for n in range(count))


def test_the_fix_hint_looks_at_a_bounded_number_of_problems(monkeypatch):
    answer = long_uncited_list(HINT_BUDGET * 8)
    report = check_answer(answer, NAS)
    looked = []
    best = repair.Sources.best
    monkeypatch.setattr(repair.Sources, "best", lambda self, claim: looked.append(claim) or best(self, claim))
    fixable = repairable(answer, NAS, DEFAULT_RULE, report)
    assert len([p for p in report.problems if p.kind == "uncited_paragraph"]) == HINT_BUDGET * 8
    assert 0 < fixable.count <= HINT_BUDGET and fixable.more
    assert len(looked) <= 2 * HINT_BUDGET


def test_a_hint_from_part_of_the_problems_says_at_least():
    answer = long_uncited_list(HINT_BUDGET * 2)
    report = check_answer(answer, NAS)
    lines = verdict_lines(report, repairable(answer, NAS, DEFAULT_RULE, report))
    assert lines[-1] == f"可以加 --fix 自动修正至少 {HINT_BUDGET} 处引用（只改引用标记，不改一个字的正文）"


def test_a_hint_that_saw_every_problem_counts_them_exactly():
    answer = long_uncited_list(3)
    report = check_answer(answer, NAS)
    assert verdict_lines(report, repairable(answer, NAS, DEFAULT_RULE, report))[-1].startswith(
        "可以加 --fix 自动修正其中 3 处引用")
    fixed, repairs, after = fix_citations(answer, [Source(s.text, s.title) for s in NAS], DEFAULT_RULE)
    assert len(repairs) == 3 and after.passed


# ---------- 命令行：问题 ----------

def test_without_fix_a_repairable_failure_suggests_it_and_json_is_unchanged(model_server):
    result = ask(model_server, model="wrong-source")
    assert result.returncode == 1
    assert result.stdout.rstrip().endswith("可以加 --fix 自动修正其中 1 处引用（只改引用标记，不改一个字的正文）")
    data = json.loads(ask(model_server, "--json", model="wrong-source").stdout)
    assert "original_answer" not in data and "repairs" not in data


def test_no_suggestion_when_nothing_can_be_repaired(model_server):
    result = ask(model_server, "--fix-rounds", "0", "--fix", model="fix-no-better")
    assert "--fix" not in ask(model_server, model="fix-no-better").stdout
    assert result.returncode == 1 and "已修正" not in result.stdout


def test_fix_recites_and_says_what_changed(model_server):
    result = ask(model_server, "--fix", model="wrong-source")
    assert result.returncode == 0, result.stderr
    answer, _, rest = result.stdout.partition("\n\n来源：\n")
    assert answer.endswith("需要转码 4K 视频时选带核显的 Intel 型号 [1]。")
    assert "已修正：\n  第 2 段：[2]→[1]" in rest and "重合度 0% → 100%" in rest
    assert rest.rstrip().endswith("✓ 引用核对通过")
    assert "修正第 1 轮" not in result.stderr  # 确定性修正就够了，不再问模型


def test_fix_json_keeps_what_the_model_wrote(model_server):
    result = ask(model_server, "--fix", "--json", model="uncited")
    data = json.loads(result.stdout)
    assert result.returncode == 0 and data["passed"] and data["problems"] == []
    assert data["original_answer"] == "家用 NAS 至少选两盘位，方便做 RAID1 镜像。\n\n需要转码 4K 视频时选带核显的 Intel 型号。"
    assert [r["kind"] for r in data["repairs"]] == ["add_citation", "add_citation"]
    assert set(data["repairs"][0]) >= {"kind", "paragraph", "before", "after", "reason"}


def test_model_rewrite_that_deletes_the_invented_sentence_is_kept(model_server):
    result = ask(model_server, "--fix", "--json", model="fix-deletes")
    data = json.loads(result.stdout)
    assert result.returncode == 0 and data["answer"] == GOOD_ANSWER
    assert data["original_answer"] == WITH_INVENTION
    assert [(r["kind"], r["paragraph"], r["after"]) for r in data["repairs"]] == [("delete", 4, None)]
    assert "修正第 1 轮…" in result.stderr
    rewrite_request = model_server.requests[-1]["body"]["messages"][-1]["content"]
    assert "群晖的 NAS 系统比威联通稳定得多" in rewrite_request and "重合度只有" in rewrite_request


@pytest.mark.parametrize("model", ["fix-hides-in-heading", "fix-hides-in-code"])
def test_a_rewrite_that_hides_the_sentence_in_a_heading_or_code_block_is_not_a_fix(model_server, model):
    """把被标出的那句挪进标题、挪进没有结束的代码块：它照样被核对，不会变成“✓ 引用核对通过”。"""
    result = ask(model_server, "--fix", "--json", model=model)
    data = json.loads(result.stdout)
    assert result.returncode == 1 and not data["passed"]
    assert any("群晖的 NAS 系统比威联通稳定得多" in (p["sentence"] or "") for p in data["problems"])


def test_a_sentence_cited_right_is_not_repaired_because_its_twin_is_cited_wrong(tmp_path):
    """一字不差的两句话，一句引对了 [2]、一句引错了 [4]：只改引错的那句，不出现“[2]→[2]”这样的空修正。"""
    sentence = "RAID5 至少三块盘，可以容忍一块盘损坏"
    saved = tmp_path / "twin.json"
    saved.write_text(json.dumps({"answer": f"{sentence} [2]。{sentence} [4]。", "sources": NAS_RECORD_SOURCES},
                                ensure_ascii=False), encoding="utf-8")
    hint = run_cli("--verify", str(saved), env=cli_env())
    assert "其中 1 处" in hint.stdout, hint.stdout
    fixed = json.loads(run_cli("--verify", str(saved), "--fix", "--json", env=cli_env()).stdout)
    assert [(r["kind"], r["before"] != r["after"]) for r in fixed["repairs"]] == [("recite", True)]
    # 改引之后引用都对了；同一句话写了两遍仍是一个问题（修正不删句子）
    assert [p["kind"] for p in fixed["problems"]] == ["repeated"]


def test_model_rewrite_of_a_wrong_number(model_server):
    result = ask(model_server, "--fix", model="fix-rewrites")
    assert result.returncode == 0, result.stdout
    assert result.stdout.startswith(RIGHT_NUMBER)
    assert "第 2 段：重写“RAID5 至少两块盘就能容忍一块盘损坏 [2]”→“RAID5 至少三块盘，可以容忍一块盘损坏 [2]”" in result.stdout


def test_model_rewrite_that_drops_a_passing_sentence_is_not_kept(model_server):
    result = ask(model_server, "--fix", "--json", model="fix-drops-good")
    data = json.loads(result.stdout)
    assert result.returncode == 1
    assert data["answer"] == WITH_INVENTION and data["repairs"] == []
    assert "原本通过的话，保留上一版" in result.stderr


def test_model_rewrite_with_as_many_problems_is_not_kept(model_server):
    result = ask(model_server, "--fix", "--fix-rounds", "3", model="fix-no-better")
    assert result.returncode == 1
    assert result.stdout.startswith(WITH_INVENTION)
    assert result.stderr.count("修正第") == 1 and "保留上一版" in result.stderr  # 没进展就不再白问


def test_fix_rounds_zero_never_asks_the_model_again(model_server):
    ask(model_server, "--fix", "--fix-rounds", "0", model="fix-deletes")
    assert model_server.counts["fix-deletes"] == 1


def test_fix_rounds_needs_fix(model_server):
    result = ask(model_server, "--fix-rounds", "2", model="good")
    assert result.returncode == 2 and "--fix-rounds 要和 --fix 一起用" in result.stderr


def test_model_error_during_rewrite_keeps_the_answer(model_server):
    # 改写请求出错（这里是 HTTP 400）：不能丢掉已经有的回答，照常给出结论
    result = ask(model_server, "--fix", model="fix-then-error")
    assert result.returncode == 1 and result.stdout.startswith(WITH_INVENTION)
    assert "修正时模型出错" in result.stderr and "context window exceeded" in result.stderr


# ---------- --verify --fix ----------

def test_verify_fix_on_json_lines(tmp_path):
    path = saved(tmp_path, GOOD_ANSWER, "需要转码 4K 视频时选带核显的 Intel 型号 [2]。", INVENTED)
    result = run_cli("--verify", path, "--fix", "--json", env=cli_env())
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert result.returncode == 1  # 第三条修不了
    assert [r["passed"] for r in records] == [True, True, False]
    assert records[0]["answer"] == records[0]["original_answer"] == GOOD_ANSWER and records[0]["repairs"] == []
    assert records[1]["answer"] == "需要转码 4K 视频时选带核显的 Intel 型号 [1]。"
    assert records[2]["answer"] == INVENTED


def test_verify_fix_on_one_json_object_in_text(tmp_path):
    path = tmp_path / "one.json"
    path.write_text(json.dumps({"answer": "需要转码 4K 视频时选带核显的 Intel 型号 [2]。", "sources": NAS_RECORD_SOURCES},
                               ensure_ascii=False), encoding="utf-8")
    result = run_cli("--verify", str(path), "--fix", env=cli_env())
    assert result.returncode == 0
    assert result.stdout.startswith("需要转码 4K 视频时选带核显的 Intel 型号 [1]。\n\n来源：")
    assert "已修正：\n  [2]→[1]" not in result.stdout and "第 1 段：[2]→[1]" in result.stdout


# ---------- --eval --fix ----------

def test_eval_fix_reports_pass_rate_before_and_after(model_server, tmp_path):
    questions = tmp_path / "q.txt"
    questions.write_text("家用 NAS 怎么选\n", encoding="utf-8")
    env = cli_env(None, model_server)
    result = run_cli("--demo", "--eval", str(questions), "--models", "wrong-source,fix-no-better", "--fix", env=env)
    header, *rows = result.stdout.strip().splitlines()
    assert header.endswith("修正后通过 | 修正后通过率 | 每个回答修正处数 | 修正用时(秒)")
    cells = {row.split(" | ")[0]: row.split(" | ") for row in rows}
    assert cells["wrong-source"][2:4] == ["0", "0%"] and cells["wrong-source"][-4:-1] == ["1", "100%", "1.0"]
    assert cells["fix-no-better"][-4:-1] == ["0", "0%", "0.0"]
    assert result.returncode == 1
    lines = run_cli("--demo", "--eval", str(questions), "--models", "wrong-source", "--fix", "--json", env=env)
    record = json.loads(lines.stdout)
    assert (record["passed"], record["passed_after_fix"], record["repairs"]) == (False, True, 1)
    assert record["fix_seconds"] >= 0 and lines.returncode == 0


def test_eval_without_fix_has_the_same_columns_as_before(model_server, tmp_path):
    questions = tmp_path / "q.txt"
    questions.write_text("家用 NAS 怎么选\n", encoding="utf-8")
    result = run_cli("--demo", "--eval", str(questions), "--models", "good", env=cli_env(None, model_server))
    assert result.stdout.splitlines()[0].endswith("出错 | 平均用时(秒) | token/秒")
