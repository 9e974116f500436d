"""装成一个包：pyproject.toml 和 requirements.txt 说的是同一份依赖；pip install . 之后的 answer-with-sources
命令在别的目录里也能用（--demo、--verify）。"""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

from sourced_answers.model import llama_server
from tests.across_workers import once, session_folder
from tests.support import GOOD_ANSWER, HERE, NAS_RECORD_SOURCES, cli_env

PYPROJECT = tomllib.loads((HERE / "pyproject.toml").read_text(encoding="utf-8"))


def requirement_lines(path: Path) -> list[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]


def test_requirements_txt_is_the_runtime_list_of_pyproject():
    assert requirement_lines(HERE / "requirements.txt") == PYPROJECT["project"]["dependencies"]


def test_bundled_model_extra_pins_the_server_that_local_model_installs():
    assert llama_server.SERVER_REQUIREMENT in PYPROJECT["project"]["optional-dependencies"]["model"]


def test_the_test_command_installs_every_extra_and_the_development_docs_name_each():
    """quickstart.sh --test 装 pyproject 的每一组附加依赖；docs/development.md 说装了几组、是哪几组，和它一样。"""
    import re
    script = (HERE / "quickstart.sh").read_text(encoding="utf-8")
    installed = re.search(r"pip_install -e '\.\[([\w,]+)\]'", script).group(1).split(",")
    assert sorted(installed) == sorted(PYPROJECT["project"]["optional-dependencies"])
    docs = (HERE / "docs" / "development.md").read_text(encoding="utf-8")
    paragraph = re.search(r"`--test` 在 `\.venv` 里.*?。", docs, re.S).group(0)
    count = "一两三四五六"[len(installed) - 1]
    assert f"{count}组附加依赖" in paragraph and all(f"`{name}`" in paragraph for name in installed), paragraph
    assert re.search(rf"带 {'、'.join(installed[:-1])} 和 {installed[-1]} {count}组附加依赖", script)


def test_every_subpackage_goes_into_the_installed_package():
    """pyproject 的 packages 列出 sourced_answers 下的每一个子包：漏了一个，装好的命令一用到它就 ModuleNotFoundError。"""
    listed = PYPROJECT["tool"]["setuptools"]["packages"]
    found = sorted("sourced_answers" + ("." + path.parent.name if path.parent.name != "sourced_answers" else "")
                   for path in (HERE / "sourced_answers").glob("**/__init__.py"))
    assert sorted(listed) == found


def test_console_command_points_at_the_entry_point():
    assert PYPROJECT["project"]["scripts"]["answer-with-sources"] == "sourced_answers.cli.command:main"


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """把本项目装进一个临时目录（不联网：用当前环境里的 setuptools 构建，不装依赖）。构建、pip install 要好几秒：
    一次测试会话只装一次，几个 xdist 进程共用这一份（tests/across_workers.py）。"""
    return Path(once(session_folder(tmp_path_factory), "installed_package", lambda: str(install(tmp_path_factory))))


def install(tmp_path_factory):
    """从一份复制出来的源码构建：setuptools 会在源码旁边写 build/，不能写进仓库。"""
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md", "answer_with_sources.py", "metaso_search.py", "fake_metaso.py"):
        shutil.copy(HERE / name, source / name)
    shutil.copytree(HERE / "sourced_answers", source / "sourced_answers",
                    ignore=shutil.ignore_patterns("__pycache__"))
    target = tmp_path_factory.mktemp("site")
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                           "--no-index", "--disable-pip-version-check", "--target", str(target), str(source)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return target


def run_installed(installed, tmp_path, *args, env):
    """在另一个目录里运行装好的命令：只看得见装好的那一份，看不见仓库里的代码。"""
    env = dict(env, PYTHONPATH=str(installed))
    return subprocess.run([str(installed / "bin" / "answer-with-sources"), *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, encoding="utf-8", timeout=120, stdin=subprocess.DEVNULL)


@pytest.mark.slow
def test_installed_command_verifies_a_saved_answer_from_another_directory(installed, tmp_path):
    saved = tmp_path / "saved.json"
    saved.write_text(json.dumps({"answer": GOOD_ANSWER, "sources": NAS_RECORD_SOURCES}, ensure_ascii=False),
                     encoding="utf-8")
    result = run_installed(installed, tmp_path, "--verify", "saved.json", env=cli_env())
    assert result.returncode == 0, result.stderr
    assert "✓ 引用核对通过" in result.stdout
    assert not (tmp_path / "sourced_answers").exists() and os.listdir(tmp_path) == ["saved.json"]


@pytest.mark.slow
def test_installed_command_answers_with_the_demo_from_another_directory(installed, tmp_path, model_server):
    result = run_installed(installed, tmp_path, "--demo", "家用 NAS 怎么选", "--json",
                           env=cli_env(None, model_server, ANS_MODEL="good"))
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)
    assert record["passed"] and len(record["sources"]) == 5
    assert "模拟秘塔服务" in result.stderr
