import subprocess
import sys
from collections.abc import Iterator

import pytest

import psych_runtime
from psych_runtime.adapters import reset_plugin_manager, store_backends
from psych_store_postgres import PostgresStore


@pytest.fixture(autouse=True)
def fresh_plugin_manager(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("PSYCH_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    reset_plugin_manager()
    yield
    reset_plugin_manager()


def test_the_entry_point_registers_both_schemes() -> None:
    backends = store_backends()
    assert backends["postgresql"].package == "psych-store-postgres"
    assert backends["postgres"] is backends["postgresql"]


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
    code = (
        "import sys, psych_store_postgres.plugin, psych_store_postgres;"
        "print('asyncpg' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == "False"


def test_the_plugin_declares_the_plugin_api_it_was_built_for() -> None:
    from psych_store_postgres import plugin

    assert plugin.PSYCH_PLUGIN_API == psych_runtime.adapters.PLUGIN_API_VERSION
