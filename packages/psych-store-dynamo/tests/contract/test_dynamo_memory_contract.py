"""DynamoMemoryStore against the shared MemoryStore conformance suite, on a real moto
server.

Every case gets its own table, created by ``migrate`` and dropped afterwards; the peer
and the reopened store are further instances (each with its own client) on that table.
"""

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from psych_contract import MemoryContract
from psych_contract.lifecycle import migrated
from psych_runtime.adapters import MemoryStore
from psych_store_dynamo import DynamoMemoryStore
from psych_store_dynamo import drop_table

from ..conftest import dynamo_url
from ..conftest import new_table_name


class TestDynamoMemoryStore(MemoryContract):
    durable = True

    @pytest.fixture(autouse=True)
    def _server(self, moto_endpoint: str) -> None:
        # The fixtures below keep the suite's signatures, so the endpoint of the
        # session's moto server reaches them through the test instance instead.
        self.endpoint = moto_endpoint

    @pytest_asyncio.fixture
    async def memory_store(self) -> AsyncIterator[DynamoMemoryStore]:  # type: ignore[override]
        url = dynamo_url(self.endpoint, new_table_name())
        try:
            async with migrated(DynamoMemoryStore(url)) as memory:
                yield memory
        finally:
            await drop_table(url)

    async def reopen_memory_store(self, memory_store: MemoryStore) -> MemoryStore:
        assert isinstance(memory_store, DynamoMemoryStore)
        return DynamoMemoryStore(memory_store.settings)
