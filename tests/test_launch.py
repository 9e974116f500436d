"""每个入口最外的一层（每个入口最先调用的 sourced_answers.catch_signals_while_starting 和 cli/launch.py）：Ctrl-C、SIGTERM、SIGHUP 在启动之后的任何时候
都是退出码 130 和一行“已中断”，没有报错堆栈。

解释器自己的启动（读 site、.pth，编译入口文件）在入口文件的第一行之前，够不着：按时刻发信号的测试先等到入口
文件开头的处理装好了（/proc 里看得到这个进程接住了 SIGTERM），落在那之前的时刻就改在那一刻发。
"""
import ast
import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support import GOOD_ANSWER, HERE, NAS_RECORD_SOURCES, cli_command, cli_env
from tests.test_doors import descendants

LINE = json.dumps({"answer": GOOD_ANSWER, "sources": NAS_RECORD_SOURCES}, ensure_ascii=False)
ENTRY_FILES = ["answer_with_sources.py", "metaso_search.py", "fake_metaso.py", "sourced_answers/__main__.py",
               "sourced_answers/cluster.py", "sourced_answers/local_model.py", "sourced_answers/quickstart.py"]
INSTALLED = Path(sys.executable).with_name("answer-with-sources")  # pip 生成的 answer-with-sources 命令


# ---------- 入口文件开头：只导入包的根（只用标准库），在导入本项目别的模块之前接住信号 ----------

def top_level(path):
    tree = ast.parse((HERE / path).read_text(encoding="utf-8"))
    return [node for node in tree.body if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))]


def imported(node):
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        return [node.module or ""]
    return []


def opening(path):
    """入口文件开头、到装好处理的那个 if 为止的语句（它前面不能有别的）。"""
    body = top_level(path)
    return body[:next(index for index, node in enumerate(body) if isinstance(node, ast.If)) + 1]


GUARD = ast.parse('if __name__ == "__main__":\n    sourced_answers.catch_signals_while_starting()\n').body[0]


@pytest.mark.parametrize("path", ENTRY_FILES)
def test_every_entry_file_catches_the_three_signals_before_any_other_project_import(path):
    """入口文件最先（在导入本项目别的模块之前）：只导入包的根，作为程序运行时调用它接住信号的那个函数。"""
    before = opening(path)
    assert [name for node in before for name in imported(node)] == ["sourced_answers"]
    assert [ast.dump(node) for node in before if not imported(node)] == [ast.dump(GUARD)]
    assert "run(main)" in ast.unparse(top_level(path)[-1]) or path == "sourced_answers/__main__.py"


@pytest.mark.slow
def test_the_package_root_imports_only_what_the_interpreter_loaded_before_the_entry():
    """包的根（sourced_answers/__init__.py）是每个入口在接住信号之前要导入的唯一一个文件：它只导入 _signal、os，
    而它们在解释器启动时就载入了——导入它不会再导入别的模块（多导入一个，按 Ctrl-C 出报错堆栈的那段时间就长一点）。"""
    assert sorted(name for node in top_level("sourced_answers/__init__.py") for name in imported(node)) == \
        ["_signal", "os"]
    probe = "import sys\nbefore = set(sys.modules)\nimport sourced_answers\nprint(sorted(set(sys.modules) - before))"
    done = subprocess.run([sys.executable, "-c", probe], cwd=HERE, env=cli_env(), capture_output=True, text=True,
                          timeout=60)
    assert done.stdout.split() == ["['sourced_answers']"], done.stderr


def test_the_guard_catches_the_three_signals_with_one_handler():
    body = top_level("sourced_answers/__init__.py")
    guard = next(node for node in body if isinstance(node, ast.FunctionDef)
                 and node.name == "catch_signals_while_starting")
    installed = [(ast.unparse(call.args[0]), ast.unparse(call.args[1])) for call in ast.walk(guard)
                 if isinstance(call, ast.Call) and ast.unparse(call.func) == "_signal.signal"]
    assert installed == [("_signal.SIGINT", "interrupted_while_starting"),
                         ("_signal.SIGTERM", "interrupted_while_starting"),
                         ("_signal.SIGHUP", "interrupted_while_starting")]


