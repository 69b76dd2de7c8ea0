"""What the MemoryContract leaves to the adapter: schema checks, storage, input refusal."""

import contextlib
import sqlite3
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from pathlib import Path

import pytest

from psych_contract.lifecycle import closing
from psych_contract.memory import check_bad_input_refused_offline
from psych_contract.migrations import check_unmigrated_memory_refused
from psych_runtime.adapters import MemoryKey
from psych_runtime.adapters import SchemaNotMigrated
from psych_runtime.adapters import SchemaTooNew
from psych_store_sqlite import SqliteMemoryStore
from psych_store_sqlite import SqliteStore
from psych_store_sqlite import schema

ALICE = MemoryKey(tenant="acme", end_user_id="alice")


def _url(path: Path) -> str:
    return f"sqlite:///{path}"


async def test_an_unmigrated_file_raises_schema_not_migrated(tmp_path: Path) -> None:
    async with closing(SqliteMemoryStore(_url(tmp_path / "fresh.db"))) as memory:
        await check_unmigrated_memory_refused(
            memory,
            list(range(1, schema.SCHEMA_VERSION + 1)),
            match=r"no Psych schema.*migrate\(\)",
        )


async def test_a_file_at_an_older_version_is_refused_until_migrated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "old.db"
    with monkeypatch.context() as patched:
        patched.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:2])
        patched.setattr(schema, "SCHEMA_VERSION", 2)
        old = SqliteStore(_url(db))
        assert await old.migrate() == [1, 2]
        await old.close()
    async with closing(SqliteMemoryStore(_url(db))) as memory:
        with pytest.raises(SchemaNotMigrated, match="schema version 2"):
            await memory.recall(ALICE)
    # Migrating the Run store brings the memory table too: one list of migrations.
    async with closing(SqliteStore(_url(db))) as store:
        assert await store.migrate() == [3, 4]
    async with closing(SqliteMemoryStore(_url(db))) as memory:
        fact = await memory.remember(ALICE, "after the upgrade")
        assert await memory.recall(ALICE) == (fact,)


async def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "newer.db"
    memory = SqliteMemoryStore(_url(db))
    await memory.migrate()
    await memory.close()
    with contextlib.closing(sqlite3.connect(db)) as conn, conn:
        conn.execute(f"UPDATE {schema.VERSION_TABLE} SET version = ?", (schema.SCHEMA_VERSION + 1,))
    memory = SqliteMemoryStore(_url(db))
    try:
        with pytest.raises(SchemaTooNew):
            await memory.recall(ALICE)
        with pytest.raises(SchemaTooNew):
            await memory.migrate()
    finally:
        await memory.close()


async def test_facts_are_rows_with_separate_key_columns_and_exact_instants(
    tmp_path: Path,
) -> None:
    db = tmp_path / "rows.db"
    async with closing(SqliteMemoryStore(_url(db))) as memory:
        await memory.migrate()
        fact = await memory.remember(ALICE, "likes tea")
        (recalled,) = await memory.recall(ALICE)
        assert await memory.recall(ALICE, limit=2**70) == (fact,)  # past any SQL integer
    assert recalled == fact
    assert recalled.created_at.tzinfo is UTC
    assert recalled.created_at.microsecond == fact.created_at.microsecond
    with contextlib.closing(sqlite3.connect(db)) as conn:
        rows = conn.execute(
            "SELECT tenant, end_user_id, id, content, created_at FROM psych_memories"
        ).fetchall()
    micros = (fact.created_at - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1)
    assert rows == [("acme", "alice", fact.id, "likes tea", micros)]


async def test_bad_input_is_refused_before_the_file_is_touched(tmp_path: Path) -> None:
    # The directory does not exist: any IO would raise StoreUnavailable instead.
    await check_bad_input_refused_offline(
        SqliteMemoryStore(_url(tmp_path / "missing" / "memory.db")), ("mem_\ud800", "mem_\x00")
    )


async def test_a_store_and_a_memory_store_share_one_file(tmp_path: Path) -> None:
    url = _url(tmp_path / "shared.db")
    store, memory = SqliteStore(url), SqliteMemoryStore(url)
    try:
        assert await store.migrate() == list(range(1, schema.SCHEMA_VERSION + 1))
        assert await memory.migrate() == []
        fact = await memory.remember(ALICE, "kept beside the Runs")
        assert await memory.recall(ALICE) == (fact,)
    finally:
        await memory.close()
        await store.close()
