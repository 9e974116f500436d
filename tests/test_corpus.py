"""整批核对：--verify 一行一行地读写、--jobs N 和 1 个进程的输出一字不差、汇总和 --summary、库函数，
以及 Dask 本机集群（两个 worker）上的结果和 --verify --json --jobs 1 逐条相同。"""
import json
import re

import pytest

from sourced_answers.batch.verification import verify_record
from sourced_answers.checker import PROBLEM_KINDS
from tests.support import (
    GOOD_ANSWER,
    INVENTED,
    NAS_RECORD_SOURCES,
    UNCITED_ANSWER,
    WRONG_SOURCE_ANSWER,
    cli_env,
    run_cli,
)

ANSWERS = [GOOD_ANSWER, WRONG_SOURCE_ANSWER, UNCITED_ANSWER, GOOD_ANSWER + "\n\n" + INVENTED, "", "RAID5 至少两块盘 [2]。"]


def corpus(tmp_path, count, name="logs.jsonl"):
    path = tmp_path / name
    with path.open("w", encoding="utf-8") as handle:
        for number in range(count):
            record = {"question": f"问题 {number}", "model": "m", "answer": ANSWERS[number % len(ANSWERS)],
                      "sources": NAS_RECORD_SOURCES}
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    return path


@pytest.mark.slow
@pytest.mark.parametrize("mode", [["--json"], []])
def test_jobs_2_output_is_identical_to_jobs_1(tmp_path, mode):
    path = corpus(tmp_path, 200)
    one = run_cli("--verify", str(path), "--jobs", "1", *mode, env=cli_env())
    two = run_cli("--verify", str(path), "--jobs", "2", *mode, env=cli_env())
    assert one.returncode == two.returncode == 1
    assert one.stdout == two.stdout and len(one.stdout) > 1000


def test_output_follows_input_order_and_the_library_gives_the_same_record(tmp_path):
    path = corpus(tmp_path, 12)
    result = run_cli("--verify", str(path), "--json", env=cli_env())
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["question"] for r in records] == [f"问题 {n}" for n in range(12)]
    inputs = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [verify_record(data) for data in inputs] == records


def test_summary_on_stderr_and_in_a_file(tmp_path):
    path = corpus(tmp_path, 12)
    summary_path = tmp_path / "summary.json"
    result = run_cli("--verify", str(path), "--json", "--summary", str(summary_path), env=cli_env())
    assert "汇总：12 条，通过 2，没通过 10" in result.stderr and "问题按种类（个）：" in result.stderr
    assert "最慢的几条：第 " in result.stderr
    summary = json.loads(summary_path.read_text(encoding="utf-8"))
    assert summary["records"] == 12 and summary["passed"] == 2 and summary["failed"] == 10
    assert summary["kinds"]["empty_answer"] == 2 and summary["kinds"]["uncited_paragraph"] == 2
    assert len(summary["slowest"]) == 5 and all(s["line"] for s in summary["slowest"])
    # 给人看的那一行：中文名，旁边是 id（JSON 的键仍是 id）
    [kinds] = [line for line in result.stderr.splitlines() if line.startswith("  有这种问题的记录（条）：")]
    assert "空回答 empty_answer 2" in kinds and "没有引用 uncited_paragraph 2" in kinds
    for kind, count in summary["kinds"].items():
        assert f"{PROBLEM_KINDS[kind].label} {kind} {count}" in kinds


def test_the_summary_counts_problems_by_kind_beside_the_records_that_have_them(tmp_path):
    """一条回答里三段没有引用：是 3 个问题、1 条记录。--summary 的 problems_by_kind 数问题，kinds 数记录，
    标准错误上两行各自说出数的是什么（以前只有一行“问题按种类”，数的却是记录）。"""
    three_uncited = "家用 NAS 至少选两盘位 [1]。\n\n第一段没有引用。\n\n第二段没有引用。\n\n第三段没有引用。"
    path = tmp_path / "logs.jsonl"
    path.write_text("".join(json.dumps({"answer": answer, "sources": NAS_RECORD_SOURCES}, ensure_ascii=False) + "\n"
                            for answer in (three_uncited, GOOD_ANSWER)), encoding="utf-8")
    summary_path = tmp_path / "summary.json"
    result = run_cli("--verify", str(path), "--json", "--summary", str(summary_path), env=cli_env())
    summary = json.loads(summary_path.read_text(encoding="utf-8"))
    assert summary["problems_by_kind"] == {"uncited_paragraph": 3}
    assert summary["kinds"] == {"uncited_paragraph": 1}
    lines = result.stderr.splitlines()
    assert "  问题按种类（个）：没有引用 uncited_paragraph 3" in lines
    assert "  有这种问题的记录（条）：没有引用 uncited_paragraph 1" in lines


