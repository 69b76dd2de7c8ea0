"""PostgresStore against the shared Store conformance suite, on the real server.

Each case gets its own schema (``psych_t_<random>``), migrated before and dropped
after, so the suite can run against a shared ``test`` database, in parallel with other
runs, without seeing anyone else's rows. The fixtures are self-contained on purpose:
this file is also the example of wiring ``StoreContract`` to a database.
"""

import os
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import ClassVar

import asyncpg
import pytest
import pytest_asyncio

from psych_contract import StoreContract
from psych_contract.lifecycle import closing
from psych_runtime import Store
from psych_store_postgres import PostgresStore

DSN = os.environ.get("PSYCH_TEST_POSTGRES_DSN", "postgresql://postgres@127.0.0.1:5432/test")


async def _admin() -> asyncpg.Connection:
    try:
        return await asyncpg.connect(DSN, timeout=5)
    except Exception as exc:
        # Fail, never skip: a suite that silently skips proves nothing.
        pytest.fail(f"PostgreSQL is required and {DSN!r} is unreachable ({exc})")


@asynccontextmanager
async def _scratch_store() -> AsyncIterator[PostgresStore]:
    """A store on a schema name nobody has used, dropped with all it holds afterwards."""
    admin = await _admin()
    schema = f"psych_t_{secrets.token_hex(6)}"
    try:
        async with closing(PostgresStore(DSN, schema=schema)) as store:
            yield store
    finally:
        await admin.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        await admin.close()


class TestPostgresStore(StoreContract):
    supports_notifier: ClassVar[bool] = True
    cross_process_notifier: ClassVar[bool] = True
    has_schema: ClassVar[bool] = True
    # A plain VACUUM removes deleted row versions from every read and index; their bytes
    # may stay in a page's free space until reused (see PostgresStore.delete_runs).
    deleted_runs_leave_no_bytes: ClassVar[bool] = False

    @pytest_asyncio.fixture
    async def store(self) -> AsyncIterator[PostgresStore]:
        async with _scratch_store() as store:
            await store.migrate()
            yield store

    @pytest_asyncio.fixture
    async def peer_store(self, store: Store) -> AsyncIterator[PostgresStore]:
        # A second instance with its own pool and LISTEN connection: another process,
        # as far as PostgreSQL can tell. It listens before the case starts.
        assert isinstance(store, PostgresStore)
        async with closing(PostgresStore(DSN, schema=store.schema)) as peer:
            assert await peer.start_listening()
            yield peer

    @pytest_asyncio.fixture
    async def unmigrated_store(self) -> AsyncIterator[PostgresStore]:
        # A schema name nobody has used: the store finds no tables until it migrates.
        async with _scratch_store() as store:
            yield store
