"""Large batches, stored bytes, identifiers and times: what the contract cannot see."""

from collections.abc import Awaitable
from collections.abc import Callable
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from datetime import timezone

import pytest
import pytest_asyncio

from psych_contract import _data as data
from psych_runtime import RunId
from psych_runtime import StoreError
from psych_runtime.adapters import Fence
from psych_runtime.adapters import LeaseLost
from psych_runtime.adapters import RecordTooLarge
from psych_runtime.adapters import RunHeader
from psych_runtime.adapters import SeqConflict
from psych_runtime.records import AbortRequested
from psych_runtime.records import EntryId
from psych_runtime.records import QueueEnqueued
from psych_runtime.records import QueueKind
from psych_runtime.records import Record
from psych_runtime.records import RunAdmitted
from psych_runtime.records import WorkerId
from psych_runtime.records import record_to_json
from psych_store_mysql import MySQLStore

RunSql = Callable[..., Awaitable[list[list[tuple[object, ...]]]]]
DropTables = Callable[[str], Awaitable[list[str]]]
T0 = data.T0
BUDGET = 4096


def _aborts(header: RunHeader, first: int, size: int, width: int = 300) -> list[AbortRequested]:
    """Abort requests whose reasons need escaping (quotes, backslashes, non-ASCII)."""
    return [
        AbortRequested(
            run_id=header.run_id,
            seq=seq,
            at=T0,
            scope=header.scope,
            reason=f"{seq}:" + "\u00e9x'\\\"" * (width // 5),
        )
        for seq in range(first, first + size)
    ]


async def _admitted(store: MySQLStore) -> tuple[RunHeader, RunAdmitted]:
    """Admit a new Run to ``store``: its header and its ``run_admitted`` record."""
    header, admitted = data.admission()
    await store.create_run(header, admitted)
    return header, admitted


@pytest_asyncio.fixture
async def small_packets(migrated_store: Callable[..., Awaitable[MySQLStore]]) -> MySQLStore:
    """A store told to keep every round trip under 4 KiB, so batches must be split."""
    return await migrated_store(max_statement_bytes=BUDGET)


async def test_a_batch_larger_than_one_packet_is_split_but_stays_atomic(
    small_packets: MySQLStore,
) -> None:
    store = small_packets
    header, _ = await _admitted(store)
    records = _aborts(header, 2, 60)  # roughly 60 x 400 bytes: many packets
    assert sum(len(record_to_json(r)) for r in records) > 4 * BUDGET
    await store.append(header.run_id, 2, records)
    assert await store.read(header.run_id, after=1) == records
    assert await store.head(header.run_id) == 61


async def test_a_refused_split_batch_writes_nothing(small_packets: MySQLStore) -> None:
    store = small_packets
    header, admitted = await _admitted(store)
    claimed = await store.claim(WorkerId("w1"), T0, 30)
    assert claimed is not None
    taken = await store.claim(WorkerId("w2"), T0 + timedelta(minutes=5), 30)
    assert taken is not None
    with pytest.raises(LeaseLost):
        await store.append(header.run_id, 2, _aborts(header, 2, 40), fence=Fence(WorkerId("w1"), 1))
    with pytest.raises(SeqConflict):
        await store.append(header.run_id, 3, _aborts(header, 3, 40))
    assert await store.read(header.run_id) == [admitted]
    assert await store.head(header.run_id) == 1
    # The connections went back to the pool in a usable state.
    await store.append(header.run_id, 2, _aborts(header, 2, 40), fence=Fence(WorkerId("w2"), 2))
    assert await store.head(header.run_id) == 41


async def test_a_single_record_larger_than_a_packet_is_record_too_large(
    small_packets: MySQLStore,
) -> None:
    store = small_packets
    header, _ = await _admitted(store)
    huge = QueueEnqueued(
        run_id=header.run_id,
        seq=2,
        at=T0,
        scope=header.scope,
        queue=QueueKind.STEER,
        entry_id=EntryId("e-1"),
        payload={"text": "x" * 3 * BUDGET},
    )
    with pytest.raises(RecordTooLarge):
        await store.append(
            header.run_id, 2, [*_aborts(header, 2, 1), huge.model_copy(update={"seq": 3})]
        )
    assert await store.head(header.run_id) == 1
    huge_header, huge_admitted = data.admission(RunId("big-4"))
    huge_admitted = huge_admitted.model_copy(update={"input": {"message": "x" * 2 * BUDGET}})
    with pytest.raises(RecordTooLarge):
        await store.create_run(huge_header, huge_admitted)
    assert await store.get_run(huge_header.run_id) is None


async def test_records_are_stored_as_the_exact_compact_json(store: MySQLStore, sql: RunSql) -> None:
    header, admitted = data.admission(RunId("bytes-1"))
    await store.create_run(header, admitted)
    records = _aborts(header, 2, 3)
    await store.append(header.run_id, 2, records)
    table = store.tables.records
    (rows,) = await sql(
        f"SELECT seq, type, body FROM `{table}` WHERE run_id = 'bytes-1' ORDER BY seq"
    )
    assert [(row[0], row[1]) for row in rows] == [(1, b"run_admitted")] + [
        (seq, b"abort_requested") for seq in (2, 3, 4)
    ]
    written: list[Record] = [admitted, *records]
    assert [str(row[2]).encode() for row in rows] == [record_to_json(r) for r in written]


async def test_tenants_and_ids_compare_byte_for_byte(store: MySQLStore) -> None:
    """No collation may fold case or trailing spaces: a tenant is an isolation boundary."""
    lower = await store.create_run(*data.admission(RunId("case-run"), tenant="acme"))
    upper = await store.create_run(*data.admission(RunId("CASE-RUN"), tenant="ACME"))
    spaced = await store.create_run(*data.admission(RunId("case-run "), tenant="acme "))
    assert lower.created and upper.created and spaced.created
    assert await store.get_run(RunId("case-run"), tenant="ACME") is None
    assert await store.get_run(RunId("case-run"), tenant="acme ") is None
    assert await store.read(RunId("CASE-RUN"), tenant="acme") == []
    got = await store.get_run(RunId("case-run "), tenant="acme ")
    assert got is not None
    assert got.run_id == "case-run "


async def test_times_come_back_aware_utc_to_the_microsecond(store: MySQLStore) -> None:
    plus_two = timezone(timedelta(hours=2))
    created = datetime(2030, 6, 1, 14, 30, 15, 123456, tzinfo=plus_two)
    header, admitted = data.admission(RunId("time-1"), created_at=created)
    await store.create_run(header, admitted)
    got = await store.get_run(header.run_id)
    assert got is not None
    assert got.created_at == created
    assert got.created_at.tzinfo is UTC
    assert got.created_at.hour == 12
    assert got.created_at.microsecond == 123456
    claimed = await store.claim(WorkerId("w"), created, 0.000001)
    assert claimed is not None
    assert claimed.lease_expires_at == created + timedelta(microseconds=1)
    assert await store.get_run(header.run_id) == claimed


async def test_naive_datetimes_are_refused(store: MySQLStore) -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        await store.claim(WorkerId("w"), datetime(2030, 1, 1), 30)


async def test_overlong_ids_are_refused_before_reaching_the_server(store: MySQLStore) -> None:
    with pytest.raises(ValueError, match="run id"):
        await store.create_run(*data.admission(RunId("r" * 600)))
    with pytest.raises(ValueError, match="worker id"):
        await store.claim(WorkerId("w" * 600), T0, 30)


async def test_a_small_pool_survives_many_refusals(
    mysql_dsn: str, prefix: str, drop_tables: DropTables
) -> None:
    """Refused appends must hand their connection back clean, or a 1-connection pool hangs."""
    store = MySQLStore(mysql_dsn, table_prefix=prefix, pool_min_size=1, pool_max_size=1)
    try:
        await store.migrate()
        header, admitted = await _admitted(store)
        for _ in range(20):
            with pytest.raises(SeqConflict):
                await store.append(header.run_id, 1, [admitted])
        await store.append(header.run_id, 2, _aborts(header, 2, 1))
        assert await store.head(header.run_id) == 2
    finally:
        await store.close()
        await drop_tables(prefix)


async def test_a_closed_store_refuses_calls(store: MySQLStore) -> None:
    await store.close()
    with pytest.raises(StoreError, match="closed"):
        await store.head(RunId("anything"))


async def test_racing_admissions_with_one_key_create_exactly_one_run(store: MySQLStore) -> None:
    """Concurrent duplicates (same key, or same run id) all see the one winner."""
    import asyncio

    def keyed(i: int) -> tuple[RunHeader, RunAdmitted]:
        header, admitted = data.admission(RunId(f"race-key-{i}"))
        return (
            header.model_copy(update={"idempotency_key": "same-key"}),
            admitted.model_copy(update={"idempotency_key": "same-key"}),
        )

    by_key = await asyncio.gather(*(store.create_run(*keyed(i)) for i in range(12)))
    assert sum(result.created for result in by_key) == 1
    winner = next(result.header for result in by_key if result.created)
    assert {result.header for result in by_key} == {winner}

    same_id = await asyncio.gather(
        *(store.create_run(*data.admission(RunId("race-id"))) for _ in range(12))
    )
    assert sum(result.created for result in same_id) == 1
    assert len({result.header for result in same_id}) == 1
    assert await store.head(RunId("race-id")) == 1


async def test_pooled_sessions_run_read_committed_strict_utf8mb4(store: MySQLStore) -> None:
    async with store._lend("inspecting the session") as batch:
        try:
            isolation = await batch.scalar("SELECT @@SESSION.transaction_isolation")
        except Exception:  # MariaDB before 11.1 only knows the older name
            isolation = await batch.scalar("SELECT @@SESSION.tx_isolation")
        sql_mode = await batch.scalar("SELECT @@SESSION.sql_mode")
        charset = await batch.scalar("SELECT @@SESSION.character_set_connection")
        autocommit = await batch.scalar("SELECT @@SESSION.autocommit")
    assert isolation == "READ-COMMITTED"
    assert "STRICT_ALL_TABLES" in str(sql_mode)
    assert charset == "utf8mb4"
    assert autocommit == 1
