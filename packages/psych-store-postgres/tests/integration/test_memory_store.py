"""What the MemoryContract leaves to the adapter: schema checks, storage, input refusal."""

import socket
from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable
from contextlib import AsyncExitStack
from datetime import timedelta

import asyncpg
import pytest
import pytest_asyncio

import psych_runtime
from psych_contract.lifecycle import closing
from psych_contract.memory import check_bad_input_refused_offline
from psych_contract.migrations import check_unmigrated_memory_refused
from psych_runtime.adapters import MemoryKey
from psych_runtime.adapters import SchemaNotMigrated
from psych_runtime.adapters import SchemaTooNew
from psych_store_postgres import PostgresMemoryStore
from psych_store_postgres import PostgresStore
from psych_store_postgres.schema import LATEST_VERSION
from psych_store_postgres.schema import MIGRATIONS

from ..conftest import kept
from ..conftest import record_a_newer_schema
from ..conftest import schema_at

Factory = Callable[..., Awaitable[PostgresStore]]
ALICE = MemoryKey(tenant="acme", end_user_id="alice")


@pytest_asyncio.fixture
async def make_memory(
    server: str, schema: str
) -> AsyncIterator[Callable[..., Awaitable[PostgresMemoryStore]]]:
    """Build memory stores on the test's schema; every one built is closed afterwards."""
    async with AsyncExitStack() as opened:

        async def make(*, migrate: bool = True) -> PostgresMemoryStore:
            return await kept(opened, PostgresMemoryStore(server, schema=schema), migrate=migrate)

        yield make


async def test_open_memory_store_with_migrate_returns_a_ready_postgres_memory_store(
    server: str, schema: str
) -> None:
    async with closing(
        await psych_runtime.open_memory_store(f"{server}?schema={schema}", migrate=True)
    ) as memory:
        assert isinstance(memory, PostgresMemoryStore)
        assert await memory.schema_version() == LATEST_VERSION
        fact = await memory.remember(ALICE, "prefers email")
        assert await memory.recall(ALICE) == (fact,)


async def test_an_unmigrated_schema_raises_schema_not_migrated(
    make_memory: Callable[..., Awaitable[PostgresMemoryStore]],
) -> None:
    memory = await make_memory(migrate=False)
    await check_unmigrated_memory_refused(memory, [migration.version for migration in MIGRATIONS])


async def test_a_schema_before_memories_is_refused_until_the_store_migrates(
    make_memory: Callable[..., Awaitable[PostgresMemoryStore]],
    make_store: Factory,
    server: str,
    schema: str,
) -> None:
    await schema_at(server, schema, 3)
    memory = await make_memory(migrate=False)
    with pytest.raises(SchemaNotMigrated, match="at schema version 3"):
        await memory.recall(ALICE)
    # Migrating the Run store brings the memory table too: one list of migrations.
    store = await make_store(migrate=False)
    assert await store.migrate() == [4, 5]
    fresh = await make_memory(migrate=False)
    fact = await fresh.remember(ALICE, "after the upgrade")
    assert await fresh.recall(ALICE) == (fact,)


async def test_a_newer_schema_is_refused(
    make_memory: Callable[..., Awaitable[PostgresMemoryStore]], server: str, schema: str
) -> None:
    await make_memory()
    await record_a_newer_schema(server, schema)
    newer_unaware = await make_memory(migrate=False)
    with pytest.raises(SchemaTooNew):
        await newer_unaware.recall(ALICE)
    with pytest.raises(SchemaTooNew):
        await newer_unaware.migrate()


async def test_facts_are_rows_with_separate_key_columns_and_exact_instants(
    make_memory: Callable[..., Awaitable[PostgresMemoryStore]], server: str, schema: str
) -> None:
    memory = await make_memory()
    fact = await memory.remember(ALICE, "likes tea")
    (recalled,) = await memory.recall(ALICE)
    assert await memory.recall(ALICE, limit=2**70) == (fact,)  # past any SQL integer
    assert recalled == fact
    assert recalled.created_at.utcoffset() == timedelta(0)
    async with closing(await asyncpg.connect(server)) as conn:
        rows = await conn.fetch(
            f'SELECT tenant, end_user_id, id, content, created_at FROM "{schema}".psych_memories'
        )
    assert [tuple(row.values()) for row in rows] == [
        ("acme", "alice", fact.id, "likes tea", fact.created_at)
    ]


async def test_a_store_and_a_memory_store_share_one_schema(
    make_memory: Callable[..., Awaitable[PostgresMemoryStore]], make_store: Factory
) -> None:
    await make_store()
    memory = await make_memory(migrate=False)
    assert await memory.migrate() == []
    fact = await memory.remember(ALICE, "kept beside the Runs")
    assert await memory.recall(ALICE) == (fact,)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_bad_input_is_refused_before_the_server_is_asked() -> None:
    # Nothing listens on the port: any IO would raise StoreUnavailable instead.
    memory = PostgresMemoryStore(f"postgresql://app@127.0.0.1:{_closed_port()}/db")
    await check_bad_input_refused_offline(memory, ("mem_\ud800", "mem_\x00"))


async def test_an_unreachable_server_and_a_closed_store_are_unavailable() -> None:
    port = _closed_port()
    memory = PostgresMemoryStore(f"postgresql://app:s3cret@127.0.0.1:{port}/db", connect_timeout=2)
    try:
        with pytest.raises(psych_runtime.StoreUnavailable) as caught:
            await memory.recall(ALICE)
        assert f"127.0.0.1:{port}" in str(caught.value)
        assert "s3cret" not in str(caught.value)
    finally:
        await memory.close()
    with pytest.raises(psych_runtime.StoreUnavailable, match=r"PostgresMemoryStore.*closed"):
        await memory.recall(ALICE)
