"""What the contract suite does not pin down: storage format, wake-up keys, threads."""

import asyncio
import contextlib
import gc
import sqlite3
import threading
import time
from collections.abc import AsyncIterator
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from datetime import timezone
from pathlib import Path

import pytest
import pytest_asyncio

from psych_contract import _data as data
from psych_contract.lifecycle import closing
from psych_runtime import StoreUnavailable
from psych_runtime.adapters import WORK
from psych_runtime.adapters import Fence
from psych_runtime.adapters import RecordTooLarge
from psych_runtime.adapters import RunState
from psych_runtime.adapters import SeqConflict
from psych_runtime.records import WorkerId
from psych_runtime.records import record_to_json
from psych_store_sqlite import SqliteStore
from psych_store_sqlite import _queries

W = WorkerId("worker")


@pytest_asyncio.fixture
async def db(tmp_path: Path) -> AsyncIterator[Path]:
    path = tmp_path / "psych.db"
    store = SqliteStore(f"sqlite:///{path}")
    await store.migrate()
    await store.close()
    yield path


@pytest_asyncio.fixture
async def store(db: Path) -> AsyncIterator[SqliteStore]:
    store = SqliteStore(f"sqlite:///{db}")
    yield store
    await store.close()


def _query(db: Path, sql: str, *params: object) -> list[tuple[object, ...]]:
    with contextlib.closing(sqlite3.connect(db)) as conn:
        return conn.execute(sql, params).fetchall()


# --- storage ---------------------------------------------------------------------------


async def test_records_are_stored_as_compact_json_with_seq_and_type(
    store: SqliteStore, db: Path
) -> None:
    run, admitted = data.admission()
    await store.create_run(run, admitted)
    batch = data.batch(run, 2, 4)
    await store.append(run.run_id, 2, batch)
    rows = _query(
        db, "SELECT seq, type, body FROM psych_records WHERE run_id = ? ORDER BY seq", run.run_id
    )
    expected = [admitted, *batch]
    assert rows == [(r.seq, r.type, record_to_json(r)) for r in expected]
    assert _query(db, "SELECT head_seq FROM psych_runs WHERE run_id = ?", run.run_id) == [(5,)]


async def test_instants_keep_microseconds_and_come_back_as_utc(store: SqliteStore) -> None:
    plus_two = timezone(timedelta(hours=2))
    created = datetime(2031, 5, 6, 7, 8, 9, 123456, tzinfo=plus_two)
    run, admitted = data.admission(
        created_at=created, deadline_at=created + timedelta(microseconds=1)
    )
    await store.create_run(run, admitted)
    stored = await store.get_run(run.run_id)
    assert stored == run
    assert stored is not None
    assert stored.created_at.tzinfo is UTC
    assert stored.created_at == datetime(2031, 5, 6, 5, 8, 9, 123456, tzinfo=UTC)
    assert stored.deadline_at - stored.created_at == timedelta(microseconds=1)


async def test_a_scope_with_only_a_tenant_round_trips(store: SqliteStore, db: Path) -> None:
    run, admitted = data.admission()
    bare = run.model_copy(
        update={"scope": run.scope.model_copy(update={"principal": None, "labels": {}})}
    )
    await store.create_run(bare, admitted.model_copy(update={"scope": bare.scope}))
    assert await store.get_run(bare.run_id) == bare
    assert _query(db, "SELECT tenant, scope FROM psych_runs") == [("tenant-a", None)]


async def test_naive_datetimes_are_refused(store: SqliteStore) -> None:
    run, admitted = data.admission()
    await store.create_run(run, admitted)
    with pytest.raises(ValueError, match="timezone-aware"):
        await store.claim(W, datetime(2030, 1, 1), 30)


