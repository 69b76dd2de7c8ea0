"""Fixtures shared by this package's tests: the test server's DSN and throwaway schemas.

The server is required, never optional: when it cannot be reached every test that
needs it fails (locally and in CI alike) rather than being skipped, so a broken setup
can never pass as green.
"""

import os
import secrets
from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable
from contextlib import AsyncExitStack

import asyncpg
import pytest
import pytest_asyncio

from psych_contract.lifecycle import closing
from psych_store_postgres import PostgresStore
from psych_store_postgres._database import PostgresDatabase
from psych_store_postgres.schema import LATEST_VERSION
from psych_store_postgres.schema import MIGRATIONS
from psych_store_postgres.schema import version_table_sql

DSN_ENV = "PSYCH_TEST_POSTGRES_DSN"
DEFAULT_DSN = "postgresql://postgres@127.0.0.1:5432/test"

StoreFactory = Callable[..., Awaitable[PostgresStore]]


@pytest.fixture(scope="session")
def dsn() -> str:
    """The test server's URL, from PSYCH_TEST_POSTGRES_DSN or the local default."""
    return os.environ.get(DSN_ENV, DEFAULT_DSN)


def new_schema_name() -> str:
    """A schema name no other test uses, so tests never see each other's rows."""
    return f"psych_t_{secrets.token_hex(6)}"


async def drop_schema(dsn: str, schema: str) -> None:
    async with closing(await asyncpg.connect(dsn)) as conn:
        await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


async def record_a_newer_schema(dsn: str, schema: str) -> int:
    """Mark ``schema`` as migrated by a later release than this one; that version."""
    newer = LATEST_VERSION + 1
    async with closing(await asyncpg.connect(dsn)) as conn:
        await conn.execute(
            f'INSERT INTO "{schema}".psych_schema_version (version, name) VALUES ($1, $2)',
            newer,
            "from the future",
        )
    return newer


async def schema_at(dsn: str, schema: str, version: int) -> None:
    """Create ``schema`` as the release whose schema was at ``version`` left it."""
    async with closing(await asyncpg.connect(dsn)) as conn, conn.transaction():
        await conn.execute(f'CREATE SCHEMA "{schema}"')
        await conn.execute(version_table_sql(schema))
        for migration in MIGRATIONS[:version]:
            await conn.execute(migration.render(schema))
            await conn.execute(
                f'INSERT INTO "{schema}".psych_schema_version (version, name) VALUES ($1, $2)',
                migration.version,
                migration.name,
            )


async def require_server(dsn: str) -> str:
    """Return ``dsn`` once the server answers; fail the test (never skip) if it does not."""
    try:
        conn = await asyncpg.connect(dsn, timeout=5)
    except Exception as exc:
        pytest.fail(
            f"PostgreSQL is required for these tests and {dsn!r} is unreachable ({exc}); "
            f"start the server or point {DSN_ENV} at one"
        )
    await conn.close()
    return dsn


@pytest_asyncio.fixture
async def server(dsn: str) -> str:
    """The DSN, after proving the server answers; fails the test (never skips) if not."""
    return await require_server(dsn)


@pytest_asyncio.fixture
async def schema(server: str) -> AsyncIterator[str]:
    """A fresh schema name, dropped (with everything in it) after the test."""
    name = new_schema_name()
    yield name
    await drop_schema(server, name)


@pytest_asyncio.fixture
async def extra_schema(server: str) -> AsyncIterator[Callable[[], str]]:
    """Hands out more fresh schema names; all of them are dropped after the test."""
    names: list[str] = []

    def make() -> str:
        names.append(new_schema_name())
        return names[-1]

    yield make
    for name in names:
        await drop_schema(server, name)


async def kept[D: PostgresDatabase](opened: AsyncExitStack, database: D, *, migrate: bool) -> D:
    """``database``, closed when ``opened`` closes, and migrated first when asked."""
    opened.push_async_callback(database.close)
    if migrate:
        await database.migrate()
    return database


@pytest_asyncio.fixture
async def make_store(server: str, schema: str) -> AsyncIterator[StoreFactory]:
    """Build stores on the test's schema; every store built is closed afterwards."""
    async with AsyncExitStack() as opened:

        async def make(
            *,
            migrate: bool = True,
            schema_name: str | None = None,
            listen: bool | None = None,
            liveness_locks: bool | None = None,
            watch_peers: int | None = None,
        ) -> PostgresStore:
            store = PostgresStore(
                server,
                schema=schema_name or schema,
                listen=listen,
                liveness_locks=liveness_locks,
                watch_peers=watch_peers,
            )
            return await kept(opened, store, migrate=migrate)

        yield make
