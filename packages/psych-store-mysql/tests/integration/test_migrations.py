"""Migrations: idempotent, serialised across instances, and refusing a newer schema."""

import asyncio
from collections.abc import Awaitable
from collections.abc import Callable
from typing import Protocol

import pytest

from psych_contract import _data as data
from psych_contract.lifecycle import closing
from psych_contract.migrations import check_versions_before_grants
from psych_runtime import RunId
from psych_runtime import StoreError
from psych_runtime.adapters import MemoryKey
from psych_runtime.adapters import SchemaNotMigrated
from psych_runtime.adapters import SchemaTooNew
from psych_store_mysql import MySQLMemoryStore
from psych_store_mysql import MySQLStore
from psych_store_mysql._database import MySQLDatabase
from psych_store_mysql.schema import LATEST_VERSION
from psych_store_mysql.schema import Tables

RunSql = Callable[..., Awaitable[list[list[tuple[object, ...]]]]]
TablesOf = Callable[[str], Awaitable[list[str]]]


class OnPrefix(Protocol):
    """Builds a store of the given kind on the test's own table prefix."""

    def __call__[D: MySQLDatabase](self, kind: type[D], /, **options: object) -> D: ...


@pytest.fixture
def on_prefix(mysql_dsn: str, prefix: str, cleanup: list[str]) -> OnPrefix:
    """Stores on the test's own prefix; every table of the prefix is dropped afterwards."""
    cleanup.append(prefix)

    def build[D: MySQLDatabase](kind: type[D], /, **options: object) -> D:
        return kind(mysql_dsn, table_prefix=prefix, **options)

    return build


EVERY_VERSION = list(range(1, LATEST_VERSION + 1))
"""What ``migrate()`` applies to an empty database: every version, oldest first."""


async def _versions(sql: RunSql, prefix: str) -> list[object]:
    (rows,) = await sql(f"SELECT version FROM `{prefix}psych_schema_version` ORDER BY version")
    return [row[0] for row in rows]


async def _every_table_at_the_latest_version(sql: RunSql, tables_of: TablesOf, prefix: str) -> None:
    assert await tables_of(prefix) == sorted(Tables(prefix).all)
    assert await _versions(sql, prefix) == EVERY_VERSION


async def test_migrate_creates_every_table_and_records_the_version(
    on_prefix: OnPrefix, prefix: str, sql: RunSql, tables_of: TablesOf
) -> None:
    async with closing(on_prefix(MySQLStore)) as store:
        assert await tables_of(prefix) == []
        assert await store.migrate() == EVERY_VERSION
    await _every_table_at_the_latest_version(sql, tables_of, prefix)


async def test_migrating_twice_is_a_no_op(on_prefix: OnPrefix, prefix: str, sql: RunSql) -> None:
    async with closing(on_prefix(MySQLStore)) as store:
        await store.migrate()
        (before,) = await sql(f"SHOW CREATE TABLE `{prefix}psych_runs`")
        assert await store.migrate() == []
        (after,) = await sql(f"SHOW CREATE TABLE `{prefix}psych_runs`")
    assert after == before
    assert await _versions(sql, prefix) == EVERY_VERSION


async def test_concurrent_migrations_from_two_instances_both_succeed(
    on_prefix: OnPrefix, prefix: str, sql: RunSql, tables_of: TablesOf
) -> None:
    stores = [on_prefix(MySQLStore) for _ in range(4)]
    try:
        results = await asyncio.gather(*(store.migrate() for store in stores))
        assert sorted(results) == [[]] * (len(stores) - 1) + [EVERY_VERSION]
        assert await stores[0].head(RunId("nobody")) == 0
    finally:
        for store in stores:
            await store.close()
    await _every_table_at_the_latest_version(sql, tables_of, prefix)


async def test_an_interrupted_migration_is_finished_by_the_next_one(
    on_prefix: OnPrefix, prefix: str, sql: RunSql, tables_of: TablesOf
) -> None:
    """DDL commits statement by statement; a crash mid-migration must not wedge it."""
    async with closing(on_prefix(MySQLStore)) as store:
        await store.migrate()
        await sql(
            f"DROP TABLE `{prefix}psych_records`",
            f"DELETE FROM `{prefix}psych_schema_version`",
        )
        assert await store.migrate() == EVERY_VERSION
    await _every_table_at_the_latest_version(sql, tables_of, prefix)


async def test_a_newer_schema_is_refused_by_migrate_and_on_first_use(
    on_prefix: OnPrefix, prefix: str, sql: RunSql
) -> None:
    async with closing(on_prefix(MySQLStore)) as first:
        await first.migrate()
    newer = LATEST_VERSION + 1
    await sql(
        f"INSERT INTO `{prefix}psych_schema_version` (version, description, applied_at) "
        f"VALUES ({newer}, 'from the future', UTC_TIMESTAMP(6))"
    )
    async with closing(on_prefix(MySQLStore)) as later:
        with pytest.raises(SchemaTooNew, match=str(newer)):
            await later.migrate()
        with pytest.raises(SchemaTooNew):
            await later.get_run(RunId("anything"))
    async with closing(on_prefix(MySQLStore)) as fresh:
        with pytest.raises(SchemaTooNew):
            await fresh.head(RunId("anything"))
    assert await _versions(sql, prefix) == [*range(1, LATEST_VERSION + 1), newer]


