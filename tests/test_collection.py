"""核对期间少做垃圾回收（core/collection.py）：门槛在核对时调高，做完换回原来的；几个线程同时核对时最后一个换回；
用户自己关掉了回收时不动它。"""
import gc
import threading

import pytest

from sourced_answers.checker import Source
from sourced_answers.core.collection import THRESHOLDS, fewer_collections
from sourced_answers.core.settings import CheckSettings
from sourced_answers.steps.check_steps import check_and_fix


@pytest.fixture
def thresholds():
    saved = gc.get_threshold()
    yield
    gc.set_threshold(*saved)


def test_thresholds_are_raised_while_checking_and_restored_afterwards(thresholds, monkeypatch):
    gc.set_threshold(700, 10, 10)
    seen = []
    import sourced_answers.steps.check_steps as steps

    real = steps.check_answer
    monkeypatch.setattr(steps, "check_answer", lambda *args: seen.append(gc.get_threshold()) or real(*args))
    check_and_fix("家用 NAS 至少选两盘位 [1]。", [Source(text="家用 NAS 至少选两盘位。")], CheckSettings())
    assert seen == [THRESHOLDS]
    assert gc.get_threshold() == (700, 10, 10)


def test_a_higher_threshold_or_collection_switched_off_is_left_alone(thresholds):
    gc.set_threshold(10**6, 5, 1000)
    with fewer_collections():
        assert gc.get_threshold() == (10**6, THRESHOLDS[1], 1000)
    gc.set_threshold(0)
    with fewer_collections():
        assert gc.get_threshold()[0] == 0
    assert gc.get_threshold()[0] == 0


def test_the_last_of_several_threads_to_finish_restores_the_thresholds(thresholds):
    gc.set_threshold(700, 10, 10)
    inside = threading.Barrier(3)
    leave = threading.Event()
    during = []

    def check():
        with fewer_collections():
            inside.wait()
            leave.wait()
            during.append(gc.get_threshold())

    workers = [threading.Thread(target=check) for _ in range(3)]
    for worker in workers:
        worker.start()
    leave.set()
    for worker in workers:
        worker.join()
    assert during == [THRESHOLDS] * 3
    assert gc.get_threshold() == (700, 10, 10)
