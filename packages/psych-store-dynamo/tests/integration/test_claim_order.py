"""The claim takes Runs in exactly the in-memory store's order, across all index parts.

The claim merges three partitions of the index (ready, parked, expired leases) and
reads only a few entries of the first two per round; these cases drive the same
history through ``InMemoryStore`` and ``DynamoStore`` and compare every claim.
"""

from datetime import datetime

from psych_contract import _data as data
from psych_runtime import InMemoryStore
from psych_runtime import RunId
from psych_runtime import Store
from psych_runtime.adapters import RunHeader
from psych_runtime.adapters import RunState
from psych_runtime.records import WorkerId

from ..conftest import StoreFactory

W = WorkerId("w")


async def _history(store: Store) -> list[RunHeader]:
    """Admit a mix of Runs: ready, parked (due and not), tied, and soon-expired leases."""
    created: list[RunHeader] = []

    async def admit(run_id: str, created_s: int, runnable_s: int | None = None) -> None:
        run, admitted = data.admission(
            RunId(run_id),
            created_at=data.at(created_s),
            runnable_at=None if runnable_s is None else data.at(runnable_s),
        )
        result = await store.create_run(run, admitted)
        assert result.created
        created.append(result.header)

    # Twelve ready Runs (more than one page of candidates), two of them tied on
    # created_at so only the run id orders them.
    for index in range(12):
        await admit(f"ready-{index:02d}", 100 + 10 * index)
    await admit("ready-tie-b", 150)
    await admit("ready-tie-a", 150)
    # Parked Runs interleaved with them, one of them not yet due.
    for index in range(10):
        await admit(f"parked-{index:02d}", 0, runnable_s=95 + 10 * index)
    await admit("parked-late", 0, runnable_s=10_000)
    # Runs whose lease will have expired: claimed early, by order of their own key.
    await admit("leased-old", 1)
    await admit("leased-young", 2, runnable_s=3)
    return created


async def _claims(store: Store, now: datetime, count: int) -> list[str | None]:
    taken: list[str | None] = []
    for _ in range(count):
        header = await store.claim(W, now, 30)
        taken.append(None if header is None else header.run_id)
    return taken


async def _scenario(store: Store) -> list[str | None]:
    await _history(store)
    # At t=5 only the two "leased" Runs are due before the ready ones; they are taken
    # and left to expire, then compete again by their original keys at t=1000.
    early = await _claims(store, data.at(5), 2)
    later = await _claims(store, data.at(1000), 30)
    return early + later


async def test_claims_follow_the_in_memory_order(make_store: StoreFactory) -> None:
    expected = await _scenario(InMemoryStore())
    actual = await _scenario(await make_store())
    assert actual == expected
    assert expected[-1] is None  # the scenario drains everything claimable
    assert "parked-late" not in expected


async def test_an_expired_lease_competes_by_its_original_key(make_store: StoreFactory) -> None:
    async def run(store: Store) -> list[str | None]:
        for name, created_s in (("a", 10), ("b", 20), ("c", 30)):
            run, admitted = data.admission(RunId(name), created_at=data.at(created_s))
            await store.create_run(run, admitted)
        first = await _claims(store, data.at(40), 1)  # "a", lease until 70
        await store.release(RunId("a"), W, RunState.RUNNABLE, runnable_at=data.at(25))
        return first + await _claims(store, data.at(100), 4)

    assert await run(await make_store()) == await run(InMemoryStore())
