"""What every store on one deployment's schema shares: the pool, the schema, outages.

``PostgresStore`` (the Runs) and ``PostgresMemoryStore`` (the facts about end users)
connect the same way, check the same schema version on first use, run the same
migrations and report an unreachable server the same way. Both derive from
``PostgresDatabase``, so all of that is written once, and migrating either of them
brings the whole schema (every table of both) to this release's version.
"""

import asyncio
import contextlib
from collections.abc import Awaitable
from typing import TYPE_CHECKING
from typing import TypeVar

from psych_runtime import StoreUnavailable
from psych_runtime.adapters.store import RawItem
from psych_runtime.adapters.store import check_schema_version
from psych_runtime.adapters.store import schema_too_new
from psych_runtime.adapters.store import settings_from
from psych_store_postgres._connection import GuardedPool
from psych_store_postgres._rows import decompress
from psych_store_postgres.errors import is_connection_error
from psych_store_postgres.errors import is_unavailable
from psych_store_postgres.errors import unavailable
from psych_store_postgres.schema import LATEST_VERSION
from psych_store_postgres.schema import MIGRATIONS
from psych_store_postgres.schema import VERSION_TABLE
from psych_store_postgres.schema import quote_ident
from psych_store_postgres.schema import version_table_sql
from psych_store_postgres.settings import PostgresSettings

if TYPE_CHECKING:
    import asyncpg

_T = TypeVar("_T")

_PACKAGE = "psych-store-postgres"

_SERVER_SETTINGS = {
    # Defaults for this store's sessions; a URL parameter of the same name wins.
    "application_name": "psych-store-postgres",
    # The store's statements are tiny; JIT compilation would only add latency to them.
    "jit": "off",
}


