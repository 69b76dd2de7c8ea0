"""The store's tables and the forward-only migrations that create them.

Each entry of ``MIGRATIONS`` moves the schema up by one version. The applied version is
kept in ``psych_schema_version`` (a single row), and ``migrate`` runs inside
``BEGIN IMMEDIATE`` so two processes migrating the same file at once serialise on the
database's write lock: the second one finds the work done and applies nothing. DDL is
transactional in SQLite, so a migration that fails half way leaves no trace.

Tables (version 1):

``psych_runs``
    One row per Run: the mutable header plus ``head_seq``, the highest seq written, so
    an append checks its position without scanning the log.
``psych_records``
    The log: ``(run_id, seq)`` primary key, the record's ``type`` and its compact JSON
    ``body``. ``WITHOUT ROWID`` keeps each record in the primary-key b-tree once
    instead of twice (table plus index).
``psych_versions``
    Published Versions by hash, as their JSON export.

Version 2 adds:

``psych_version_grants``
    Who may see each Version: one row per (hash, grantee), where the grantee is the
    owning tenant or ``''`` for a Version shared with every tenant (no tenant is
    empty). ``published_at`` is that grantee's first publication, in microseconds;
    NULL means the Version's own. Every Version stored before version 2 gets a shared
    row, so Runs and dispatches of older deployments keep working.

Version 3 adds:

``psych_memories``
    The facts a ``SqliteMemoryStore`` keeps about end users: one row per fact, with the
    tenant and the end user in two columns of their own (never joined into one key),
    compared with SQLite's default binary collation, so ``Alice`` and ``alice`` are
    two people. ``created_at`` is in microseconds; ``position`` is the rowid, which
    grows with every insert, and breaks ties between facts of the same microsecond.
    The fact's ``id`` is unique, so ``forget`` finds its row through one index.
"""

import sqlite3
import time

from psych_runtime import StoreUnavailable
from psych_runtime.adapters.store import check_schema_version
from psych_runtime.adapters.store import schema_too_new

VERSION_TABLE = "psych_schema_version"

_V1 = (
    """
    CREATE TABLE psych_runs (
        run_id TEXT NOT NULL PRIMARY KEY,
        tenant TEXT NOT NULL,
        scope TEXT,
        version_hash TEXT NOT NULL,
        state TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        deadline_at INTEGER NOT NULL,
        lease_holder TEXT,
        lease_expires_at INTEGER,
        idempotency_key TEXT,
        attempt_count INTEGER NOT NULL,
        runnable_at INTEGER,
        parent_run_id TEXT,
        delegation_depth INTEGER NOT NULL,
        continues_run_id TEXT,
        head_seq INTEGER NOT NULL
    ) WITHOUT ROWID
    """,
    # Admission is exactly-once per (tenant, key); Runs without a key stay out of it.
    """
    CREATE UNIQUE INDEX psych_runs_idempotency ON psych_runs (tenant, idempotency_key)
        WHERE idempotency_key IS NOT NULL
    """,
    # Claim order over the only states that can ever be claimed.
    """
    CREATE INDEX psych_runs_claim ON psych_runs (coalesce(runnable_at, created_at), created_at)
        WHERE state IN ('runnable', 'running')
    """,
    """
    CREATE INDEX psych_runs_leases ON psych_runs (lease_expires_at)
        WHERE state = 'running'
    """,
    """
    CREATE INDEX psych_runs_deadlines ON psych_runs (deadline_at)
        WHERE state <> 'settled'
    """,
    """
    CREATE TABLE psych_records (
        run_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        type TEXT NOT NULL,
        body BLOB NOT NULL,
        PRIMARY KEY (run_id, seq)
    ) WITHOUT ROWID
    """,
    """
    CREATE TABLE psych_versions (
        hash TEXT NOT NULL PRIMARY KEY,
        body TEXT NOT NULL
    ) WITHOUT ROWID
    """,
)

_V2 = (
    """
    CREATE TABLE psych_version_grants (
        hash TEXT NOT NULL,
        grantee TEXT NOT NULL,
        published_at INTEGER,
        PRIMARY KEY (hash, grantee)
    ) WITHOUT ROWID
    """,
    # Versions published before grants existed belonged to nobody in particular:
    # share them, as they effectively were.
    "INSERT INTO psych_version_grants (hash, grantee, published_at) "
    "SELECT hash, '', NULL FROM psych_versions",
)

