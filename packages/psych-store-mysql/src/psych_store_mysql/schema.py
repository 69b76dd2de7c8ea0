"""Table names and the sequential, forward-only schema migrations.

Design notes that the DDL below relies on:

* Every short identifier (run ids, tenants, worker ids, keys, hashes, states, record
  types) is ``VARBINARY``: comparisons are byte for byte, so ``"a"`` and ``"a "`` or
  ``"A"`` never collide the way they would under a padded or case-insensitive
  collation. That matters most for the tenant, which is an isolation boundary.
* The facts kept about end users (``memories``) follow the same rule: tenant and
  end user are two ``VARBINARY`` columns, compared byte for byte and never joined
  into one string, while the fact itself is utf8mb4 ``TEXT``, so any character
  (emoji included) comes back as it went in. An ``AUTO_INCREMENT`` column breaks
  ties between facts remembered in the same microsecond.
* Times are ``DATETIME(6)`` holding UTC; unlike ``TIMESTAMP`` they ignore the
  session time zone and have no 2038 limit.
* Records keep the compact JSON exactly as ``record_to_json`` produced it in a
  ``LONGTEXT`` column (MariaDB's ``JSON`` type is that same thing; MySQL's ``JSON``
  type would rewrite the text, so it is not used).
* Three stored generated columns turn the sweeps into index range scans: ``queue_at``
  is set only while a Run could be claimed (``runnable`` or ``running``) and holds
  the claim order key; ``lease_watch`` only while ``running``; ``open_deadline``
  only while not ``settled``. Rows outside each set carry NULL and are skipped.

Applying them: several processes may call ``migrate()`` at the same moment (every
Worker on start-up, say). A named server lock, ``GET_LOCK('<prefix>psych_migrate',
timeout)``, lets one of them do the work while the others wait and then find nothing
left to do. The lock belongs to the connection, so it disappears if the migrating
process dies.
"""

from dataclasses import dataclass

import psych_runtime
from psych_store_mysql import errors
from psych_store_mysql._batches import Batch
from psych_store_mysql._rows import integer
from psych_store_mysql._rows import text


@dataclass(frozen=True, slots=True)
class Tables:
    """The table names for one ``table_prefix``."""

    prefix: str

    @property
    def schema_version(self) -> str:
        """Applied migrations, one row each."""
        return f"{self.prefix}psych_schema_version"

    @property
    def runs(self) -> str:
        """One mutable header row per Run."""
        return f"{self.prefix}psych_runs"

    @property
    def records(self) -> str:
        """The append-only logs, keyed by (run_id, seq)."""
        return f"{self.prefix}psych_records"

    @property
    def versions(self) -> str:
        """Published Versions, keyed by hash."""
        return f"{self.prefix}psych_versions"

    @property
    def version_grants(self) -> str:
        """Who may see each Version: its owning tenants, ``''`` for a shared one."""
        return f"{self.prefix}psych_version_grants"

    @property
    def memories(self) -> str:
        """Facts kept about end users, one row each (``MySQLMemoryStore``)."""
        return f"{self.prefix}psych_memories"

    @property
    def all(self) -> tuple[str, ...]:
        """Every table this store owns, in creation order."""
        return (
            self.schema_version,
            self.versions,
            self.runs,
            self.records,
            self.version_grants,
            self.memories,
        )

    @property
    def migrate_lock(self) -> str:
        """The ``GET_LOCK`` name that serialises migrations for this prefix."""
        return f"{self.prefix}psych_migrate"


@dataclass(frozen=True, slots=True)
class CreateTable:
    """One table a migration creates; skipped when it already exists.

    MySQL commits each DDL statement on its own, so a migration interrupted halfway
    leaves some tables behind. Checking for each table before creating it lets the
    next ``migrate()`` finish the job instead of failing on "table exists".
    """

    name: str
    ddl: str


@dataclass(frozen=True, slots=True)
class Backfill:
    """A data statement a migration runs after its tables exist.

    It runs again when an interrupted migration is resumed, so it must be idempotent.
    """

    sql: str


