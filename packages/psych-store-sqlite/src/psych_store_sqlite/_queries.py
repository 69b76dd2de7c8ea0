"""The SQL behind each Store method, as plain functions of a connection.

They run on a lane thread (see ``_lanes``). Functions that write expect to be called
inside the writer's ``BEGIN IMMEDIATE`` transaction: holding the file's write lock from
the first statement is what makes "check, then write" atomic here, across threads and
processes alike. Every statement's rows are fetched in full, so no statement is left
half-stepped holding a read snapshot open.
"""

import sqlite3
from collections.abc import Collection
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from datetime import timedelta

from psych_runtime import RunId
from psych_runtime import RunNotFound
from psych_runtime import Version
from psych_runtime import VersionHash
from psych_runtime.adapters.memory import Memory
from psych_runtime.adapters.memory import MemoryKey
from psych_runtime.adapters.store import Admission
from psych_runtime.adapters.store import Fence
from psych_runtime.adapters.store import LeaseLost
from psych_runtime.adapters.store import RecordTooLarge
from psych_runtime.adapters.store import RunHeader
from psych_runtime.adapters.store import RunState
from psych_runtime.adapters.store import SeqConflict
from psych_runtime.records import Record
from psych_runtime.records import WorkerId
from psych_runtime.records import record_from_json
from psych_runtime.records import record_to_json
from psych_store_sqlite._rows import HEADER_COLUMNS
from psych_store_sqlite._rows import MEMORY_COLUMNS
from psych_store_sqlite._rows import SELECT_HEADER
from psych_store_sqlite._rows import SqlValue
from psych_store_sqlite._rows import from_micros
from psych_store_sqlite._rows import header_from_row
from psych_store_sqlite._rows import header_values
from psych_store_sqlite._rows import memory_from_row
from psych_store_sqlite._rows import memory_values
from psych_store_sqlite._rows import optional_micros
from psych_store_sqlite._rows import to_micros

_INSERT_RECORD = "INSERT INTO psych_records (run_id, seq, type, body) VALUES (?, ?, ?, ?)"
_INSERT_RUN = (
    f"INSERT INTO psych_runs ({SELECT_HEADER}, head_seq) "
    f"VALUES ({', '.join('?' * (len(HEADER_COLUMNS) + 1))}) ON CONFLICT DO NOTHING"
)

# The claimable set at :now, written so the planner can walk psych_runs_claim in
# claim order: its WHERE repeats the index's condition and its ORDER BY its expression.
_CLAIM = f"""
UPDATE psych_runs
SET state = 'running', lease_holder = :holder, lease_expires_at = :expires,
    attempt_count = attempt_count + 1
WHERE run_id = (
    SELECT run_id FROM psych_runs
    WHERE state IN ('runnable', 'running')
      AND (runnable_at IS NULL OR runnable_at <= :now)
      AND (state = 'runnable' OR lease_expires_at IS NULL OR lease_expires_at <= :now)
    ORDER BY coalesce(runnable_at, created_at), created_at, run_id
    LIMIT 1
)
RETURNING {SELECT_HEADER}
"""


@dataclass(frozen=True, slots=True)
class EncodedRecord:
    """A record ready to insert: its seq, type and compact JSON body."""

    seq: int
    type: str
    body: bytes


def encode(records: Sequence[Record]) -> list[EncodedRecord]:
    """Serialise a batch once, before the write lock is taken."""
    return [EncodedRecord(r.seq, r.type, record_to_json(r)) for r in records]


# --- the log ---------------------------------------------------------------------------


