import socket

import pytest

from psych_contract.lifecycle import closing
from psych_runtime import RunId
from psych_runtime import StoreUnavailable
from psych_store_postgres import PostgresStore


def _closed_port() -> int:
    # Bind, note the port, close: nothing listens there for the rest of the test.
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_an_unreachable_server_is_store_unavailable_naming_host_and_port() -> None:
    port = _closed_port()
    async with closing(
        PostgresStore(f"postgresql://app:s3cret-pw@127.0.0.1:{port}/db", connect_timeout=2)
    ) as store:
        with pytest.raises(StoreUnavailable) as caught:
            await store.head(RunId("run_x"))
    message = str(caught.value)
    assert f"127.0.0.1:{port}" in message
    assert "s3cret-pw" not in message


async def test_migrate_on_an_unreachable_server_is_store_unavailable() -> None:
    async with closing(
        PostgresStore(f"postgresql://app@127.0.0.1:{_closed_port()}/db", connect_timeout=2)
    ) as store:
        with pytest.raises(StoreUnavailable):
            await store.migrate()


async def test_a_closed_store_refuses_further_calls() -> None:
    store = PostgresStore("postgresql://app@127.0.0.1:1/db")
    await store.close()
    with pytest.raises(StoreUnavailable, match="closed"):
        await store.head(RunId("run_x"))
