"""The SQL the store sends, built from a table prefix and plain values.

Kept apart from the store so each statement can be read (and reviewed for its locking
behaviour) in one place. Every function returns ``(sql, values)`` pairs; the values
are escaped by the driver when the batch is rendered.
"""

from collections.abc import Sequence
from datetime import datetime

from psych_runtime.adapters.memory import Memory
from psych_runtime.adapters.memory import MemoryKey
from psych_store_mysql._batches import Statement
from psych_store_mysql._rows import HEADER_COLUMNS
from psych_store_mysql._rows import HEADER_SELECT
from psych_store_mysql._rows import to_db_time
from psych_store_mysql.schema import Tables

BEGIN: Statement = ("START TRANSACTION", ())
COMMIT: Statement = ("COMMIT", ())
ROLLBACK: Statement = ("ROLLBACK", ())

_INSERT_COLUMNS = ", ".join((*HEADER_COLUMNS, "head_seq"))
_INSERT_SLOTS = ", ".join(["%s"] * (len(HEADER_COLUMNS) + 1))


class Statements:
    """SQL for one table prefix."""

    def __init__(self, tables: Tables) -> None:
        self.tables = tables
        runs = tables.runs
        self._lock_run = (
            f"SELECT head_seq, lease_holder, attempt_count FROM `{runs}` "
            "WHERE run_id = %s FOR UPDATE"
        )
        self._insert_run = f"INSERT INTO `{runs}` ({_INSERT_COLUMNS}) VALUES ({_INSERT_SLOTS})"
        self._insert_record = (
            f"INSERT INTO `{tables.records}` (run_id, seq, type, body) VALUES (%s, %s, %s, %s)"
        )
        self._header_by_id = f"SELECT {HEADER_SELECT} FROM `{runs}` WHERE run_id = %s"
        self._claim = (
            f"SELECT {HEADER_SELECT} FROM `{runs}` FORCE INDEX (claim_order) "
            "WHERE queue_at IS NOT NULL "
            "AND (runnable_at IS NULL OR runnable_at <= %s) "
            "AND (state = 'runnable' OR lease_expires_at IS NULL OR lease_expires_at <= %s) "
            "ORDER BY queue_at, created_at, run_id LIMIT 1 FOR UPDATE SKIP LOCKED"
        )

    # --- the log -----------------------------------------------------------------------

    def lock_run(self, run_id: str) -> Statement:
        """Lock the Run's header row and read what the append checks (fence, head)."""
        return (self._lock_run, (run_id,))

    def insert_records(
        self,
        run_id: str,
        expected_head: int,
        rows: Sequence[tuple[int, str, str]],
        fence: tuple[str, int] | None,
    ) -> Statement:
        """Insert ``rows`` (seq, type, body) only if the header still passes the checks.

        The rows are joined to the Run's header row under the same conditions the
        append checks, so when a check fails the statement inserts nothing rather
        than something: a failed check can never leave records behind, even though
        the statements travel in the same round trip as the check itself.
        """
        branches = " UNION ALL ".join(["SELECT %s AS seq, %s AS type, %s AS body"] * len(rows))
        values: list[object] = [value for row in rows for value in row]
        guard, guard_values = self._guard(run_id, expected_head, fence)
        sql = (
            f"INSERT INTO `{self.tables.records}` (run_id, seq, type, body) "
            f"SELECT h.run_id, b.seq, b.type, b.body FROM `{self.tables.runs}` AS h "
            f"CROSS JOIN ({branches}) AS b WHERE {guard}"
        )
        return (sql, (*values, *guard_values))

    def advance_head(
        self, run_id: str, expected_head: int, new_head: int, fence: tuple[str, int] | None
    ) -> Statement:
        """Move ``head_seq`` forward under the same conditions as the insert."""
        guard, guard_values = self._guard(run_id, expected_head, fence)
        sql = f"UPDATE `{self.tables.runs}` AS h SET h.head_seq = %s WHERE {guard}"
        return (sql, (new_head, *guard_values))

    def _guard(
        self, run_id: str, expected_head: int, fence: tuple[str, int] | None
    ) -> tuple[str, tuple[object, ...]]:
        if fence is None:
            return "h.run_id = %s AND h.head_seq = %s", (run_id, expected_head)
        return (
            "h.run_id = %s AND h.head_seq = %s AND h.lease_holder = %s AND h.attempt_count = %s",
            (run_id, expected_head, *fence),
        )

    def read(self, run_id: str, after: int, limit: int | None, tenant: str | None) -> Statement:
        """Record bodies after ``after``, oldest first, optionally only for ``tenant``."""
        sql = f"SELECT body FROM `{self.tables.records}` WHERE run_id = %s AND seq > %s"
        values: list[object] = [run_id, after]
        if tenant is not None:
            sql += (
                f" AND EXISTS (SELECT 1 FROM `{self.tables.runs}` "
                "WHERE run_id = %s AND tenant = %s)"
            )
            values += [run_id, tenant]
        sql += " ORDER BY seq"
        if limit is not None:
            sql += " LIMIT %s"
            values.append(limit)
        return (sql, values)

    def head(self, run_id: str) -> Statement:
        """The Run's head sequence number, kept on the header row."""
        return (f"SELECT head_seq FROM `{self.tables.runs}` WHERE run_id = %s", (run_id,))

    # --- versions ----------------------------------------------------------------------

    def put_version(self, version_hash: str, document: str) -> Statement:
        """Insert a Version; an existing hash keeps its first document."""
        return (
            f"INSERT INTO `{self.tables.versions}` (hash, document) VALUES (%s, %s) "
            "ON DUPLICATE KEY UPDATE hash = hash",
            (version_hash, document),
        )

    def get_version(self, version_hash: str) -> Statement:
        """A stored Version's export document (and no grant time: the document's own)."""
        return (
            f"SELECT document, NULL FROM `{self.tables.versions}` WHERE hash = %s",
            (version_hash,),
        )

    def put_grant(self, version_hash: str, grantee: str, published_at: datetime) -> Statement:
        """Grant a Version to a tenant (``''``: every tenant); the first grant is kept."""
        return (
            f"INSERT INTO `{self.tables.version_grants}` (hash, grantee, published_at) "
            "VALUES (%s, %s, %s) ON DUPLICATE KEY UPDATE hash = hash",
            (version_hash, grantee, published_at),
        )

    def get_grant(self, version_hash: str, grantee: str) -> Statement:
        """The grantee's grant time (NULL for a share carried over from before grants)."""
        return (
            f"SELECT published_at FROM `{self.tables.version_grants}` "
            "WHERE hash = %s AND grantee = %s",
            (version_hash, grantee),
        )

    def get_granted_version(self, version_hash: str, grantee: str) -> Statement:
        """The document and grant time a tenant sees: its own grant first, else the share."""
        return (
            f"SELECT v.document, g.published_at FROM `{self.tables.versions}` AS v "
            f"JOIN `{self.tables.version_grants}` AS g ON g.hash = v.hash "
            "WHERE v.hash = %s AND g.grantee IN (%s, '') ORDER BY g.grantee = '' LIMIT 1",
            (version_hash, grantee),
        )

    # --- admission and headers ---------------------------------------------------------

    def insert_run(self, values: Sequence[object]) -> Statement:
        """A new header row (``rows.header_values`` gives the values)."""
        return (self._insert_run, values)

    def insert_record(self, run_id: str, seq: int, kind: str, body: str) -> Statement:
        """A single record row, used for ``run_admitted`` at admission."""
        return (self._insert_record, (run_id, seq, kind, body))

    def header(self, run_id: str, tenant: str | None = None) -> Statement:
        """One header, optionally only when it belongs to ``tenant``."""
        if tenant is None:
            return (self._header_by_id, (run_id,))
        return (self._header_by_id + " AND tenant = %s", (run_id, tenant))

    def header_by_key(self, tenant: str, key: str) -> Statement:
        """The header admitted under an idempotency key in a tenant."""
        return (
            f"SELECT {HEADER_SELECT} FROM `{self.tables.runs}` "
            "WHERE tenant = %s AND idempotency_key = %s",
            (tenant, key),
        )

    # --- leases ------------------------------------------------------------------------

    def claim_candidate(self, now: datetime) -> Statement:
        """Lock the first claimable Run in claim order, skipping rows others hold.

        ``FORCE INDEX`` keeps the plan an ordered walk of ``claim_order`` that stops at
        the first match; a filesort plan would lock every matching row and make
        concurrent claimers skip Runs they could have taken.
        """
        return (self._claim, (now, now))

    def take_lease(self, run_id: str, worker_id: str, expires: datetime) -> Statement:
        """Give the locked candidate to ``worker_id`` as the next attempt."""
        return (
            f"UPDATE `{self.tables.runs}` SET state = 'running', lease_holder = %s, "
            "lease_expires_at = %s, attempt_count = attempt_count + 1 WHERE run_id = %s",
            (worker_id, expires, run_id),
        )

    def renew(
        self, run_id: str, worker_id: str, expires: datetime, attempt_count: int | None = None
    ) -> Statement:
        """Extend the holder's lease (at ``attempt_count``, when given); else match nothing."""
        where, values = _holder(run_id, worker_id, attempt_count)
        return (
            f"UPDATE `{self.tables.runs}` SET lease_expires_at = %s "
            f"WHERE state = 'running' AND {where}",
            [expires, *values],
        )

    def release(
        self,
        run_id: str,
        worker_id: str,
        state: str,
        runnable_at: datetime | None,
        deadline_at: datetime | None,
        attempt_count: int | None = None,
    ) -> Statement:
        """Drop the holder's lease, set the state and replace the parking time.

        With ``attempt_count`` only that claim's lease is dropped.
        """
        sets = "state = %s, lease_holder = NULL, lease_expires_at = NULL, runnable_at = %s"
        values: list[object] = [state, runnable_at]
        if deadline_at is not None:
            sets += ", deadline_at = %s"
            values.append(deadline_at)
        where, holder = _holder(run_id, worker_id, attempt_count)
        return (f"UPDATE `{self.tables.runs}` SET {sets} WHERE {where}", [*values, *holder])

    def settle_inline(self, run_id: str) -> Statement:
        """Settle a nested Run nobody holds; matches nothing otherwise."""
        return (
            f"UPDATE `{self.tables.runs}` SET state = 'settled' "
            "WHERE run_id = %s AND state = 'nested' AND lease_holder IS NULL",
            (run_id,),
        )

    def set_runnable_at(self, run_id: str, runnable_at: datetime | None) -> Statement:
        """Park an unsettled Run, or clear its parking and wake it if suspended."""
        if runnable_at is None:
            return (
                f"UPDATE `{self.tables.runs}` SET runnable_at = NULL, "
                "state = IF(state = 'suspended', 'runnable', state) "
                "WHERE run_id = %s AND state <> 'settled'",
                (run_id,),
            )
        return (
            f"UPDATE `{self.tables.runs}` SET runnable_at = %s "
            "WHERE run_id = %s AND state <> 'settled'",
            (runnable_at, run_id),
        )

    def state(self, run_id: str) -> Statement:
        """A Run's state, read right after ``set_runnable_at`` to decide on a wake-up."""
        return (
            f"SELECT state FROM `{self.tables.runs}` WHERE run_id = %s",
            (run_id,),
        )

    # --- sweeps ------------------------------------------------------------------------

    def expired_leases(self, now: datetime, limit: int) -> Statement:
        """Running Runs whose lease ran out, soonest expiry first."""
        return (
            f"SELECT {HEADER_SELECT} FROM `{self.tables.runs}` "
            "WHERE lease_watch <= %s ORDER BY lease_watch, run_id LIMIT %s",
            (now, limit),
        )

    def overdue_deadlines(self, now: datetime, limit: int) -> Statement:
        """Unsettled Runs past their deadline, earliest first."""
        return (
            f"SELECT {HEADER_SELECT} FROM `{self.tables.runs}` "
            "WHERE open_deadline <= %s ORDER BY open_deadline, run_id LIMIT %s",
            (now, limit),
        )

    def recent_runs(self, tenant: str | None, states: Sequence[str], limit: int) -> Statement:
        """The newest Runs first, optionally of one tenant and in some states."""
        where: list[str] = []
        values: list[object] = []
        if tenant is not None:
            where.append("tenant = %s")
            values.append(tenant)
        if states:
            where.append(f"state IN ({', '.join(['%s'] * len(states))})")
            values.extend(states)
        clause = f"WHERE {' AND '.join(where)} " if where else ""
        return (
            f"SELECT {HEADER_SELECT} FROM `{self.tables.runs}` {clause}"
            "ORDER BY created_at DESC, run_id DESC LIMIT %s",
            (*values, limit),
        )

    def settled_runs(
        self, tenant: str, created_before: datetime, after: tuple[datetime, str] | None, limit: int
    ) -> Statement:
        """One page of a tenant's settled Runs admitted before a time, oldest first."""
        values: list[object] = [tenant, to_db_time(created_before)]
        cursor = ""
        if after is not None:
            cursor = "AND (created_at, run_id) > (%s, %s) "
            values.extend((to_db_time(after[0]), after[1]))
        return (
            f"SELECT {HEADER_SELECT} FROM `{self.tables.runs}` "
            "WHERE tenant = %s AND state = 'settled' AND created_at < %s "
            f"{cursor}ORDER BY created_at, run_id LIMIT %s",
            (*values, limit),
        )

    def lock_settled(self, run_ids: Sequence[str], tenant: str) -> Statement:
        """Lock the settled Runs of ``tenant`` among ``run_ids`` for deletion."""
        marks = ", ".join(["%s"] * len(run_ids))
        return (
            f"SELECT run_id FROM `{self.tables.runs}` WHERE run_id IN ({marks}) "
            "AND tenant = %s AND state = 'settled' FOR UPDATE",
            (*run_ids, tenant),
        )

    def delete_runs(self, run_ids: Sequence[str]) -> tuple[Statement, Statement]:
        """Delete the log rows, then the header rows, of Runs already locked."""
        marks = ", ".join(["%s"] * len(run_ids))
        return (
            (f"DELETE FROM `{self.tables.records}` WHERE run_id IN ({marks})", tuple(run_ids)),
            (f"DELETE FROM `{self.tables.runs}` WHERE run_id IN ({marks})", tuple(run_ids)),
        )


