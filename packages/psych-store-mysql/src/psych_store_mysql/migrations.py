"""Apply the schema migrations, one process at a time.

Several processes may call ``migrate()`` at the same moment (every Worker on start-up,
say). A named server lock, ``GET_LOCK('<prefix>psych_migrate', timeout)``, lets one of
them do the work while the others wait and then find nothing left to do. The lock
belongs to the connection, so it disappears if the migrating process dies.
"""

import psych_runtime
from psych_store_mysql import _driver
from psych_store_mysql.batch import Batch
from psych_store_mysql.rows import integer, text
from psych_store_mysql.schema import (
    LATEST_VERSION,
    Backfill,
    CreateTable,
    Tables,
    migrations,
    schema_version_table,
)


async def current_version(batch: Batch, tables: Tables) -> int:
    """The newest applied migration, or 0 when the bookkeeping table does not exist."""
    try:
        value = await batch.scalar(f"SELECT MAX(version) FROM `{tables.schema_version}`")
    except Exception as exc:
        if _driver.error_code(exc) == _driver.NO_SUCH_TABLE:
            return 0
        raise
    return 0 if value is None else integer(value)


def check_version(version: int, where: str) -> None:
    """Refuse a schema this release does not match.

    Raises:
        SchemaTooNew: a newer release migrated the database.
        SchemaNotMigrated: the database is behind (or empty); ``migrate()`` fixes it.
    """
    if version > LATEST_VERSION:
        raise psych_runtime.adapters.SchemaTooNew(
            f"{where} holds schema version {version}, newer than the {LATEST_VERSION} this "
            "psych-store-mysql release knows; upgrade psych-store-mysql"
        )
    if version < LATEST_VERSION:
        raise psych_runtime.adapters.SchemaNotMigrated(
            f"{where} holds schema version {version}, this release needs {LATEST_VERSION}; "
            "run `await store.migrate()` first"
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


__all__ = ["check_version", "current_version", "migrate"]
