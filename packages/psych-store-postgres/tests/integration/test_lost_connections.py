"""A connection the server ends is an outage of one call, never a driver error or a stuck pool.

Each test gives its store an application name of its own and ends only that store's
sessions with ``pg_terminate_backend``, so tests sharing the server are left alone. The
pool holds one connection, so every call after a loss reuses the same pool slot.
"""

import asyncio
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg
import pytest
import pytest_asyncio

from psych_contract import _data as data
from psych_contract.lifecycle import closing
from psych_contract.outages import check_ended_sessions_cost_one_call_each
from psych_runtime import RunId
from psych_runtime import StoreUnavailable
from psych_runtime.adapters.store import RunHeader
from psych_store_postgres import PostgresStore


class Victim:
    """A one-connection store and a way to end its server sessions."""

    def __init__(
        self, store: PostgresStore, name: str, dsn: str, killer: asyncpg.Connection
    ) -> None:
        self.store = store
        self.name = name
        self._dsn = dsn
        self._killer = killer

    async def terminate(self) -> int:
        """End every session of this store; returns how many there were."""
        return int(
            await self._killer.fetchval(
                "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) "
                "FROM pg_stat_activity WHERE application_name = $1",
                self.name,
            )
        )

    async def sessions(self) -> list[int]:
        """The server pids of this store's sessions."""
        rows = await self._killer.fetch(
            "SELECT pid FROM pg_stat_activity WHERE application_name = $1", self.name
        )
        return [int(row[0]) for row in rows]

    async def wait_gone(self, pids: list[int]) -> None:
        """Wait until the server has finished ending the sessions ``pids``."""
        while await self._killer.fetchval(
            "SELECT count(*) FROM pg_stat_activity WHERE pid = ANY($1::int[])", pids
        ):
            await asyncio.sleep(0.005)

    async def wait_until_waiting_on_a_lock(self) -> None:
        while not await self._killer.fetchval(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE application_name = $1 AND wait_event_type = 'Lock'",
            self.name,
        ):
            await asyncio.sleep(0.01)

    async def lock_run(self, run_id: RunId, schema: str) -> asyncpg.Connection:
        """Hold the Run's header row locked from another session until it is closed."""
        blocker = await asyncpg.connect(self._dsn)
        await blocker.execute("BEGIN")
        await blocker.execute(
            f'SELECT 1 FROM "{schema}".psych_runs WHERE run_id = $1 FOR UPDATE', run_id
        )
        return blocker


@pytest_asyncio.fixture
async def victim(server: str, schema: str) -> AsyncIterator[Victim]:
    name = f"psych-lost-{secrets.token_hex(4)}"
    store = PostgresStore(
        f"{server}?application_name={name}",
        schema=schema,
        min_size=1,
        max_size=1,
        listen=False,
        liveness_locks=False,
    )
    await store.migrate()
    killer = await asyncpg.connect(server)
    try:
        yield Victim(store, name, server, killer)
    finally:
        await store.close()
        await killer.close()


@asynccontextmanager
async def _append_waiting_on_a_lock(
    victim: Victim, schema: str
) -> AsyncIterator[tuple[RunId, RunHeader, asyncio.Future[None]]]:
    """A new Run's second record on its way, held up by a row lock until the block ends."""
    run_id = await data.admitted_run(victim.store)
    header = await victim.store.get_run(run_id)
    assert header is not None
    async with closing(await victim.lock_run(run_id, schema)):
        append = asyncio.ensure_future(victim.store.append(run_id, 2, data.batch(header, 2, 1)))
        await victim.wait_until_waiting_on_a_lock()
        yield run_id, header, append


async def test_an_ended_session_costs_at_most_one_call_and_the_pool_recovers(
    victim: Victim,
) -> None:
    await check_ended_sessions_cost_one_call_each(
        victim.store,
        await data.admitted_run(victim.store),
        sessions=victim.sessions,
        end=lambda _: victim.terminate(),
        wait_gone=victim.wait_gone,
        rounds=30,
        spread=10,
    )


async def test_a_call_whose_session_is_ended_mid_statement_is_store_unavailable(
    victim: Victim, schema: str
) -> None:
    async with _append_waiting_on_a_lock(victim, schema) as (run_id, header, append):
        assert await victim.terminate() == 1
        with pytest.raises(StoreUnavailable, match="terminating connection"):
            await append
    # The append was rolled back with its session; the next call works and writes it.
    assert await victim.store.head(run_id) == 1
    await victim.store.append(run_id, 2, data.batch(header, 2, 1))
    assert await victim.store.head(run_id) == 2


async def test_a_cancelled_call_leaves_no_busy_connection_behind(
    victim: Victim, schema: str
) -> None:
    async with _append_waiting_on_a_lock(victim, schema) as (run_id, header, append):
        append.cancel()
        with pytest.raises(asyncio.CancelledError):
            await append
    # The one pool slot is free and its connection is usable (a fresh one: the old
    # session was dropped while the server was still working on it). Whether that
    # session's append committed before the server noticed is unknown to the caller,
    # as after any cancelled write; the log holds it whole or not at all.
    head = await victim.store.head(run_id)
    assert head in (1, 2)
    if head == 1:
        await victim.store.append(run_id, 2, data.batch(header, 2, 1))
    assert len(await victim.store.read(run_id)) == 2