def append(
    conn: sqlite3.Connection,
    run_id: RunId,
    expected_seq: int,
    batch: Sequence[EncodedRecord],
    fence: Fence | None,
) -> None:
    """Check the fence and the head on the Run's row, then insert the batch.

    The order of refusals matches the port: unknown Run, then the fence, then the seq.
    """
    _check_sizes(conn, run_id, batch)
    rows = conn.execute(
        "SELECT head_seq, lease_holder, attempt_count FROM psych_runs WHERE run_id = ?",
        (run_id,),
    ).fetchall()
    if not rows:
        raise RunNotFound(run_id)
    head, holder, attempts = rows[0]
    if fence is not None and (holder != fence.worker_id or attempts != fence.attempt_count):
        raise LeaseLost(run_id, fence.worker_id, fence.attempt_count)
    if head != expected_seq - 1:
        raise SeqConflict(run_id, expected_seq)
    try:
        conn.executemany(
            _INSERT_RECORD, [(run_id, item.seq, item.type, item.body) for item in batch]
        )
    except sqlite3.IntegrityError as exc:
        # The primary key is the last line of defence should head_seq ever lag the log.
        raise SeqConflict(run_id, expected_seq) from exc
    conn.execute("UPDATE psych_runs SET head_seq = ? WHERE run_id = ?", (head + len(batch), run_id))


def read(
    conn: sqlite3.Connection,
    run_id: RunId,
    after: int,
    limit: int | None,
    tenant: str | None,
) -> list[Record]:
    """One statement, so the tenant check and the rows come from the same snapshot."""
    sql_limit = -1 if limit is None else limit
    if tenant is None:
        cursor = conn.execute(
            "SELECT body FROM psych_records WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?",
            (run_id, after, sql_limit),
        )
    else:
        cursor = conn.execute(
            "SELECT body FROM psych_records WHERE run_id = ? AND seq > ? AND EXISTS "
            "(SELECT 1 FROM psych_runs WHERE run_id = ? AND tenant = ?) ORDER BY seq LIMIT ?",
            (run_id, after, run_id, tenant, sql_limit),
        )
    return [record_from_json(body) for (body,) in cursor.fetchall()]


def head(conn: sqlite3.Connection, run_id: RunId) -> int:
    """The Run's ``head_seq``, or 0 when there is no such Run."""
    rows = conn.execute("SELECT head_seq FROM psych_runs WHERE run_id = ?", (run_id,)).fetchall()
    return int(rows[0][0]) if rows else 0


# --- versions --------------------------------------------------------------------------


SHARED = ""
"""The grantee of a shared Version; a tenant is never the empty string."""

_GRANTED = (
    "SELECT v.body, g.published_at FROM psych_versions AS v "
    "JOIN psych_version_grants AS g ON g.hash = v.hash "
    "WHERE v.hash = ? AND g.grantee IN (?, ?) "
    # The tenant's own grant before the share, so it sees its own publication time.
    "ORDER BY g.grantee = ? LIMIT 1"
)


def _grantee(tenant: str | None) -> str:
    if tenant == SHARED:
        raise ValueError("a tenant name is never empty; pass None for a shared Version")
    return SHARED if tenant is None else tenant


def put_version(conn: sqlite3.Connection, version: Version, tenant: str | None) -> Version:
    """Keep the first copy of the hash and the grantee's first grant; return its view."""
    grantee = _grantee(tenant)
    conn.execute(
        "INSERT INTO psych_versions (hash, body) VALUES (?, ?) ON CONFLICT DO NOTHING",
        (version.hash, version.export_json()),
    )
    conn.execute(
        "INSERT INTO psych_version_grants (hash, grantee, published_at) VALUES (?, ?, ?) "
        "ON CONFLICT DO NOTHING",
        (version.hash, grantee, to_micros(version.published_at)),
    )
    rows = conn.execute(
        "SELECT v.body, g.published_at FROM psych_versions AS v "
        "JOIN psych_version_grants AS g ON g.hash = v.hash "
        "WHERE v.hash = ? AND g.grantee = ?",
        (version.hash, grantee),
    ).fetchall()
    return _as_seen(rows[0][0], rows[0][1])


def get_version(
    conn: sqlite3.Connection, version_hash: VersionHash, tenant: str | None
) -> Version | None:
    """The stored Version when ``tenant`` (None: anyone) may see it.

    ``import_json`` re-hashes it, so a tampered row is caught.
    """
    if tenant is None:
        rows = conn.execute(
            "SELECT body, NULL FROM psych_versions WHERE hash = ?", (version_hash,)
        ).fetchall()
    else:
        grantee = _grantee(tenant)
        rows = conn.execute(_GRANTED, (version_hash, grantee, SHARED, SHARED)).fetchall()
    return _as_seen(rows[0][0], rows[0][1]) if rows else None


