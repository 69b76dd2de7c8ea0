"""PostgresMemoryStore against the shared MemoryStore conformance suite, on the real server.

Each case gets its own schema (the ``schema`` fixture of this package's tests), migrated
before and dropped after, so it can run against a shared ``test`` database without
seeing anyone else's facts.
"""

from collections.abc import AsyncIterator

import pytest_asyncio

from psych_contract import MemoryContract
from psych_contract.lifecycle import migrated
from psych_runtime.adapters import MemoryStore
from psych_store_postgres import PostgresMemoryStore


class TestPostgresMemoryStore(MemoryContract):
    durable = True
    dsn: str

    @pytest_asyncio.fixture
    async def memory_store(  # type: ignore[override]
        self, server: str, schema: str
    ) -> AsyncIterator[PostgresMemoryStore]:
        self.dsn = server
        async with migrated(PostgresMemoryStore(server, schema=schema)) as memory:
            yield memory

    async def reopen_memory_store(self, memory_store: MemoryStore) -> PostgresMemoryStore:
        # Its own pool on the same schema: another process, as far as the server can tell.
        assert isinstance(memory_store, PostgresMemoryStore)
        return PostgresMemoryStore(self.dsn, schema=memory_store.schema)