def test_the_installed_command_catches_the_signals_before_importing_the_rest():
    """装好的命令：pip 的小脚本导入 cli/command.py（它的文件开头只导入包的根），main() 的第一行就接住信号。"""
    body = top_level("sourced_answers/cli/command.py")
    assert [name for node in body for name in imported(node)] == ["sourced_answers"]
    main = next(node for node in body if isinstance(node, ast.FunctionDef) and node.name == "main")
    assert ast.dump(main.body[0]) == ast.dump(GUARD.body[0])


# 导入包的根之后、本项目第一个别的模块的那一刻（信号是在导入进行中到的，不是之前）发出信号，再把入口当作程序运行。
# 包的根（只用标准库，接住信号的函数就在它里面）先导入，不算：python -m 在运行入口之前本来就导入了它，顶层的
# 入口文件第一件事就是导入它（它不导入别的模块，由上面的测试守着）
SIGNAL_AT_THE_FIRST_PROJECT_IMPORT = """
import importlib, runpy, signal, sys
import sourced_answers
entry, number = sys.argv[1], int(sys.argv[2])
PROJECT = {"sourced_answers", "answer_with_sources", "metaso_search", "fake_metaso"}
if entry == "answer-with-sources":
    from sourced_answers.cli.command import main  # pip 生成的小脚本也是先导入它，再调用 main()
elif "." in entry:
    importlib.import_module(entry.rpartition(".")[0])
class SignalAtTheFirstImport:
    def find_spec(self, name, path=None, target=None):
        if name != entry and name.split(".")[0] in PROJECT:
            sys.meta_path.remove(self)
            signal.raise_signal(number)
        return None
sys.meta_path.insert(0, SignalAtTheFirstImport())
if entry == "answer-with-sources":
    main()
runpy.run_module(entry, run_name="__main__", alter_sys=True)
"""
ENTRIES = ["answer_with_sources", "answer-with-sources", "sourced_answers.__main__", "metaso_search", "fake_metaso",
           "sourced_answers.cluster", "sourced_answers.local_model", "sourced_answers.quickstart"]


@pytest.mark.slow
@pytest.mark.parametrize("sent", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=lambda sent: sent.name)
@pytest.mark.parametrize("entry", ENTRIES)
def test_a_signal_at_the_first_project_import_is_130_and_interrupted(entry, sent):
    done = subprocess.run([sys.executable, "-c", SIGNAL_AT_THE_FIRST_PROJECT_IMPORT, entry, str(int(sent))],
                          cwd=HERE, env=cli_env(), capture_output=True, text=True, timeout=60)
    assert done.returncode == 130 and "已中断" in done.stderr and "Traceback" not in done.stderr, done.stderr


@pytest.mark.slow
def test_a_signal_during_import_fails_the_check_when_the_guard_is_missing(tmp_path):
    """上面的测试真的能失败：开头没有那几行的入口在导入期间收到 Ctrl-C，是报错堆栈而不是 130。"""
    (tmp_path / "unguarded.py").write_text("from sourced_answers.cli.launch import run\n\nrun(lambda: 0)\n",
                                           encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", SIGNAL_AT_THE_FIRST_PROJECT_IMPORT, "unguarded",
                           str(int(signal.SIGINT))], cwd=tmp_path, env=cli_env(PYTHONPATH=str(HERE)),
                          capture_output=True, text=True, timeout=60, preexec_fn=ctrl_c_as_in_a_terminal)
    assert done.returncode != 130 and "KeyboardInterrupt" in done.stderr, done.stderr


def ctrl_c_as_in_a_terminal():
    """子进程里 Ctrl-C 回到默认：测试在后台运行时（cmd &、CI 的某些执行器）shell 让整个进程树忽略 SIGINT，
    Python 看到继承来的“忽略”就不装自己的处理，没有守卫的入口也不会有 KeyboardInterrupt，上面的测试就量不到东西。"""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