_V3 = (
    """
    CREATE TABLE psych_memories (
        position INTEGER PRIMARY KEY,
        tenant TEXT NOT NULL,
        end_user_id TEXT NOT NULL,
        id TEXT NOT NULL UNIQUE,
        content TEXT NOT NULL,
        created_at INTEGER NOT NULL
    )
    """,
    # Recall walks one person's facts in time order, newest first when limited.
    """
    CREATE INDEX psych_memories_by_key
        ON psych_memories (tenant, end_user_id, created_at, position)
    """,
)

_V4 = (
    # Retention lists one tenant's settled Runs oldest first, page by page.
    """
    CREATE INDEX psych_runs_settled ON psych_runs (tenant, created_at, run_id)
        WHERE state = 'settled'
    """,
)

MIGRATIONS: tuple[tuple[str, ...], ...] = (_V1, _V2, _V3, _V4)
"""Statements per schema version; ``MIGRATIONS[n - 1]`` brings the schema to version n."""

SCHEMA_VERSION = len(MIGRATIONS)
"""The schema version this release reads and writes."""

_PACKAGE = "psych-store-sqlite"


def current_version(conn: sqlite3.Connection) -> int:
    """The schema version recorded in the file, 0 when it was never migrated."""
    found = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (VERSION_TABLE,)
    ).fetchall()
    if not found:
        return 0
    rows = conn.execute(f"SELECT version FROM {VERSION_TABLE} WHERE id = 1").fetchall()
    return int(rows[0][0]) if rows else 0


def verify(conn: sqlite3.Connection, where: str) -> None:
    """Refuse to use a file whose schema is not exactly the one this release knows.

    Args:
        conn: a connection to the file.
        where: how to name the file in messages.

    Raises:
        SchemaTooNew: a newer release migrated the file.
        SchemaNotMigrated: the file was never migrated, or only to an older version.
    """
    check_schema_version(
        f"SQLite database {where}", current_version(conn), needs=SCHEMA_VERSION, package=_PACKAGE
    )


def migrate(conn: sqlite3.Connection, where: str, *, wait_s: float) -> list[int]:
    """Bring the file to ``SCHEMA_VERSION`` and return the versions applied.

    Switches the file to WAL first (a setting the file keeps), then applies every
    missing migration in one ``BEGIN IMMEDIATE`` transaction. Running it again, or in
    another process at the same time, applies nothing.

    Args:
        conn: a connection to the file.
        where: how to name the file in messages.
        wait_s: how long the switch to WAL keeps retrying while another connection
            holds a lock on the file (the store passes its ``busy_timeout_ms``).

    Raises:
        SchemaTooNew: a newer release migrated the file; nothing is changed.
        StoreUnavailable: the file cannot be switched to WAL mode.
        sqlite3.OperationalError: the file stayed locked for longer than ``wait_s``.
    """
    mode = _switch_to_wal(conn, wait_s)
    if mode.lower() != "wal":
        raise StoreUnavailable(
            f"SQLite database {where} stayed in journal mode {mode!r}; the store needs WAL "
            "(is the file on a network filesystem?)"
        )
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(
            f"CREATE TABLE IF NOT EXISTS {VERSION_TABLE} ("
            "id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL)"
        )
        start = current_version(conn)
        if start > SCHEMA_VERSION:
            raise schema_too_new(
                f"SQLite database {where}", start, knows=SCHEMA_VERSION, package=_PACKAGE
            )
        applied = list(range(start + 1, SCHEMA_VERSION + 1))
        for version in applied:
            for statement in MIGRATIONS[version - 1]:
                conn.execute(statement)
        if applied:
            conn.execute(
                f"INSERT INTO {VERSION_TABLE} (id, version) VALUES (1, ?) "
                "ON CONFLICT (id) DO UPDATE SET version = excluded.version",
                (SCHEMA_VERSION,),
            )
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.rollback()
        raise
    return applied


_LOCK_CODES = frozenset({sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED})


def _switch_to_wal(conn: sqlite3.Connection, wait_s: float) -> str:
    """Ask for WAL mode, retrying while other connections hold the file.

    Changing the journal mode needs the file to itself, and SQLite reports a clash
    there as busy straight away instead of calling the busy handler, so processes that
    open a fresh file together would otherwise fail on the first collision. Retries
    back off from 5 ms to 100 ms until ``wait_s`` has passed.
    """
    deadline = time.monotonic() + wait_s
    pause = 0.005
    while True:
        try:
            return str(conn.execute("PRAGMA journal_mode = WAL").fetchall()[0][0])
        except sqlite3.OperationalError as exc:
            if exc.sqlite_errorcode not in _LOCK_CODES or time.monotonic() >= deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.1)


__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "VERSION_TABLE", "current_version", "migrate", "verify"]
