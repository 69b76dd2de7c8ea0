"""A migrated store on its own table prefix, dropped after the test."""

from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable

import pytest_asyncio

from psych_store_mysql import MySQLStore

DropTables = Callable[[str], Awaitable[list[str]]]


@pytest_asyncio.fixture
async def store(migrated_store: Callable[..., Awaitable[MySQLStore]]) -> MySQLStore:
    return await migrated_store()


@pytest_asyncio.fixture
async def cleanup(drop_tables: DropTables) -> AsyncIterator[list[str]]:
    """Prefixes a test registers here are dropped afterwards."""
    prefixes: list[str] = []
    yield prefixes
    for prefix in prefixes:
        await drop_tables(prefix)
