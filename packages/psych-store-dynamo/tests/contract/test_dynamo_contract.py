"""DynamoStore against the shared Store conformance suite, on a real moto server.

Every case gets its own table, created by ``migrate`` and dropped afterwards.
"""

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from psych_contract import StoreContract
from psych_contract.lifecycle import closing
from psych_contract.lifecycle import migrated
from psych_runtime import Store
from psych_store_dynamo import DynamoStore

from ..conftest import dynamo_url
from ..conftest import new_table_name


class TestDynamoStore(StoreContract):
    supports_notifier = True
    cross_process_notifier = False
    has_schema = True
    shares_backend = True

    @pytest.fixture(autouse=True)
    def _server(self, moto_endpoint: str) -> None:
        # The `store` override must keep the suite's signature, so the endpoint of the
        # session's moto server reaches it through the test instance instead.
        self.endpoint = moto_endpoint

    @pytest_asyncio.fixture
    async def store(self) -> AsyncIterator[DynamoStore]:
        url = dynamo_url(self.endpoint, new_table_name())
        async with migrated(DynamoStore(url)) as store:
            yield store
        # The case may have closed `store` already: another instance drops the table.
        async with closing(DynamoStore(url)) as cleaner:
            await cleaner.drop_table()

    @pytest_asyncio.fixture
    async def peer_store(self, store: Store) -> AsyncIterator[DynamoStore]:
        # A second instance (its own client) on the same table, as another process has.
        assert isinstance(store, DynamoStore)
        async with closing(DynamoStore(dynamo_url(self.endpoint, store.table_name))) as peer:
            yield peer

    @pytest_asyncio.fixture
    async def unmigrated_store(self) -> AsyncIterator[DynamoStore]:
        # A table name nobody has used: the table only exists once the store migrates.
        async with closing(DynamoStore(dynamo_url(self.endpoint, new_table_name()))) as store:
            yield store
            await store.drop_table()
