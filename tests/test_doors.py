"""每一扇门都守同样的规矩（规矩只写在一处，每个入口都经过它）：一个写文件的地方、一个读 JSON Lines 的地方、每个入口的最后一道防线，
以及 Dask 任务的参数。随机生成的输入在 test_fuzz.py 里；这里是一类一类写出来的例子。"""
import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time

import pytest

from tests.support import GOOD_ANSWER, HERE, NAS_RECORD_SOURCES, cli_command, cli_env, run_cli

LINE = json.dumps({"answer": GOOD_ANSWER, "sources": NAS_RECORD_SOURCES}, ensure_ascii=False)


def saved(tmp_path, count=1, name="saved.jsonl"):
    path = tmp_path / name
    path.write_text("\n".join([LINE] * count) + "\n", encoding="utf-8")
    return path


def shell(command, tmp_path, timeout=60):
    return subprocess.run(["bash", "-c", command], cwd=tmp_path, env=cli_env(), capture_output=True, text=True,
                          timeout=timeout)


def cli(*args):
    return " ".join(f"'{part}'" for part in cli_command(*args))


# ---------- 一个写文件的地方 ----------

@pytest.mark.slow
def test_summary_onto_stdout_redirected_to_a_file_is_refused_before_printing(tmp_path):
    saved(tmp_path, 3)
    done = shell(f"{cli('--verify', 'saved.jsonl', '--json', '--summary', '/dev/stdout')} > out.jsonl", tmp_path)
    assert done.returncode == 2 and "标准输出" in done.stderr and "Traceback" not in done.stderr
    assert (tmp_path / "out.jsonl").read_text(encoding="utf-8") == ""


@pytest.mark.slow
def test_summary_onto_stdin_redirected_from_the_input_is_refused(tmp_path):
    path = saved(tmp_path, 3)
    before = path.read_bytes()
    done = shell(f"{cli('--verify', '-', '--summary', '/dev/stdin')} < saved.jsonl", tmp_path)
    assert done.returncode == 2 and "标准输入" in done.stderr
    assert path.read_bytes() == before


@pytest.mark.parametrize("make", ["fifo", "link-to-fifo", "device", "directory", "slash", "link-to-page",
                                  "hard-link-to-page", "link", "missing-folder", "input"])
def test_the_writer_refuses_what_it_must_not_write(tmp_path, make):
    path = saved(tmp_path)
    target = tmp_path / "summary.json"
    page = tmp_path / "page.html"
    page.write_text("旧的审阅页", encoding="utf-8")
    if make == "fifo":
        os.mkfifo(target)
    elif make == "link-to-fifo":
        os.mkfifo(tmp_path / "pipe")
        target.symlink_to(tmp_path / "pipe")
    elif make == "device":
        target = "/dev/null"
    elif make == "directory":
        target = tmp_path
    elif make == "slash":
        target = str(tmp_path / "nodir") + "/"
    elif make == "link-to-page":
        target.symlink_to(page)
    elif make == "hard-link-to-page":
        os.link(page, target)
    elif make == "link":
        (tmp_path / "precious.json").write_text("别动我", encoding="utf-8")
        target.symlink_to(tmp_path / "precious.json")
    elif make == "missing-folder":
        target = tmp_path / "missing" / "summary.json"
    elif make == "input":
        target = path
    result = run_cli("--verify", str(path), "--summary", str(target), "--html", str(page), env=cli_env())
    assert result.returncode == 2 and result.stdout == "" and "写不了汇总" in result.stderr, result.stderr
    assert page.read_text(encoding="utf-8") == "旧的审阅页"
    assert not (tmp_path / "nodir").exists()
    if make == "link":
        assert (tmp_path / "precious.json").read_text(encoding="utf-8") == "别动我"


