"""``psych_runtime.open_store`` and ``open_memory_store`` with ``migrate=True`` against the
real server."""

from collections.abc import Awaitable, Callable, Iterator

import pytest

import psych_runtime
from psych_contract.plugin import plugins_as_installed
from psych_store_mysql import MySQLMemoryStore, MySQLStore
from psych_store_mysql.schema import Tables

TablesOf = Callable[[str], Awaitable[list[str]]]


@pytest.fixture(autouse=True)
def fresh_plugin_manager(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    with plugins_as_installed(monkeypatch):
        yield


async def test_open_store_with_migrate_returns_a_ready_store(
    mysql_dsn: str, prefix: str, cleanup: list[str], tables_of: TablesOf
) -> None:
    cleanup.append(prefix)
    url = mysql_dsn.replace("mysql://", "mariadb://", 1) + f"?table_prefix={prefix}"
    store = await psych_runtime.open_store(url, migrate=True)
    try:
        assert isinstance(store, MySQLStore)
        assert await store.head(psych_runtime.RunId("nobody")) == 0
    finally:
        await store.close()
    assert await tables_of(prefix) == sorted(Tables(prefix).all)


async def test_open_store_without_migrate_leaves_the_database_alone(
    mysql_dsn: str, prefix: str, tables_of: TablesOf
) -> None:
    store = await psych_runtime.open_store(f"{mysql_dsn}?table_prefix={prefix}")
    try:
        with pytest.raises(psych_runtime.adapters.SchemaNotMigrated):
            await store.head(psych_runtime.RunId("nobody"))
    finally:
        await store.close()
    assert await tables_of(prefix) == []


@pytest.mark.parametrize("scheme", ["mysql", "mariadb"])
async def test_open_memory_store_with_migrate_returns_a_ready_memory_store(
    scheme: str, mysql_dsn: str, prefix: str, cleanup: list[str], tables_of: TablesOf
) -> None:
    cleanup.append(prefix)
    url = mysql_dsn.replace("mysql://", f"{scheme}://", 1) + f"?table_prefix={prefix}"
    memory = await psych_runtime.open_memory_store(url, migrate=True)
    try:
        assert isinstance(memory, MySQLMemoryStore)
        key = psych_runtime.adapters.MemoryKey(tenant="acme", end_user_id="alice")
        fact = await memory.remember(key, "opened through the plugin")
        assert await memory.recall(key) == (fact,)
    finally:
        await memory.close()
    assert await tables_of(prefix) == sorted(Tables(prefix).all)


async def test_open_memory_store_without_migrate_leaves_the_database_alone(
    mysql_dsn: str, prefix: str, tables_of: TablesOf
) -> None:
    memory = await psych_runtime.open_memory_store(f"{mysql_dsn}?table_prefix={prefix}")
    try:
        with pytest.raises(psych_runtime.adapters.SchemaNotMigrated):
            await memory.recall(psych_runtime.adapters.MemoryKey(tenant="t", end_user_id="u"))
    finally:
        await memory.close()
    assert await tables_of(prefix) == []
