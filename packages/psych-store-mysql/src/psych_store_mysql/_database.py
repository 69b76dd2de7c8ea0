"""What every store kept in one MySQL database shares: settings, the pool, the schema.

``MySQLStore`` (the Runs) and ``MySQLMemoryStore`` (the facts about end users) reach
the same tables of one ``table_prefix`` the same way. Both derive from
``MySQLDatabase``, so opening the pool, checking the schema version, lending
connections (with driver errors translated) and closing are written once, and either
of them migrating brings every table of both to this release's schema.
"""

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import psych_runtime
from psych_runtime.adapters.store import RawItem
from psych_runtime.adapters.store import settings_from
from psych_store_mysql import _connection
from psych_store_mysql import errors
from psych_store_mysql import schema
from psych_store_mysql._batches import PACKET_MARGIN
from psych_store_mysql._batches import Batch
from psych_store_mysql._rows import integer
from psych_store_mysql.schema import Tables
from psych_store_mysql.settings import MySQLSettings


class MySQLDatabase:
    """The lifecycle of one database's tables: the pool, the schema check, closing.

    Construction does no IO: the pool is opened, and the schema version checked once,
    on the first call that needs them.

    Args:
        url: ``mysql://user:pw@host:3306/db?table_prefix=app_`` (or ``mariadb://``),
            or ``MySQLSettings`` already resolved.
        **options: the options of ``MySQLSettings.from_url``; they override the same
            names in the URL's query.

    Raises:
        InvalidStoreUrl: the URL or an option is malformed.
        TypeError: an option this store does not know.
    """

    def __init__(self, url: str | MySQLSettings, /, **options: object) -> None:
        self._settings = settings_from(url, MySQLSettings, options)
        self._tables = Tables(self._settings.table_prefix)
        self._pool: _connection.Pool | None = None
        self._budget = 0
        self._schema_checked = False
        self._closed = False
        self._opening = asyncio.Lock()

    @property
    def settings(self) -> MySQLSettings:
        """What this store connects to (the password stays out of ``repr``)."""
        return self._settings

    @property
    def tables(self) -> Tables:
        """The table names this store reads and writes."""
        return self._tables

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self._settings.where}, table_prefix={self._tables.prefix!r})"
        )

    async def migrate(self) -> list[int]:
        """Create or upgrade every table; safe to call repeatedly and concurrently.

        Returns:
            The schema versions this call applied, oldest first; empty when the
            database was already current.

        Raises:
            SchemaTooNew: a newer release already migrated this database.
            StoreUnavailable: the server cannot be reached.
        """
        async with self._lend("migrating", check_schema=False) as batch:
            applied = await schema.migrate(
                batch, self._tables, self._settings.migrate_lock_timeout, self._settings.where
            )
        self._schema_checked = True
        return applied

    @property
    def expected_schema_version(self) -> int:
        """The schema version this release writes and needs."""
        return schema.LATEST_VERSION

    async def schema_version(self) -> int:
        """The schema version recorded in the database (0 before the first migration)."""
        async with self._lend("reading the schema version", check_schema=False) as batch:
            return await schema.current_version(batch, self._tables)

    async def close(self) -> None:
        """Close every pooled connection; the store refuses calls afterwards."""
        self._closed = True
        async with self._opening:
            pool, self._pool = self._pool, None
        if pool is None:
            return
        await pool.clear()
        pool.close()
        await pool.wait_closed()
        # Closing a socket finishes on the loop's next pass; let it, so no transport
        # outlives the store and shows up later as a ResourceWarning.
        await asyncio.sleep(0)

    async def raw_storage(self) -> list[RawItem]:
        """See ``RawStorage.raw_storage``: the InnoDB tablespace file of every table.

        Each table of this prefix is flushed to its ``.ibd`` file (``FLUSH TABLES ...
        FOR EXPORT``), and the files are read from the server's data directory, so
        deleted rows not yet cleaned up and free space inside pages are included. It
        needs the server on this machine, a readable data directory, and the
        ``RELOAD`` and ``LOCK TABLES`` privileges: it is meant for tests and audits.

        Raises:
            StoreError: the tablespace files cannot be read from here.
        """
        async with self._lend("reading the tablespace files") as batch:
            (found,) = await batch.run(
                (
                    "SELECT @@datadir, DATABASE(), table_name FROM information_schema.tables"
                    " WHERE table_schema = DATABASE() AND table_name IN ("
                    + ", ".join(["%s"] * len(self._tables.all))
                    + ")",
                    self._tables.all,
                )
            )
            if not found.rows:
                return []
            datadir, database = str(found.rows[0][0]), str(found.rows[0][1])
            names = [str(row[2]) for row in found.rows]
            quoted = ", ".join(f"`{name}`" for name in names)
            await batch.run((f"FLUSH TABLES {quoted} FOR EXPORT", ()))
            try:
                folder = Path(datadir) / _file_name(database)
                return await asyncio.to_thread(_read_tablespaces, folder, names)
            finally:
                await batch.run(("UNLOCK TABLES", ()))

    async def _rebuild(self, *tables: str) -> None:
        """Rebuild ``tables`` so deleted rows leave their tablespace files too."""
        async with self._lend("rebuilding tables") as batch:
            for table in tables:
                await batch.run((f"OPTIMIZE TABLE `{table}`", ()))

    async def _open(self, check_schema: bool) -> _connection.Pool:
        """The pool, opened (and the schema checked) on first use."""
        pool = self._pool
        if pool is not None and (self._schema_checked or not check_schema):
            return pool
        async with self._opening:
            if self._closed:
                raise psych_runtime.StoreError(f"{self!r} is closed")
            if self._pool is None:
                pool = await _connection.create_pool(self._settings)
                try:
                    self._budget = await self._packet_budget(pool)
                except BaseException:
                    pool.close()
                    await pool.wait_closed()
                    raise
                self._pool = pool
            if check_schema and not self._schema_checked:
                await self._check_schema(self._pool)
            return self._pool

    async def _packet_budget(self, pool: _connection.Pool) -> int:
        async with self._borrow(pool, "reading max_allowed_packet") as batch:
            value = integer(await batch.scalar("SELECT @@max_allowed_packet"))
        budget = value - PACKET_MARGIN
        if self._settings.max_statement_bytes is not None:
            budget = min(budget, self._settings.max_statement_bytes)
        return budget

    async def _check_schema(self, pool: _connection.Pool) -> None:
        async with self._borrow(pool, "checking the schema version") as batch:
            version = await schema.current_version(batch, self._tables)
        schema.check_version(version, self._settings.where)
        self._schema_checked = True

    @asynccontextmanager
    async def _lend(self, doing: str, *, check_schema: bool = True) -> AsyncIterator[Batch]:
        """A pooled connection for ``doing``, once the schema is known to be current."""
        if self._closed:
            raise psych_runtime.StoreError(f"{self!r} is closed")
        pool = await self._open(check_schema)
        async with self._borrow(pool, doing) as batch:
            yield batch

    @asynccontextmanager
    async def _borrow(self, pool: _connection.Pool, doing: str) -> AsyncIterator[Batch]:
        """Lend a pooled connection; a connection left in doubt is closed, not reused."""
        try:
            conn = await pool.acquire()
        except Exception as exc:
            if errors.is_driver_error(exc):
                raise errors.translate(exc, self._settings, doing) from exc
            raise
        try:
            yield Batch(conn, self._budget or 1 << 20)
        except BaseException as exc:
            await _recover(conn, exc)
            if isinstance(exc, Exception) and errors.is_driver_error(exc):
                raise errors.translate(exc, self._settings, doing) from exc
            raise
        finally:
            await pool.release(conn)


async def _recover(conn: _connection.Connection, exc: BaseException) -> None:
    """Make a connection safe to pool again after ``exc``, or close it.

    A cancelled or broken connection may be mid-reply, so it is dropped. Otherwise a
    ROLLBACK ends any transaction the failed batch left open.
    """
    if conn.closed:
        return
    if not isinstance(exc, Exception) or errors.connection_lost(exc):
        conn.close()
        return
    try:
        await conn.rollback()
    except Exception:
        conn.close()


def _file_name(name: str) -> str:
    """How MySQL spells a database or table name as a file name."""
    return "".join(
        char if char.isascii() and (char.isalnum() or char == "_") else f"@{ord(char):04x}"
        for char in name
    )


def _read_tablespaces(folder: Path, names: list[str]) -> list[RawItem]:
    items: list[RawItem] = []
    for name in names:
        path = folder / f"{_file_name(name)}.ibd"
        try:
            items.append(RawItem(f"file {path.name}", path.read_bytes()))
        except OSError as exc:
            raise psych_runtime.StoreError(
                f"raw_storage() reads the server's tablespace files and could not read "
                f"{path}: {exc}; run it on the database server's machine"
            ) from exc
    return items


__all__ = ["MySQLDatabase"]
