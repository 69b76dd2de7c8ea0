"""LISTEN/NOTIFY wake-ups between store instances (each one a process, to PostgreSQL)."""

import asyncio
from collections.abc import Awaitable
from collections.abc import Callable

import asyncpg

from psych_contract import _data as data
from psych_contract.lifecycle import closing
from psych_runtime.adapters import WORK
from psych_runtime.adapters import RunState
from psych_runtime.records import WorkerId
from psych_store_postgres import PostgresStore

Factory = Callable[..., Awaitable[PostgresStore]]
WAIT = 2.0


def _listening(store: PostgresStore) -> bool:
    # A call rather than the property, so checks before and after an action are not
    # treated as the same expression.
    return store.listening


async def test_a_waiter_in_another_instance_wakes_on_admission(make_store: Factory) -> None:
    dispatcher = await make_store()
    worker_side = await make_store()
    assert await worker_side.start_listening()
    notifier = worker_side.notifier
    seen = notifier.generation(WORK)
    waiter = asyncio.create_task(notifier.wait(WORK, seen, WAIT))
    await dispatcher.create_run(*data.admission())
    assert await waiter
    # ...and the woken side can claim what woke it.
    assert await worker_side.claim(WorkerId("w"), data.at(0), 30) is not None


async def test_release_and_wake_reach_another_instance(make_store: Factory) -> None:
    store = await make_store()
    peer = await make_store()
    assert await peer.start_listening()
    run = (await store.create_run(*data.admission())).header
    assert await store.claim(WorkerId("w"), data.at(0), 30) is not None
    seen_run = peer.notifier.generation(run.run_id)
    seen_work = peer.notifier.generation(WORK)
    await store.release(run.run_id, WorkerId("w"), RunState.SUSPENDED)
    assert await peer.notifier.wait(run.run_id, seen_run, WAIT)
    await store.set_runnable_at(run.run_id, None)
    assert await peer.notifier.wait(WORK, seen_work, WAIT)


async def test_the_first_claim_starts_listening(make_store: Factory) -> None:
    store = await make_store()
    assert not _listening(store)
    assert await store.claim(WorkerId("w"), data.at(0), 30) is None
    assert _listening(store)


async def test_a_stores_own_commits_are_signalled_once_not_echoed(make_store: Factory) -> None:
    store = await make_store()
    assert await store.start_listening()
    run = (await store.create_run(*data.admission())).header
    await asyncio.sleep(0.2)  # let any echo of the admission arrive
    before = store.notifier.generation(run.run_id)
    await store.append(run.run_id, 2, data.batch(run, 2, 1))
    await asyncio.sleep(0.3)  # an echo, if it came, would have arrived by now
    assert store.notifier.generation(run.run_id) == before + 1


async def test_deployments_in_other_schemas_do_not_wake_each_other(
    make_store: Factory, extra_schema: Callable[[], str]
) -> None:
    ours = await make_store()
    theirs = await make_store(schema_name=extra_schema())
    assert ours.channel != theirs.channel
    assert await ours.start_listening()
    seen = ours.notifier.generation(WORK)
    await theirs.create_run(*data.admission())
    assert not await ours.notifier.wait(WORK, seen, 0.3)


async def test_a_non_listening_store_still_wakes_listeners(make_store: Factory) -> None:
    quiet = await make_store(listen=False)
    peer = await make_store()
    assert await peer.start_listening()
    assert not await quiet.start_listening()
    seen = peer.notifier.generation(WORK)
    await quiet.create_run(*data.admission())
    assert await peer.notifier.wait(WORK, seen, WAIT)
    assert await quiet.claim(WorkerId("w"), data.at(0), 30) is not None
    assert not _listening(quiet)


async def test_a_lost_listen_connection_is_reopened_by_the_next_claim(
    make_store: Factory, server: str
) -> None:
    store = await make_store()
    peer = await make_store()
    assert await peer.start_listening()
    old = peer._listener._conn
    assert old is not None
    async with closing(await asyncpg.connect(server)) as admin:
        await admin.fetchval("SELECT pg_terminate_backend($1)", old.get_server_pid())
    for _ in range(100):
        if not _listening(peer):
            break
        await asyncio.sleep(0.02)
    assert not _listening(peer)
    assert await peer.claim(WorkerId("w"), data.at(0), 30) is None
    assert _listening(peer)
    seen = peer.notifier.generation(WORK)
    await store.create_run(*data.admission())
    assert await peer.notifier.wait(WORK, seen, WAIT)
