"""migrate(): creates the table and indexes once, converges under concurrency, and
refuses a table a newer release migrated."""

import asyncio
import importlib
from typing import Any

import pytest

from psych_contract import _data as data
from psych_contract.lifecycle import closing
from psych_runtime import RunId
from psych_runtime import StoreError
from psych_runtime.adapters import SchemaNotMigrated
from psych_runtime.adapters import SchemaTooNew
from psych_runtime.records import WorkerId
from psych_store_dynamo import DynamoStore
from psych_store_dynamo import _rows as it
from psych_store_dynamo import create_table
from psych_store_dynamo import drop_table
from psych_store_dynamo import schema

from ..conftest import REGION
from ..conftest import StoreFactory


async def _raw_call(endpoint: str, operation: str, **request: object) -> Any:
    """Call DynamoDB directly, past the store, as an operator or another tool would."""
    aioboto3 = importlib.import_module("aioboto3")
    async with aioboto3.Session().client(
        "dynamodb", region_name=REGION, endpoint_url=endpoint
    ) as client:
        return await getattr(client, operation)(**request)


async def _describe(endpoint: str, table: str) -> dict[str, object]:
    response = await _raw_call(endpoint, "describe_table", TableName=table)
    described: dict[str, object] = response["Table"]
    return described


async def _hand_made_table(
    endpoint: str, name: str, keys: dict[str, tuple[str, str]], **request: object
) -> None:
    """Create table ``name`` as someone would by hand: ``keys`` maps each key attribute
    to its type and role (``("S", "HASH")``)."""
    await _raw_call(
        endpoint,
        "create_table",
        TableName=name,
        AttributeDefinitions=[
            {"AttributeName": key, "AttributeType": kind} for key, (kind, _) in keys.items()
        ],
        KeySchema=[{"AttributeName": key, "KeyType": role} for key, (_, role) in keys.items()],
        **request,
    )


_EVERY_VERSION = list(range(1, schema.SCHEMA_VERSION + 1))
"""What migrating a brand-new table records."""


async def test_migrate_creates_the_table_then_is_a_no_op(
    make_store: StoreFactory, moto_endpoint: str
) -> None:
    store = await make_store(migrate=False)
    assert await store.schema_version() == 0
    assert await store.migrate() == _EVERY_VERSION
    assert await store.migrate() == []
    assert await store.schema_version() == schema.SCHEMA_VERSION
    described = await _describe(moto_endpoint, store.table_name)
    assert described["TableStatus"] == "ACTIVE"
    indexes = described["GlobalSecondaryIndexes"]
    assert isinstance(indexes, list)
    assert {index["IndexName"] for index in indexes} == {it.CLAIM_INDEX, it.OPEN_INDEX}


async def test_two_stores_migrating_at_once_converge(make_store: StoreFactory) -> None:
    first = await make_store(migrate=False)
    second = await make_store(migrate=False)
    applied = await asyncio.gather(first.migrate(), second.migrate())
    # Each version was recorded by exactly one of them; both end up with a usable table.
    assert sorted(version for versions in applied for version in versions) == _EVERY_VERSION
    run, admitted = data.admission()
    assert (await first.create_run(run, admitted)).created
    assert await second.head(run.run_id) == 1


async def test_using_an_unmigrated_table_says_to_migrate(make_store: StoreFactory) -> None:
    store = await make_store(migrate=False)
    with pytest.raises(SchemaNotMigrated, match="migrate"):
        await store.head(RunId("r"))


async def test_a_table_without_the_schema_record_says_to_migrate(
    make_store: StoreFactory, moto_endpoint: str
) -> None:
    owner = await make_store()
    await owner.drop_table()
    await _raw_call(
        moto_endpoint, "create_table", TableName=owner.table_name, **schema.table_definition()
    )
    fresh = await make_store(migrate=False)
    with pytest.raises(SchemaNotMigrated, match="has no Psych schema yet"):
        await fresh.connect()
    assert await fresh.migrate() == _EVERY_VERSION
    await fresh.connect()


async def test_a_newer_schema_is_refused_on_migrate_and_on_first_use(
    make_store: StoreFactory,
) -> None:
    store = await make_store()
    table = await store._open()  # a newer release would have written this record
    await table.put({**it.META_KEY, it.SCHEMA_VERSION_ATTRIBUTE: it.n(schema.SCHEMA_VERSION + 1)})
    with pytest.raises(SchemaTooNew, match="upgrade psych-store-dynamo"):
        await store.migrate()
    later = await make_store(migrate=False)
    with pytest.raises(SchemaTooNew):
        await later.head(RunId("r"))


async def test_migrate_adds_missing_indexes_to_a_hand_made_table(
    make_store: StoreFactory, moto_endpoint: str
) -> None:
    store = await make_store(migrate=False)
    await _hand_made_table(
        moto_endpoint,
        store.table_name,
        {"pk": ("S", "HASH"), "sk": ("N", "RANGE")},
        ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 5},
    )
    assert await store.migrate() == _EVERY_VERSION
    described = await _describe(moto_endpoint, store.table_name)
    indexes = described["GlobalSecondaryIndexes"]
    assert isinstance(indexes, list)
    assert {index["IndexName"] for index in indexes} == {it.CLAIM_INDEX, it.OPEN_INDEX}
    run, admitted = data.admission()
    await store.create_run(run, admitted)
    assert await store.claim(WorkerId("w"), data.at(0), 30) is not None


async def test_a_table_with_another_key_schema_is_refused(
    make_store: StoreFactory, moto_endpoint: str
) -> None:
    store = await make_store(migrate=False)
    await _hand_made_table(
        moto_endpoint, store.table_name, {"id": ("S", "HASH")}, BillingMode="PAY_PER_REQUEST"
    )
    with pytest.raises(StoreError, match="key schema"):
        await store.migrate()
    with pytest.raises(StoreError, match="key schema"):
        await store.connect()


async def test_create_table_and_drop_table_helpers(table_url: str) -> None:
    assert await create_table(table_url) == _EVERY_VERSION
    assert await create_table(table_url) == []
    async with closing(DynamoStore(table_url)) as store:
        assert await store.head(RunId("r")) == 0
    assert await drop_table(table_url) is True
    assert await drop_table(table_url) is False


async def test_versions_stored_before_grants_existed_stay_shared(
    make_store: StoreFactory,
) -> None:
    store = await make_store()
    table = await store._open()  # what an older release wrote: a Version, no grant
    legacy = data.version("legacy", published_s=7)
    await table.put(
        {**it.version_key(legacy.hash), it.VERSION_DOCUMENT: it.s(legacy.export_json())}
    )
    for tenant in ("tenant-a", "tenant-b", None):
        got = await store.get_version(legacy.hash, tenant=tenant)
        assert got is not None, tenant
        assert got.published_at == legacy.published_at
    # A tenant publishing it too does not take it away from the others.
    await store.put_version(legacy, tenant="tenant-a")
    assert await store.get_version(legacy.hash, tenant="tenant-b") is not None
    fresh = data.version("fresh")
    await store.put_version(fresh, tenant="tenant-a")
    assert await store.get_version(fresh.hash, tenant="tenant-b") is None
