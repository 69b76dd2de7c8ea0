"""A Journal shared by concurrent branches: records staged while a write is in flight
are written by the next flush, never dropped, and flushes take turns."""

import asyncio
from collections.abc import Sequence
from typing import Any

import psych_runtime
from psych_runtime.adapters import Fence
from psych_runtime.records import AttemptStarted
from psych_runtime.records import Record
from psych_runtime.records import RunAdmitted
from psych_runtime.records import TurnStarted
from psych_runtime.records import WorkerId
from psych_runtime.runtime.journal import Journal
from psych_runtime.testing import LogBuilder

SCOPE = psych_runtime.Scope(tenant="t")


class SlowAppends:
    """Holds every append until released, to stage records while one is in flight."""

    def __init__(self, inner: psych_runtime.InMemoryStore) -> None:
        self.inner = inner
        self.release = asyncio.Event()
        self.appends: list[list[int]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def append(
        self,
        run_id: Any,
        expected_seq: int,
        records: Sequence[Record],
        *,
        fence: Fence | None = None,
    ) -> None:
        await self.release.wait()
        self.appends.append([r.seq for r in records])
        await self.inner.append(run_id, expected_seq, records, fence=fence)


async def _journal() -> tuple[Journal, SlowAppends]:
    inner = psych_runtime.InMemoryStore()
    admitted = LogBuilder(run_id="run_j").admitted().build()[0]
    assert isinstance(admitted, RunAdmitted)
    header = psych_runtime.adapters.RunHeader(
        run_id=admitted.run_id,
        scope=admitted.scope,
        version_hash=admitted.version_hash,
        state=psych_runtime.adapters.RunState.RUNNABLE,
        created_at=admitted.at,
        deadline_at=admitted.deadline_at,
    )
    await inner.create_run(header, admitted)
    slow = SlowAppends(inner)
    return await Journal.open(slow, admitted.run_id), slow  # type: ignore[arg-type]


async def test_a_record_staged_during_a_write_is_kept_for_the_next_flush() -> None:
    journal, store = await _journal()
    journal.stage(AttemptStarted, worker_id=WorkerId("wrk_1"), attempt_number=1)
    writing = asyncio.create_task(journal.flush())
    await asyncio.sleep(0)  # the write is now in flight
    journal.stage(TurnStarted, turn=1)
    store.release.set()
    await writing
    assert journal.pending_records and journal.pending_records[0].seq == 3
    await journal.flush()
    stored = await store.inner.read(journal.run_id)
    assert [r.seq for r in stored] == [1, 2, 3]
    assert store.appends == [[2], [3]]


async def test_concurrent_flushes_take_turns_and_write_each_record_once() -> None:
    journal, store = await _journal()
    journal.stage(AttemptStarted, worker_id=WorkerId("wrk_1"), attempt_number=1)
    first = asyncio.create_task(journal.flush())
    await asyncio.sleep(0)
    journal.stage(TurnStarted, turn=1)
    second = asyncio.create_task(journal.flush())
    await asyncio.sleep(0)
    store.release.set()
    await asyncio.gather(first, second)
    stored = await store.inner.read(journal.run_id)
    assert [r.seq for r in stored] == [1, 2, 3]
    assert not journal.pending_records