class MemoryStatements:
    """SQL for the facts kept about end users, for one table prefix.

    Every statement names the tenant and the end user as two separate conditions, so
    no key's facts can be reached through another key.
    """

    def __init__(self, tables: Tables) -> None:
        self.tables = tables
        memories = tables.memories
        self._insert = (
            f"INSERT INTO `{memories}` (tenant, end_user_id, id, content, created_at) "
            "VALUES (%s, %s, %s, %s, %s)"
        )
        self._select = (
            f"SELECT id, content, created_at FROM `{memories}` "
            "WHERE tenant = %s AND end_user_id = %s"
        )
        self._delete = f"DELETE FROM `{memories}` WHERE tenant = %s AND end_user_id = %s"

    def remember(self, fact: Memory) -> Statement:
        """Insert one fact exactly as minted."""
        return (
            self._insert,
            (
                fact.key.tenant,
                fact.key.end_user_id,
                fact.id,
                fact.content,
                to_db_time(fact.created_at),
            ),
        )

    def recall(self, key: MemoryKey, limit: int | None) -> Statement:
        """The key's facts oldest first; with ``limit``, only the newest, newest first.

        Both walk the ``facts_of`` index, forwards or backwards; the caller turns the
        newest-first rows around.
        """
        if limit is None:
            return (self._select + " ORDER BY created_at, seq", (key.tenant, key.end_user_id))
        return (
            self._select + " ORDER BY created_at DESC, seq DESC LIMIT %s",
            (key.tenant, key.end_user_id, limit),
        )

    def forget(self, key: MemoryKey, memory_id: str) -> Statement:
        """Delete one fact, only when it belongs to ``key``."""
        return (self._delete + " AND id = %s", (key.tenant, key.end_user_id, memory_id))

    def erase(self, key: MemoryKey) -> Statement:
        """Delete every fact of ``key``."""
        return (self._delete, (key.tenant, key.end_user_id))


def _holder(run_id: str, worker_id: str, attempt_count: int | None) -> tuple[str, list[object]]:
    """The condition that the Run's lease is this Worker's (and this claim's, if named)."""
    if attempt_count is None:
        return "run_id = %s AND lease_holder = %s", [run_id, worker_id]
    return (
        "run_id = %s AND lease_holder = %s AND attempt_count = %s",
        [run_id, worker_id, attempt_count],
    )


__all__ = ["BEGIN", "COMMIT", "ROLLBACK", "MemoryStatements", "Statements"]
