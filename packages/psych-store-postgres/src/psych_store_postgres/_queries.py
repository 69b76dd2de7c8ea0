"""The SQL each Store and MemoryStore method sends, built once per schema.

Keeping the text fixed per store instance matters: asyncpg caches a prepared statement
per distinct query text on each connection, so after the first call every method costs
one Bind/Execute round trip and no parsing or planning.
"""

from dataclasses import dataclass

from psych_runtime.adapters.store import HEADER_COLUMNS as CORE_HEADER_COLUMNS
from psych_store_postgres.schema import quote_ident

HEADER_COLUMNS = ", ".join(CORE_HEADER_COLUMNS)
"""What every header-returning query selects, in the order ``_rows.header_from_row`` reads."""


@dataclass(frozen=True, slots=True)
class Queries:
    """Statement texts for one schema."""

    append: str
    create_run: str
    read: str
    head: str
    get_run: str
    claim: str
    renew: str
    release: str
    settle_inline: str
    set_runnable_at: str
    expired_leases: str
    overdue_deadlines: str
    recent_runs: str
    settled_runs: str
    delete_runs: str
    put_version: str
    put_grant: str
    get_grant: str
    running_holders: str
    get_version: str
    get_granted_version: str

    @classmethod
    def for_schema(cls, schema: str) -> "Queries":
        """Build every statement for ``schema`` (already validated)."""
        s = quote_ident(schema)
        dead_holder = (
            f"(r.holder_lock IS NOT NULL AND r.holder_lock NOT IN "
            f"(SELECT lock_key FROM {s}.psych_held_locks))"
        )
        return cls(
            append=f"SELECT {s}.psych_append($1, $2, $3, $4, $5, $6, $7)",
            create_run=(
                f"SELECT {HEADER_COLUMNS} FROM {s}.psych_create_run("
                "$1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, "
                "$18)"
            ),
            read=(
                # Every batch row holds at least one record, so $4 rows always cover a
                # limit of $4 records; the store trims what it does not need.
                f"SELECT first_seq, body FROM {s}.psych_records "
                f"WHERE run_ref = (SELECT id FROM {s}.psych_runs "
                "WHERE run_id = $1 AND ($2::text IS NULL OR tenant = $2)) "
                "AND last_seq > $3 ORDER BY first_seq LIMIT $4"
            ),
            head=(
                f"SELECT last_seq FROM {s}.psych_records "
                f"WHERE run_ref = (SELECT id FROM {s}.psych_runs WHERE run_id = $1) "
                "ORDER BY first_seq DESC LIMIT 1"
            ),
            get_run=(
                f"SELECT {HEADER_COLUMNS} FROM {s}.psych_runs "
                "WHERE run_id = $1 AND ($2::text IS NULL OR tenant = $2)"
            ),
            # One statement: pick the oldest claimable Run, skipping rows another claimer
            # has locked, and lease it. A running Run is claimable when its lease ran out
            # or when no session holds its holder's advisory lock (the process died).
            claim=(
                f"UPDATE {s}.psych_runs AS t SET state = 'running', lease_holder = $1, "
                "lease_expires_at = $3, attempt_count = t.attempt_count + 1, holder_lock = $4 "
                f"WHERE t.id = (SELECT r.id FROM {s}.psych_runs AS r "
                "WHERE r.state IN ('runnable', 'running') "
                "AND (r.runnable_at IS NULL OR r.runnable_at <= $2) "
                "AND (r.state = 'runnable' OR r.lease_expires_at IS NULL "
                f"OR r.lease_expires_at <= $2 OR {dead_holder}) "
                "ORDER BY coalesce(r.runnable_at, r.created_at), r.created_at, r.run_id "
                "LIMIT 1 FOR NO KEY UPDATE SKIP LOCKED) "
                f"RETURNING {HEADER_COLUMNS}"
            ),
            renew=(
                f"UPDATE {s}.psych_runs SET lease_expires_at = $3, "
                "holder_lock = coalesce($4, holder_lock) "
                "WHERE run_id = $1 AND state = 'running' AND lease_holder = $2 "
                "AND ($5::integer IS NULL OR attempt_count = $5) RETURNING true"
            ),
            release=f"SELECT {s}.psych_release($1, $2, $3, $4, $5, $6, $7, $8)",
            settle_inline=f"SELECT {s}.psych_settle_inline($1, $2)",
            set_runnable_at=f"SELECT {s}.psych_set_runnable_at($1, $2, $3, $4)",
            expired_leases=(
                f"SELECT {HEADER_COLUMNS} FROM {s}.psych_runs AS r "
                "WHERE r.state = 'running' "
                f"AND ((r.lease_expires_at IS NOT NULL AND r.lease_expires_at <= $1) "
                f"OR {dead_holder}) "
                "ORDER BY r.lease_expires_at, r.run_id LIMIT $2"
            ),
            overdue_deadlines=(
                f"SELECT {HEADER_COLUMNS} FROM {s}.psych_runs "
                "WHERE state <> 'settled' AND deadline_at <= $1 "
                "ORDER BY deadline_at, run_id LIMIT $2"
            ),
            recent_runs=(
                f"SELECT {HEADER_COLUMNS} FROM {s}.psych_runs "
                "WHERE ($1::text IS NULL OR tenant = $1) "
                "AND (cardinality($2::text[]) = 0 OR state = ANY($2::text[])) "
                "ORDER BY created_at DESC, run_id DESC LIMIT $3"
            ),
            settled_runs=(
                f"SELECT {HEADER_COLUMNS} FROM {s}.psych_runs "
                "WHERE tenant = $1 AND state = 'settled' AND created_at < $2 "
                "AND ($3::timestamptz IS NULL "
                'OR (created_at, run_id COLLATE "C") > ($3, $4::text COLLATE "C")) '
                'ORDER BY created_at, run_id COLLATE "C" LIMIT $5'
            ),
            delete_runs=(
                f"WITH gone AS (DELETE FROM {s}.psych_runs WHERE run_id = ANY($1::text[]) "
                "AND tenant = $2 AND state = 'settled' RETURNING id, run_id), "
                f"logs AS (DELETE FROM {s}.psych_records WHERE run_ref IN "
                "(SELECT id FROM gone)) SELECT run_id FROM gone"
            ),
            put_version=(
                f"INSERT INTO {s}.psych_versions (hash, published_at, document) "
                "VALUES ($1, $2, $3) ON CONFLICT (hash) DO NOTHING"
            ),
            # The grantee's existing grant when the insert found one; a row inserted
            # by this statement comes back through RETURNING.
            put_grant=(
                f"WITH added AS (INSERT INTO {s}.psych_version_grants "
                "(hash, grantee, published_at) VALUES ($1, $2, $3) "
                "ON CONFLICT DO NOTHING RETURNING published_at) "
                "SELECT published_at FROM added UNION ALL "
                f"SELECT published_at FROM {s}.psych_version_grants "
                "WHERE hash = $1 AND grantee = $2 LIMIT 1"
            ),
            get_grant=(
                f"SELECT published_at FROM {s}.psych_version_grants "
                "WHERE hash = $1 AND grantee = $2"
            ),
            running_holders=(
                f"SELECT DISTINCT holder_lock FROM {s}.psych_runs "
                "WHERE state = 'running' AND holder_lock IS NOT NULL LIMIT 1024"
            ),
            get_version=f"SELECT document, published_at FROM {s}.psych_versions WHERE hash = $1",
            # The tenant's own grant first (false sorts before true), else the share.
            get_granted_version=(
                f"SELECT v.document, g.published_at FROM {s}.psych_versions AS v "
                f"JOIN {s}.psych_version_grants AS g ON g.hash = v.hash "
                "WHERE v.hash = $1 AND g.grantee IN ($2, '') "
                "ORDER BY g.grantee = '' LIMIT 1"
            ),
        )


