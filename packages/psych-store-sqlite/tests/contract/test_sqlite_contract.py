"""SqliteStore against the shared Store conformance suite, one fresh file per test."""

from collections.abc import AsyncIterator

import pytest_asyncio

from psych_contract import StoreContract
from psych_contract.lifecycle import closing
from psych_runtime import Store
from psych_store_sqlite import SqliteStore

from ..conftest import migrated_in_new_file
from ..conftest import new_file_url


class TestSqliteStore(StoreContract):
    supports_notifier = True
    cross_process_notifier = False
    has_schema = True
    shares_backend = True

    @pytest_asyncio.fixture
    async def store(self) -> AsyncIterator[SqliteStore]:
        async with migrated_in_new_file(SqliteStore, "contract.db") as store:
            yield store

    @pytest_asyncio.fixture
    async def peer_store(self, store: Store) -> AsyncIterator[SqliteStore]:
        # A second store on the same file: another process, as far as SQLite can tell.
        assert isinstance(store, SqliteStore)
        async with closing(SqliteStore(f"sqlite:///{store.path}")) as peer:
            yield peer

    @pytest_asyncio.fixture
    async def unmigrated_store(self) -> AsyncIterator[SqliteStore]:
        with new_file_url("unmigrated.db") as url:
            async with closing(SqliteStore(url)) as store:
                yield store