def _as_seen(body: str, published_at: int | None) -> Version:
    """The stored Version, carrying the grant's publication time when it has one."""
    version = Version.import_json(body)
    if published_at is None:
        return version
    return version.model_copy(update={"published_at": from_micros(published_at)})


# --- admission and headers -------------------------------------------------------------


def create_run(conn: sqlite3.Connection, header: RunHeader, admitted: EncodedRecord) -> Admission:
    """Insert the header and the ``run_admitted`` record, unless either key exists.

    ``ON CONFLICT DO NOTHING`` covers both the run id and the (tenant, idempotency
    key) uniqueness; when it skipped the row, the Run that was there first is returned,
    looked up by key before id as the in-memory store does.
    """
    params: tuple[SqlValue, ...] = (*header_values(header), 1)
    if conn.execute(_INSERT_RUN, params).rowcount == 1:
        conn.execute(_INSERT_RECORD, (header.run_id, 1, admitted.type, admitted.body))
        return Admission(header, created=True)
    existing = None
    if header.idempotency_key is not None:
        existing = _one_header(
            conn,
            "tenant = ? AND idempotency_key = ?",
            (header.scope.tenant, header.idempotency_key),
        )
    if existing is None:
        existing = _one_header(conn, "run_id = ?", (header.run_id,))
    if existing is None:  # pragma: no cover - a conflict always leaves the row it hit
        raise RuntimeError(f"admission of {header.run_id!r} conflicted with no visible Run")
    return Admission(existing, created=False)


def get_run(conn: sqlite3.Connection, run_id: RunId, tenant: str | None) -> RunHeader | None:
    """The header, hidden from any tenant but its own when ``tenant`` is given."""
    if tenant is None:
        return _one_header(conn, "run_id = ?", (run_id,))
    return _one_header(conn, "run_id = ? AND tenant = ?", (run_id, tenant))


# --- leases ----------------------------------------------------------------------------


def claim(
    conn: sqlite3.Connection, worker_id: WorkerId, now: datetime, lease_seconds: float
) -> RunHeader | None:
    """Lease the first claimable Run in claim order, in one conditional UPDATE."""
    expires = to_micros(now + timedelta(seconds=lease_seconds))
    rows = conn.execute(
        _CLAIM,
        {"holder": worker_id, "expires": expires, "now": to_micros(now)},
    ).fetchall()
    return header_from_row(rows[0]) if rows else None


def renew(
    conn: sqlite3.Connection,
    run_id: RunId,
    worker_id: WorkerId,
    now: datetime,
    lease_seconds: float,
    attempt_count: int | None = None,
) -> bool:
    """Move the expiry, only while ``worker_id`` still holds the running Run.

    A given ``attempt_count`` must match too (``? IS NULL`` leaves it unchecked).
    """
    expires = to_micros(now + timedelta(seconds=lease_seconds))
    cursor = conn.execute(
        "UPDATE psych_runs SET lease_expires_at = ? "
        "WHERE run_id = ? AND state = 'running' AND lease_holder = ? "
        "AND (? IS NULL OR attempt_count = ?)",
        (expires, run_id, worker_id, attempt_count, attempt_count),
    )
    return cursor.rowcount == 1


def release(
    conn: sqlite3.Connection,
    run_id: RunId,
    worker_id: WorkerId,
    state: RunState,
    runnable_at: datetime | None,
    deadline_at: datetime | None,
    attempt_count: int | None = None,
) -> bool:
    """Drop the holder's lease; False (and nothing changed) for anyone else.

    A given ``attempt_count`` must match too, so an older Attempt of the same Worker
    cannot drop a newer claim.
    """
    cursor = conn.execute(
        "UPDATE psych_runs SET state = ?, lease_holder = NULL, lease_expires_at = NULL, "
        "runnable_at = ?, deadline_at = coalesce(?, deadline_at) "
        "WHERE run_id = ? AND lease_holder = ? AND (? IS NULL OR attempt_count = ?)",
        (
            state.value,
            optional_micros(runnable_at),
            optional_micros(deadline_at),
            run_id,
            worker_id,
            attempt_count,
            attempt_count,
        ),
    )
    return cursor.rowcount == 1


