"""FoldCache under concurrent readers, eviction, and stores that come and go."""

import asyncio
import gc
from typing import Any

from psych_runtime.core.ids import RunId
from psych_runtime.core.records import Record
from psych_runtime.runtime import reads
from psych_runtime.runtime.reads import FoldCache
from psych_runtime.testing.log_builder import LogBuilder


def _log(run_id: str = "run_test", message: str = "hello") -> list[Record]:
    return (
        LogBuilder(run_id=run_id)
        .admitted(input={"message": message})
        .attempt()
        .turn()
        .model_started()
        .model_finished(text="answer")
        .build()
    )


class LogStore:
    """Just enough of a Store for FoldCache: reads, optionally held at a gate.

    A gated read takes its snapshot when called and hands it back only when the test
    opens that read's gate, like a slow network returning an old answer late.
    """

    def __init__(self, *logs: list[Record]) -> None:
        self.logs = {log[0].run_id: log for log in logs}
        self.visible = {run_id: len(log) for run_id, log in self.logs.items()}
        self.gated = False
        self.gates: list[asyncio.Event] = []

    async def read(
        self, run_id: RunId, *, after: int = 0, limit: int | None = None
    ) -> list[Record]:
        shown = self.logs.get(run_id, [])[: self.visible.get(run_id, 0)]
        page = [r for r in shown if r.seq > after][:limit]
        if self.gated:
            gate = asyncio.Event()
            self.gates.append(gate)
            await gate.wait()
        return page


class SlottedStore:
    """A store that cannot be weakly referenced."""

    __slots__ = ("log",)

    def __init__(self, log: list[Record]) -> None:
        self.log = log

    async def read(
        self, run_id: RunId, *, after: int = 0, limit: int | None = None
    ) -> list[Record]:
        return [r for r in self.log if r.seq > after][:limit]


async def _parked(store: LogStore, reads_waiting: int) -> None:
    """Let other tasks run until ``reads_waiting`` reads are held at their gates."""
    for _ in range(1000):
        if len(store.gates) >= reads_waiting:
            return
        await asyncio.sleep(0)
    raise AssertionError(f"only {len(store.gates)} reads reached their gate")


RUN = RunId("run_test")


async def test_a_later_miss_is_not_lost_when_an_earlier_one_fills_the_entry_first() -> None:
    log = _log()
    store = LogStore(log)
    store.visible[RUN] = 3
    store.gated = True
    cache = FoldCache()
    early = asyncio.create_task(cache.fold(store, RUN))  # type: ignore[arg-type]
    await _parked(store, 1)
    store.visible[RUN] = 4  # a record lands; the next reader's snapshot includes it
    late = asyncio.create_task(cache.fold(store, RUN))  # type: ignore[arg-type]
    await _parked(store, 2)
    store.gates[0].set()
    assert (await early).state.head_seq == 3
    store.gates[1].set()
    fold = await late
    # The reader that started after the write must see it.
    assert fold.state.head_seq == 4
    assert fold.records == log[:4]
    store.gated = False
    again = await cache.fold(store, RUN)  # type: ignore[arg-type]
    assert again.state.head_seq == 4
    assert again.records == log[:4]


async def _evicted_while_read() -> tuple[LogStore, FoldCache, list[Any], asyncio.Task[Any]]:
    """Three Runs through a cache of two: the first is evicted while its tail is read.

    Returns the store, the cache, the three logs and the reader of the first Run's
    tail, parked on the store's first gate (seq 4 and 5 are visible to it).
    """
    logs = [_log(f"run_{name}") for name in "abc"]
    store = LogStore(*logs)
    first = logs[0][0].run_id
    store.visible[first] = 3
    cache = FoldCache(size=2)
    await cache.fold(store, first)  # type: ignore[arg-type]
    store.visible[first] = 5
    store.gated = True
    reader = asyncio.create_task(cache.fold(store, first))  # type: ignore[arg-type]
    await _parked(store, 1)
    store.gated = False
    for log in logs[1:]:
        await cache.fold(store, log[0].run_id)  # type: ignore[arg-type]  # evicts the first
    return store, cache, logs, reader


async def test_an_entry_evicted_while_its_tail_is_read_is_put_back() -> None:
    store, cache, logs, reader = await _evicted_while_read()
    store.gates[0].set()
    fold = await reader
    assert fold.state.head_seq == 5
    assert fold.records == logs[0]
    assert len(cache) == 2


async def test_an_entry_refilled_by_a_lagging_reader_is_brought_up_to_date() -> None:
    store, cache, logs, ahead = await _evicted_while_read()
    first = logs[0][0].run_id
    # A reader served by a lagging replica refills the entry with less than ``ahead`` read.
    store.visible[first] = 3
    store.gated = True
    behind = asyncio.create_task(cache.fold(store, first))  # type: ignore[arg-type]
    await _parked(store, 2)
    store.gates[1].set()
    assert (await behind).state.head_seq == 3
    store.gates[0].set()
    assert (await ahead).state.head_seq == 5
    store.gated = False
    cached = await cache.fold(store, first)  # type: ignore[arg-type]  # replica still lags
    assert cached.state.head_seq == 5
    assert cached.records == logs[0]


async def test_a_recycled_id_never_serves_another_stores_fold(monkeypatch) -> None:
    # Make every object share one id, as a dead store's address reused by a new one.
    monkeypatch.setattr(reads, "id", lambda _obj: 7, raising=False)
    cache = FoldCache()
    old = LogStore(_log(message="the old store's run"))
    await cache.fold(old, RUN)  # type: ignore[arg-type]
    del old
    gc.collect()
    new_log = _log(message="the new store's run")
    new = LogStore(new_log)
    new.visible[RUN] = 3
    fold = await cache.fold(new, RUN)  # type: ignore[arg-type]
    assert fold.records == new_log[:3]
    assert fold.state.head_seq == 3


async def test_two_live_stores_sharing_an_id_do_not_mix(monkeypatch) -> None:
    monkeypatch.setattr(reads, "id", lambda _obj: 7, raising=False)
    cache = FoldCache()
    one_log, two_log = _log(message="one"), _log(message="two")
    one, two = LogStore(one_log), LogStore(two_log)
    for _ in range(2):
        assert (await cache.fold(one, RUN)).records == one_log  # type: ignore[arg-type]
        assert (await cache.fold(two, RUN)).records == two_log  # type: ignore[arg-type]


async def test_a_collected_stores_folds_are_dropped() -> None:
    cache = FoldCache()
    gone = LogStore(_log())
    kept = LogStore(_log(message="kept"))  # created first, so the ids surely differ
    await cache.fold(gone, RUN)  # type: ignore[arg-type]
    assert len(cache) == 1
    del gone
    gc.collect()
    await cache.fold(kept, RUN)  # type: ignore[arg-type]
    assert len(cache) == 1


async def test_a_store_that_cannot_be_weakly_referenced_is_read_but_not_cached() -> None:
    log = _log()
    store = SlottedStore(log)
    cache = FoldCache()
    for _ in range(2):
        fold = await cache.fold(store, RUN)  # type: ignore[arg-type]
        assert fold.records == log
        assert fold.state.head_seq == len(log)
    assert len(cache) == 0