def test_summary_path_must_not_be_the_input_and_needs_verify(tmp_path):
    path = corpus(tmp_path, 3)
    result = run_cli("--verify", str(path), "--summary", str(path), env=cli_env())
    assert result.returncode == 2 and "不能覆盖输入" in result.stderr
    assert run_cli("家用 NAS", "--jobs", "2", env=cli_env()).returncode == 2


def test_stdin_streams_and_stops_at_the_first_bad_line(tmp_path):
    good = json.dumps({"answer": GOOD_ANSWER, "sources": NAS_RECORD_SOURCES}, ensure_ascii=False)
    result = run_cli("--verify", "-", "--json", stdin=f"{good}\n{good}\n{{bad\n{good}\n", env=cli_env())
    assert result.returncode == 2 and "第 3 行不是合法的 JSON" in result.stderr
    assert len(result.stdout.splitlines()) == 2  # 前两行已经输出了：标准输入只能读一遍


def test_a_named_pipe_is_read_once(tmp_path):
    """<(zcat logs.gz) 这样的输入（管道）只能读一遍：一遍读完、一遍核对，不会等第二遍等到天荒地老。"""
    import os
    import threading
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    text = corpus(tmp_path, 5).read_text(encoding="utf-8")

    def feed():
        with open(fifo, "w", encoding="utf-8") as writer:
            writer.write(text)
    threading.Thread(target=feed, daemon=True).start()
    result = run_cli("--verify", str(fifo), "--json", env=cli_env())
    assert result.returncode == 1 and len(result.stdout.splitlines()) == 5


@pytest.mark.slow
def test_no_progress_bar_when_stderr_is_not_a_terminal(tmp_path):
    result = run_cli("--verify", str(corpus(tmp_path, 40)), env=cli_env())
    assert "\r" not in result.stderr and "条/秒" in result.stderr  # 汇总里有速度，但没有进度条的回车


@pytest.mark.slow
def test_progress_bar_on_a_terminal(tmp_path):
    """真正的终端（pty）上的标准错误：进度条照画——标准输出接到文件、用 --json、设了 NO_COLOR 都一样；-q 不画。"""
    import fcntl
    import os
    import pty
    import struct
    import subprocess
    import termios

    from tests.support import HERE, cli_command
    path = corpus(tmp_path, 100)  # tqdm 一开始就画（回车开头）：一百条够看出画没画，五种情况各起一个进程
    cases = [((), {}, True), (("--json",), {}, True), ((), {"NO_COLOR": "1"}, True), (("-q",), {}, False),
             (("--quiet", "--json"), {}, False)]
    for flags, extra, expected in cases:
        leader, follower = pty.openpty()
        # 像真终端一样有宽度（新开的 pty 是 0 列，tqdm 会什么也不画）
        fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
        with open(tmp_path / "checked.jsonl", "wb") as stdout:  # 标准输出是文件，像 README 里的批量用法
            process = subprocess.Popen(cli_command("--verify", str(path), "--jobs", "1", *flags),
                                       env=cli_env(**extra), cwd=HERE, stdin=subprocess.DEVNULL, stdout=stdout,
                                       stderr=follower)
            os.close(follower)
            chunks = []
            while True:
                try:
                    data = os.read(leader, 65536)
                except OSError:
                    break
                if not data:
                    break
                chunks.append(data)
            process.wait(timeout=120)
        os.close(leader)
        stderr = b"".join(chunks).decode("utf-8", "replace")
        redrawn = re.search(r"\r(?!\n)", stderr) is not None  # 回车回到行首重画（终端把 \n 变成 \r\n，不算）
        assert (redrawn and "条/秒" in stderr) is expected, (flags, extra, stderr[-500:])
        assert "100 条" in stderr  # 汇总照样打印，-q 只关进度条
        if "--json" in flags:
            assert len((tmp_path / "checked.jsonl").read_text(encoding="utf-8").splitlines()) == 100