def settle_inline(conn: sqlite3.Connection, run_id: RunId) -> bool:
    """``nested`` to ``settled`` for a Run nobody holds; nothing else changes."""
    cursor = conn.execute(
        "UPDATE psych_runs SET state = 'settled' "
        "WHERE run_id = ? AND state = 'nested' AND lease_holder IS NULL",
        (run_id,),
    )
    return cursor.rowcount == 1


def set_runnable_at(
    conn: sqlite3.Connection, run_id: RunId, runnable_at: datetime | None
) -> RunState | None:
    """Park or wake a Run; returns its new state, or None for a settled Run.

    Raises:
        RunNotFound: there is no such Run.
    """
    moment = optional_micros(runnable_at)
    rows = conn.execute(
        "UPDATE psych_runs SET runnable_at = :moment, state = CASE "
        "WHEN :moment IS NULL AND state = 'suspended' THEN 'runnable' ELSE state END "
        "WHERE run_id = :run_id AND state <> 'settled' RETURNING state",
        {"moment": moment, "run_id": run_id},
    ).fetchall()
    if rows:
        return RunState(rows[0][0])
    exists = conn.execute("SELECT 1 FROM psych_runs WHERE run_id = ?", (run_id,)).fetchall()
    if not exists:
        raise RunNotFound(run_id)
    return None


# --- sweeps ----------------------------------------------------------------------------


def _due(
    conn: sqlite3.Connection, states: str, column: str, now: datetime, limit: int
) -> list[RunHeader]:
    """Runs in ``states`` (a condition) whose ``column`` is at or before ``now``, earliest first."""
    rows = conn.execute(
        f"SELECT {SELECT_HEADER} FROM psych_runs WHERE {states} "
        f"AND {column} <= ? ORDER BY {column}, run_id LIMIT ?",
        (to_micros(now), limit),
    ).fetchall()
    return [header_from_row(row) for row in rows]


def expired_leases(conn: sqlite3.Connection, now: datetime, limit: int) -> list[RunHeader]:
    """Running Runs whose lease passed, earliest expiry first."""
    return _due(conn, "state = 'running'", "lease_expires_at", now, limit)


def overdue_deadlines(conn: sqlite3.Connection, now: datetime, limit: int) -> list[RunHeader]:
    """Unsettled Runs past their deadline, earliest deadline first."""
    return _due(conn, "state <> 'settled'", "deadline_at", now, limit)


def recent_runs(
    conn: sqlite3.Connection,
    tenant: str | None,
    states: Collection[RunState] | None,
    limit: int,
) -> list[RunHeader]:
    """The newest Runs first, optionally of one tenant and in some states."""
    where: list[str] = []
    params: list[SqlValue] = []
    if tenant is not None:
        where.append("tenant = ?")
        params.append(tenant)
    if states:
        chosen = sorted({state.value for state in states})
        where.append(f"state IN ({', '.join('?' * len(chosen))})")
        params.extend(chosen)
    clause = f"WHERE {' AND '.join(where)} " if where else ""
    rows = conn.execute(
        f"SELECT {SELECT_HEADER} FROM psych_runs {clause}"
        "ORDER BY created_at DESC, run_id DESC LIMIT ?",
        (*params, limit),
    ).fetchall()
    return [header_from_row(row) for row in rows]


def settled_runs(
    conn: sqlite3.Connection,
    tenant: str,
    created_before: datetime,
    after: tuple[datetime, RunId] | None,
    limit: int,
) -> list[RunHeader]:
    """One page of a tenant's settled Runs admitted before a time, oldest first."""
    params: list[SqlValue] = [tenant, to_micros(created_before)]
    cursor = ""
    if after is not None:
        cursor = "AND (created_at, run_id) > (?, ?) "
        params.extend((to_micros(after[0]), after[1]))
    rows = conn.execute(
        f"SELECT {SELECT_HEADER} FROM psych_runs "
        "WHERE tenant = ? AND state = 'settled' AND created_at < ? "
        f"{cursor}ORDER BY created_at, run_id LIMIT ?",
        (*params, limit),
    ).fetchall()
    return [header_from_row(row) for row in rows]


