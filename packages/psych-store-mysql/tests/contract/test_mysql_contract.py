"""The Store conformance suite against a real MySQL / MariaDB server."""

from collections.abc import Awaitable, Callable

import pytest_asyncio

from psych_contract import StoreContract
from psych_store_mysql import MySQLStore


class TestMySQLStore(StoreContract):
    supports_notifier = True
    cross_process_notifier = False  # no LISTEN/NOTIFY equivalent: other processes poll

    @pytest_asyncio.fixture
    async def store(  # type: ignore[override]
        self, migrated_store: Callable[..., Awaitable[MySQLStore]]
    ) -> MySQLStore:
        return await migrated_store()
