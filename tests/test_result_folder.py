"""Dask 任务的结果目录（--out）：不是本程序写的东西在做任何事之前拒绝，上次的结果整个换掉，写不进去的目录和汇总
在做任何事之前就说清楚（中文，退出码 2）。这些检查都在连集群之前，所以这里不用起 Dask。"""
import json
import os

import pytest

from sourced_answers.batch.result_folder import MANIFEST, ResultFolder, listed, result_names
from sourced_answers.core.errors import UsageError
from sourced_answers.core.output_files import OutputFiles
from tests.support import cli_env
from tests.test_corpus import corpus

# 谁都写不进去的目录：root 也不行（/sys 不让建文件）；普通用户再加一个去掉了写权限的目录
UNWRITABLE = "/sys"


@pytest.fixture(autouse=True)
def quick_connect(monkeypatch):
    """连不上调度器时只等 1 秒（真的等多久不是这里要测的）。"""
    pytest.importorskip("distributed")
    from sourced_answers.batch import cluster_client
    monkeypatch.setattr(cluster_client, "CONNECT_SECONDS", 1)


def run_cluster(capsys, *arguments):
    pytest.importorskip("distributed")
    from sourced_answers.cli import cluster_command
    code = cluster_command.main([*arguments, "--scheduler", "tcp://127.0.0.1:9"])  # 检查都在连它之前
    return code, capsys.readouterr().err


def earlier_results(out, files, writer="sourced_answers.cluster"):
    out.mkdir()
    for name in files:
        (out / name).write_text('{"passed": true}\n', encoding="utf-8")
    (out / MANIFEST).write_text(json.dumps({"written_by": writer, "complete": True, "files": files}),
                                encoding="utf-8")


@pytest.mark.parametrize("stranger", ["0.jsonl", "笔记.txt", ".DS_Store", "子目录", "名字\n✓ 引用核对通过"])
def test_a_folder_holding_anything_the_tool_did_not_write_is_refused_before_any_work(tmp_path, capsys, stranger):
    source = corpus(tmp_path, 2)
    out = tmp_path / "out"
    earlier_results(out, ["00000.jsonl"])
    (out / stranger).mkdir() if stranger == "子目录" else (out / stranger).write_text("别人的", encoding="utf-8")
    code, err = run_cluster(capsys, str(source), "--out", str(out))
    assert code == 2 and "里有不是本程序写的东西" in err and "连不上" not in err, err
    assert not any(line.startswith("✓") for line in err.splitlines()), err  # 文件名伪造不出一行结论
    assert sorted(os.listdir(out)) == sorted(["00000.jsonl", MANIFEST, stranger])  # 一个都没动


def test_a_manifest_written_by_another_program_does_not_make_the_folder_ours(tmp_path, capsys):
    out = tmp_path / "out"
    earlier_results(out, ["00000.jsonl"], writer="spark")
    code, err = run_cluster(capsys, str(corpus(tmp_path, 2)), "--out", str(out))
    assert code == 2 and "00000.jsonl" in err and MANIFEST in err, err


def test_an_empty_or_new_folder_or_our_own_earlier_results_pass_the_checks(tmp_path, capsys):
    source = corpus(tmp_path, 2)
    (tmp_path / "empty").mkdir()
    earlier_results(tmp_path / "ours", ["00000.jsonl", "00001.jsonl"])
    (tmp_path / "ours" / ".00001.jsonl.k3j9x0a1.part").write_text("写到一半", encoding="utf-8")  # 上次被 kill -9
    for out in ("empty", "new", "ours"):
        code, err = run_cluster(capsys, str(source), "--out", str(tmp_path / out))
        assert code == 3 and "连不上 Dask 调度器" in err, err  # 检查都过了，才去连调度器
    assert not (tmp_path / "new").exists()  # 连不上调度器：不留下一个空目录
    assert len(os.listdir(tmp_path / "ours")) == 4  # 连不上：上次的结果一个没动


def test_starting_removes_the_earlier_set_whole_even_after_an_interrupted_run(tmp_path):
    out = tmp_path / "out"
    earlier_results(out, [f"{n:05d}.jsonl" for n in range(12)])
    (out / ".00012.jsonl.k3j9x0a1.part").write_text("写到一半", encoding="utf-8")
    manifest = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    (out / MANIFEST).write_text(json.dumps({**manifest, "complete": False, "files": [
        *manifest["files"], "00012.jsonl"]}), encoding="utf-8")
    folder = ResultFolder(str(out), OutputFiles([]))
    folder.check([])
    folder.start(2)
    folder.write(1, "第二块\n")
    folder.finish(complete=False)
    assert sorted(os.listdir(out)) == ["00001.jsonl", MANIFEST]
    assert json.loads((out / MANIFEST).read_text(encoding="utf-8"))["files"] == ["00001.jsonl"]
    assert folder.kept_line() is not None and "00001.jsonl" in folder.kept_line() and "00000.jsonl" in folder.kept_line()


