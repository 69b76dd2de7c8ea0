"""How many requests each operation sends, and that none of them is a Scan.

The append is the hot path (two per tool turn): it must stay one request. A count
that grows here is a performance regression even when every behaviour still passes.
"""

from psych_contract import _data as data
from psych_runtime.adapters import Fence
from psych_runtime.adapters import RunState
from psych_runtime.records import WorkerId

from ..conftest import StoreFactory
from ..conftest import spy_on

W = WorkerId("w")


async def test_requests_per_operation(make_store: StoreFactory) -> None:
    store = await make_store()
    recorder = await spy_on(store)
    run, admitted = data.admission(idempotency_key=data.new_key())

    await store.create_run(run, admitted)
    assert recorder.take() == {"transact_write_items": 1}

    claimed = await store.claim(W, data.at(0), 30)
    assert claimed is not None
    # Three index Queries sent together (one round trip), then one conditional update.
    assert recorder.take() == {"query": 3, "update_item": 1}

    fence = Fence(W, claimed.attempt_count)
    await store.append(run.run_id, 2, data.batch(run, 2, 3), fence=fence)
    assert recorder.take() == {"transact_write_items": 1}

    await store.head(run.run_id)
    assert recorder.take() == {"get_item": 1}

    await store.read(run.run_id)
    assert recorder.take() == {"query": 1}

    assert await store.renew(run.run_id, W, data.at(10), 30)
    assert recorder.take() == {"update_item": 1}

    # created_at was remembered from the claim, so release needs no read.
    await store.release(run.run_id, W, RunState.RUNNABLE, runnable_at=data.at(100))
    assert recorder.take() == {"update_item": 1}

    await store.expired_leases(data.at(1000))
    await store.overdue_deadlines(data.at(100_000))
    calls = recorder.take()
    assert calls["query"] == 2
    assert calls["batch_get_item"] == 1  # only overdue found something to fetch


async def test_a_duplicate_admission_reads_only_the_original_header(
    make_store: StoreFactory,
) -> None:
    store = await make_store()
    key = data.new_key()
    await store.create_run(*data.admission(idempotency_key=key))
    recorder = await spy_on(store)
    again = await store.create_run(*data.admission(idempotency_key=key))
    assert not again.created
    assert recorder.take() == {"transact_write_items": 1, "get_item": 1}


async def test_nothing_ever_scans(make_store: StoreFactory) -> None:
    store = await make_store()
    recorder = await spy_on(store)
    runs = [await store.create_run(*data.admission(created_at=data.at(i))) for i in range(5)]
    for _ in runs:
        await store.claim(W, data.at(10), 30)
    await store.claim(W, data.at(10), 30)
    await store.expired_leases(data.at(100))
    await store.overdue_deadlines(data.at(100_000))
    for admission in runs:
        await store.release(admission.header.run_id, W, RunState.SETTLED)
        await store.read(admission.header.run_id, tenant="tenant-a")
        await store.set_runnable_at(admission.header.run_id, None)
    assert "scan" not in recorder.calls
    assert recorder.indexed_queries >= 3 * 6 + 2