async def test_everything_survives_closing_and_reopening(db: Path) -> None:
    first = SqliteStore(f"sqlite:///{db}")
    run, admitted = data.admission()
    await first.create_run(run, admitted)
    claimed = await first.claim(W, data.at(0), 30)
    batch = data.batch(run, 2, 3)
    await first.append(run.run_id, 2, batch, fence=Fence(W, 1))
    version = data.version("reopen")
    await first.put_version(version, tenant="tenant-a")
    await first.close()
    async with closing(SqliteStore(f"sqlite:///{db}")) as second:
        assert await second.get_run(run.run_id) == claimed
        assert await second.read(run.run_id) == [admitted, *batch]
        got = await second.get_version(version.hash, tenant="tenant-a")
        assert got is not None
        assert got.hash == version.hash


async def test_an_oversized_record_is_refused_and_nothing_is_written(store: SqliteStore) -> None:
    run, admitted = data.admission()
    await store.create_run(run, admitted)
    # Lower this connection's value-length ceiling rather than build a gigabyte record.
    await store._lanes.maintain(lambda conn: conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, 300))
    big = data.consumer_record(run, 2, note="x" * 400)
    with pytest.raises(RecordTooLarge, match="record 2"):
        await store.append(run.run_id, 2, [big])
    assert await store.head(run.run_id) == 1


# --- connection settings ---------------------------------------------------------------


@pytest.mark.parametrize(("level", "code"), [("NORMAL", 1), ("FULL", 2), ("EXTRA", 3)])
async def test_the_synchronous_level_is_applied(db: Path, level: str, code: int) -> None:
    async with closing(
        SqliteStore(f"sqlite:///{db}", synchronous=level, busy_timeout_ms=1234)
    ) as store:
        pragmas = await store._lanes.maintain(
            lambda conn: (
                conn.execute("PRAGMA synchronous").fetchall(),
                conn.execute("PRAGMA busy_timeout").fetchall(),
                conn.execute("PRAGMA journal_mode").fetchall(),
            )
        )
    assert pragmas == ([(code,)], [(1234,)], [("wal",)])


async def test_reads_on_the_writer_thread_work_too(db: Path) -> None:
    async with closing(SqliteStore(f"sqlite:///{db}", readers=0)) as store:
        run, admitted = data.admission()
        await store.create_run(run, admitted)
        await store.append(run.run_id, 2, data.batch(run, 2, 2))
        assert await store.head(run.run_id) == 3
        assert len(await store.read(run.run_id)) == 3


@pytest.mark.parametrize(
    ("sql", "index"),
    [
        (_queries._CLAIM, "psych_runs_claim"),
        (
            "SELECT run_id FROM psych_runs WHERE state = 'running' AND lease_expires_at <= 1 "
            "ORDER BY lease_expires_at, run_id LIMIT 5",
            "psych_runs_leases",
        ),
        (
            "SELECT run_id FROM psych_runs WHERE state <> 'settled' AND deadline_at <= 1 "
            "ORDER BY deadline_at, run_id LIMIT 5",
            "psych_runs_deadlines",
        ),
    ],
)
async def test_the_scans_use_their_partial_indexes(db: Path, sql: str, index: str) -> None:
    params = {"holder": "w", "expires": 1, "now": 1} if ":now" in sql else {}
    plan = " | ".join(str(row[3]) for row in _query_plan(db, sql, params))
    assert f"INDEX {index}" in plan, plan


def _query_plan(db: Path, sql: str, params: dict[str, object]) -> list[tuple[object, ...]]:
    with contextlib.closing(sqlite3.connect(db)) as conn:
        return conn.execute("EXPLAIN QUERY PLAN " + sql, params).fetchall()


# --- wake-ups (same keys as the in-memory store) ---------------------------------------


async def test_a_release_signals_the_run_key_whatever_the_state(store: SqliteStore) -> None:
    run, admitted = data.admission()
    await store.create_run(run, admitted)
    await store.claim(W, data.at(0), 30)
    seen_run, seen_work = store.notifier.generation(run.run_id), store.notifier.generation(WORK)
    await store.release(run.run_id, W, RunState.SUSPENDED)
    assert store.notifier.generation(run.run_id) == seen_run + 1
    assert store.notifier.generation(WORK) == seen_work


async def test_only_a_runnable_admission_signals_work(store: SqliteStore) -> None:
    await store.create_run(*data.admission(state=RunState.NESTED))
    await store.create_run(*data.admission(state=RunState.SUSPENDED))
    assert store.notifier.generation(WORK) == 0
    await store.create_run(*data.admission())
    assert store.notifier.generation(WORK) == 1