# ---------- 真的进程：刚启动时按 Ctrl-C，运行中收到 SIGHUP ----------

def caught(pid):
    """这个进程自己接住了哪些信号（/proc/PID/status 的 SigCgt）。"""
    try:
        with open(f"/proc/{pid}/status") as handle:
            mask = next(int(line.split()[1], 16) for line in handle if line.startswith("SigCgt:"))
    except (OSError, StopIteration):
        return set()
    return {number for number in range(1, 65) if mask & (1 << (number - 1))}


def wait_until(condition, seconds=30, what="条件"):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"等了 {seconds} 秒，{what}还没有满足"
        time.sleep(0.001)


@pytest.fixture
def silent_service():
    """一个接连接、从不回答的本机服务（metaso_search.py 会一直等它）。"""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        yield listener


@pytest.fixture
def commands(tmp_path, silent_service):
    """每个入口一条会一直运行下去的命令（等标准输入、等一个不回答的服务、当服务），和它要的环境。"""
    source = tmp_path / "saved.jsonl"
    source.write_text(LINE + "\n", encoding="utf-8")
    metaso = {"METASO_BASE": f"http://127.0.0.1:{silent_service.getsockname()[1]}/api/v1",
              "METASO_API_KEY": "mk-silent-0123456789abcdef"}
    python = [sys.executable]
    return {
        "answer_with_sources.py": (cli_command("--verify", "-", "--json"), {}),
        "python -m sourced_answers": (python + ["-m", "sourced_answers", "--verify", "-", "--json"], {}),
        "answer-with-sources": ([str(INSTALLED), "--verify", "-", "--json"], {}),
        "quickstart": (python + ["-m", "sourced_answers.quickstart", "--verify", "-", "--json"], {}),
        "metaso_search.py": (python + [str(HERE / "metaso_search.py"), "家用 NAS 怎么选"], metaso),
        "fake_metaso.py": (python + [str(HERE / "fake_metaso.py"), "--port", "0"], {}),
        "cluster": (python + ["-m", "sourced_answers.cluster", str(source), "--out", str(tmp_path / "out")], {}),
        "local_model serve": (python + ["-m", "sourced_answers.local_model", "serve"], {}),
    }


def start(commands, name):
    if name == "answer-with-sources" and not INSTALLED.exists():
        pytest.skip(f"没有装好的 answer-with-sources 命令（{INSTALLED}）：bash quickstart.sh --test 会装")
    if name == "cluster":
        pytest.importorskip("distributed")
    if name == "local_model serve":
        from sourced_answers.model.llama_server import server_installed
        if not server_installed():
            pytest.skip("没有安装自带的模型服务：python -m sourced_answers.local_model --install")
    command, extra = commands[name]
    return subprocess.Popen(command, cwd=HERE, env=cli_env(**extra), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)


def ended(process, seconds=60):
    try:
        out, err = process.communicate(timeout=seconds)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        pytest.fail(f"收到信号 {seconds} 秒还没有结束")
    return process.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def wait_for_the_entry_guard(process):
    """入口文件的第一行之前是解释器自己的启动（够不着）：等到入口文件开头的处理装好了（这个进程接住了 SIGTERM）。"""
    wait_until(lambda: signal.SIGTERM in caught(process.pid) or process.poll() is not None, what="入口的处理")
    assert process.poll() is None, ended(process)


ENTRY_COMMANDS = ["answer_with_sources.py", "python -m sourced_answers", "answer-with-sources", "quickstart",
                  "metaso_search.py", "fake_metaso.py", "cluster", "local_model serve"]


@pytest.mark.slow
@pytest.mark.parametrize("name", ENTRY_COMMANDS)
def test_ctrl_c_at_a_random_instant_in_the_first_150_ms_is_130_and_interrupted(commands, name):
    """0–150 毫秒之间随机的一刻按 Ctrl-C（发给整个进程组，像终端那样），五次：每次都是 130、“已中断”、没有堆栈。"""
    for _ in range(5):
        delay = random.uniform(0, 0.15)
        process = start(commands, name)
        instant = time.monotonic() + delay
        wait_for_the_entry_guard(process)  # 落在它之前的时刻改在它装好的那一刻
        time.sleep(max(0.0, instant - time.monotonic()))
        os.killpg(process.pid, signal.SIGINT)
        code, _, err = ended(process)
        assert code == 130 and "已中断" in err and "Traceback" not in err, (f"{delay * 1000:.0f} 毫秒", code, err[-1500:])