async def test_an_unmigrated_database_is_refused_on_first_use(
    on_prefix: OnPrefix, prefix: str, tables_of: TablesOf
) -> None:
    async with closing(on_prefix(MySQLStore)) as store:
        with pytest.raises(SchemaNotMigrated, match="migrate"):
            await store.head(RunId("anything"))
    assert await tables_of(prefix) == []


async def test_migrate_gives_up_when_another_process_holds_the_lock(
    mysql_dsn: str, on_prefix: OnPrefix, prefix: str, tables_of: TablesOf
) -> None:
    """Another session holding GET_LOCK for this prefix makes migrate wait, then fail."""
    from psych_store_mysql import _connection
    from psych_store_mysql._batches import Batch
    from psych_store_mysql.settings import MySQLSettings

    holder = await _connection.connect(MySQLSettings.from_url(mysql_dsn))
    try:
        batch = Batch(holder, 1 << 20)
        assert await batch.scalar("SELECT GET_LOCK(%s, 0)", f"{prefix}psych_migrate") == 1
        async with closing(on_prefix(MySQLStore, migrate_lock_timeout=0.2)) as store:
            with pytest.raises(StoreError, match="migration lock"):
                await store.migrate()
        assert await tables_of(prefix) == []
    finally:
        await holder.ensure_closed()


async def test_versions_stored_before_grants_existed_become_shared(
    on_prefix: OnPrefix, prefix: str, sql: RunSql
) -> None:
    """A schema at version 1 with an unowned Version: after migrating, it is shared."""
    legacy = data.version("legacy", published_s=7)
    async with closing(on_prefix(MySQLStore)) as store:
        await store.migrate()
        # Back to what version 1 left behind: no grants table, one stored Version.
        await sql(
            f"DROP TABLE `{prefix}psych_version_grants`",
            f"DROP TABLE `{prefix}psych_memories`",
            f"DELETE FROM `{prefix}psych_schema_version` WHERE version > 1",
        )
        document = legacy.export_json().replace("\\", "\\\\").replace("'", "''")
        await sql(
            f"INSERT INTO `{prefix}psych_versions` (hash, document) "
            f"VALUES ('{legacy.hash}', '{document}')"
        )
        assert await store.migrate() == EVERY_VERSION[1:]
        await check_versions_before_grants(store, legacy)


def test_the_schema_version_is_pinned() -> None:
    """Version 3 added the facts table; bumping it again needs a migration here."""
    assert LATEST_VERSION == 3


async def test_a_database_at_version_2_gains_the_facts_table(
    on_prefix: OnPrefix, prefix: str, sql: RunSql, tables_of: TablesOf
) -> None:
    """A database migrated by the previous release: the store refuses it until
    ``migrate`` (from either store) adds the facts table, leaving the Runs alone."""
    async with closing(on_prefix(MySQLStore)) as store:
        await store.migrate()
        run, admitted = data.admission()
        await store.create_run(run, admitted)
    await sql(
        f"DROP TABLE `{prefix}psych_memories`",
        f"DELETE FROM `{prefix}psych_schema_version` WHERE version > 2",
    )
    key = MemoryKey(tenant="acme", end_user_id="alice")
    async with (
        closing(on_prefix(MySQLMemoryStore)) as memory,
        closing(on_prefix(MySQLStore)) as older,
    ):
        with pytest.raises(SchemaNotMigrated, match="version 2"):
            await memory.recall(key)
        with pytest.raises(SchemaNotMigrated, match="version 2"):
            await older.head(run.run_id)
        assert await memory.migrate() == [3]
        assert await older.migrate() == []
        assert await older.head(run.run_id) == 1
        fact = await memory.remember(key, "survives the upgrade")
        assert await memory.recall(key) == (fact,)
    assert await tables_of(prefix) == sorted(Tables(prefix).all)
    assert await _versions(sql, prefix) == EVERY_VERSION


async def test_an_unmigrated_database_is_refused_by_the_memory_store(
    on_prefix: OnPrefix, prefix: str, tables_of: TablesOf
) -> None:
    key = MemoryKey(tenant="acme", end_user_id="alice")
    async with closing(on_prefix(MySQLMemoryStore)) as memory:
        with pytest.raises(SchemaNotMigrated, match="migrate"):
            await memory.remember(key, "nowhere to go")
        with pytest.raises(SchemaNotMigrated):
            await memory.recall(key)
    assert await tables_of(prefix) == []


async def test_the_memory_store_migrates_every_table(
    on_prefix: OnPrefix, prefix: str, sql: RunSql, tables_of: TablesOf
) -> None:
    """One migration list: the memory store's migrate makes the Runs' tables too."""
    async with closing(on_prefix(MySQLMemoryStore)) as memory:
        assert await memory.migrate() == EVERY_VERSION
        assert await memory.migrate() == []
    assert await tables_of(prefix) == sorted(Tables(prefix).all)
    async with closing(on_prefix(MySQLStore)) as store:
        assert await store.migrate() == []
        assert await store.head(RunId("nobody")) == 0
