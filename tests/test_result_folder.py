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
    """连调度器（127.0.0.1:9，没人在听）马上被拒绝：Dask 自己会重试到 CONNECT_SECONDS，真的等多久不是这里要测的，
    也不连网络（快的测试）。被拒绝之后的事照常由 dask_scheduler.probe 处理。"""
    pytest.importorskip("distributed")
    import distributed.comm

    async def refused(address, **options):
        raise ConnectionRefusedError(111, f"Connection refused: {address}")
    monkeypatch.setattr(distributed.comm, "connect", refused)


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


def manifest_of(out):
    return json.loads((out / MANIFEST).read_text(encoding="utf-8"))


def test_the_manifest_never_lists_a_file_that_is_not_there(tmp_path):
    """写清单的地方是最后一道防线：交给它的名字里不在目录里的，一个也不记进 files。"""
    out = tmp_path / "out"
    folder = ResultFolder(str(out), OutputFiles([]))
    folder.check([])
    folder.start(3)
    folder.write(0, "第一块\n")
    folder.save_manifest(["00000.jsonl", "00001.jsonl", "00002.jsonl"], complete=False)
    assert manifest_of(out)["files"] == ["00000.jsonl"]


def test_a_job_that_never_finishes_leaves_only_pending_names_and_the_next_run_takes_the_folder(tmp_path):
    """kill -9 时 finish 不会运行：开始时的清单里这次的名字都在 pending，files 是空的——不说没写的文件写好了；
    下次运行照样认得出这些文件（连写到一半的临时文件）是本程序的，整个换掉。"""
    out = tmp_path / "out"
    folder = ResultFolder(str(out), OutputFiles([]))
    folder.check([])
    folder.start(4)
    folder.write(0, "第一块\n")
    (out / ".00001.jsonl.k3j9x0a1.part").write_text("写到一半", encoding="utf-8")
    manifest = manifest_of(out)
    assert manifest["files"] == [] and manifest["pending"] == result_names(4) and manifest["complete"] is False
    again = ResultFolder(str(out), OutputFiles([]))
    again.check([])
    again.start(1)
    again.write(0, "新的\n")
    again.finish(complete=True)
    assert sorted(os.listdir(out)) == ["00000.jsonl", MANIFEST]
    assert manifest_of(out) == {"written_by": "sourced_answers.cluster", "complete": True, "files": ["00000.jsonl"],
                                "pending": []}


def test_a_result_written_just_before_an_interrupt_is_still_recorded(tmp_path):
    """文件已经换好名、还没来得及记下就被打断：清单以目录里真有的为准，它也记进去（不然下次说它不是本程序写的）。"""
    from sourced_answers.core.output_files import write_file
    out = tmp_path / "out"
    folder = ResultFolder(str(out), OutputFiles([]))
    folder.check([])
    folder.start(3)
    folder.write(0, "第一块\n")
    write_file(folder.planned["00002.jsonl"], "第三块\n")  # write() 写好了文件，还没记进 written
    folder.finish(complete=False)
    assert manifest_of(out)["files"] == ["00000.jsonl", "00002.jsonl"] and manifest_of(out)["pending"] == []
    assert "00000.jsonl、00002.jsonl" in str(folder.kept_line())


def test_a_folder_that_cannot_be_listed_is_checked_file_by_file(tmp_path, monkeypatch):
    """列不了目录（比如读权限被拿掉了）时，一个一个看：写好的照样记上，没写的照样不记。"""
    from sourced_answers.batch import result_folder

    def refuse(path):
        raise PermissionError(13, "Permission denied")
    out = tmp_path / "out"
    folder = ResultFolder(str(out), OutputFiles([]))
    folder.check([])
    folder.start(3)
    folder.write(1, "第二块\n")
    monkeypatch.setattr(result_folder.os, "listdir", refuse)
    folder.finish(complete=False)
    assert manifest_of(out)["files"] == ["00001.jsonl"]


def test_a_summary_inside_the_folder_is_pending_until_it_is_written(tmp_path):
    out = tmp_path / "out"
    out.mkdir()  # --summary 目录/summary.json 要求目录已经在
    outputs = OutputFiles([])
    summary = outputs.plan(str(out / "summary.json"), "汇总")
    folder = ResultFolder(str(out), outputs, summary)
    folder.check([])
    folder.start(1)
    folder.write(0, "一块\n")
    folder.finish(complete=True)
    assert manifest_of(out)["files"] == ["00000.jsonl"] and manifest_of(out)["pending"] == ["summary.json"]
    (out / "summary.json").write_text("{}", encoding="utf-8")
    folder.summary_written()
    assert manifest_of(out)["files"] == ["00000.jsonl", "summary.json"] and manifest_of(out)["pending"] == []


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