def delete_runs(conn: sqlite3.Connection, run_ids: Sequence[RunId], tenant: str) -> list[RunId]:
    """Delete the settled Runs of ``tenant`` among ``run_ids``: header and log rows."""
    deleted: list[RunId] = []
    for run_id in run_ids:
        gone = conn.execute(
            "DELETE FROM psych_runs WHERE run_id = ? AND tenant = ? AND state = 'settled' "
            "RETURNING run_id",
            (run_id, tenant),
        ).fetchall()
        if gone:
            conn.execute("DELETE FROM psych_records WHERE run_id = ?", (run_id,))
            deleted.append(run_id)
    return deleted


# --- memory ----------------------------------------------------------------------------

_INSERT_MEMORY = (
    f"INSERT INTO psych_memories ({', '.join(MEMORY_COLUMNS)}) "
    f"VALUES ({', '.join('?' * len(MEMORY_COLUMNS))})"
)

_SQL_INT_MAX = 2**63 - 1
"""The largest integer SQLite binds."""

# Newest first, so LIMIT keeps the newest facts; ``recall`` turns them back around.
_RECALL = (
    "SELECT id, content, created_at FROM psych_memories "
    "WHERE tenant = ? AND end_user_id = ? ORDER BY created_at DESC, position DESC LIMIT ?"
)


def remember(conn: sqlite3.Connection, fact: Memory) -> None:
    """Insert a fact exactly as ``mint_memory`` built it."""
    conn.execute(_INSERT_MEMORY, memory_values(fact))


def forget(conn: sqlite3.Connection, key: MemoryKey, memory_id: str) -> bool:
    """Delete the fact only when its id, tenant and end user all match."""
    cursor = conn.execute(
        "DELETE FROM psych_memories WHERE id = ? AND tenant = ? AND end_user_id = ?",
        (memory_id, key.tenant, key.end_user_id),
    )
    return cursor.rowcount > 0


def recall(conn: sqlite3.Connection, key: MemoryKey, limit: int | None) -> list[Memory]:
    """The key's facts oldest first; only the newest ``limit`` of them when given."""
    # SQLite reads a negative LIMIT as none; a limit past its integers means all too.
    sql_limit = -1 if limit is None or limit > _SQL_INT_MAX else limit
    rows = conn.execute(_RECALL, (key.tenant, key.end_user_id, sql_limit)).fetchall()
    return [memory_from_row(key, row) for row in reversed(rows)]


def erase(conn: sqlite3.Connection, key: MemoryKey) -> int:
    """Delete every fact of the key; returns how many rows went."""
    cursor = conn.execute(
        "DELETE FROM psych_memories WHERE tenant = ? AND end_user_id = ?",
        (key.tenant, key.end_user_id),
    )
    return cursor.rowcount


# --- helpers ---------------------------------------------------------------------------


def _one_header(
    conn: sqlite3.Connection, condition: str, params: tuple[SqlValue, ...]
) -> RunHeader | None:
    rows = conn.execute(
        f"SELECT {SELECT_HEADER} FROM psych_runs WHERE {condition}", params
    ).fetchall()
    return header_from_row(rows[0]) if rows else None


def _check_sizes(conn: sqlite3.Connection, run_id: RunId, batch: Sequence[EncodedRecord]) -> None:
    """Refuse a record longer than this SQLite build stores in one value."""
    ceiling = conn.getlimit(sqlite3.SQLITE_LIMIT_LENGTH)
    for item in batch:
        if len(item.body) > ceiling:
            raise RecordTooLarge(
                f"run {run_id!r}: record {item.seq} ({item.type}) is {len(item.body)} bytes "
                f"as JSON; this SQLite build stores at most {ceiling} bytes per value"
            )


__all__ = [
    "EncodedRecord",
    "append",
    "claim",
    "create_run",
    "encode",
    "erase",
    "expired_leases",
    "forget",
    "get_run",
    "get_version",
    "head",
    "overdue_deadlines",
    "put_version",
    "read",
    "recall",
    "release",
    "remember",
    "renew",
    "set_runnable_at",
    "settle_inline",
]
