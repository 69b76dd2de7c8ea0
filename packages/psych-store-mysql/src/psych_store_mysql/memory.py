"""``MySQLMemoryStore``: facts about end users, kept in the store's MySQL database.

The facts live in ``{prefix}psych_memories``, beside the tables a ``MySQLStore`` with
the same ``table_prefix`` uses; one migration list covers both, so one URL opens the
Runs and the facts of a deployment. Every call is one statement in one round trip,
committed by autocommit before it returns.
"""

from psych_runtime.adapters.memory import CheckedMemoryStore
from psych_runtime.adapters.memory import Memory
from psych_runtime.adapters.memory import MemoryKey
from psych_store_mysql._database import MySQLDatabase
from psych_store_mysql._queries import MemoryStatements
from psych_store_mysql._rows import memory_from_row
from psych_store_mysql.settings import MySQLSettings

_LIMIT_MAX = 2**64 - 1
"""The largest LIMIT MySQL and MariaDB take."""


class MySQLMemoryStore(CheckedMemoryStore, MySQLDatabase):
    """A MemoryStore on MySQL 8 or MariaDB 10.6+, through an aiomysql pool.

    Construction does no IO; the pool opens on the first call, which also checks the
    schema version once. The table is created by ``await memory.migrate()``, which
    migrates every table of the prefix, or by migrating a ``MySQLStore`` on the same
    database and prefix. Until then every call raises ``SchemaNotMigrated``.

    Facts are recalled by ``created_at``, then by insertion order for two facts of
    the same microsecond. ``erase`` is a real ``DELETE``: nothing is kept behind.

    Args:
        url: ``mysql://user:pw@host:3306/db?table_prefix=app_`` (or ``mariadb://``),
            the same URL the database's ``MySQLStore`` uses; or ``MySQLSettings``.
        **options: the options ``MySQLStore`` takes (pool sizes, timeouts,
            ``table_prefix``, ``ssl``...); they override the URL's query.

    Raises:
        InvalidStoreUrl: the URL or an option is malformed.
        TypeError: an option this store does not know.
    """

    def __init__(self, url: str | MySQLSettings, /, **options: object) -> None:
        super().__init__(url, **options)
        self._sql = MemoryStatements(self._tables)

    async def _keep(self, fact: Memory) -> Memory:
        """For ``remember``: one INSERT of the fact as minted.

        Raises:
            SchemaNotMigrated: the database's schema is missing or older than this
                release's.
            StoreUnavailable: the server cannot be reached.
        """
        async with self._lend("remembering a fact") as batch:
            await batch.run(self._sql.remember(fact))
        return fact

    async def _forget(self, key: MemoryKey, memory_id: str) -> bool:
        """For ``forget``: a DELETE matching the id and both key parts."""
        async with self._lend("forgetting a fact") as batch:
            (result,) = await batch.run(self._sql.forget(key, memory_id))
        if result.rowcount:
            await self._rebuild(self._tables.memories)
        return result.rowcount == 1

    async def _recall(self, key: MemoryKey, limit: int | None) -> tuple[Memory, ...]:
        """For ``recall``: an index range read, oldest first.

        With ``limit`` the index is walked from the newest end and stops after
        ``limit`` rows, which are then put back in oldest-first order.
        """
        # LIMIT takes an unsigned 64-bit count; a larger one means every fact as well.
        bounded = None if limit is None or limit > _LIMIT_MAX else limit
        async with self._lend("recalling facts") as batch:
            (result,) = await batch.run(self._sql.recall(key, bounded))
        facts = [memory_from_row(row, key) for row in result.rows]
        if bounded is not None:
            facts.reverse()
        return tuple(facts)

    async def _erase(self, key: MemoryKey) -> int:
        """For ``erase``: one DELETE of every row of the key.

        The facts table is then rebuilt (``OPTIMIZE TABLE``), so the deleted rows'
        bytes leave its tablespace file; the time that takes grows with the table.
        """
        async with self._lend("erasing facts") as batch:
            (result,) = await batch.run(self._sql.erase(key))
        if result.rowcount:
            await self._rebuild(self._tables.memories)
        return result.rowcount


__all__ = ["MySQLMemoryStore"]