@dataclass(frozen=True, slots=True)
class Migration:
    """One schema step; ``version`` values are 1, 2, 3... with no gaps."""

    version: int
    description: str
    steps: tuple[CreateTable | Backfill, ...]


_TABLE_OPTIONS = "ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin ROW_FORMAT=DYNAMIC"


def schema_version_table(tables: Tables) -> CreateTable:
    """The bookkeeping table, created before any migration runs."""
    return CreateTable(
        tables.schema_version,
        f"""CREATE TABLE `{tables.schema_version}` (
  version INT UNSIGNED NOT NULL,
  description VARCHAR(200) NOT NULL,
  applied_at DATETIME(6) NOT NULL,
  PRIMARY KEY (version)
) {_TABLE_OPTIONS}""",
    )


def _initial(tables: Tables) -> Migration:
    versions = CreateTable(
        tables.versions,
        f"""CREATE TABLE `{tables.versions}` (
  hash VARBINARY(255) NOT NULL,
  document LONGTEXT NOT NULL,
  PRIMARY KEY (hash)
) {_TABLE_OPTIONS}""",
    )
    runs = CreateTable(
        tables.runs,
        f"""CREATE TABLE `{tables.runs}` (
  run_id VARBINARY(512) NOT NULL,
  tenant VARBINARY(1024) NOT NULL,
  scope_json TEXT NOT NULL,
  version_hash VARBINARY(255) NOT NULL,
  state VARBINARY(16) NOT NULL,
  created_at DATETIME(6) NOT NULL,
  deadline_at DATETIME(6) NOT NULL,
  lease_holder VARBINARY(512) NULL,
  lease_expires_at DATETIME(6) NULL,
  idempotency_key VARBINARY(1024) NULL,
  attempt_count INT UNSIGNED NOT NULL,
  runnable_at DATETIME(6) NULL,
  parent_run_id VARBINARY(512) NULL,
  delegation_depth INT UNSIGNED NOT NULL,
  continues_run_id VARBINARY(512) NULL,
  head_seq INT UNSIGNED NOT NULL,
  queue_at DATETIME(6) AS (CASE WHEN state IN ('runnable', 'running')
    THEN COALESCE(runnable_at, created_at) END) STORED,
  lease_watch DATETIME(6) AS (CASE WHEN state = 'running'
    THEN lease_expires_at END) STORED,
  open_deadline DATETIME(6) AS (CASE WHEN state <> 'settled'
    THEN deadline_at END) STORED,
  PRIMARY KEY (run_id),
  UNIQUE KEY admission (tenant, idempotency_key),
  KEY claim_order (queue_at, created_at, run_id),
  KEY lease_order (lease_watch, run_id),
  KEY deadline_order (open_deadline, run_id)
) {_TABLE_OPTIONS}""",
    )
    records = CreateTable(
        tables.records,
        f"""CREATE TABLE `{tables.records}` (
  run_id VARBINARY(512) NOT NULL,
  seq INT UNSIGNED NOT NULL,
  type VARBINARY(32) NOT NULL,
  body LONGTEXT NOT NULL,
  PRIMARY KEY (run_id, seq)
) {_TABLE_OPTIONS}""",
    )
    return Migration(1, "runs, records and versions", (versions, runs, records))


def _version_grants(tables: Tables) -> Migration:
    grants = CreateTable(
        tables.version_grants,
        f"""CREATE TABLE `{tables.version_grants}` (
  hash VARBINARY(255) NOT NULL,
  grantee VARBINARY(1024) NOT NULL,
  published_at DATETIME(6) NULL,
  PRIMARY KEY (hash, grantee)
) {_TABLE_OPTIONS}""",
    )
    # Versions stored before grants existed belonged to nobody in particular: share
    # them (grantee ''), as they effectively were. NULL keeps the document's own time.
    share_older = Backfill(
        f"INSERT INTO `{tables.version_grants}` (hash, grantee, published_at) "
        f"SELECT hash, '', NULL FROM `{tables.versions}` "
        "ON DUPLICATE KEY UPDATE grantee = grantee"
    )
    return Migration(2, "versions granted to tenants", (grants, share_older))


