"""取一块的结果时出的错，各说各的：调度器没了（连接关了）不是“worker 读不了输入”。
集群测试里调度器被结束时偶尔见到：Dask 取结果时抛 CommClosedError（它也是 OSError），被当成了读输入的错。"""
import pytest

from sourced_answers.batch.dask_scheduler import result_of
from sourced_answers.core.errors import SchedulerLost, ServiceError


class Failing:
    """一个取结果就抛 error 的任务（Dask 的 Future 只用到 result 和 status）。"""
    status = "error"

    def __init__(self, error):
        self.error = error

    def result(self, timeout=None):
        raise self.error


def test_a_connection_closed_while_taking_a_result_is_the_scheduler_lost():
    from distributed.comm.core import CommClosedError
    with pytest.raises(SchedulerLost, match="和 Dask 调度器的连接断了"):
        result_of(Failing(CommClosedError("in <TCP (closed) ConnectionPool.gather local=tcp://127.0.0.1:1>")), None)


def test_an_input_a_worker_cannot_read_is_still_said_as_such():
    error = FileNotFoundError(2, "No such file or directory", "/data/logs.jsonl")
    with pytest.raises(ServiceError, match="worker 读不了输入 /data/logs.jsonl") as raised:
        result_of(Failing(error), None)
    assert not isinstance(raised.value, SchedulerLost)
