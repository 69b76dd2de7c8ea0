"""DynamoMemoryStore on moto: paging, retried batch deletes, a taken microsecond, the
schema check, and how many requests each call sends."""

import importlib.metadata
from collections.abc import AsyncIterator
from collections.abc import Iterator

import pytest
import pytest_asyncio

import psych_runtime
from psych_contract.lifecycle import closing
from psych_contract.lifecycle import migrated
from psych_runtime import RunId
from psych_runtime.adapters import AUTOLOAD_ENV
from psych_runtime.adapters import MemoryKey
from psych_runtime.adapters import SchemaNotMigrated
from psych_runtime.adapters import register_plugin
from psych_runtime.adapters import reset_plugin_manager
from psych_store_dynamo import DynamoMemoryStore
from psych_store_dynamo import DynamoStore
from psych_store_dynamo import _rows as it
from psych_store_dynamo import drop_table
from psych_store_dynamo import schema

from ..conftest import REGION
from ..conftest import Call
from ..conftest import spy_on


@pytest_asyncio.fixture
async def memory(table_url: str) -> AsyncIterator[DynamoMemoryStore]:
    try:
        async with migrated(DynamoMemoryStore(table_url)) as store:
            yield store
    finally:
        await drop_table(table_url)


def _small_pages(size: int) -> Call:
    """A Query stand-in returning at most ``size`` items a page, as a full 1 MB would."""

    async def query(real: Call, **request: object) -> dict[str, object]:
        asked = request.get("Limit")
        request["Limit"] = size if not isinstance(asked, int) else min(asked, size)
        return await real(**request)

    return query


ALICE = MemoryKey(tenant="acme", end_user_id="alice")


async def test_requests_per_call(memory: DynamoMemoryStore) -> None:
    client = await spy_on(memory)
    fact = await memory.remember(ALICE, "one")
    assert client.take() == {"put_item": 1}
    await memory.recall(ALICE)
    assert client.take() == {"query": 1}
    await memory.recall(ALICE, limit=1)
    ((_, request),) = client.requests
    assert request["ScanIndexForward"] is False
    assert request["Limit"] == 1
    assert request["ConsistentRead"] is True
    assert client.take() == {"query": 1}
    assert await memory.forget(ALICE, fact.id)
    assert client.take() == {"query": 1, "delete_item": 1}
    assert not await memory.forget(ALICE, fact.id)
    assert client.take() == {"query": 1}
    await memory.remember(ALICE, "two")
    client.take()
    assert await memory.erase(ALICE) == 1
    assert client.take() == {"query": 1, "batch_write_item": 1}
    assert await memory.erase(ALICE) == 0
    assert "scan" not in client.take()


async def test_recall_and_erase_follow_every_page(memory: DynamoMemoryStore) -> None:
    bob = MemoryKey(tenant="acme", end_user_id="bob")
    facts = [await memory.remember(ALICE, f"fact {n}") for n in range(60)]
    kept = await memory.remember(bob, "bob's")
    client = await spy_on(memory)
    client.stand_ins["query"] = _small_pages(7)
    assert await memory.recall(ALICE) == tuple(facts)
    assert await memory.recall(ALICE, limit=20) == tuple(facts[-20:])
    assert await memory.recall(ALICE, limit=7) == tuple(facts[-7:])
    assert await memory.forget(ALICE, facts[3].id)  # found on the first page
    assert await memory.forget(ALICE, facts[55].id)  # found on the eighth
    client.take()
    assert await memory.erase(ALICE) == 58
    calls = client.take()
    assert calls["query"] == 9
    assert calls["batch_write_item"] == 9  # each page of 7 keys in one request
    assert await memory.recall(ALICE) == ()
    assert await memory.recall(bob) == (kept,)


async def test_erase_sends_unprocessed_deletes_again(memory: DynamoMemoryStore) -> None:
    facts = [await memory.remember(ALICE, f"fact {n}") for n in range(40)]
    client = await spy_on(memory)
    refusals = 0

    async def half_done(real: Call, **request: object) -> dict[str, object]:
        # Apply only the first half of each of the first two batches, as DynamoDB may
        # under throttling, and hand the rest back as unprocessed.
        nonlocal refusals
        items = request["RequestItems"]
        assert isinstance(items, dict)
        ((name, writes),) = items.items()
        if refusals >= 2 or len(writes) < 2:
            return await real(**request)
        refusals += 1
        half = len(writes) // 2
        await real(RequestItems={name: writes[:half]})
        return {"UnprocessedItems": {name: writes[half:]}}

    client.stand_ins["batch_write_item"] = half_done
    assert await memory.erase(ALICE) == len(facts)
    assert refusals == 2
    # 40 keys: batches of 25 and 15, each refused by half once, so four requests.
    assert client.calls["batch_write_item"] == 4
    assert await memory.recall(ALICE) == ()