def test_the_writer_replaces_a_file_whole_and_keeps_its_permissions(tmp_path):
    path = saved(tmp_path)
    summary = tmp_path / "summary.json"
    summary.write_text("旧的", encoding="utf-8")
    summary.chmod(0o640)
    assert run_cli("--verify", str(path), "--summary", str(summary), env=cli_env()).returncode == 0
    assert json.loads(summary.read_text(encoding="utf-8"))["records"] == 1
    assert summary.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["saved.jsonl", "summary.json"]  # 没有留下临时文件


# ---------- 一个读 JSON Lines 的地方 ----------

def test_crlf_lines_read_like_lf_lines(tmp_path):
    lf = run_cli("--verify", "-", "--json", env=cli_env(), stdin=LINE + "\n" + LINE + "\n")
    crlf = run_cli("--verify", "-", "--json", env=cli_env(), stdin=LINE + "\r\n" + LINE + "\r\n")
    assert lf.returncode == crlf.returncode == 0 and lf.stdout == crlf.stdout


def test_a_bare_cr_is_not_a_line_end(tmp_path):
    result = run_cli("--verify", "-", "--json", env=cli_env(), stdin=LINE + "\r" + LINE + "\r")
    assert result.returncode == 2 and "第 1 行" in result.stderr and result.stdout == ""


def test_u2028_inside_a_json_string_is_text(tmp_path):
    line = json.dumps({"answer": "家用 NAS 至少选两盘位，\u2028方便做 RAID1 镜像 [1]。", "sources": NAS_RECORD_SOURCES},
                      ensure_ascii=False)
    result = run_cli("--verify", "-", "--json", env=cli_env(), stdin=line + "\n" + line + "\n")
    assert result.returncode == 0 and len(result.stdout.split("\n")) == 3


def test_a_line_past_the_record_limit_is_named(tmp_path):
    from sourced_answers.outputs.json_lines import MAX_RECORD_BYTES
    path = tmp_path / "huge.jsonl"
    path.write_bytes(LINE.encode() + b"\n" + b"x" * (MAX_RECORD_BYTES + 10) + b"\n")
    result = run_cli("--verify", str(path), "--json", env=cli_env())
    assert result.returncode == 2 and "第 2 行太长" in result.stderr and result.stdout == ""


def test_dev_zero_is_a_clear_error_not_a_memory_error():
    result = run_cli("--verify", "/dev/zero", "--json", env=cli_env())
    assert result.returncode == 2 and "第 1 行" in result.stderr


@pytest.mark.slow
def test_bad_bytes_on_a_stream_give_the_same_output_with_any_number_of_jobs():
    good = (LINE + "\n") * 300
    stream = good.encode() + b"\xff\xfe not utf-8\n" + (LINE + "\n").encode() * 5
    results = []
    for jobs in ("1", "2"):
        done = subprocess.run(cli_command("--verify", "-", "--json", "--jobs", jobs), input=stream, cwd=HERE,
                              env=cli_env(), capture_output=True, timeout=120)
        results.append(done)
    one, two = results
    assert one.returncode == two.returncode == 2 and one.stdout == two.stdout
    assert one.stdout.count(b"\n") == 300 and "第 301 行不是 UTF-8" in two.stderr.decode()


