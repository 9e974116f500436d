"""Ctrl-C 的 KeyboardInterrupt 落在主线程里某个对象的 __del__ 里：Python 把它吞掉，只打一段英文的“Exception ignored
in …”。Dask 收尾时常这样（整批核对的 Ctrl-C 测试偶尔见到：按了 Ctrl-C，任务照样做完，退出码 1，还有英文堆栈）。
core/interrupts 记下收到过，做事的循环和入口再看一次：照样“已中断”、130，没有英文。"""
import subprocess
import sys

import pytest

from sourced_answers.core import interrupts
from tests.support import HERE

SWALLOWED = """
import os, signal, time
from sourced_answers.cli.launch import run

class Finalised:
    def __del__(self):
        os.kill(os.getpid(), signal.SIGINT)  # 信号在 __del__ 里被处理：它抛的 KeyboardInterrupt 被 Python 吞掉
        time.sleep(0.5)

def main():
    Finalised()
    print("做完了", flush=True)
    return 0

run(main)
"""


def test_an_interrupt_swallowed_by_a_finalizer_is_remembered_and_raised_again(monkeypatch, capsys):
    monkeypatch.setattr(interrupts, "RECEIVED", [])
    monkeypatch.setattr(sys, "unraisablehook", interrupts.quiet_unraisable)

    class Finalised:
        def __del__(self):
            interrupts.interrupt(2, None)

    Finalised()
    assert interrupts.interrupted()
    with pytest.raises(KeyboardInterrupt):
        interrupts.stop_if_interrupted()
    assert "Exception ignored" not in capsys.readouterr().err


@pytest.mark.slow
def test_the_entry_ends_with_130_when_the_interrupt_was_swallowed(tmp_path):
    script = tmp_path / "swallowed.py"
    script.write_text(SWALLOWED, encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], cwd=HERE, env={"PYTHONPATH": str(HERE), "PATH": "/usr/bin"},
                          capture_output=True, text=True, encoding="utf-8", timeout=60)
    assert done.returncode == 130, done.stderr
    assert "已中断" in done.stderr and "Exception ignored" not in done.stderr and "Traceback" not in done.stderr


HANDLED = """
import os, signal, time
from sourced_answers.cli.launch import run
from sourced_answers.core.errors import exit_code_of
from sourced_answers.cli.launch import print_error

def main():
    try:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)
    except KeyboardInterrupt as ending:  # 和每个入口的 main 一样：自己接住，说“已中断”，返回 130
        return exit_code_of(ending, print_error)
    return 0

run(main)
"""


@pytest.mark.slow
def test_an_interrupt_the_main_already_reported_is_said_once(tmp_path):
    """main 自己接住 Ctrl-C、已经说过“已中断”并返回 130 时，入口不再说一遍（扫一遍 --docs 时看到它说了两遍）。"""
    script = tmp_path / "handled.py"
    script.write_text(HANDLED, encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], cwd=HERE, env={"PYTHONPATH": str(HERE), "PATH": "/usr/bin"},
                          capture_output=True, text=True, encoding="utf-8", timeout=60)
    assert done.returncode == 130, done.stderr
    assert done.stderr.count("已中断") == 1, done.stderr
