"""Migrations: forward-only, idempotent, safe to race, and refusing a newer schema."""

import asyncio
import contextlib
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from psych_contract import _data as data
from psych_contract.lifecycle import closing
from psych_contract.migrations import check_versions_before_grants
from psych_runtime import StoreUnavailable
from psych_runtime.adapters import SchemaNotMigrated
from psych_runtime.adapters import SchemaTooNew
from psych_store_sqlite import SqliteStore
from psych_store_sqlite import schema


def _url(path: Path) -> str:
    return f"sqlite:///{path}"


def _tables(path: Path) -> set[str]:
    with contextlib.closing(sqlite3.connect(path)) as conn:
        rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    return {name for (name,) in rows}


def _set_version(path: Path, version: int) -> None:
    with contextlib.closing(sqlite3.connect(path)) as conn, conn:
        conn.execute(f"UPDATE {schema.VERSION_TABLE} SET version = ?", (version,))


@pytest_asyncio.fixture
async def db(tmp_path: Path) -> AsyncIterator[Path]:
    yield tmp_path / "psych.db"


async def test_a_fresh_file_is_at_version_zero_until_migrated(db: Path) -> None:
    async with closing(SqliteStore(_url(db))) as store:
        assert await store.schema_version() == 0
        assert await store.migrate() == list(range(1, schema.SCHEMA_VERSION + 1))
        assert await store.schema_version() == schema.SCHEMA_VERSION
    expected = {"psych_runs", "psych_records", "psych_versions", "psych_memories"}
    assert expected | {schema.VERSION_TABLE} <= _tables(db)


async def test_migrating_twice_applies_nothing_and_keeps_the_data(db: Path) -> None:
    async with closing(SqliteStore(_url(db))) as store:
        await store.migrate()
        run, admitted = data.admission()
        await store.create_run(run, admitted)
        assert await store.migrate() == []
        assert await store.get_run(run.run_id) == run
        assert await store.read(run.run_id) == [admitted]


async def test_migrate_switches_the_file_to_wal(db: Path) -> None:
    async with closing(SqliteStore(_url(db))) as store:
        await store.migrate()
    with contextlib.closing(sqlite3.connect(db)) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchall() == [("wal",)]


async def test_instances_migrating_a_fresh_file_at_once_apply_each_version_once(
    tmp_path: Path,
) -> None:
    # Switching a fresh file to WAL collides with the other connections without
    # SQLite's busy handler stepping in, so a single race passes by luck often enough;
    # many fresh files make a lost collision show. Reading the version first opens each
    # store's connection, so the four switches start as close together as they can.
    for round_number in range(25):
        db = tmp_path / f"fresh-{round_number}.db"
        stores = [SqliteStore(_url(db)) for _ in range(4)]
        try:
            assert await asyncio.gather(*(store.schema_version() for store in stores)) == [0] * 4
            results = await asyncio.gather(*(store.migrate() for store in stores))
            assert sorted(results) == [[], [], [], list(range(1, schema.SCHEMA_VERSION + 1))]
            for store in stores:
                assert await store.schema_version() == schema.SCHEMA_VERSION
        finally:
            for store in stores:
                await store.close()


async def test_an_unmigrated_file_is_refused_with_a_hint(db: Path) -> None:
    async with closing(SqliteStore(_url(db))) as store:
        with pytest.raises(SchemaNotMigrated, match=r"no Psych schema.*migrate\(\)"):
            await store.head(data.new_run_id())
        with pytest.raises(SchemaNotMigrated, match="migrate"):
            await store.create_run(*data.admission())
        await store.migrate()
        assert await store.head(data.new_run_id()) == 0


async def test_a_newer_schema_is_refused_by_migrate_and_on_first_use(db: Path) -> None:
    first = SqliteStore(_url(db))
    await first.migrate()
    await first.close()
    newer = schema.SCHEMA_VERSION + 1
    _set_version(db, newer)
    async with closing(SqliteStore(_url(db))) as store:
        with pytest.raises(SchemaTooNew, match=f"schema version {newer}"):
            await store.migrate()
        assert await store.schema_version() == newer
        with pytest.raises(SchemaTooNew):
            await store.head(data.new_run_id())
        with pytest.raises(SchemaTooNew):
            await store.create_run(*data.admission())


async def test_an_older_schema_is_refused_until_migrated(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = SqliteStore(_url(db))
    await first.migrate()
    await first.close()
    upgrade = ("ALTER TABLE psych_runs ADD COLUMN note TEXT",)
    monkeypatch.setattr(schema, "MIGRATIONS", (*schema.MIGRATIONS, upgrade))
    monkeypatch.setattr(schema, "SCHEMA_VERSION", len(schema.MIGRATIONS))
    async with closing(SqliteStore(_url(db))) as store:
        with pytest.raises(SchemaNotMigrated, match=f"schema version {schema.SCHEMA_VERSION - 1}"):
            await store.head(data.new_run_id())
        assert await store.migrate() == [schema.SCHEMA_VERSION]
        assert await store.head(data.new_run_id()) == 0
    with contextlib.closing(sqlite3.connect(db)) as conn:
        columns = {row[1] for row in conn.execute("PRAGMA table_info(psych_runs)")}
    assert "note" in columns


async def test_a_failing_migration_leaves_no_trace(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = ("CREATE TABLE psych_extra (x INTEGER)", "THIS IS NOT SQL")
    monkeypatch.setattr(schema, "MIGRATIONS", (*schema.MIGRATIONS, broken))
    monkeypatch.setattr(schema, "SCHEMA_VERSION", len(schema.MIGRATIONS))
    async with closing(SqliteStore(_url(db))) as store:
        with pytest.raises(StoreUnavailable, match="syntax error"):
            await store.migrate()
        assert await store.schema_version() == 0
    assert _tables(db) & {"psych_runs", "psych_extra"} == set()


async def test_versions_stored_before_grants_existed_become_shared(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A file an older release wrote: schema version 1, a Version with no owner.
    with monkeypatch.context() as patched:
        patched.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:1])
        patched.setattr(schema, "SCHEMA_VERSION", 1)
        old = SqliteStore(_url(db))
        assert await old.migrate() == [1]
        await old.close()
    legacy = data.version("legacy", published_s=7)
    with contextlib.closing(sqlite3.connect(db)) as conn, conn:
        conn.execute(
            "INSERT INTO psych_versions (hash, body) VALUES (?, ?)",
            (legacy.hash, legacy.export_json()),
        )
    async with closing(SqliteStore(_url(db))) as store:
        assert await store.migrate() == list(range(2, schema.SCHEMA_VERSION + 1))
        await check_versions_before_grants(store, legacy)