class PostgresDatabase:
    """The connections to one deployment's schema, and that schema's migrations.

    Constructing one does no IO. The pool opens on first use, which also checks once
    that the schema was migrated by a release this code can read.

    Args:
        url: ``postgresql://user:password@host:port/database`` (``postgres://`` too),
            or ``PostgresSettings`` already resolved.
        **options: keyword options overriding the URL's query (see
            ``PostgresSettings.from_url``).

    Raises:
        InvalidStoreUrl: the URL or an option is malformed.
        TypeError: an unknown option, or a value of the wrong type.
    """

    def __init__(self, url: str | PostgresSettings, /, **options: object) -> None:
        self._settings = settings_from(url, PostgresSettings, options)
        self._server_settings = {
            name: value
            for name, value in _SERVER_SETTINGS.items()
            if name not in self._settings.passed_keys
        }
        self._version_query = (
            f"SELECT coalesce(max(version), 0) FROM {quote_ident(self.schema)}.{VERSION_TABLE}"
        )
        self._pool: GuardedPool | None = None
        self._pool_lock = asyncio.Lock()
        self._checked = False
        self._closed = False

    def _is_closed(self) -> bool:
        # A method, not the attribute, so type narrowing does not survive an await.
        return self._closed

    @property
    def schema(self) -> str:
        """The schema this store's tables live in."""
        return self._settings.schema

    # --- connections -------------------------------------------------------------------

    async def _connect(self) -> "asyncpg.Connection":
        """A dedicated connection outside the pool (LISTEN, liveness locks)."""
        import asyncpg

        try:
            return await asyncpg.connect(
                self._settings.dsn,
                timeout=self._settings.connect_timeout,
                server_settings=self._server_settings,
            )
        except Exception as exc:
            if is_connection_error(exc) or isinstance(exc, asyncpg.PostgresError):
                raise unavailable(self._settings.address, exc, connecting=True) from exc
            raise

    async def _pooled_connection(self) -> "asyncpg.Connection":
        """A new connection for the pool, prepared by ``_init_connection``."""
        conn = await self._connect()
        try:
            await self._init_connection(conn)
        except BaseException:
            conn.terminate()
            raise
        return conn

    async def _init_connection(self, conn: "asyncpg.Connection") -> None:
        """Prepare each new pool connection; a subclass may override (nothing here)."""

    def _current_pool(self) -> GuardedPool | None:
        # Read through a method so narrowing from before an await does not stick.
        return self._pool

    def _closed_error(self) -> StoreUnavailable:
        return StoreUnavailable(f"this {type(self).__name__} has been closed")

    async def _open_pool(self) -> GuardedPool:
        if self._is_closed():
            raise self._closed_error()
        if self._pool is not None:
            return self._pool
        async with self._pool_lock:
            opened = self._current_pool()
            if opened is not None:
                return opened
            pool = GuardedPool(
                self._pooled_connection,
                min_size=self._settings.min_size,
                max_size=self._settings.max_size,
            )
            try:
                await pool.start()
            except BaseException:
                with contextlib.suppress(Exception):
                    await pool.close()
                raise
            if self._is_closed():
                await pool.close()
                raise self._closed_error()
            self._pool = pool
            return self._pool

    async def _ready(self) -> GuardedPool:
        """The pool, after checking once that the schema is at a version we know."""
        pool = self._pool
        if pool is not None and self._checked:
            return pool
        pool = await self._open_pool()
        if not self._checked:
            found = await self._call(self._schema_version(pool))
            at = 0 if found is None else found  # no schema at all reads as never migrated
            check_schema_version(self._where, at, needs=LATEST_VERSION, package=_PACKAGE)
            self._checked = True
        return pool

    async def _schema_version(self, pool: GuardedPool) -> int | None:
        import asyncpg

        try:
            value = await pool.fetchval(self._version_query)
        except (asyncpg.UndefinedTableError, asyncpg.InvalidSchemaNameError):
            return None
        return int(value)

    @property
    def _where(self) -> str:
        return f"the psych schema {self.schema!r} at {self._settings.address}"

    async def _call(self, operation: Awaitable[_T]) -> _T:
        """Await a driver call, turning an outage into ``StoreUnavailable``.

        The pool has already discarded the connection the call failed on, so the next
        call gets a working one (or fails the same way while the server is down).
        """
        try:
            return await operation
        except Exception as exc:
            if is_unavailable(exc):
                raise unavailable(self._settings.address, exc, connecting=False) from exc
            raise

    # --- migrations --------------------------------------------------------------------

    async def migrate(self) -> list[int]:
        """Bring the schema up to this release's version; safe to call any number of times.

        Runs in one transaction under a transaction-level advisory lock keyed by the
        schema, so concurrent migrations from several processes apply each step once.
        Creates the schema when it does not exist.

        Returns:
            The versions this call applied, oldest first; empty when already current.

        Raises:
            SchemaTooNew: the schema was migrated by a newer release.
            StoreUnavailable: the server cannot be reached.
        """
        pool = await self._open_pool()
        applied = await self._call(self._migrate(pool))
        self._checked = True
        return applied

    async def _migrate(self, pool: GuardedPool) -> list[int]:
        schema = self.schema
        quoted = quote_ident(schema)
        async with pool.acquire() as conn, conn.transaction():
            await conn.execute(
                "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
                f"psych_store_postgres:migrate:{schema}",
            )
            exists = await conn.fetchval(
                "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = $1)", schema
            )
            if not exists:
                await conn.execute(f"CREATE SCHEMA {quoted}")
            await conn.execute(version_table_sql(schema))
            current = int(await conn.fetchval(self._version_query))
            if current > LATEST_VERSION:
                raise schema_too_new(self._where, current, knows=LATEST_VERSION, package=_PACKAGE)
            pending = [m for m in MIGRATIONS if m.version > current]
            for migration in pending:
                await conn.execute(migration.render(schema))
                await conn.execute(
                    f"INSERT INTO {quoted}.{VERSION_TABLE} (version, name) VALUES ($1, $2)",
                    migration.version,
                    migration.name,
                )
            return [migration.version for migration in pending]

    @property
    def expected_schema_version(self) -> int:
        """The schema version this release writes and needs."""
        return LATEST_VERSION

    async def schema_version(self) -> int | None:
        """The schema version recorded in the database, or None when never migrated."""
        pool = await self._open_pool()
        return await self._call(self._schema_version(pool))

    # --- lifecycle ---------------------------------------------------------------------

    async def close(self) -> None:
        """Close every connection; idempotent, and the store refuses calls afterwards."""
        if self._is_closed():
            return
        self._closed = True
        await self._close_dedicated()
        pool, self._pool = self._pool, None
        if pool is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(pool.close(), timeout=5.0)

    async def _close_dedicated(self) -> None:
        """Close connections kept outside the pool; a subclass may override (none here)."""

    # --- what the server really holds ------------------------------------------------------

    async def raw_storage(self) -> list[RawItem]:
        """See ``RawStorage.raw_storage``: every page of the schema's relations.

        Every page of every table, TOAST table and index in the schema, as the server
        holds it (dead row versions included, until a vacuum removes them), read with
        the ``pageinspect`` extension, plus the decompressed body of every stored
        append (the pages hold them compressed). It needs a role that may create and
        use ``pageinspect`` (a superuser): it is meant for tests and audits.

        Raises:
            StoreError: the role may not use ``pageinspect``.
        """
        conn = await self._connect()
        try:
            return await _raw_pages(conn, self.schema)
        finally:
            await conn.close()

    async def _vacuum(self, *tables: str, full: bool = False) -> None:
        """Remove dead row versions of ``tables``; with ``full``, rewrite the tables.

        A plain vacuum removes the row versions from every read and index, but their
        bytes may stay in a page's free space until PostgreSQL writes over it. A full
        vacuum writes the live rows into new files and drops the old ones, so nothing
        of the deleted rows is left in the table; it holds an exclusive lock on the
        table while it runs, which is why only the facts table is ever rewritten.
        """
        conn = await self._connect()
        try:
            names = ", ".join(f"{quote_ident(self.schema)}.{quote_ident(t)}" for t in tables)
            command = "VACUUM (FULL) " if full else "VACUUM "
            await self._call(conn.execute(command + names))
        finally:
            await conn.close()


