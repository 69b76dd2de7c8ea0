"""``psych doctor --store``: schema version, pending migrations, round trip, no writes."""

import asyncio
import json
import sqlite3
from urllib.parse import urlsplit

import asyncpg
import pytest

from psych_runtime.cli.main import main
from tests.support.scratch_stores import POSTGRES_DSN
from tests.support.scratch_stores import drop_postgres_schema
from tests.support.scratch_stores import scratch_store_url

from .conftest import DURABLE


async def doctor(capsys, url):
    code = await asyncio.to_thread(main, ["doctor", "--json", "--store", url])
    return code, json.loads(capsys.readouterr().out)["store"]


@pytest.mark.parametrize("kind", DURABLE)
async def test_a_migrated_store_is_current(kind, store_url_for, capsys):
    url = await store_url_for(kind)

    code, store = await doctor(capsys, url)

    assert store["reachable"] is True
    assert store["ok"] is True
    assert store["schema_version"] == store["expected_schema_version"] >= 1
    assert store["pending_migrations"] == []
    assert store["round_trip_ms"] >= 0
    assert store["detail"] == "the schema is current"
    assert code in (0, 1)  # the installation's own checks decide the rest


async def test_a_fresh_postgres_schema_reports_pending_migrations_and_stays_empty(capsys):
    url, cleanup = await scratch_store_url("postgres", migrate=False)
    schema = dict(part.split("=") for part in urlsplit(url).query.split("&"))["schema"]
    try:
        code = await asyncio.to_thread(main, ["doctor", "--store", url])
        text = capsys.readouterr().out
        _, store = await doctor(capsys, url)

        assert code == 1
        assert store["reachable"] is True
        assert store["ok"] is False
        assert store["schema_version"] == 0
        expected = store["expected_schema_version"]
        assert store["pending_migrations"] == list(range(1, expected + 1))
        assert f"schema version: 0 (this adapter needs {expected})" in text
        assert "pending migrations: " + ", ".join(map(str, range(1, expected + 1))) in text
        assert "migration(s) pending" in text
        connection = await asyncpg.connect(POSTGRES_DSN)
        try:
            created = await connection.fetchval(
                "SELECT count(*) FROM pg_catalog.pg_namespace WHERE nspname = $1", schema
            )
        finally:
            await connection.close()
        assert created == 0, "psych doctor created the schema"
    finally:
        await cleanup()
        await drop_postgres_schema(schema)


@pytest.mark.parametrize("kind", ["mysql", "dynamodb"])
async def test_an_unmigrated_database_reports_every_migration_pending(kind, capsys):
    url, cleanup = await scratch_store_url(kind, migrate=False)
    try:
        code, store = await doctor(capsys, url)
        again, _ = await doctor(capsys, url)  # nothing was migrated by the first look
    finally:
        await cleanup()

    assert code == again == 1
    assert store["reachable"] is True
    assert store["schema_version"] == 0
    assert store["pending_migrations"] == list(range(1, store["expected_schema_version"] + 1))


async def test_an_empty_sqlite_file_reports_pending_migrations_and_is_not_migrated(
    tmp_path, capsys
):
    path = tmp_path / "empty.db"
    sqlite3.connect(path).close()

    code, store = await doctor(capsys, f"sqlite:///{path}")

    assert code == 1
    assert store["schema_version"] == 0
    assert store["pending_migrations"] == list(range(1, store["expected_schema_version"] + 1))
    with sqlite3.connect(path) as connection:
        tables = connection.execute("SELECT name FROM sqlite_master").fetchall()
    assert tables == []


async def test_a_missing_sqlite_file_is_reported_and_not_created(tmp_path, capsys):
    path = tmp_path / "nowhere.db"

    code, store = await doctor(capsys, f"sqlite:///{path}")

    assert code == 1
    assert store["reachable"] is False
    assert "no database file" in store["detail"]
    assert not path.exists()


async def test_an_unreachable_server_is_a_failed_check_with_the_password_masked(capsys):
    url = "postgresql://someone:hunter2@127.0.0.1:1/test?connect_timeout=2"

    code = await asyncio.to_thread(main, ["doctor", "--store", url])

    out = capsys.readouterr().out
    assert code == 1
    assert "hunter2" not in out
    assert "postgresql://someone:********@127.0.0.1:1/test" in out
    assert "FAIL cannot reach the store" in out or "FAIL cannot open the store" in out


async def test_the_memory_store_has_no_schema_but_answers(capsys):
    _, store = await doctor(capsys, "memory://")

    assert store == {
        "url": "memory://",
        "backend": "InMemoryStore",
        "reachable": True,
        "schema_version": None,
        "expected_schema_version": None,
        "pending_migrations": [],
        "round_trip_ms": store["round_trip_ms"],
        "ok": True,
        "detail": "the store keeps no schema",
    }