@pytest.mark.slow
def test_a_stream_that_stays_open_gets_each_verdict_before_the_next_line_is_sent():
    """按事件的先后判断，不按墙上时间：每写一行就等它的结论，下一行要等结论到了才写，输入一直不关。
    程序要是攒够一批或者等输入结束才写结论，这里就等不到（60 秒只是防止测试卡死的上限，机器再忙也远远够用）。"""
    process = subprocess.Popen(cli_command("--verify", "-", "--json", "--jobs", "2"), cwd=HERE, env=cli_env(),
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    lines: queue.Queue[bytes] = queue.Queue()
    try:
        assert process.stdin is not None and process.stdout is not None
        threading.Thread(target=lambda: [lines.put(line) for line in process.stdout], daemon=True).start()
        for sent in range(1, 4):
            process.stdin.write((LINE + "\n").encode())
            process.stdin.flush()
            try:
                line = lines.get(timeout=60)
            except queue.Empty:
                pytest.fail(f"写了第 {sent} 行、输入还开着，它的结论一直没有来")
            assert json.loads(line)["passed"] is True
        assert process.poll() is None  # 三个结论都在输入结束之前到了
    finally:
        process.kill()
        process.wait()


@pytest.mark.slow
@pytest.mark.parametrize("sent", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=["SIGINT", "SIGTERM", "SIGHUP"])
def test_a_signal_while_a_stream_waits_for_more_input_with_workers_is_130(sent):
    """tail -f … | --verify - --jobs 2 在等下一行时被打断：读标准输入的守护线程正卡在 read 上，解释器退出时
    不能因为它而“Fatal Python error”、退出码 -6（以前十次里有七次这样）。"""
    for _ in range(5):
        process = subprocess.Popen(cli_command("--verify", "-", "--json", "--jobs", "2"), cwd=HERE, env=cli_env(),
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write((LINE + "\n").encode())
        process.stdin.flush()
        assert json.loads(process.stdout.readline())["passed"] is True  # 核对完第一条，在等下一条
        process.send_signal(sent)
        _, err = process.communicate(timeout=30)
        text = err.decode("utf-8", "replace")
        assert process.returncode == 130 and "已中断" in text and "Fatal" not in text, text[-800:]


def descendants(pid):
    """一个进程的全部子孙进程（读 /proc）。"""
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    parent = int(handle.read().rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
            children.setdefault(parent, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


@pytest.mark.slow
def test_a_killed_worker_ends_the_run_with_exit_3_and_keeps_what_was_checked(tmp_path):
    path = saved(tmp_path, 20000)
    process = subprocess.Popen(cli_command("--verify", str(path), "--json", "--jobs", "2"), cwd=HERE, env=cli_env(),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None
    process.stdout.readline()  # 已经在输出了：工作进程在跑
    workers = descendants(process.pid)
    assert workers
    os.kill(workers[-1], signal.SIGKILL)  # 像内存不够时被系统结束那样
    out, err = process.communicate(timeout=30)
    assert process.returncode == 3 and "工作进程意外结束了" in err.decode() and "Traceback" not in err.decode()
    assert out.count(b"\n") >= 1


@pytest.mark.slow
def test_ctrl_c_while_the_workers_are_still_starting_prints_no_traceback(tmp_path):
    """工作进程刚启动、还在导入模块时按 Ctrl-C（终端把它发给整个进程组）：只有主进程的“已中断”。"""
    path = saved(tmp_path, 3000)
    for _ in range(3):
        process = subprocess.Popen(cli_command("--verify", str(path), "--json", "--jobs", "2"), cwd=HERE,
                                   env=cli_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                   start_new_session=True)
        deadline = time.monotonic() + 30
        while not descendants(process.pid) and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        os.killpg(process.pid, signal.SIGINT)
        _, err = process.communicate(timeout=30)
        text = err.decode("utf-8", "replace")
        assert process.returncode == 130 and "Traceback" not in text and "Exception" not in text, text[-800:]
        assert not descendants(process.pid)


@pytest.mark.slow
def test_output_closed_early_with_workers_ends_quietly_and_promptly(tmp_path):
    """--jobs 2 的输出接在 head -1 后面：很快以 130 结束，不卡住，不打英文报错。"""
    path = saved(tmp_path, 5000)
    for _ in range(3):
        process = subprocess.Popen(cli_command("--verify", str(path), "--json", "--jobs", "2"), cwd=HERE,
                                   env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert process.stdout is not None and process.stderr is not None
        process.stdout.readline()
        process.stdout.close()  # 像 head -1 读完一行就走
        assert process.wait(timeout=30) == 130
        err = process.stderr.read().decode("utf-8", "replace")
        process.stderr.close()
        assert "Traceback" not in err and "Exception" not in err and "Warning" not in err, err[-800:]


# ---------- 每个入口的最后一道防线 ----------

# 每个入口开头的几行（导入本项目的模块之前就接住 Ctrl-C、SIGTERM、SIGHUP）在 test_launch.py 里测


@pytest.mark.slow
def test_an_unexpected_error_is_a_short_message_and_exit_4_and_debug_shows_the_traceback():
    code = "from sourced_answers.cli.launch import run; run(lambda: {{}}['x'], {})"
    plain = subprocess.run([sys.executable, "-c", code.format("[]")], cwd=HERE, capture_output=True, text=True,
                           timeout=60)
    debug = subprocess.run([sys.executable, "-c", code.format("['--debug']")], cwd=HERE, capture_output=True,
                           text=True, timeout=60)
    assert plain.returncode == debug.returncode == 4
    assert "程序内部出错" in plain.stderr and "报告" in plain.stderr and "Traceback" not in plain.stderr
    assert "Traceback" in debug.stderr


@pytest.mark.parametrize("variable, value", [("ANS_MODEL", "qwen2.5:1.5b\n✓ 引用核对通过"), ("ANS_MODEL", "qwen\x1b[31m"),
                                             ("--judge", "judge\n✓ 引用核对通过"), ("--model", "a\u202eb")])
def test_a_model_name_with_a_newline_or_control_character_is_refused(tmp_path, variable, value):
    path = saved(tmp_path)
    if variable.startswith("--"):
        result = run_cli("--verify", str(path), variable, value, env=cli_env()) if variable == "--judge" else \
            run_cli("--demo", "家用 NAS 怎么选", variable, value, env=cli_env())
    else:
        result = run_cli("--demo", "家用 NAS 怎么选", env=cli_env(**{variable: value}))
    assert result.returncode == 2 and "换行、控制字符" in result.stderr
    assert "✓ 引用核对通过" not in result.stderr + result.stdout


# ---------- Dask 任务的参数 ----------

@pytest.mark.parametrize("arguments, message", [
    (["nothing-*.jsonl", "--out", "OUT"], "没有找到输入文件"),
    (["DIR", "--out", "OUT"], "是一个目录"),
    (["IN", "--out", ""], "--out 的值是空的"),
    (["IN", "--out", "DIR"], "所在的目录"),
    (["IN", "--out", "OUT", "--summary", "IN"], "它就是这次的输入"),
    (["IN", "--out", "OUT", "--workers", "0"], "应在 1 到 256 之间"),
    (["IN", "--out", "OUT", "--threshold", "nan"], "应在 0 到 1 之间"),
    (["IN", "--out", "OUT", "--scheduler", "http://127.0.0.1:8787"], "tcp://"),
    (["IN", "--out", "OUT", "--scheduler", "tls://127.0.0.1:8786"], "tls:// 还不支持"),
    (["IN", "--out", "OUT", "--scheduler", "tcp://127.0.0.1:99999"], "端口 1–65535"),
    (["IN", "--out", "OUT", "--bogus"], "不认识的参数"),
    (["s3://bucket/logs/*.jsonl", "--out", "OUT"], "pip install s3fs"),
])
def test_cluster_arguments_are_checked_in_chinese_before_any_work(tmp_path, capsys, arguments, message):
    pytest.importorskip("distributed")
    from sourced_answers.cli import cluster_command as cluster
    folder = tmp_path / "logs"
    folder.mkdir()
    source = saved(folder, 2, "in.jsonl")
    names = {"IN": str(source), "DIR": str(folder), "OUT": str(tmp_path / "out")}
    code = cluster.main([names.get(argument, argument.replace("nothing-", str(folder) + "/nothing-"))
                         for argument in arguments])
    err = capsys.readouterr().err
    assert code == 2 and message in err, err
    assert not re.search(r"[A-Za-z]{3,} [a-z]{3,} [a-z]{3,}", err.replace("pip install", "")), err  # 没有夹着英文句子
    assert source.read_text(encoding="utf-8").count("\n") == 2 and not (tmp_path / "out").exists()


@pytest.mark.parametrize("kind, message", [
    ("device", "/dev/zero 是一个设备，不是普通文件"),
    ("fifo", "是一个命名管道（FIFO），不是普通文件"),
    ("loop", "符号链接绕成了圈"),
    ("fifo-glob", "是一个命名管道（FIFO），不是普通文件"),
])
def test_cluster_inputs_that_exist_but_are_not_files_say_what_they_are(tmp_path, capsys, kind, message):
    """集群按字节把输入切成块、交给各个 worker 去读：只能是普通文件。存在、却不是普通文件的输入不是“没有找到”，
    说出它是什么；命名管道不打开（没有写的一方时打开它会一直等）。"""
    pytest.importorskip("distributed")
    from sourced_answers.cli import cluster_command as cluster
    fifo = tmp_path / "answers.jsonl"
    os.mkfifo(fifo)
    loop = tmp_path / "loop.jsonl"
    loop.symlink_to(loop)
    path = {"device": "/dev/zero", "fifo": str(fifo), "loop": str(loop), "fifo-glob": str(tmp_path / "*.jsonl")}[kind]
    if kind == "fifo-glob":
        loop.unlink()
    code = cluster.main([path, "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "没有找到" not in err, err
    named = "/dev/zero" if kind == "device" else str(fifo if "fifo" in kind else loop)
    assert named in err and not (tmp_path / "out").exists()


@pytest.mark.slow
def test_cluster_bad_lines_are_recorded_and_an_unreachable_scheduler_is_exit_3(tmp_path, capsys, monkeypatch):
    pytest.importorskip("distributed")
    from sourced_answers.batch import dask_scheduler
    from sourced_answers.cli import cluster_command as cluster
    # 连不上的调度器只等 0.2 秒就放弃（平常等 10 秒；Dask 在这段时间里一直重试）：要看的是怎样报错，不是等多久
    monkeypatch.setattr(dask_scheduler, "CONNECT_SECONDS", 0.2)
    folder = tmp_path / "logs"
    folder.mkdir()
    path = folder / "in.jsonl"
    path.write_bytes(LINE.encode() + b"\n" + "坏行".encode("gbk") + b"\n{\n" + LINE.encode() + b"\n")
    code = cluster.main([str(path), "--out", str(tmp_path / "out"), "--workers", "1"])
    lines = (tmp_path / "out" / "00000.jsonl").read_text(encoding="utf-8").splitlines()
    assert code == 2 and [("error" in json.loads(line)) for line in lines] == [False, True, True, False]
    assert [json.loads(line).get("line") for line in lines[1:3]] == [2, 3]
    started = time.monotonic()
    code = cluster.main([str(path), "--out", str(tmp_path / "out2"), "--scheduler", "tcp://127.0.0.1:9"])
    err = capsys.readouterr().err
    assert code == 3 and "连不上 Dask 调度器" in err and "Timed out" not in err and time.monotonic() - started < 30
    assert not (tmp_path / "out2").exists()  # 连不上调度器：不留下一个空的结果目录


@pytest.mark.slow
def test_cluster_results_and_summary_mask_every_key_in_the_environment(tmp_path, monkeypatch):
    """Dask 任务不发任何密钥，可环境里的密钥出现在日志里时，结果和汇总里一样遮掉（和 --verify 同一条规矩）。"""
    pytest.importorskip("distributed")
    from sourced_answers.cli import cluster_command as cluster
    key = "sk-cluster-key-12345"
    monkeypatch.setenv("ANS_API_KEY", key)
    path = tmp_path / "in.jsonl"
    record = {"answer": f"把密钥 {key} 写进配置文件 [1]。", "sources": [{"text": f"把密钥 {key} 写进配置文件。"}]}
    path.write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    code = cluster.main([str(path), "--out", str(tmp_path / "out"), "--workers", "1",
                         "--summary", str(tmp_path / f"summary-{key}.json")])
    results = (tmp_path / "out" / "00000.jsonl").read_text(encoding="utf-8")
    assert code in (0, 1) and key not in results and "mk-***" in json.loads(results)["answer"]


@pytest.mark.slow
def test_cluster_survives_a_lone_surrogate_and_an_unwritable_summary(tmp_path, capsys, monkeypatch):
    """JSON 里的 \\ud800 不让写结果出错；汇总写不进去是退出码 2 的说明，结果文件照样写好。"""
    pytest.importorskip("distributed")
    from sourced_answers.cli import cluster_command as cluster
    from sourced_answers.core import output_files
    folder = tmp_path / "logs"
    folder.mkdir()
    path = folder / "in.jsonl"
    path.write_text(LINE + "\n" + LINE.replace("家用", "家用\\ud800", 1) + "\n", encoding="utf-8")
    summary = tmp_path / "summary.json"
    real_replace = output_files.os.replace

    def refuse_summary(source, target):
        if str(target) == str(summary):
            raise PermissionError(13, "Permission denied")
        real_replace(source, target)

    monkeypatch.setattr(output_files.os, "replace", refuse_summary)
    code = cluster.main([str(path), "--out", str(tmp_path / "out"), "--workers", "1", "--summary", str(summary)])
    err = capsys.readouterr().err
    assert code == 2 and "写不了汇总" in err and "内部出错" not in err, err
    lines = (tmp_path / "out" / "00000.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2 and "\ufffd" in json.loads(lines[1])["answer"] and not summary.exists()


@pytest.mark.slow
@pytest.mark.parametrize("sent", [signal.SIGINT, signal.SIGHUP], ids=["Ctrl-C", "SIGHUP"])
def test_ctrl_c_or_sighup_on_a_cluster_job_ends_it_quietly_and_leaves_no_processes(tmp_path, sent):
    """终端里按 Ctrl-C，或者关掉终端（SIGHUP）：都发给前台的整个进程组。"""
    pytest.importorskip("distributed")
    path = saved(tmp_path, 20000)
    process = subprocess.Popen([sys.executable, "-m", "sourced_answers.cluster", str(path), "--out",
                                str(tmp_path / "out")], cwd=HERE, env=cli_env(), stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, start_new_session=True)
    out = tmp_path / "out"
    deadline = time.monotonic() + 60
    while not (out / "_manifest.json").exists():  # 集群起来了、连上了、分好了块：任务在算
        assert process.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    family = descendants(process.pid)  # 集群进程和两个 worker
    assert len(family) >= 3, family
    os.killpg(process.pid, sent)
    _, err = process.communicate(timeout=60)
    text = err.decode("utf-8", "replace")
    assert process.returncode == 130 and "已中断" in text, text[-800:]
    assert "Traceback" not in text and "WARNING" not in text and "Exception" not in text, text[-800:]
    deadline = time.monotonic() + 15
    while [pid for pid in family if os.path.exists(f"/proc/{pid}") and not zombie(pid)]:
        assert time.monotonic() < deadline, "集群的进程还在"
        time.sleep(0.05)
    if out.exists():  # 写好了几块：清单只记它们
        manifest = json.loads((out / "_manifest.json").read_text(encoding="utf-8"))
        assert manifest["files"] == sorted(path.name for path in out.glob("*.jsonl")), manifest


def zombie(pid):
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


@pytest.mark.slow
def test_local_model_has_a_chinese_help_and_chinese_errors():
    help_text = subprocess.run([sys.executable, "-m", "sourced_answers.local_model", "--help"], cwd=HERE,
                               capture_output=True, text=True, timeout=60)
    wrong = subprocess.run([sys.executable, "-m", "sourced_answers.local_model", "serve", "--threads", "x"], cwd=HERE,
                           capture_output=True, text=True, timeout=60)
    assert help_text.returncode == 0 and "install" in help_text.stdout and "serve" in help_text.stdout
    assert wrong.returncode == 2 and "不是整数" in wrong.stderr and "Traceback" not in wrong.stderr