@pytest.mark.slow
def test_dask_spreads_one_file_over_partitions_and_gives_the_verify_records_and_summary(tmp_path):
    pytest.importorskip("distributed")
    from sourced_answers.cli import cluster_command as cluster
    path = corpus(tmp_path, 150, "big.jsonl")  # 大约 600 KB：会被切成好几块，两个 worker 都有活干
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())  # 开头有 BOM：和 --verify 一样去掉
    out = tmp_path / "out"
    code = cluster.main([str(path), "--out", str(out), "--workers", "2", "--summary", str(tmp_path / "dask.json")])
    parts = sorted(out.glob("*.jsonl"))  # 按文件名排序：和 cat out/*.jsonl 接起来的顺序一样
    texts = [part.read_text(encoding="utf-8") for part in parts]
    assert len(parts) >= 2 and all(text.endswith("\n") for text in texts)
    produced = [json.loads(line) for text in texts for line in text.splitlines()]
    result = run_cli("--verify", str(path), "--json", "--jobs", "1", "--summary", str(tmp_path / "verify.json"),
                     env=cli_env())
    assert produced == [json.loads(line) for line in result.stdout.splitlines()]
    assert code == result.returncode == 1

    def comparable(summary):
        return {name: value for name, value in summary.items() if name not in ("seconds", "records_per_second",
                                                                              "slowest")}
    dask_summary = json.loads((tmp_path / "dask.json").read_text(encoding="utf-8"))
    verify_summary = json.loads((tmp_path / "verify.json").read_text(encoding="utf-8"))
    assert set(dask_summary) == set(verify_summary)
    assert comparable(dask_summary) == comparable(verify_summary) and dask_summary["records"] == 150


@pytest.mark.slow
def test_ctrl_c_with_worker_processes_ends_cleanly(tmp_path):
    """--jobs 2 时按 Ctrl-C：退出码 130，一行“已中断”，工作进程不打报错堆栈。"""
    import os
    import signal
    import subprocess

    from tests.support import HERE, cli_command
    path = corpus(tmp_path, 3000)
    process = subprocess.Popen(cli_command("--verify", str(path), "--json", "--jobs", "2"), env=cli_env(), cwd=HERE,
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               start_new_session=True)
    assert process.stdout is not None
    process.stdout.readline()  # 已经在输出了：工作进程在跑
    process.stdout.readline()  # 又核对完一条：正在半路上
    os.killpg(process.pid, signal.SIGINT)  # 和终端里按 Ctrl-C 一样：发给整个进程组
    _, stderr = process.communicate(timeout=30)
    text = stderr.decode("utf-8", "replace")
    assert process.returncode == 130 and "已中断" in text and "Traceback" not in text, text[-800:]


@pytest.mark.parametrize("value, said", [("NaN", "里面有 NaN，它不是 JSON 的值"), ("1e999", "里面的数 1e999 超出了范围")])
def test_nan_or_an_infinite_number_in_a_record_is_named_in_chinese(tmp_path, value, said):
    """NaN、Infinity 不是 JSON；1e999 在程序里是无穷大。以前 json.loads 收下它们，说明是“里面有太长的数字”。"""
    record = json.dumps({"answer": GOOD_ANSWER, "sources": NAS_RECORD_SOURCES}, ensure_ascii=False)
    path = tmp_path / "saved.json"
    path.write_text(record[:-1] + f', "score": {value}}}', encoding="utf-8")
    result = run_cli("--verify", str(path), env=cli_env())
    assert result.returncode == 2 and f"{path} 不是合法的 JSON：{said}" in result.stderr, result.stderr