def _memories(tables: Tables) -> Migration:
    # The key parts are VARBINARY like the runs' tenant (256 characters are at most
    # 1024 UTF-8 bytes), so 'Alice' and 'alice' are two people. `facts_of` serves
    # recall (either direction) and erase; the unique `id` serves forget.
    memories = CreateTable(
        tables.memories,
        f"""CREATE TABLE `{tables.memories}` (
  seq BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  tenant VARBINARY(1024) NOT NULL,
  end_user_id VARBINARY(1024) NOT NULL,
  id VARBINARY(255) NOT NULL,
  content TEXT NOT NULL,
  created_at DATETIME(6) NOT NULL,
  PRIMARY KEY (seq),
  UNIQUE KEY memory_id (id),
  KEY facts_of (tenant, end_user_id, created_at, seq)
) {_TABLE_OPTIONS}""",
    )
    return Migration(3, "facts kept about end users", (memories,))


def migrations(tables: Tables) -> tuple[Migration, ...]:
    """Every migration this release knows, oldest first."""
    return (_initial(tables), _version_grants(tables), _memories(tables))


LATEST_VERSION = 3
"""The schema version this release writes and expects."""


async def current_version(batch: Batch, tables: Tables) -> int:
    """The newest applied migration, or 0 when the bookkeeping table does not exist."""
    try:
        value = await batch.scalar(f"SELECT MAX(version) FROM `{tables.schema_version}`")
    except Exception as exc:
        if errors.error_code(exc) == errors.NO_SUCH_TABLE:
            return 0
        raise
    return 0 if value is None else integer(value)


def check_version(version: int, where: str) -> None:
    """Refuse a schema this release does not match.

    Raises:
        SchemaTooNew: a newer release migrated the database.
        SchemaNotMigrated: the database is behind (or empty); ``migrate()`` fixes it.
    """
    psych_runtime.adapters.check_schema_version(
        where, version, needs=LATEST_VERSION, package="psych-store-mysql"
    )


async def migrate(batch: Batch, tables: Tables, lock_timeout: float, where: str) -> list[int]:
    """Bring the schema up to date under the migration lock; return the versions applied.

    Raises:
        SchemaTooNew: the database is ahead of this release; nothing is changed.
        StoreError: the lock could not be had within ``lock_timeout`` seconds.
    """
    got = await batch.scalar("SELECT GET_LOCK(%s, %s)", tables.migrate_lock, lock_timeout)
    if got != 1:
        raise psych_runtime.StoreError(
            f"{where}: waited {lock_timeout:g}s for the migration lock "
            f"{tables.migrate_lock!r} held by another process; try again later"
        )
    try:
        existing = await _existing_tables(batch, tables)
        await _create(batch, schema_version_table(tables), existing)
        version = await current_version(batch, tables)
        if version > LATEST_VERSION:
            check_version(version, where)
        applied: list[int] = []
        for migration in migrations(tables):
            if migration.version <= version:
                continue
            for step in migration.steps:
                if isinstance(step, Backfill):
                    await batch.run((step.sql, ()))
                else:
                    await _create(batch, step, existing)
            await batch.run(
                (
                    f"INSERT INTO `{tables.schema_version}` (version, description, applied_at) "
                    "VALUES (%s, %s, UTC_TIMESTAMP(6))",
                    (migration.version, migration.description),
                )
            )
            applied.append(migration.version)
        return applied
    finally:
        await batch.scalar("SELECT RELEASE_LOCK(%s)", tables.migrate_lock)


async def _existing_tables(batch: Batch, tables: Tables) -> set[str]:
    names = tables.all
    slots = ", ".join(["%s"] * len(names))
    (result,) = await batch.run(
        (
            "SELECT TABLE_NAME FROM information_schema.TABLES "
            f"WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN ({slots})",
            names,
        )
    )
    return {text(row[0]) for row in result.rows}


async def _create(batch: Batch, step: CreateTable, existing: set[str]) -> None:
    if step.name in existing:
        return
    await batch.run((step.ddl, ()))
    existing.add(step.name)


__all__ = [
    "LATEST_VERSION",
    "Backfill",
    "CreateTable",
    "Migration",
    "Tables",
    "check_version",
    "current_version",
    "migrate",
    "migrations",
    "schema_version_table",
]
