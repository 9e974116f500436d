"""测试共用的数据和工具：NAS 资料、写好的回答、运行命令行。

夹具在 conftest.py 里；按脚本回答的模型服务在 scripted_model.py；这里是测试模块直接导入的东西。
"""
import io
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import answer_with_sources
from fake_metaso import NAS_PAGES
from sourced_answers.checker import Source
from sourced_answers.cli.context import Environment
from tests import loopback

HERE = Path(__file__).resolve().parent.parent  # 仓库根目录
# 内置的 5 个 NAS 页面作为资料（搜索“家用 NAS 怎么选”时资料 1~5 依次是它们）
NAS_SOURCES = [Source(title=page["title"], text=page["text"]) for page in NAS_PAGES]
# 同样的资料写成 --json / --verify 记录里的样子
NAS_RECORD_SOURCES = [{"title": page["title"], "text": page["text"]} for page in NAS_PAGES]
CANARY_KEY = "mk-CANARY-0123456789abcdef"

# 针对内置 NAS 页面写好的回答（搜索“家用 NAS 怎么选”时，资料 1~5 依次是内置的 5 个页面）
GOOD_ANSWER = (
    "家用 NAS 至少选两盘位，方便做 RAID1 镜像 [1]。需要转码 4K 视频时选带核显的 Intel 型号 [1]。\n\n"
    "RAID5 至少三块盘，可以容忍一块盘损坏 [2]。RAID 不是备份，重要数据仍然要另外备份 [2]。\n\n"
    "远程访问优先使用 VPN 或 Tailscale，不要把管理界面直接暴露到公网 [3]。"
)
WRONG_SOURCE_ANSWER = (
    "家用 NAS 至少选两盘位，方便做 RAID1 镜像 [1]。\n\n"
    "需要转码 4K 视频时选带核显的 Intel 型号 [2]。"
)
UNCITED_ANSWER = (
    "家用 NAS 至少选两盘位，方便做 RAID1 镜像。\n\n"
    "需要转码 4K 视频时选带核显的 Intel 型号。"
)
# 一句没有任何资料能支持的话（--fix 的改写要删掉或改写它）
INVENTED = "群晖的 NAS 系统比威联通稳定得多，适合所有家庭 [1]。"
WITH_INVENTION = GOOD_ANSWER + "\n\n" + INVENTED
WRONG_NUMBER = "家用 NAS 至少选两盘位，方便做 RAID1 镜像 [1]。\n\nRAID5 至少两块盘就能容忍一块盘损坏 [2]。"
RIGHT_NUMBER = "家用 NAS 至少选两盘位，方便做 RAID1 镜像 [1]。\n\nRAID5 至少三块盘，可以容忍一块盘损坏 [2]。"
THINKING_ANSWER = "<think>用户问 NAS，我先想想 [9]。</think>\n\n" + GOOD_ANSWER


# 换掉一个还在回答的共用服务之前，最多等它这么多秒
QUIET_WAIT = 0.5


class SharedServer:
    """一个 xdist 进程里的测试共用的一个本机服务（每个测试起停一个要等它的轮询，两百个测试就是好几十秒）。

    交给测试之前 reset()，测试改过的状态（页面、故障、脚本、密钥、记录……）都回到刚建好的样子。上一个测试把它
    关掉了（die_after），或者留下了还没回答完的请求（挂着的故障、很长的延迟：它回答时会记进下一个测试的记录里），
    就关掉它、换一个新的。"""

    def __init__(self, build: Callable[[], Any]) -> None:
        self.build = build
        self.server: Any = None

    def take(self) -> Any:
        # 上一个测试最后一个请求的回应已经到了客户端，服务那边的线程却可能还没记下“回答完了”：等它一会儿
        if self.server is not None and self.server.wait_until_reusable(QUIET_WAIT):
            self.server.reset()
        else:
            self.close()
            self.server = self.build()
        return self.server

    def close(self) -> None:
        if self.server is not None:
            self.server.close()
            self.server = None


# 每个测试自己的缓存目录：第一次用到时才建（conftest.py 的自动夹具给出建它的办法），测试结束后删掉。
# 用不到缓存的测试就不建：一千多个测试每个都建一个目录要多花好几秒
_cache_home: Callable[[], Path] | None = None


def cache_home_of_this_test() -> Path | None:
    """这个测试自己的缓存目录（不在测试里时是 None）。"""
    return _cache_home() if _cache_home is not None else None

# 正在跑的测试标了 slow 吗（conftest.py 的自动夹具设置）：慢的测试可能把服务的地址交给子进程
SLOW_TEST = False


# 这次只跑快的一层吗（pytest -m "not slow"）：conftest.py 的 pytest_configure 在导入测试模块之前设置
FAST_TIER = False
FAST_TIER_SHARE = 5  # 快的一层里 hypothesis 的性质每个试五分之一的例子


