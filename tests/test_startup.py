"""启动是每条命令的一部分：--help、--version 和 --verify 一条记录各导入了哪些模块。

每个 --verify、每个 --jobs 的工作进程、每个 Dask 任务进程和每次 --mcp 都要付一次启动。只有一条路要的模块在走那条路时
才导入（cli/run.py）：这几条命令不导入搜索、模型客户端、HTTP、服务、评判和审阅页。这里真的起进程、结束时列出
sys.modules，只断言导入了哪些模块，不断言用时（CI 的机器很忙）；用时由 bench/benchmark_startup.py 并排量。
"""
import json
import subprocess
import sys

import pytest

from tests.support import HERE, cli_env

pytestmark = pytest.mark.slow

RECORD = '{"answer": "RAID1 用两块盘互为镜像 [1]。", "sources": [{"text": "RAID1 用两块盘互为镜像，一块坏了数据还在。"}]}\n'

# api/ 里每条命令都要的只有 config（参数和环境变量变成设置）：回答问题的经过、Python API、它的结果、核对一个回答都不要
API_BEYOND_SETTINGS = ("sourced_answers.api.answering", "sourced_answers.api.public", "sourced_answers.api.results",
                       "sourced_answers.api.verifying")
# 这三条命令都不该导入的（包名包括它下面的每一个模块）：HTTP 客户端和服务、秘塔和它的缓存、模型客户端和提示词、
# --local-model、回答问题的整条流程、两个服务、Python API、--eval、评判、改写、审阅页、进度条、Dask、工作进程的管道
NEVER = (
    "requests", "urllib3", "http.client", "http.server", "sqlite3", "tqdm", "dask", "distributed", "starlette",
    "uvicorn", "mcp", "pypdf", "concurrent.futures", "multiprocessing.connection",
    "sourced_answers.search", *API_BEYOND_SETTINGS, "sourced_answers.servers", "sourced_answers.model.model_client",
    "sourced_answers.model.prompts", "sourced_answers.model.local_serving", "sourced_answers.model.llama_server",
    "sourced_answers.cli.local_model_command", "sourced_answers.batch.evaluation",
    "sourced_answers.steps.judge", "sourced_answers.steps.rewrite", "sourced_answers.outputs.review_page",
    "sourced_answers.checker.risky",
)
# --help、--version 只解析参数：连核对一条记录的几层也不导入
# 环境里没有密钥时也不导入找密钥的几种看法（key_views 和它用的 html）：遮的时候才要
ONLY_VERIFY = ("sourced_answers.batch", "sourced_answers.steps", "sourced_answers.outputs", "sourced_answers.core.key_views",
               "html")

# 入口原样运行（runpy 以 __main__ 运行 answer_with_sources.py 或 sourced_answers 包），结束时把 sys.modules 写进文件：
# python -X importtime 看不到 importlib.import_module 导入的模块（checker 的 __getattr__ 就用它），sys.modules 什么都有
RUN_AND_LIST = """
import atexit, json, runpy, sys
listing, door, *arguments = sys.argv[1:]
atexit.register(lambda: open(listing, "w", encoding="utf-8").write(json.dumps(sorted(sys.modules))))
if door == "-m":
    sys.argv = ["sourced_answers", *arguments]
    runpy.run_module("sourced_answers", run_name="__main__", alter_sys=True)
else:
    sys.argv = [door, *arguments]
    runpy.run_path(door, run_name="__main__")
"""
DOORS = {"answer_with_sources.py": str(HERE / "answer_with_sources.py"), "python -m sourced_answers": "-m"}


def imported_modules(tmp_path, door, *arguments):
    """以子进程运行这个入口（DOORS 的一个，或者一个脚本的路径），返回它结束时导入过的全部模块的名字；退出码要是 0。"""
    listing = tmp_path / "modules.json"
    command = [sys.executable, "-c", RUN_AND_LIST, str(listing), DOORS.get(door, door), *arguments]
    done = subprocess.run(command, cwd=HERE, env=cli_env(), capture_output=True, text=True, encoding="utf-8",
                          timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-3000:]
    return set(json.loads(listing.read_text(encoding="utf-8")))


def loaded(modules, *names):
    """names 里导入了的（一个包名也算它下面的每一个模块）。"""
    return sorted({name for name in names for module in modules if module == name or module.startswith(name + ".")})


@pytest.mark.parametrize("door", DOORS)
@pytest.mark.parametrize("flag", ["--help", "--version"])
def test_help_and_version_import_no_layer_beyond_the_parser_and_the_settings(door, flag, tmp_path):
    modules = imported_modules(tmp_path, door, flag)
    assert "sourced_answers.cli.parser" in modules  # 真的走到了解析参数
    assert loaded(modules, *NEVER, *ONLY_VERIFY) == []


@pytest.mark.parametrize("door", DOORS)
def test_verifying_one_record_imports_the_checker_but_not_search_models_or_servers(door, tmp_path):
    path = tmp_path / "one.json"
    path.write_text(RECORD, encoding="utf-8")
    modules = imported_modules(tmp_path, door, "--verify", str(path))
    assert {"sourced_answers.batch.verification", "sourced_answers.checker.rules"} <= modules  # 真的核对了
    assert loaded(modules, *NEVER) == []


def test_every_module_of_the_api_layer_but_the_settings_is_among_those_never_imported():
    """api/ 里新加的模块也要在上面的表里（不然 --help 导入了它也没人知道）：除了建设置的 config 和它读
    --allow-origin 用的 origins，每一个都不该导入。"""
    modules = {f"sourced_answers.api.{path.stem}" for path in (HERE / "sourced_answers" / "api").glob("*.py")}
    settings = {"sourced_answers.api.__init__", "sourced_answers.api.config", "sourced_answers.api.origins"}
    assert modules - settings == set(API_BEYOND_SETTINGS)


def test_the_listing_sees_modules_imported_by_name_at_run_time(tmp_path):
    """列出的是 sys.modules，所以连 importlib.import_module 导入的也看得到（python -X importtime 看不到它们）：
    checker 的 risky 在第一次用到 risks_in 时才经 importlib 导入。"""
    script = tmp_path / "uses_risky.py"
    script.write_text("import sourced_answers.checker as checker\nchecker.risks_in\n", encoding="utf-8")
    assert "sourced_answers.checker.risky" in imported_modules(tmp_path, str(script))
    assert "sourced_answers.checker.risky" not in imported_modules(tmp_path, "answer_with_sources.py", "--version")
