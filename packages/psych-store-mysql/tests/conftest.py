"""Shared fixtures: where the test server is, and isolated table prefixes.

Every test that touches the database gets its own ``table_prefix``, so tests never
see each other's rows and the tables can be dropped afterwards. The server is never
optional: when it cannot be reached these tests fail, they are not skipped.
"""

import os
import uuid
from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable

import pytest
import pytest_asyncio

from psych_store_mysql import MySQLStore
from psych_store_mysql import _connection
from psych_store_mysql._batches import Batch
from psych_store_mysql.schema import Tables
from psych_store_mysql.settings import MySQLSettings

DSN_ENV = "PSYCH_TEST_MYSQL_DSN"
DEFAULT_DSN = "mysql://root@127.0.0.1:3306/test"

DropTables = Callable[[str], Awaitable[list[str]]]
MigratedStore = Callable[..., Awaitable[MySQLStore]]


@pytest.fixture
def mysql_dsn() -> str:
    """The test server's URL (``PSYCH_TEST_MYSQL_DSN``, else the local default)."""
    return os.environ.get(DSN_ENV, DEFAULT_DSN)


def new_prefix() -> str:
    return f"t{uuid.uuid4().hex[:12]}_"


@pytest.fixture
def prefix() -> str:
    """A table prefix no other test uses."""
    return new_prefix()


async def existing_tables(dsn: str, prefix: str) -> list[str]:
    conn = await _connection.connect(MySQLSettings.from_url(dsn))
    try:
        batch = Batch(conn, 1 << 20)
        names = Tables(prefix).all
        slots = ", ".join(["%s"] * len(names))
        (result,) = await batch.run(
            (
                "SELECT TABLE_NAME FROM information_schema.TABLES "
                f"WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN ({slots})",
                names,
            )
        )
        return sorted(str(row[0]) for row in result.rows)
    finally:
        await conn.ensure_closed()


async def run_sql(dsn: str, *statements: str) -> list[list[tuple[object, ...]]]:
    """Run statements on a fresh connection and return each one's rows."""
    conn = await _connection.connect(MySQLSettings.from_url(dsn))
    try:
        results = await Batch(conn, 1 << 20).run(*((sql, ()) for sql in statements))
        return [list(result.rows) for result in results]
    finally:
        await conn.ensure_closed()


@pytest_asyncio.fixture
async def drop_tables(mysql_dsn: str) -> AsyncIterator[DropTables]:
    """Drop every table a prefix owns; returns the names it dropped."""

    async def drop(prefix: str) -> list[str]:
        present = await existing_tables(mysql_dsn, prefix)
        if present:
            await run_sql(mysql_dsn, "DROP TABLE " + ", ".join(f"`{t}`" for t in present))
        return present

    yield drop


@pytest_asyncio.fixture
async def migrated_store(
    mysql_dsn: str, prefix: str, drop_tables: DropTables
) -> AsyncIterator[MigratedStore]:
    """Open and migrate a store on the test's prefix, with any extra options.

    Every store it opened is closed after the test and the prefix's tables dropped,
    even when migrating failed.
    """
    opened: list[MySQLStore] = []

    async def open_store(**options: object) -> MySQLStore:
        store = MySQLStore(mysql_dsn, table_prefix=prefix, **options)
        opened.append(store)
        await store.migrate()
        return store

    try:
        yield open_store
    finally:
        for store in opened:
            await store.close()
        await drop_tables(prefix)


RunSql = Callable[..., Awaitable[list[list[tuple[object, ...]]]]]
TablesOf = Callable[[str], Awaitable[list[str]]]


@pytest.fixture
def sql(mysql_dsn: str) -> RunSql:
    """Run raw SQL on the test server through a separate connection."""

    async def run(*statements: str) -> list[list[tuple[object, ...]]]:
        return await run_sql(mysql_dsn, *statements)

    return run


@pytest.fixture
def tables_of(mysql_dsn: str) -> TablesOf:
    """The names of the tables that exist for a prefix."""

    async def tables(prefix: str) -> list[str]:
        return await existing_tables(mysql_dsn, prefix)

    return tables
