"""Migrations on the real server: idempotent, safe under concurrency, refusing the future."""

import asyncio
from collections.abc import Awaitable
from collections.abc import Callable

import asyncpg
import pytest

from psych_contract import _data as data
from psych_contract.lifecycle import closing
from psych_contract.migrations import check_versions_before_grants
from psych_runtime import RunId
from psych_runtime.adapters import RunState
from psych_runtime.adapters import SchemaNotMigrated
from psych_runtime.adapters import SchemaTooNew
from psych_runtime.records import WorkerId
from psych_store_postgres import PostgresStore
from psych_store_postgres.schema import LATEST_VERSION
from psych_store_postgres.schema import MIGRATIONS

from ..conftest import record_a_newer_schema
from ..conftest import schema_at

Factory = Callable[..., Awaitable[PostgresStore]]
EVERY_VERSION = [migration.version for migration in MIGRATIONS]
"""What ``migrate()`` applies to an empty schema: every version, oldest first."""


async def _tables(dsn: str, schema: str) -> set[str]:
    async with closing(await asyncpg.connect(dsn)) as conn:
        rows = await conn.fetch("SELECT tablename FROM pg_tables WHERE schemaname = $1", schema)
    return {row["tablename"] for row in rows}


async def test_migrate_creates_the_schema_and_its_tables(
    make_store: Factory, server: str, schema: str
) -> None:
    store = await make_store(migrate=False)
    assert await store.schema_version() is None
    assert await store.migrate() == EVERY_VERSION
    assert await store.schema_version() == LATEST_VERSION
    assert {"psych_runs", "psych_records", "psych_versions", "psych_schema_version"} <= (
        await _tables(server, schema)
    )


async def test_migrating_twice_is_a_no_op(make_store: Factory, server: str, schema: str) -> None:
    store = await make_store(migrate=False)
    assert await store.migrate() == EVERY_VERSION
    tables = await _tables(server, schema)
    assert await store.migrate() == []
    again = await make_store(migrate=False)
    assert await again.migrate() == []
    assert await _tables(server, schema) == tables
    async with closing(await asyncpg.connect(server)) as conn:
        count = await conn.fetchval(f'SELECT count(*) FROM "{schema}".psych_schema_version')
    assert count == LATEST_VERSION


async def test_concurrent_migrations_apply_each_step_once(make_store: Factory) -> None:
    stores = [await make_store(migrate=False) for _ in range(4)]
    applied = await asyncio.gather(*(store.migrate() for store in stores))
    assert sorted(applied) == [[], [], [], EVERY_VERSION]
    assert await stores[0].head(RunId("run_none")) == 0


async def test_migrate_into_an_existing_empty_schema(
    make_store: Factory, server: str, schema: str
) -> None:
    async with closing(await asyncpg.connect(server)) as conn:
        await conn.execute(f'CREATE SCHEMA "{schema}"')
    store = await make_store(migrate=False)
    assert await store.migrate() == EVERY_VERSION


async def test_a_schema_at_version_one_is_upgraded_in_place(
    make_store: Factory, server: str, schema: str
) -> None:
    await schema_at(server, schema, 1)
    store = await make_store(migrate=False)
    with pytest.raises(SchemaNotMigrated, match="migrate"):
        await store.head(RunId("run_x"))
    assert await store.migrate() == EVERY_VERSION[1:]
    assert await store.schema_version() == LATEST_VERSION
    # Version 2's release checks the attempt count: an older claim's release is ignored.
    run, admitted = data.admission()
    await store.create_run(run, admitted)
    worker = WorkerId("w")
    await store.claim(worker, data.at(0), 30)
    again = await store.claim(worker, data.at(60), 30)
    assert again is not None and again.attempt_count == 2
    await store.release(run.run_id, worker, RunState.SETTLED, attempt_count=1)
    assert await store.get_run(run.run_id) == again
    await store.release(run.run_id, worker, RunState.SETTLED, attempt_count=2)
    settled = await store.get_run(run.run_id)
    assert settled is not None and settled.state is RunState.SETTLED


async def test_an_unmigrated_schema_is_refused_on_first_use(make_store: Factory) -> None:
    store = await make_store(migrate=False)
    with pytest.raises(SchemaNotMigrated, match="migrate"):
        await store.head(RunId("run_x"))


async def test_a_newer_schema_is_refused_by_migrate_and_on_first_use(
    make_store: Factory, server: str, schema: str
) -> None:
    await make_store()
    await record_a_newer_schema(server, schema)
    newer_unaware = await make_store(migrate=False)
    with pytest.raises(SchemaTooNew, match=str(LATEST_VERSION + 1)):
        await newer_unaware.head(RunId("run_x"))
    with pytest.raises(SchemaTooNew):
        await newer_unaware.migrate()


async def test_two_schemas_in_one_database_are_independent(
    make_store: Factory, extra_schema: Callable[[], str]
) -> None:
    first = await make_store()
    second = await make_store(schema_name=extra_schema())
    run, admitted = data.admission()
    await first.create_run(run, admitted)
    assert await first.get_run(run.run_id) == run
    assert await second.get_run(run.run_id) is None
    assert await second.head(run.run_id) == 0


async def test_versions_stored_before_grants_existed_become_shared(
    make_store: Factory, server: str, schema: str
) -> None:
    legacy = data.version("legacy", published_s=7)
    await schema_at(server, schema, 2)
    async with closing(await asyncpg.connect(server)) as conn:
        await conn.execute(
            f'INSERT INTO "{schema}".psych_versions (hash, published_at, document) '
            "VALUES ($1, $2, $3)",
            legacy.hash,
            legacy.published_at,
            legacy.export_json(),
        )
    store = await make_store(migrate=False)
    assert await store.migrate() == EVERY_VERSION[2:]
    await check_versions_before_grants(store, legacy)
