"""SqliteMemoryStore against the shared MemoryStore conformance suite, one file per test."""

from collections.abc import AsyncIterator

import pytest_asyncio

from psych_contract import MemoryContract
from psych_runtime.adapters import MemoryStore
from psych_store_sqlite import SqliteMemoryStore

from ..conftest import migrated_in_new_file


class TestSqliteMemoryStore(MemoryContract):
    durable = True

    @pytest_asyncio.fixture
    async def memory_store(self) -> AsyncIterator[SqliteMemoryStore]:
        async with migrated_in_new_file(SqliteMemoryStore, "memory.db") as memory:
            yield memory

    async def reopen_memory_store(self, memory_store: MemoryStore) -> SqliteMemoryStore:
        assert isinstance(memory_store, SqliteMemoryStore)
        return SqliteMemoryStore(memory_store.settings)
