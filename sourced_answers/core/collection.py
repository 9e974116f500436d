"""核对期间少做几次垃圾回收。

核对一个长回答要建几十万个小对象（句子、核对结果、证据的位置），它们之间没有环；Python 默认每多 700 个新对象
就做一次回收，对象越多、每次要看的越多：1 MB 的回答光回收就占了核对时间的四分之一（docs/performance.md）。
核对期间把三代的门槛调高，做完换回原来的；几个线程同时核对（--serve、Dask 的线程）时，最后一个做完的换回。
用户自己把回收关掉了（门槛 0）或者门槛本来就更高时，不动它。
"""
import gc
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager

# 每一代的门槛：新对象多出 5 万个才做一次最年轻的一代，年轻的一代做 50 次才做中间的一代，中间的做 100 次才做全部
THRESHOLDS = (50_000, 50, 100)


class Thresholds:
    """调高的门槛由几个同时核对的线程共用：第一个进来的记下原来的门槛，最后一个出去的换回。"""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.active = 0
        self.saved: tuple[int, ...] | None = None

    @contextmanager
    def raised(self) -> Iterator[None]:
        with self.lock:
            if self.active == 0:
                self.saved = gc.get_threshold()
                if self.saved[0] > 0:
                    gc.set_threshold(*(max(ours, theirs) for ours, theirs in zip(THRESHOLDS, self.saved, strict=False)))
            self.active += 1
        try:
            yield
        finally:
            with self.lock:
                self.active -= 1
                if self.active == 0 and self.saved is not None:
                    gc.set_threshold(*self.saved)
                    self.saved = None


THRESHOLDS_IN_USE = Thresholds()


def fewer_collections() -> "AbstractContextManager[None]":
    """在这段时间里用 THRESHOLDS（每一代取它和原来的门槛里大的那个），出来时换回原来的。"""
    return THRESHOLDS_IN_USE.raised()