async def test_a_taken_microsecond_mints_the_fact_again(memory: DynamoMemoryStore) -> None:
    """Another process kept a fact of the same end user in the same microsecond."""
    client = await spy_on(memory)
    squatters: list[dict[str, object]] = []

    async def taken_first(real: Call, **request: object) -> dict[str, object]:
        if not squatters:
            item = request["Item"]
            assert isinstance(item, dict)
            squatter = {**item, it.MEMORY_ID: it.s("mem_someone_else")}
            squatters.append(squatter)
            await real(TableName=request["TableName"], Item=squatter)
        return await real(**request)

    client.stand_ins["put_item"] = taken_first
    fact = await memory.remember(ALICE, "mine")
    assert client.calls["put_item"] == 2
    first, second = await memory.recall(ALICE)
    assert first.id == "mem_someone_else"
    assert second == fact
    assert fact.created_at > first.created_at


async def test_the_longest_keys_are_kept_under_a_digest(memory: DynamoMemoryStore) -> None:
    longest = MemoryKey(tenant="🚀" * 256, end_user_id="用" * 256)
    other = MemoryKey(tenant="🚀" * 256, end_user_id="户" * 256)
    fact = await memory.remember(longest, "long key")
    await memory.remember(other, "other long key")
    assert await memory.recall(longest) == (fact,)
    assert not await memory.forget(other, fact.id)
    assert await memory.forget(longest, fact.id)
    assert await memory.erase(other) == 1


async def test_an_unmigrated_table_is_refused(table_url: str) -> None:
    async with closing(DynamoMemoryStore(table_url)) as memory:
        with pytest.raises(SchemaNotMigrated, match="migrate"):
            await memory.remember(ALICE, "nowhere to go")
        with pytest.raises(SchemaNotMigrated):
            await memory.recall(ALICE)
        assert await memory.schema_version() == 0


async def test_a_table_without_the_schema_record_is_refused(
    table_url: str, moto_endpoint: str
) -> None:
    memory = DynamoMemoryStore(table_url)
    aioboto3 = importlib.import_module("aioboto3")
    try:
        async with aioboto3.Session().client(
            "dynamodb", region_name=REGION, endpoint_url=moto_endpoint
        ) as client:
            await client.create_table(TableName=memory.table_name, **schema.table_definition())
        with pytest.raises(SchemaNotMigrated, match="has no Psych schema yet"):
            await memory.recall(ALICE)
    finally:
        await memory.close()
        await drop_table(table_url)


async def test_one_table_holds_runs_and_facts(table_url: str) -> None:
    """Either store's migration prepares the table for the other."""
    memory = DynamoMemoryStore(table_url)
    store = DynamoStore(table_url)
    try:
        assert await memory.migrate() != []
        assert await store.migrate() == []
        fact = await memory.remember(ALICE, "beside the Runs")
        assert await store.head(RunId("nobody")) == 0
        assert await memory.recall(ALICE) == (fact,)
    finally:
        await memory.close()
        await store.close()
        await drop_table(table_url)


@pytest.fixture
def dynamo_plugin_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Only this package's plugin, loaded from its entry point (autoload off)."""
    monkeypatch.setenv(AUTOLOAD_ENV, "1")
    reset_plugin_manager()
    (entry_point,) = importlib.metadata.entry_points(group="psych_runtime", name="dynamo")
    register_plugin(entry_point.load(), name="dynamo")
    yield
    reset_plugin_manager()


@pytest.mark.usefixtures("dynamo_plugin_only")
async def test_open_memory_store_with_migrate_returns_a_ready_memory_store(
    table_url: str,
) -> None:
    memory = await psych_runtime.open_memory_store(table_url, migrate=True)
    try:
        assert isinstance(memory, DynamoMemoryStore)
        fact = await memory.remember(ALICE, "opened through the plugin")
        assert await memory.recall(ALICE) == (fact,)
    finally:
        await memory.close()
        assert await drop_table(table_url) is True
