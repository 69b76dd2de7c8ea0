"""PostgresMemoryStore against the shared MemoryStore conformance suite, on the real server.

Each case gets its own schema (``psych_t_<random>``), migrated before and dropped
after, like the Store suite next door, so it can run against a shared ``test``
database without seeing anyone else's facts.
"""

import os
import secrets
from collections.abc import AsyncIterator

import asyncpg
import pytest
import pytest_asyncio

from psych_contract import MemoryContract
from psych_runtime.adapters import MemoryStore
from psych_store_postgres import PostgresMemoryStore

DSN = os.environ.get("PSYCH_TEST_POSTGRES_DSN", "postgresql://postgres@127.0.0.1:5432/test")


async def _admin() -> asyncpg.Connection:
    try:
        return await asyncpg.connect(DSN, timeout=5)
    except Exception as exc:
        # Fail, never skip: a suite that silently skips proves nothing.
        pytest.fail(f"PostgreSQL is required and {DSN!r} is unreachable ({exc})")


class TestPostgresMemoryStore(MemoryContract):
    durable = True

    @pytest_asyncio.fixture
    async def memory_store(self) -> AsyncIterator[PostgresMemoryStore]:
        admin = await _admin()
        schema = f"psych_t_{secrets.token_hex(6)}"
        memory = PostgresMemoryStore(DSN, schema=schema)
        try:
            await memory.migrate()
            yield memory
        finally:
            await memory.close()
            await admin.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
            await admin.close()

    async def reopen_memory_store(self, memory_store: MemoryStore) -> PostgresMemoryStore:
        assert isinstance(memory_store, PostgresMemoryStore)
        return PostgresMemoryStore(DSN, schema=memory_store.schema)
