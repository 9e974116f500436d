"""启动是每条命令的一部分：--help、--version 和 --verify 一条记录各导入了哪些模块。

每个 --verify、每个 --jobs 的工作进程、每个 Dask 任务进程和每次 --mcp 都要付一次启动。只有一条路要的模块在走那条路时
才导入（cli/run.py）：这几条命令不导入搜索、模型客户端、HTTP、服务、评判和审阅页。这里真的起进程（python -X importtime
写出导入的每一个模块），只断言导入了哪些模块，不断言用时（CI 的机器很忙）；用时由 bench/benchmark_startup.py 并排量。
"""
import subprocess
import sys

import pytest

from tests.support import HERE, cli_env

pytestmark = pytest.mark.slow

RECORD = '{"answer": "RAID1 用两块盘互为镜像 [1]。", "sources": [{"text": "RAID1 用两块盘互为镜像，一块坏了数据还在。"}]}\n'

# 这三条命令都不该导入的（包名包括它下面的每一个模块）：HTTP 客户端和服务、秘塔和它的缓存、模型客户端和提示词、
# --local-model、回答问题的整条流程、两个服务、Python API、--eval、评判、改写、审阅页、进度条、Dask、工作进程的管道
NEVER = (
    "requests", "urllib3", "http.client", "http.server", "sqlite3", "tqdm", "dask", "distributed", "starlette",
    "uvicorn", "mcp", "concurrent.futures", "multiprocessing.connection",
    "sourced_answers.search", "sourced_answers.api", "sourced_answers.servers", "sourced_answers.model.model_client",
    "sourced_answers.model.prompts", "sourced_answers.model.local_serving", "sourced_answers.model.llama_server",
    "sourced_answers.cli.python_api",
    "sourced_answers.cli.local_model_command", "sourced_answers.batch.evaluation", "sourced_answers.steps.judge",
    "sourced_answers.steps.rewrite", "sourced_answers.outputs.review_page", "sourced_answers.checker.risky",
)
# --help、--version 只解析参数：连核对一条记录的几层也不导入
ONLY_VERIFY = ("sourced_answers.batch", "sourced_answers.steps", "sourced_answers.outputs")

DOORS = {"answer_with_sources.py": ["answer_with_sources.py"], "python -m sourced_answers": ["-m", "sourced_answers"]}


def imported_modules(door, *arguments):
    """以子进程运行这个入口（python -X importtime），返回它导入的全部模块的名字；退出码要是 0。"""
    command = [sys.executable, "-X", "importtime", *DOORS[door], *arguments]
    done = subprocess.run(command, cwd=HERE, env=cli_env(), capture_output=True, text=True, encoding="utf-8",
                          timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [line for line in done.stderr.splitlines() if line.startswith("import time:") and "[us]" not in line]
    return {line.rsplit("|", 1)[1].strip() for line in lines}


def loaded(modules, *names):
    """names 里导入了的（一个包名也算它下面的每一个模块）。"""
    return sorted({name for name in names for module in modules if module == name or module.startswith(name + ".")})


@pytest.mark.parametrize("door", DOORS)
@pytest.mark.parametrize("flag", ["--help", "--version"])
def test_help_and_version_import_no_layer_beyond_the_parser_and_the_settings(door, flag):
    modules = imported_modules(door, flag)
    assert "sourced_answers.cli.parser" in modules  # 真的走到了解析参数
    assert loaded(modules, *NEVER, *ONLY_VERIFY) == []


@pytest.mark.parametrize("door", DOORS)
def test_verifying_one_record_imports_the_checker_but_not_search_models_or_servers(door, tmp_path):
    path = tmp_path / "one.json"
    path.write_text(RECORD, encoding="utf-8")
    modules = imported_modules(door, "--verify", str(path))
    assert {"sourced_answers.batch.verification", "sourced_answers.checker.rules"} <= modules  # 真的核对了
    assert loaded(modules, *NEVER) == []


def test_the_module_names_are_read_from_importtime_as_python_writes_them():
    """imported_modules 读的那一列：python -X importtime 的每一行最后是模块名（前面的空格表示是谁导入的）。"""
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", "import json"], capture_output=True, text=True,
                          timeout=60)
    names = {line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines()
             if line.startswith("import time:") and "[us]" not in line}
    assert {"json", "json.decoder"} <= names
