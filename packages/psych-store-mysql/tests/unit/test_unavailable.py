"""A server that is not there: StoreUnavailable, naming the address, never the password."""

import socket

import pytest

from psych_contract.lifecycle import closing
from psych_runtime import RunId
from psych_runtime import StoreUnavailable
from psych_store_mysql import MySQLStore


@pytest.fixture
def closed_port() -> int:
    """A local port with nothing listening on it."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


async def test_migrate_against_a_closed_port_is_store_unavailable(closed_port: int) -> None:
    async with closing(
        MySQLStore(f"mysql://app:hunter2@127.0.0.1:{closed_port}/db?connect_timeout=2")
    ) as store:
        with pytest.raises(StoreUnavailable) as caught:
            await store.migrate()
    message = str(caught.value)
    assert f"127.0.0.1:{closed_port}" in message
    assert "hunter2" not in message


async def test_first_use_against_a_closed_port_is_store_unavailable(closed_port: int) -> None:
    async with closing(
        MySQLStore(f"mariadb://app:hunter2@127.0.0.1:{closed_port}/db?connect_timeout=2")
    ) as store:
        with pytest.raises(StoreUnavailable, match=f"127.0.0.1:{closed_port}"):
            await store.head(RunId("r"))
        # A failed open leaves nothing half-built: the next call fails the same way.
        with pytest.raises(StoreUnavailable):
            await store.head(RunId("r"))


async def test_open_store_with_migrate_reports_an_unreachable_server(
    closed_port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    from psych_runtime import open_store
    from psych_runtime.adapters import AUTOLOAD_ENV
    from psych_runtime.adapters import reset_plugin_manager

    monkeypatch.delenv(AUTOLOAD_ENV, raising=False)
    reset_plugin_manager()
    try:
        with pytest.raises(StoreUnavailable, match=f"127.0.0.1:{closed_port}"):
            await open_store(f"mysql://root@127.0.0.1:{closed_port}/db", migrate=True)
    finally:
        reset_plugin_manager()
