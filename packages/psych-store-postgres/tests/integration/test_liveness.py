"""A claiming process's death is noticed from its session ending, not from its lease.

Each store instance stands for one process: its own pool, its own liveness-lock
connections. "Killing" a process is done the way PostgreSQL would see a SIGKILL: the
backend of its lock connection goes away (``pg_terminate_backend`` from the other
instance), or, in the last case, a real child process is killed with SIGKILL.
"""

import asyncio
import os
import signal
import sys
import textwrap
from collections.abc import Awaitable
from collections.abc import Callable

import asyncpg
import pytest

from psych_contract import _data as data
from psych_contract.lifecycle import closing
from psych_runtime.adapters import WORK
from psych_runtime.adapters import Fence
from psych_runtime.adapters import LeaseLost
from psych_runtime.adapters import RunHeader
from psych_runtime.records import WorkerId
from psych_store_postgres import PostgresStore
from psych_store_postgres._peers import ring_after

Factory = Callable[..., Awaitable[PostgresStore]]

W = WorkerId("worker-a")
OTHER = WorkerId("worker-b")
LEASE = 300.0
"""Long enough that no takeover in these tests can be explained by lease expiry."""


async def _claim_within(
    store: PostgresStore, worker: WorkerId, now_s: int, seconds: float = 5.0
) -> RunHeader | None:
    """Claim repeatedly (like an idle Worker polling) until a Run comes or time is up."""
    deadline = asyncio.get_running_loop().time() + seconds
    while True:
        claimed = await store.claim(worker, data.at(now_s), LEASE)
        if claimed is not None or asyncio.get_running_loop().time() > deadline:
            return claimed
        await asyncio.sleep(0.02)


async def _terminate(store: PostgresStore, pid: int) -> None:
    async with closing(
        await asyncpg.connect(os.environ.get("PSYCH_TEST_POSTGRES_DSN", _dsn_of(store)))
    ) as conn:
        assert await conn.fetchval("SELECT pg_terminate_backend($1)", pid)


def _dsn_of(store: PostgresStore) -> str:
    return store._settings.dsn


async def _a_run_held_by_a(make_store: Factory) -> tuple[PostgresStore, PostgresStore, RunHeader]:
    """Processes A and B on one schema, and a Run A has just claimed for ``W``."""
    process_a = await make_store()
    process_b = await make_store()
    run = (await process_a.create_run(*data.admission())).header
    held = await process_a.claim(W, data.at(0), LEASE)
    assert held is not None
    assert held.run_id == run.run_id
    return process_a, process_b, run


async def test_a_dead_holders_run_is_claimable_before_its_lease_expires(
    make_store: Factory,
) -> None:
    process_a, process_b, run = await _a_run_held_by_a(make_store)

    # Alive: the lease is live and the holder's session holds its lock.
    assert await process_b.claim(OTHER, data.at(1), LEASE) is None
    assert await process_b.expired_leases(data.at(1)) == []

    lock_conn = process_a._liveness.connection_of(W)
    assert lock_conn is not None
    await _terminate(process_b, lock_conn.get_server_pid())

    # Dead: well inside the lease, B takes the Run over at the next claim attempts.
    taken = await _claim_within(process_b, OTHER, 2)
    assert taken is not None
    assert taken.run_id == run.run_id
    assert taken.lease_holder == OTHER
    assert taken.attempt_count == 2
    # The zombie's writes are fenced off.
    with pytest.raises(LeaseLost):
        await process_a.append(run.run_id, 2, data.batch(run, 2, 1), fence=Fence(W, 1))


async def test_expired_leases_reports_a_run_whose_holder_died(make_store: Factory) -> None:
    process_a, process_b, run = await _a_run_held_by_a(make_store)
    lock_conn = process_a._liveness.connection_of(W)
    assert lock_conn is not None
    await _terminate(process_b, lock_conn.get_server_pid())
    for _ in range(100):
        listed = await process_b.expired_leases(data.at(1))
        if listed:
            break
        await asyncio.sleep(0.02)
    assert [header.run_id for header in listed] == [run.run_id]


async def test_a_live_but_silent_holder_keeps_its_run_until_the_lease_expires(
    make_store: Factory,
) -> None:
    # A hung Worker keeps its connection and lock: only the lease can free its Run.
    _, process_b, run = await _a_run_held_by_a(make_store)
    assert await process_b.claim(OTHER, data.at(int(LEASE) - 1), LEASE) is None
    taken = await process_b.claim(OTHER, data.at(int(LEASE)), LEASE)
    assert taken is not None
    assert taken.run_id == run.run_id


async def test_a_live_holder_that_lost_its_lock_connection_relocks_on_renew(
    make_store: Factory,
) -> None:
    # The lock connection dropped but the process lives on: its next heartbeat takes a
    # new lock and re-points its Run at it, so the Run stops looking abandoned.
    process_a, process_b, run = await _a_run_held_by_a(make_store)
    old = process_a._liveness.connection_of(W)
    assert old is not None
    await _terminate(process_b, old.get_server_pid())
    for _ in range(100):
        if old.is_closed():
            break
        await asyncio.sleep(0.02)
    assert old.is_closed()
    assert await process_a.renew(run.run_id, W, data.at(1), LEASE)
    new = process_a._liveness.connection_of(W)
    assert new is not None
    assert new is not old
    assert not new.is_closed()
    assert await process_b.claim(OTHER, data.at(2), LEASE) is None
    assert await process_b.expired_leases(data.at(2)) == []


