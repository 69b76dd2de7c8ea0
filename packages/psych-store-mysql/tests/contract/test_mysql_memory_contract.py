"""The MemoryStore conformance suite against a real MySQL / MariaDB server.

Every case gets its own ``table_prefix``, migrated by the first store and dropped
afterwards; the peer and the reopened store are further instances on the same tables.
"""

from collections.abc import AsyncIterator

import pytest_asyncio

from psych_contract import MemoryContract
from psych_contract.lifecycle import migrated
from psych_runtime.adapters import MemoryStore
from psych_store_mysql import MySQLMemoryStore

from ..conftest import DropTables


class TestMySQLMemoryStore(MemoryContract):
    durable = True

    @pytest_asyncio.fixture
    async def memory_store(  # type: ignore[override]
        self, mysql_dsn: str, prefix: str, drop_tables: DropTables
    ) -> AsyncIterator[MySQLMemoryStore]:
        try:
            async with migrated(MySQLMemoryStore(mysql_dsn, table_prefix=prefix)) as memory:
                yield memory
        finally:
            await drop_tables(prefix)

    async def reopen_memory_store(self, memory_store: MemoryStore) -> MemoryStore:
        assert isinstance(memory_store, MySQLMemoryStore)
        return MySQLMemoryStore(memory_store.settings)
