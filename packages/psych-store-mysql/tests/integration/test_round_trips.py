"""The hot paths cost the round trips the store documents, and no more.

Every round trip goes through ``aiomysql.Connection.query`` (one query packet, its
replies read back), so counting its calls counts round trips.
"""

import aiomysql  # type: ignore[import-untyped]
import pytest

from psych_contract import _data as data
from psych_runtime import RunId
from psych_runtime.adapters import Fence
from psych_runtime.adapters import RunState
from psych_runtime.adapters import SeqConflict
from psych_runtime.records import AbortRequested
from psych_runtime.records import WorkerId
from psych_store_mysql import MySQLStore

T0 = data.T0
SCOPE = data.scope()


class Counter:
    def __init__(self) -> None:
        self.queries: list[str] = []

    def reset(self) -> None:
        self.queries.clear()

    @property
    def count(self) -> int:
        return len(self.queries)


@pytest.fixture
def round_trips(monkeypatch: pytest.MonkeyPatch) -> Counter:
    counter = Counter()
    original = aiomysql.Connection.query

    async def counting(self: object, sql: str, unbuffered: bool = False) -> object:
        counter.queries.append(sql)
        return await original(self, sql, unbuffered)

    def no_bare_transaction_calls(*args: object) -> None:
        raise AssertionError("transactions must travel inside the batch, not as extra calls")

    monkeypatch.setattr(aiomysql.Connection, "query", counting)
    monkeypatch.setattr(aiomysql.Connection, "begin", no_bare_transaction_calls)
    monkeypatch.setattr(aiomysql.Connection, "commit", no_bare_transaction_calls)
    return counter


def _aborts(run_id: RunId, first: int, size: int) -> list[AbortRequested]:
    return [
        AbortRequested(run_id=run_id, seq=seq, at=T0, scope=SCOPE, reason=f"r{seq}")
        for seq in range(first, first + size)
    ]


async def test_create_run_append_and_claim_round_trips(
    store: MySQLStore, round_trips: Counter
) -> None:
    await store.head(RunId("warm-up"))  # opens the pool and checks the schema
    round_trips.reset()

    header, admitted = data.admission(RunId("rt-1"), idempotency_key="k-1")
    assert (await store.create_run(header, admitted)).created
    assert round_trips.count == 1

    round_trips.reset()
    claimed = await store.claim(WorkerId("w"), T0, 30)
    assert claimed is not None
    assert round_trips.count == 2

    round_trips.reset()
    fence = Fence(WorkerId("w"), claimed.attempt_count)
    await store.append(header.run_id, 2, _aborts(header.run_id, 2, 5), fence=fence)
    assert round_trips.count == 1

    round_trips.reset()
    with pytest.raises(SeqConflict):
        await store.append(header.run_id, 2, _aborts(header.run_id, 2, 1), fence=fence)
    assert round_trips.count == 1

    round_trips.reset()
    assert await store.claim(WorkerId("w"), T0, 30) is None
    assert round_trips.count == 2

    round_trips.reset()
    again = await store.create_run(*data.admission(RunId("rt-2"), idempotency_key="k-1"))
    assert not again.created
    assert again.header == claimed  # the stored header, not the one passed in
    assert round_trips.count == 2


async def test_reads_and_lease_calls_are_one_round_trip_each(
    store: MySQLStore, round_trips: Counter
) -> None:
    header, admitted = data.admission(RunId("rt-3"))
    await store.create_run(header, admitted)
    claimed = await store.claim(WorkerId("w"), T0, 30)
    assert claimed is not None
    calls = [
        store.head(header.run_id),
        store.read(header.run_id),
        store.get_run(header.run_id, tenant="tenant-a"),
        store.renew(header.run_id, WorkerId("w"), T0, 60),
        store.expired_leases(T0),
        store.overdue_deadlines(T0),
        store.release(header.run_id, WorkerId("w"), RunState.SUSPENDED),
        store.set_runnable_at(header.run_id, None),
        store.settle_inline(header.run_id),
    ]
    for call in calls:
        round_trips.reset()
        await call
        assert round_trips.count == 1, call
