"""A connection the server kills is an outage of one call, never a driver error or a stuck pool.

The store under test logs in as a user created for the test, so ``KILL`` reaches only
its connections and never those of other tests sharing the server. Its pool holds one
connection, so every call after a loss reuses the same pool slot.
"""

import asyncio
import secrets
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit
from urllib.parse import urlunsplit

import pytest
import pytest_asyncio

from psych_contract import _data as data
from psych_contract.lifecycle import closing
from psych_contract.outages import check_ended_sessions_cost_one_call_each
from psych_runtime import StoreUnavailable
from psych_store_mysql import MySQLStore
from psych_store_mysql import _connection
from psych_store_mysql.settings import MySQLSettings

from ..conftest import DropTables


class Victim:
    """A one-connection store and a way to kill its server connections."""

    def __init__(self, store: MySQLStore, user: str, root: Any) -> None:
        self.store = store
        self.user = user
        self._root = root

    async def _rows(self, sql: str, *args: object) -> list[tuple[object, ...]]:
        async with closing(await self._root.cursor()) as cursor:
            await cursor.execute(cursor.mogrify(sql, args) if args else sql)
            return list(await cursor.fetchall())

    async def sessions(self) -> list[int]:
        rows = await self._rows(
            "SELECT id FROM information_schema.processlist WHERE user = %s", self.user
        )
        return [int(str(row[0])) for row in rows]

    async def kill(self, sessions: list[int]) -> None:
        for session in sessions:
            await self._rows(f"KILL CONNECTION {int(session)}")

    async def wait_gone(self, sessions: list[int]) -> None:
        while set(sessions) & set(await self.sessions()):
            await asyncio.sleep(0.005)

    async def wait_until_waiting_on_a_lock(self) -> list[int]:
        while True:
            rows = await self._rows(
                # The append's locking read of the header row, waiting for the lock.
                "SELECT id FROM information_schema.processlist "
                "WHERE user = %s AND command = 'Query' AND info LIKE %s",
                self.user,
                "%FOR UPDATE%",
            )
            if rows:
                return [int(str(row[0])) for row in rows]
            await asyncio.sleep(0.01)


@pytest_asyncio.fixture
async def victim(mysql_dsn: str, prefix: str, drop_tables: DropTables) -> AsyncIterator[Victim]:
    user = f"psych_lost_{secrets.token_hex(4)}"
    password = secrets.token_hex(8)
    settings = MySQLSettings.from_url(mysql_dsn)
    root = await _connection.connect(settings)
    cursor = await root.cursor()
    await cursor.execute(f"CREATE USER '{user}'@'%' IDENTIFIED BY '{password}'")
    await cursor.execute(f"GRANT ALL ON `{settings.database}`.* TO '{user}'@'%'")
    await cursor.close()
    parts = urlsplit(mysql_dsn)
    url = urlunsplit(parts._replace(netloc=f"{user}:{password}@{parts.hostname}:{parts.port}"))
    store = MySQLStore(url, table_prefix=prefix, pool_min_size=1, pool_max_size=1)
    try:
        await store.migrate()
        yield Victim(store, user, root)
    finally:
        await store.close()
        cursor = await root.cursor()
        await cursor.execute(f"DROP USER IF EXISTS '{user}'@'%'")
        await cursor.close()
        await root.ensure_closed()
        await drop_tables(prefix)


async def test_a_killed_session_costs_at_most_one_call_and_the_pool_recovers(
    victim: Victim,
) -> None:
    await check_ended_sessions_cost_one_call_each(
        victim.store,
        await data.admitted_run(victim.store),
        sessions=victim.sessions,
        end=victim.kill,
        wait_gone=victim.wait_gone,
        rounds=15,
        spread=5,
    )


async def test_a_call_whose_session_is_killed_mid_statement_is_store_unavailable(
    victim: Victim, mysql_dsn: str, prefix: str
) -> None:
    run_id = await data.admitted_run(victim.store)
    header = await victim.store.get_run(run_id)
    assert header is not None
    blocker = await _connection.connect(MySQLSettings.from_url(mysql_dsn))
    cursor = await blocker.cursor()
    await cursor.execute("START TRANSACTION")
    await cursor.execute(
        cursor.mogrify(
            f"SELECT 1 FROM `{prefix}psych_runs` WHERE run_id = %s FOR UPDATE", (run_id,)
        )
    )
    try:
        append = asyncio.ensure_future(victim.store.append(run_id, 2, data.batch(header, 2, 1)))
        await victim.kill(await victim.wait_until_waiting_on_a_lock())
        with pytest.raises(StoreUnavailable, match="unavailable"):
            await append
    finally:
        await blocker.rollback()
        await cursor.close()
        await blocker.ensure_closed()
    # The append died with its session, rolled back; the next calls work.
    assert await victim.store.head(run_id) == 1
    await victim.store.append(run_id, 2, data.batch(header, 2, 1))
    assert await victim.store.head(run_id) == 2