def examples(count: int, variable: str = "PROPERTY_EXAMPLES") -> int:
    """hypothesis 一个性质试多少个例子：环境变量 variable 给了数就用它；全部测试（quickstart.sh --test、CI）试
    count 个；快的一层试五分之一（至少 10 个）：那一层要的是十几秒内的反馈，每个性质照样都试。"""
    if os.environ.get(variable):
        return int(os.environ[variable])
    return max(10, count // FAST_TIER_SHARE) if FAST_TIER else count


# 用户自己环境里会改变程序行为的变量：测试不继承它们（谁 export 了 NO_COLOR、COLUMNS，测试结果都一样）
USER_SETTINGS = frozenset({
    "METASO_API_KEY", "METASO_BASE", "OLLAMA_URL", "ANS_MODEL", "ANS_API_KEY", "ANS_JUDGE_API_KEY",
    "NO_COLOR", "FORCE_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "TERM", "COLUMNS", "LINES", "TQDM_DISABLE",
    "PYTHONWARNINGS", "SCHEDULER",
})


def cli_env(fake: Any = None, model: Any = None, **extra: str) -> dict[str, str]:
    """运行命令行用的环境变量：fake 是模拟秘塔、model 是（任何有 url 的）模型服务，extra 覆盖其余变量。
    慢的测试可能把它交给子进程：那时本进程里的服务先在真的端口上听着（tests/loopback.py）。"""
    if SLOW_TEST:
        loopback.listen(fake, model)
    env = {k: v for k, v in os.environ.items() if k not in USER_SETTINGS}
    env["PYTHONIOENCODING"] = "utf-8"
    # 每个测试一个空的缓存目录：测试之间互不影响，也不碰用户自己的 ~/.cache
    home = cache_home_of_this_test()
    if home is not None:
        env["XDG_CACHE_HOME"] = str(home)
    if fake is not None:
        env["METASO_BASE"] = fake.base_url
        env["METASO_API_KEY"] = fake.key
    if model is not None:
        env["OLLAMA_URL"] = model.url
    env.update(extra)
    return env


@dataclass
class Run:
    """一次命令行运行的结果（和 subprocess.CompletedProcess 的这三个字段一样）。"""
    returncode: int
    stdout: str
    stderr: str


def run_cli(*args: str, env: dict[str, str], stdin: str | None = None, module: str | None = None) -> Run:
    """运行命令行：在本进程里调用 answer_with_sources.main(argv, MockEnvironment(…))，和用户在终端里
    运行得到同样的输出和退出码，只是不必每次启动一个解释器。module：改用子进程 python -m 运行这个模块
    （quickstart、metaso_search 这类要看整个进程的时候）。"""
    if module:
        done = subprocess.run([sys.executable, "-m", module, *args], env=env, cwd=HERE,
                              input=stdin, stdin=None if stdin is not None else subprocess.DEVNULL,
                              capture_output=True, text=True, encoding="utf-8", timeout=120)
        return Run(done.returncode, done.stdout, done.stderr)
    environment = MockEnvironment(env, stdin or "")
    code = answer_with_sources.main(list(args), environment)
    return Run(int(code), environment.stdout.getvalue(), environment.stderr.getvalue())


class MockEnvironment(Environment):
    """像 httpie 的 tests/utils.MockEnvironment：给命令行的 main 一个在内存里的标准输入、输出和错误，环境变量就是
    给的字典（不碰 os.environ、sys.stdout）。stdin：标准输入的文字。跑完从 stdout.getvalue()、stderr.getvalue() 读。"""

    def __init__(self, environ: dict[str, str], stdin: str = "", **kwargs):
        super().__init__(stdin=io.BytesIO(stdin.encode("utf-8")), stdout=io.StringIO(), stderr=io.StringIO(),
                         environ=environ, **kwargs)


def cli_command(*args: str) -> list[str]:
    """以子进程运行命令行的命令（信号、终端、并发运行这些要真进程的测试用）。"""
    return [sys.executable, str(HERE / "answer_with_sources.py"), *args]


def eval_table(stdout: str) -> dict[str, dict[str, str]]:
    """--eval 打印的表：模型 → {表头: 格子}（按表头取，不按第几列：问题的种类会增加）。"""
    header, *rows = stdout.strip().splitlines()
    names = header.split(" | ")
    return {cells[0]: dict(zip(names, cells, strict=True)) for cells in (row.split(" | ") for row in rows)}


class TextSink:
    """收集写进来的文字的输出流（测试 SafeWriter 用）。"""

    def __init__(self):
        self.text = ""

    def write(self, piece):
        self.text += piece

    def flush(self):
        pass
