"""What the facts table holds: separate byte-compared key parts, exact text, no leftovers."""

from collections.abc import Awaitable
from collections.abc import Callable

import pytest

from psych_runtime import StoreError
from psych_runtime.adapters import MemoryKey
from psych_store_mysql import MySQLMemoryStore

from ..conftest import DropTables

RunSql = Callable[..., Awaitable[list[list[tuple[object, ...]]]]]


async def test_rows_keep_the_key_parts_apart_and_the_text_exact(
    mysql_dsn: str, prefix: str, drop_tables: DropTables, sql: RunSql
) -> None:
    memory = MySQLMemoryStore(mysql_dsn, table_prefix=prefix)
    key = MemoryKey(tenant="Acme#1", end_user_id="Alice 🚀")
    try:
        await memory.migrate()
        fact = await memory.remember(key, "emoji 🚀 and 租户")
        (rows,) = await sql(
            f"SELECT tenant, end_user_id, id, HEX(content), created_at "
            f"FROM `{prefix}psych_memories`"
        )
        assert rows == [
            (
                b"Acme#1",
                "Alice 🚀".encode(),
                fact.id.encode(),
                "emoji 🚀 and 租户".encode().hex().upper(),
                fact.created_at.replace(tzinfo=None),
            )
        ]
        assert await memory.erase(key) == 1
        (left,) = await sql(f"SELECT COUNT(*) FROM `{prefix}psych_memories`")
        assert left == [(0,)]
    finally:
        await memory.close()
        await drop_tables(prefix)


async def test_a_closed_memory_store_refuses_further_use(
    mysql_dsn: str, prefix: str, drop_tables: DropTables
) -> None:
    memory = MySQLMemoryStore(mysql_dsn, table_prefix=prefix)
    try:
        await memory.migrate()
    finally:
        await memory.close()
        await memory.close()  # idempotent
        await drop_tables(prefix)
    with pytest.raises(StoreError, match="closed"):
        await memory.recall(MemoryKey(tenant="t", end_user_id="u"))
