"""The Store conformance suite against a real MySQL / MariaDB server."""

from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable

import pytest_asyncio

from psych_contract import StoreContract
from psych_contract.lifecycle import closing
from psych_store_mysql import MySQLStore

from ..conftest import new_prefix


class TestMySQLStore(StoreContract):
    supports_notifier = True
    cross_process_notifier = False  # no LISTEN/NOTIFY equivalent: other processes poll
    has_schema = True
    shares_backend = True
    # InnoDB keeps deleted rows' bytes in free space inside pages until it reuses it
    # (see MySQLStore.delete_runs).
    deleted_runs_leave_no_bytes = False

    @pytest_asyncio.fixture
    async def store(  # type: ignore[override]
        self, migrated_store: Callable[..., Awaitable[MySQLStore]]
    ) -> MySQLStore:
        return await migrated_store()

    @pytest_asyncio.fixture
    async def peer_store(  # type: ignore[override]
        self, store: MySQLStore, migrated_store: Callable[..., Awaitable[MySQLStore]]
    ) -> MySQLStore:
        # A second instance with its own pool on the same tables, as another process has.
        return await migrated_store()

    @pytest_asyncio.fixture
    async def unmigrated_store(  # type: ignore[override]
        self, mysql_dsn: str, drop_tables: Callable[[str], Awaitable[list[str]]]
    ) -> AsyncIterator[MySQLStore]:
        # A table prefix nobody has used (not even `store`, which a case may also ask
        # for): no tables exist until the store migrates.
        prefix = new_prefix()
        try:
            async with closing(MySQLStore(mysql_dsn, table_prefix=prefix)) as store:
                yield store
        finally:
            await drop_tables(prefix)