def _count_deleted(table: str, condition: str) -> str:
    """A DELETE that answers with how many rows it removed, as one value."""
    return (
        f"WITH gone AS (DELETE FROM {table} WHERE {condition} RETURNING 1) "
        "SELECT count(*) FROM gone"
    )


@dataclass(frozen=True, slots=True)
class MemoryQueries:
    """Statement texts of the memory store for one schema.

    Every statement names tenant and end user as two parameters; ``forget`` matches
    the id only together with both.
    """

    remember: str
    forget: str
    recall: str
    erase: str

    @classmethod
    def for_schema(cls, schema: str) -> "MemoryQueries":
        """Build every memory statement for ``schema`` (already validated)."""
        table = f"{quote_ident(schema)}.psych_memories"
        return cls(
            remember=(
                f"INSERT INTO {table} (tenant, end_user_id, id, content, created_at) "
                "VALUES ($1, $2, $3, $4, $5)"
            ),
            forget=_count_deleted(table, "tenant = $1 AND end_user_id = $2 AND id = $3"),
            # Newest first so LIMIT keeps the newest facts (a NULL limit keeps them
            # all); the store turns the rows back around to oldest first.
            recall=(
                f"SELECT id, content, created_at FROM {table} "
                "WHERE tenant = $1 AND end_user_id = $2 "
                "ORDER BY created_at DESC, position DESC LIMIT $3"
            ),
            erase=_count_deleted(table, "tenant = $1 AND end_user_id = $2"),
        )


__all__ = ["HEADER_COLUMNS", "MemoryQueries", "Queries"]
