"""SqliteMemoryStore against the shared MemoryStore conformance suite, one file per test."""

import tempfile
from collections.abc import AsyncIterator

import pytest_asyncio

from psych_contract import MemoryContract
from psych_contract.lifecycle import migrated
from psych_runtime.adapters import MemoryStore
from psych_store_sqlite import SqliteMemoryStore


class TestSqliteMemoryStore(MemoryContract):
    durable = True

    @pytest_asyncio.fixture
    async def memory_store(self) -> AsyncIterator[SqliteMemoryStore]:
        # A new directory (and so a new, empty file) for every case; the fixture takes
        # no arguments because it overrides the suite's own, hence no tmp_path.
        with tempfile.TemporaryDirectory(prefix="psych-sqlite-memory-") as folder:
            async with migrated(SqliteMemoryStore(f"sqlite:///{folder}/memory.db")) as memory:
                yield memory

    async def reopen_memory_store(self, memory_store: MemoryStore) -> SqliteMemoryStore:
        assert isinstance(memory_store, SqliteMemoryStore)
        return SqliteMemoryStore(memory_store.settings)