def test_result_names_sort_in_input_order_with_any_count():
    for count in (1, 11, 100_001):
        names = result_names(count)
        assert sorted(names) == names and len(set(map(len, names))) == 1
    assert listed(["00000.jsonl", "00001.jsonl", "00002.jsonl", "00005.jsonl"]) == \
        "00000.jsonl–00002.jsonl、00005.jsonl"


def test_an_object_store_folder_follows_the_same_rules(tmp_path):
    pytest.importorskip("fsspec")
    import fsspec
    memory = fsspec.filesystem("memory")
    memory.pipe("/results-test/笔记.txt", b"x")
    with pytest.raises(UsageError, match="不是本程序写的"):
        ResultFolder("memory://results-test", OutputFiles([])).check([])
    memory.rm("/results-test/笔记.txt")
    for count in (3, 1):
        folder = ResultFolder("memory://results-test", OutputFiles([]))
        folder.check([])
        folder.start(count)
        for number in range(count):
            folder.write(number, f"第 {number} 块\n")
        folder.finish(complete=True)
    assert sorted(os.path.basename(path) for path in memory.ls("/results-test", detail=False)) == \
        ["00000.jsonl", MANIFEST]
    memory.rm("/results-test", recursive=True)


def unwritable_folder(tmp_path):
    """一个写不进去的目录：普通用户是去掉写权限的目录，root 是 /sys（root 什么权限都有，只有这样的目录才写不进去）。"""
    if os.geteuid() == 0:
        return UNWRITABLE
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    return str(folder)


@pytest.mark.parametrize("target", ["out-inside", "new-out-inside", "summary-inside"])
def test_unwritable_outputs_are_found_before_any_work_in_chinese(tmp_path, capsys, target):
    folder = unwritable_folder(tmp_path)
    source = corpus(tmp_path, 2)
    arguments = {"out-inside": ["--out", folder],
                 "new-out-inside": ["--out", os.path.join(folder, "results")],
                 "summary-inside": ["--out", str(tmp_path / "out"), "--summary", os.path.join(folder, "s.json")]}
    code, err = run_cluster(capsys, str(source), *arguments[target])
    assert code == 2 and ("写不进去" in err or "建不了结果目录" in err), err
    assert ("没有权限" in err or "不允许" in err) and "连不上" not in err, err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("arguments, message", [
    (["--workers", "3"], "--workers 只管本机起的小集群"),
    (["--summary", "OUT/00003.jsonl"], "同名"),
    (["--summary", "OUT/汇总.jsonl"], "cat 目录/*.jsonl 会把它一起接进去"),
    (["--summary", f"OUT/{MANIFEST}"], "同名"),
    (["--wait-workers", "0"], "应在 1 到 3600 秒之间"),
])
def test_cluster_flags_that_cannot_work_together_are_refused(tmp_path, capsys, arguments, message):
    (tmp_path / "out").mkdir()
    arguments = [argument.replace("OUT", str(tmp_path / "out")) for argument in arguments]
    code, err = run_cluster(capsys, str(corpus(tmp_path, 2)), "--out", str(tmp_path / "out"), *arguments)
    assert code == 2 and message in err, err


def test_the_main_command_finds_an_unwritable_summary_before_it_checks_anything(tmp_path):
    from tests.support import run_cli
    source = corpus(tmp_path, 3)
    result = run_cli("--verify", str(source), "--json", "--summary", os.path.join(unwritable_folder(tmp_path), "s.json"),
                     env=cli_env())
    assert result.returncode == 2 and "写不了汇总" in result.stderr and "写不进去" in result.stderr, result.stderr
    assert result.stdout == ""  # 一条都还没有核对


@pytest.mark.parametrize("manifest", ["[" * 100_000, '{"written_by": "sourced_answers.cluster", "files": ["../x"]}',
                                      '{"written_by": "sourced_answers.cluster", "files": [".."]}', "\udcff"])
def test_a_broken_or_hostile_manifest_makes_the_folder_foreign_and_nothing_outside_is_touched(tmp_path, capsys,
                                                                                             manifest):
    out = tmp_path / "out"
    out.mkdir()
    (tmp_path / "x").write_text("在结果目录外面", encoding="utf-8")
    (out / MANIFEST).write_bytes(manifest.encode("utf-8", "surrogateescape"))
    code, err = run_cluster(capsys, str(corpus(tmp_path, 2)), "--out", str(out))
    assert code == 2 and "不是本程序写的" in err and MANIFEST in err, err
    assert (tmp_path / "x").exists() and (out / MANIFEST).exists()


def test_summary_given_as_the_new_result_folder_is_refused_before_any_work(tmp_path, capsys):
    """--summary 和 --out 写成同一个（还不存在的）目录：以前全部核对完才说“写不了汇总：这是一个目录”。"""
    out = tmp_path / "out"
    code, err = run_cluster(capsys, str(corpus(tmp_path, 2)), "--out", str(out), "--summary", str(out))
    assert code == 2 and "--summary 和 --out 是同一个路径" in err and "连不上" not in err, err
    assert not out.exists()
