from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Iterator

import pytest

import psych_runtime
from psych_contract.lifecycle import closing
from psych_contract.plugin import check_entry_point
from psych_contract.plugin import check_memory_backend_beside_store
from psych_contract.plugin import modules_loaded_by
from psych_contract.plugin import plugins_as_installed
from psych_runtime.adapters import store_backends
from psych_store_postgres import PostgresMemoryStore
from psych_store_postgres import PostgresStore
from psych_store_postgres import plugin
from psych_store_postgres._database import PostgresDatabase


@pytest.fixture(autouse=True)
def fresh_plugin_manager(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    with plugins_as_installed(monkeypatch):
        yield


def test_the_entry_point_registers_both_schemes() -> None:
    backends = store_backends()
    assert backends["postgresql"].package == "psych-store-postgres"
    assert backends["postgres"] is backends["postgresql"]


def test_the_memory_backend_claims_the_same_schemes() -> None:
    check_memory_backend_beside_store(
        "postgresql", package="psych-store-postgres", open=plugin.open_postgres_memory_store
    )


OPEN = pytest.mark.parametrize(
    "open_backend",
    [psych_runtime.open_store, psych_runtime.open_memory_store],
    ids=["store", "memory"],
)
"""Both backends this package registers, each by the function that opens it."""


@pytest.mark.parametrize("scheme", ["postgresql", "postgres"])
@pytest.mark.parametrize(
    ("open_backend", "kind"),
    [
        pytest.param(psych_runtime.open_store, PostgresStore, id="store"),
        pytest.param(psych_runtime.open_memory_store, PostgresMemoryStore, id="memory"),
    ],
)
async def test_open_returns_a_postgres_backend_without_connecting(
    scheme: str, open_backend: Callable[..., Awaitable[object]], kind: type[PostgresDatabase]
) -> None:
    # Port 1 is closed: if opening tried to connect, this would fail.
    opened = await open_backend(f"{scheme}://nobody@127.0.0.1:1/db?schema=psych_plugin", max_size=3)
    assert isinstance(opened, kind)
    async with closing(opened):
        assert opened.schema == "psych_plugin"


@OPEN
async def test_open_refuses_an_unknown_option(
    open_backend: Callable[..., Awaitable[object]],
) -> None:
    with pytest.raises(TypeError, match="pool_size"):
        await open_backend("postgresql://h/db", pool_size=3)


@OPEN
async def test_open_with_migrate_on_an_unreachable_server_is_store_unavailable(
    open_backend: Callable[..., Awaitable[object]],
) -> None:
    with pytest.raises(psych_runtime.StoreUnavailable):
        await open_backend("postgresql://nobody@127.0.0.1:1/db", migrate=True, connect_timeout=2)


async def test_open_store_checks_option_types() -> None:
    with pytest.raises(TypeError, match="max_size"):
        await psych_runtime.open_store("postgresql://h/db", max_size="3")


def test_importing_the_plugin_does_not_import_the_driver() -> None:
    code = "import psych_store_postgres.plugin, psych_store_postgres"
    watched = ["asyncpg", "psych_store_postgres.store", "psych_store_postgres.memory"]
    assert modules_loaded_by(code, watched) == []


def test_the_distribution_declares_the_entry_point() -> None:
    check_entry_point("postgres", plugin, distribution="psych-store-postgres")
