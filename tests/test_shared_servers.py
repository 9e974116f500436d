"""测试用的两个服务在测试之间复用（conftest.py 的 fake_metaso、model_server 夹具，support.SharedServer）：
reset() 把测试能改的状态全都恢复原样；被关掉的、还有请求没回答完的服务换成新的。"""
import copy
import threading
import time

import pytest
import requests

from fake_metaso import FakeMetaso
from tests.scripted_model import ScriptedModel
from tests.support import CANARY_KEY, SharedServer

# 不是测试能改的状态：服务本身、锁（serial：脚本模型一次只回答一个时用的）、正在回答的请求数、是否关掉了、建好时的设置
NOT_STATE = {"server", "thread", "lock", "idle", "fault_lock", "busy", "closed", "initial", "serial"}
BUILDERS = {"metaso": lambda: FakeMetaso(key=CANARY_KEY).start(), "model": ScriptedModel}


def state_of(server):
    return {name: copy.deepcopy(value) for name, value in vars(server).items() if name not in NOT_STATE}


def ask_metaso(fake, timeout=30.0):
    return requests.post(fake.base_url + "/search", json={"q": "家用 NAS"}, timeout=timeout,
                         headers={"Authorization": f"Bearer {fake.key}"})


def ask_model(server, model="good"):
    return requests.post(server.url + "/v1/chat/completions", timeout=30,
                         json={"model": model, "messages": [{"role": "user", "content": "家用 NAS 怎么选"}]})


def ask_without_waiting(server):
    """发一个服务不会马上回答的请求（挂起的读取、slow-answer），不等它回答。"""
    try:
        if isinstance(server, FakeMetaso):
            ask_metaso(server, timeout=0.2)
        else:
            requests.post(server.url + "/v1/chat/completions", timeout=0.2,
                          json={"model": "slow-answer", "messages": [{"role": "user", "content": "?"}]})
    except requests.RequestException:
        pass


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_reset_restores_every_attribute_a_test_can_change(name):
    """每一个状态都换成别的东西（测试能做的最坏的事），reset() 之后和刚建好时一模一样：新加的状态漏写在 reset 里，这里就失败。"""
    server = BUILDERS[name]()
    try:
        fresh = state_of(server)
        assert fresh  # 真的有状态可比
        for attribute in fresh:
            setattr(server, attribute, object())
        server.reset()
        assert state_of(server) == fresh
    finally:
        server.close()


def test_pages_changed_in_place_and_faults_are_gone_after_reset():
    fake = FakeMetaso(key=CANARY_KEY).start()
    try:
        title = fake.pages[0]["title"]
        fake.pages[0]["title"] = "被测试改掉的标题"  # 就地改页面（不是换一个新的）
        fake.fail_with("search", "503")
        assert ask_metaso(fake).status_code == 503 and fake.requests and fake.authorizations
        fake.delay = 0.05  # 改了延迟（在请求之后改：快的测试不睡）
        fake.reset()
        reply = ask_metaso(fake)
        assert reply.status_code == 200 and reply.json()["webpages"][0]["title"] == title
        assert fake.requests == [("POST", "/api/v1/search")] and fake.max_in_flight["search"] == 1
    finally:
        fake.close()


def test_a_quiet_server_is_reused_with_nothing_left_from_the_last_test():
    shared = SharedServer(ScriptedModel)
    try:
        first = shared.take()
        first.required_key, first.loaded = "sk-test", "llama-real"
        assert ask_model(first).status_code == 401 and first.authorizations
        second = shared.take()
        assert second is first and second.required_key == "" and second.loaded is None
        assert second.requests == [] and second.authorizations == [] and second.counts == {}
        assert ask_model(second).json()["model"] == "good"
    finally:
        shared.close()


def test_a_server_the_test_shut_down_is_replaced():
    """die_after：服务回答完就关掉，之后连不上；下一个测试拿到的是新的、连得上的服务。"""
    shared = SharedServer(ScriptedModel)
    try:
        first = shared.take()
        first.die_after = 1
        assert ask_model(first).status_code == 200
        with pytest.raises(requests.ConnectionError):
            ask_model(first)
        second = shared.take()
        assert second is not first and second.die_after is None and ask_model(second).status_code == 200
    finally:
        shared.close()


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_a_server_still_answering_is_replaced(name):
    """上一个测试留下了没回答完的请求（挂起的故障、很慢的回答）：它回答时会记进下一个测试的记录里，所以换新的。"""
    shared = SharedServer(BUILDERS[name])
    try:
        first = shared.take()
        if name == "metaso":
            first.fail_with("search", "hang")
            first.hang_seconds = 2
        threading.Thread(target=ask_without_waiting, args=(first,), daemon=True).start()
        deadline = time.monotonic() + 30  # 防止测试卡死的上限：看的是请求到了，不是多快
        while first.reusable() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not first.reusable()
        second = shared.take()
        assert second is not first and not getattr(second, "faults", {}) and second.requests == []
    finally:
        shared.close()
