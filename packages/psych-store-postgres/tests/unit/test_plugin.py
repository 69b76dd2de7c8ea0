from collections.abc import Iterator

import pytest

import psych_runtime
from psych_contract.plugin import check_entry_point, modules_loaded_by, plugins_as_installed
from psych_runtime.adapters import memory_store_backends, store_backends
from psych_store_postgres import PostgresMemoryStore, PostgresStore, plugin


@pytest.fixture(autouse=True)
def fresh_plugin_manager(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    with plugins_as_installed(monkeypatch):
        yield


def test_the_entry_point_registers_both_schemes() -> None:
    backends = store_backends()
    assert backends["postgresql"].package == "psych-store-postgres"
    assert backends["postgres"] is backends["postgresql"]


def test_the_memory_backend_claims_the_same_schemes() -> None:
    backends = memory_store_backends()
    assert backends["postgresql"].package == "psych-store-postgres"
    assert backends["postgresql"].open is plugin.open_postgres_memory_store
    assert backends["postgres"] is backends["postgresql"]
    assert backends["postgresql"].schemes == store_backends()["postgresql"].schemes


@pytest.mark.parametrize("scheme", ["postgresql", "postgres"])
async def test_open_memory_store_returns_a_postgres_memory_store_without_connecting(
    scheme: str,
) -> None:
    # Port 1 is closed: if opening tried to connect, this would fail.
    memory = await psych_runtime.open_memory_store(
        f"{scheme}://nobody@127.0.0.1:1/db?schema=psych_plugin", max_size=3
    )
    try:
        assert isinstance(memory, PostgresMemoryStore)
        assert memory.schema == "psych_plugin"
    finally:
        await memory.close()


async def test_open_memory_store_refuses_an_unknown_option() -> None:
    with pytest.raises(TypeError, match="pool_size"):
        await psych_runtime.open_memory_store("postgresql://h/db", pool_size=3)


async def test_open_memory_store_with_migrate_on_an_unreachable_server_is_unavailable() -> None:
    with pytest.raises(psych_runtime.StoreUnavailable):
        await psych_runtime.open_memory_store(
            "postgresql://nobody@127.0.0.1:1/db", migrate=True, connect_timeout=2
        )


@pytest.mark.parametrize("scheme", ["postgresql", "postgres"])
async def test_open_store_returns_a_postgres_store_without_connecting(scheme: str) -> None:
    # Port 1 is closed: if opening tried to connect, this would fail.
    store = await psych_runtime.open_store(
        f"{scheme}://nobody@127.0.0.1:1/db?schema=psych_plugin", max_size=3
    )
    try:
        assert isinstance(store, PostgresStore)
        assert store.schema == "psych_plugin"
    finally:
        await store.close()


async def test_open_store_refuses_an_unknown_option() -> None:
    with pytest.raises(TypeError, match="pool_size"):
        await psych_runtime.open_store("postgresql://h/db", pool_size=3)


async def test_open_store_checks_option_types() -> None:
    with pytest.raises(TypeError, match="max_size"):
        await psych_runtime.open_store("postgresql://h/db", max_size="3")


async def test_open_store_with_migrate_on_an_unreachable_server_is_store_unavailable() -> None:
    with pytest.raises(psych_runtime.StoreUnavailable):
        await psych_runtime.open_store(
            "postgresql://nobody@127.0.0.1:1/db", migrate=True, connect_timeout=2
        )


def test_importing_the_plugin_does_not_import_the_driver() -> None:
    code = "import psych_store_postgres.plugin, psych_store_postgres"
    watched = ["asyncpg", "psych_store_postgres.store", "psych_store_postgres.memory"]
    assert modules_loaded_by(code, watched) == []


def test_the_distribution_declares_the_entry_point() -> None:
    check_entry_point("postgres", plugin, distribution="psych-store-postgres")
