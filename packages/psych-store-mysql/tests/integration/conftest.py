"""A migrated store on its own table prefix, dropped after the test."""

from collections.abc import AsyncIterator, Awaitable, Callable

import pytest_asyncio

from psych_store_mysql import MySQLStore

DropTables = Callable[[str], Awaitable[list[str]]]


@pytest_asyncio.fixture
async def store(mysql_dsn: str, prefix: str, drop_tables: DropTables) -> AsyncIterator[MySQLStore]:
    store = MySQLStore(mysql_dsn, table_prefix=prefix)
    try:
        await store.migrate()
        yield store
    finally:
        await store.close()
        await drop_tables(prefix)


@pytest_asyncio.fixture
async def cleanup(drop_tables: DropTables) -> AsyncIterator[list[str]]:
    """Prefixes a test registers here are dropped afterwards."""
    prefixes: list[str] = []
    yield prefixes
    for prefix in prefixes:
        await drop_tables(prefix)