async def test_refused_writes_signal_nothing(store: SqliteStore) -> None:
    key = data.new_key()
    run, admitted = data.admission(idempotency_key=key)
    await store.create_run(run, admitted)
    await store.claim(W, data.at(0), 30)
    before = (store.notifier.generation(run.run_id), store.notifier.generation(WORK))
    await store.create_run(*data.admission(idempotency_key=key))
    with pytest.raises(SeqConflict):
        await store.append(run.run_id, 1, [admitted])
    await store.release(run.run_id, WorkerId("not-the-holder"), RunState.RUNNABLE)
    assert not await store.settle_inline(run.run_id)
    assert (store.notifier.generation(run.run_id), store.notifier.generation(WORK)) == before


# --- the event loop stays free ---------------------------------------------------------


async def test_a_write_waiting_for_another_connections_lock_does_not_block_the_loop(
    store: SqliteStore, db: Path
) -> None:
    run, admitted = data.admission()
    await store.create_run(run, admitted)
    blocker = sqlite3.connect(db, isolation_level=None)
    try:
        blocker.execute("BEGIN IMMEDIATE")
        append = asyncio.create_task(store.append(run.run_id, 2, data.batch(run, 2, 1)))
        ticks = 0
        started = time.monotonic()
        while time.monotonic() - started < 0.3:
            await asyncio.sleep(0.01)
            ticks += 1
        assert not append.done()
        assert ticks >= 10, "the event loop stalled while the append waited for the lock"
        # Reads run on their own connections and are not held up by the waiting writer.
        assert await asyncio.wait_for(store.head(run.run_id), timeout=1) == 1
        blocker.execute("ROLLBACK")
        await asyncio.wait_for(append, timeout=5)
    finally:
        blocker.close()
    assert await store.head(run.run_id) == 2


async def test_a_lock_held_past_the_busy_timeout_is_store_unavailable(db: Path) -> None:
    store = SqliteStore(f"sqlite:///{db}", busy_timeout_ms=100)
    run, admitted = data.admission()
    await store.create_run(run, admitted)
    blocker = sqlite3.connect(db, isolation_level=None)
    try:
        blocker.execute("BEGIN IMMEDIATE")
        with pytest.raises(StoreUnavailable, match="busy_timeout_ms=100"):
            await store.append(run.run_id, 2, data.batch(run, 2, 1))
        blocker.execute("ROLLBACK")
        assert await store.head(run.run_id) == 1
        await store.append(run.run_id, 2, data.batch(run, 2, 1))
        assert await store.head(run.run_id) == 2
    finally:
        blocker.close()
        await store.close()


async def test_a_cancelled_caller_does_not_break_the_lane(store: SqliteStore) -> None:
    run, admitted = data.admission()
    await store.create_run(run, admitted)
    task = asyncio.create_task(store.append(run.run_id, 2, data.batch(run, 2, 1)))
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # The cancelled append may still be queued on the writer thread, so a read now
    # could run before it. Writes are served in order: the next append settles it.
    try:
        await store.append(run.run_id, 2, data.batch(run, 2, 1))
        landed = 2
    except SeqConflict:
        await store.append(run.run_id, 3, data.batch(run, 3, 1))
        landed = 3
    assert await store.head(run.run_id) == landed
    assert [r.seq for r in await store.read(run.run_id)] == list(range(1, landed + 1))


async def test_a_store_dropped_without_close_lets_its_threads_end(db: Path) -> None:
    before = set(threading.enumerate())
    store = SqliteStore(f"sqlite:///{db}")
    assert await store.head(data.new_run_id()) == 0
    assert await store.claim(W, data.at(0), 30) is None
    started = [t for t in set(threading.enumerate()) - before if t.name.startswith("psych-sqlite")]
    assert len(started) == 3  # the writer and two readers
    del store
    gc.collect()
    for thread in started:
        await asyncio.to_thread(thread.join, 5)
        assert not thread.is_alive(), thread.name