def first_line(stream, seconds=60):
    """从管道读一行，最多等 seconds 秒（进程结束了就是空的）。"""
    import selectors
    with selectors.DefaultSelector() as selector:
        selector.register(stream, selectors.EVENT_READ)
        assert selector.select(seconds), f"{seconds} 秒没有输出"
    return stream.readline().decode("utf-8", "replace")


def working(process, name, silent_service):
    """等到这个入口已经在干它的活（导入、启动都过去了）。返回要留到最后的东西（metaso_search.py 等着的那个连接）。"""
    if name in ("answer_with_sources.py", "python -m sourced_answers", "answer-with-sources", "quickstart"):
        process.stdin.write((LINE + "\n").encode("utf-8"))
        process.stdin.flush()
        assert json.loads(first_line(process.stdout))["passed"] is True  # 核对完第一条，正在等下一条
    elif name == "metaso_search.py":
        silent_service.settimeout(60)
        connection, _ = silent_service.accept()  # 请求发出来了，它在等回答
        return connection
    elif name == "fake_metaso.py":
        assert "模拟秘塔服务已启动" in first_line(process.stderr)
    elif name == "local_model serve":
        assert "本机模型服务在 http://127.0.0.1:" in first_line(process.stdout, 180)
    return None


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.slow
@pytest.mark.parametrize("name", ["python -m sourced_answers", "answer-with-sources", "quickstart", "metaso_search.py",
                                  "fake_metaso.py", "local_model serve"])
def test_sighup_while_working_ends_each_entry_like_sigterm(commands, silent_service, name):
    """终端关了、ssh 断了（SIGHUP）：和 SIGTERM 一样收尾——130、“已中断”、没有堆栈，自带模型的 llama.cpp 也停了。
    （主命令的回答、--serve、--mcp、Dask 任务的 SIGHUP 在 test_faults、test_openai_server、test_mcp_server、
    test_dask_job、test_doors 里，和它们的 SIGTERM 测试在一起。）"""
    process = start(commands, name)
    waiting = working(process, name, silent_service)
    children = descendants(process.pid)  # 自带模型的 llama.cpp 子进程在它自己的会话里，也算
    assert children or name != "local_model serve"
    process.send_signal(signal.SIGHUP)
    code, _, err = ended(process, 30)
    assert code == 130 and err.rstrip().endswith("已中断") and "Traceback" not in err, (code, err[-1500:])
    wait_until(lambda: not any(alive(pid) for pid in children), 15, "子进程都结束")
    if waiting is not None:
        waiting.close()


NOHUP = "import os, signal, sys; signal.signal(signal.SIGHUP, signal.SIG_IGN); os.execv(sys.argv[1], sys.argv[1:])"


@pytest.mark.slow
def test_sighup_ignored_by_nohup_stays_ignored(commands):
    """nohup 启动的（SIGHUP 被忽略）：终端关了也照样做下去，SIGTERM 还是 130。"""
    command, _ = commands["answer_with_sources.py"]
    process = subprocess.Popen([sys.executable, "-c", NOHUP, *command], cwd=HERE, env=cli_env(),
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process.stdin.write((LINE + "\n").encode("utf-8"))
    process.stdin.flush()
    assert json.loads(first_line(process.stdout))["passed"] is True
    process.send_signal(signal.SIGHUP)
    process.stdin.write((LINE + "\n").encode("utf-8"))
    process.stdin.flush()
    assert json.loads(first_line(process.stdout))["passed"] is True  # 第二条照样核对：SIGHUP 没有让它结束
    process.send_signal(signal.SIGTERM)
    code, _, err = ended(process, 30)
    assert code == 130 and "已中断" in err and "Traceback" not in err, err