async def test_closing_a_store_frees_its_runs_for_other_processes(make_store: Factory) -> None:
    process_a, process_b, run = await _a_run_held_by_a(make_store)
    await process_a.close()
    taken = await _claim_within(process_b, OTHER, 1)
    assert taken is not None
    assert taken.run_id == run.run_id


async def test_without_liveness_locks_only_the_lease_frees_a_run(make_store: Factory) -> None:
    process_a = await make_store(liveness_locks=False)
    process_b = await make_store()
    await process_a.create_run(*data.admission())
    assert await process_a.claim(W, data.at(0), LEASE) is not None
    assert process_a._liveness.connection_of(W) is None
    await process_a.close()
    assert await process_b.claim(OTHER, data.at(1), LEASE) is None
    assert await process_b.claim(OTHER, data.at(int(LEASE)), LEASE) is not None


_CHILD = textwrap.dedent(
    """
    import asyncio, sys
    from datetime import datetime, UTC
    from psych_runtime.records import WorkerId
    from psych_store_postgres import PostgresStore

    async def main():
        store = PostgresStore(sys.argv[1], schema=sys.argv[2])
        now = datetime.fromisoformat(sys.argv[3])
        claimed = await store.claim(WorkerId("child-worker"), now, 300)
        print(claimed.run_id if claimed else "none", flush=True)
        await asyncio.sleep(3600)

    asyncio.run(main())
    """
)


async def test_a_sigkilled_worker_process_loses_its_run_at_once(
    make_store: Factory, server: str, schema: str
) -> None:
    store = await make_store()
    run = (await store.create_run(*data.admission())).header
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        _CHILD,
        server,
        schema,
        data.at(0).isoformat(),
        stdout=asyncio.subprocess.PIPE,
    )
    try:
        assert child.stdout is not None
        line = await asyncio.wait_for(child.stdout.readline(), 60)
        assert line.decode().strip() == run.run_id
        assert await store.claim(OTHER, data.at(1), LEASE) is None
        os.kill(child.pid, signal.SIGKILL)
        await asyncio.wait_for(child.wait(), 30)
        taken = await _claim_within(store, OTHER, 2)
        assert taken is not None
        assert taken.run_id == run.run_id
        assert taken.attempt_count == 2
    finally:
        if child.returncode is None:
            child.kill()
            await child.wait()


async def _wait_for_work(store: PostgresStore, generation: int, seconds: float) -> bool:
    """Whether ``WORK`` is signalled on ``store``'s notifier within ``seconds``."""
    notifier = store.notifier
    deadline = asyncio.get_running_loop().time() + seconds
    while notifier.generation(WORK) == generation:
        left = deadline - asyncio.get_running_loop().time()
        if left <= 0:
            return False
        await notifier.wait(WORK, generation, left)
    return True


async def test_an_idle_instance_is_woken_when_a_busy_peer_dies(make_store: Factory) -> None:
    process_a = await make_store()
    process_b = await make_store()
    bystander = await make_store()
    assert await bystander.start_listening()
    run = (await process_a.create_run(*data.admission())).header
    assert await process_a.claim(W, data.at(0), LEASE) is not None
    # B's empty claim is what an idle Worker does; afterwards it watches A's lock.
    assert await process_b.claim(OTHER, data.at(1), LEASE) is None
    a_key = process_a._liveness.current_key(W)
    for _ in range(100):
        if process_b.watched_peers == {a_key}:
            break
        await asyncio.sleep(0.02)
    assert process_b.watched_peers == {a_key}
    # Nothing is signalled while A lives.
    before = process_b.notifier.generation(WORK)
    assert not await _wait_for_work(process_b, before, 0.3)
    # A dies. B hears of it without claiming again, and so does every other listener.
    seen_by_bystander = bystander.notifier.generation(WORK)
    lock_conn = process_a._liveness.connection_of(W)
    assert lock_conn is not None
    await _terminate(process_b, lock_conn.get_server_pid())
    assert await _wait_for_work(process_b, before, 5.0)
    assert await _wait_for_work(bystander, seen_by_bystander, 5.0)
    # The watch let go of the lock it was granted: the Run is claimable at once.
    taken = await process_b.claim(OTHER, data.at(2), LEASE)
    assert taken is not None
    assert taken.run_id == run.run_id


async def test_no_peer_is_watched_when_watching_is_off(make_store: Factory) -> None:
    process_a = await make_store()
    process_b = await make_store(watch_peers=0)
    await process_a.create_run(*data.admission())
    assert await process_a.claim(W, data.at(0), LEASE) is not None
    assert await process_b.claim(OTHER, data.at(1), LEASE) is None
    await asyncio.sleep(0.2)
    assert process_b.watched_peers == frozenset()


def test_peers_are_watched_in_ring_order_after_the_smallest_own_key() -> None:
    assert ring_after(50, [10, 60, 70, 20, 60], 2) == [60, 70]
    assert ring_after(65, [10, 60, 70, 20], 3) == [70, 10, 20]
    assert ring_after(5, [10, 20], 0) == []
    # Every process watched by someone: with keys 1..4 each watching its next one, the
    # watched sets cover them all.
    keys = [1, 2, 3, 4]
    watched = {k for own in keys for k in ring_after(own, [x for x in keys if x != own], 1)}
    assert watched == set(keys)