_RELATIONS = """
SELECT c.oid::regclass::text AS name, pg_relation_size(c.oid) AS size
FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
WHERE n.nspname = $1 AND c.relkind IN ('r', 'i')
UNION ALL
SELECT t.oid::regclass::text, pg_relation_size(t.oid)
FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
JOIN pg_class AS t ON t.oid = c.reltoastrelid
WHERE n.nspname = $1 AND c.relkind = 'r'
UNION ALL
SELECT i.indexrelid::regclass::text, pg_relation_size(i.indexrelid)
FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
JOIN pg_index AS i ON i.indrelid = c.reltoastrelid
WHERE n.nspname = $1 AND c.relkind = 'r'
"""


async def _raw_pages(conn: "asyncpg.Connection", schema: str) -> list[RawItem]:
    from psych_runtime.adapters.store import StoreError

    try:
        await conn.execute("CREATE EXTENSION IF NOT EXISTS pageinspect")
    except Exception as exc:
        raise StoreError(
            f"raw_storage() needs the pageinspect extension and a role allowed to use it: {exc}"
        ) from exc
    block = int(await conn.fetchval("SELECT current_setting('block_size')"))
    items: list[RawItem] = []
    for row in await conn.fetch(_RELATIONS, schema):
        name, size = str(row["name"]), int(row["size"])
        for page in range(size // block):
            data = await conn.fetchval("SELECT get_raw_page($1::text, $2::bigint)", name, page)
            items.append(RawItem(f"{name} page {page}", bytes(data)))
    table = f"{quote_ident(schema)}.psych_records"
    if await conn.fetchval("SELECT to_regclass($1) IS NOT NULL", table):
        for row in await conn.fetch(f"SELECT run_ref, first_seq, body FROM {table}"):
            where = f"psych_records run_ref {row['run_ref']} from seq {row['first_seq']}"
            items.append(RawItem(where, decompress(bytes(row["body"]))))
    return items


__all__ = ["PostgresDatabase"]
