"""``psych_runtime.open_store`` and ``open_memory_store`` with ``migrate=True`` against the
real server."""

from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Iterator
from typing import Any

import pytest

import psych_runtime
from psych_contract.lifecycle import closing
from psych_contract.plugin import plugins_as_installed
from psych_store_mysql import MySQLMemoryStore
from psych_store_mysql import MySQLStore
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
    async with closing(await psych_runtime.open_store(url, migrate=True)) as store:
        assert isinstance(store, MySQLStore)
        assert await store.head(psych_runtime.RunId("nobody")) == 0
    assert await tables_of(prefix) == sorted(Tables(prefix).all)


@pytest.mark.parametrize("scheme", ["mysql", "mariadb"])
async def test_open_memory_store_with_migrate_returns_a_ready_memory_store(
    scheme: str, mysql_dsn: str, prefix: str, cleanup: list[str], tables_of: TablesOf
) -> None:
    cleanup.append(prefix)
    url = mysql_dsn.replace("mysql://", f"{scheme}://", 1) + f"?table_prefix={prefix}"
    async with closing(await psych_runtime.open_memory_store(url, migrate=True)) as memory:
        assert isinstance(memory, MySQLMemoryStore)
        key = psych_runtime.adapters.MemoryKey(tenant="acme", end_user_id="alice")
        fact = await memory.remember(key, "opened through the plugin")
        assert await memory.recall(key) == (fact,)
    assert await tables_of(prefix) == sorted(Tables(prefix).all)


async def _first_store_call(store: MySQLStore) -> object:
    return await store.head(psych_runtime.RunId("nobody"))


async def _first_memory_call(memory: MySQLMemoryStore) -> object:
    return await memory.recall(psych_runtime.adapters.MemoryKey(tenant="t", end_user_id="u"))


@pytest.mark.parametrize(
    ("open_backend", "first_call"),
    [
        pytest.param(psych_runtime.open_store, _first_store_call, id="store"),
        pytest.param(psych_runtime.open_memory_store, _first_memory_call, id="memory"),
    ],
)
async def test_opening_without_migrate_leaves_the_database_alone(
    open_backend: Callable[..., Awaitable[Any]],
    first_call: Callable[[Any], Awaitable[object]],
    mysql_dsn: str,
    prefix: str,
    tables_of: TablesOf,
) -> None:
    async with closing(await open_backend(f"{mysql_dsn}?table_prefix={prefix}")) as opened:
        with pytest.raises(psych_runtime.adapters.SchemaNotMigrated):
            await first_call(opened)
    assert await tables_of(prefix) == []
