"""``PostgresMemoryStore``: facts about end users, kept in the deployment's schema.

The facts live in ``<schema>.psych_memories``, beside the Runs of the same schema
(one migration list covers both), so the URL of a ``PostgresStore`` opens its facts
too. Every call is one statement, one round trip, and commits on its own; the
connections come from a pool of this instance's own, opened on first use.
"""

from psych_runtime.adapters.memory import CheckedMemoryStore
from psych_runtime.adapters.memory import Memory
from psych_runtime.adapters.memory import MemoryKey
from psych_store_postgres._database import PostgresDatabase
from psych_store_postgres._queries import MemoryQueries
from psych_store_postgres._rows import memory_from_row
from psych_store_postgres.settings import PostgresSettings

_BIGINT_MAX = 2**63 - 1
"""The largest LIMIT PostgreSQL takes."""


class PostgresMemoryStore(CheckedMemoryStore, PostgresDatabase):
    """A MemoryStore on PostgreSQL.

    Constructing one does no IO. The pool opens on first use, which also checks that
    the schema was migrated by a release this code can read; until it is, every call
    raises ``SchemaNotMigrated``. ``await memory.migrate()`` migrates the whole schema,
    as migrating a ``PostgresStore`` on it does.

    Args:
        url: the same URL (and options) as the deployment's ``PostgresStore``, or
            ``PostgresSettings`` already resolved.
        schema: the schema holding the deployment's tables (default ``psych``).
        min_size: connections the pool keeps open (default 2).
        max_size: most connections the pool opens (default 10).
        connect_timeout: seconds to wait for a new connection (default 10).
        **options: ``listen`` and ``liveness_locks`` are accepted, so a store's URL
            works unchanged, and ignored: this store neither waits nor claims.

    Raises:
        InvalidStoreUrl: the URL or an option is malformed.
        TypeError: an unknown option, or a value of the wrong type.
    """

    def __init__(self, url: str | PostgresSettings, /, **options: object) -> None:
        super().__init__(url, **options)
        self._queries = MemoryQueries.for_schema(self._settings.schema)

    async def _keep(self, fact: Memory) -> Memory:
        """For ``remember``: one insert, committed before this returns.

        Raises:
            SchemaNotMigrated: the schema is missing or older than this release's.
            StoreUnavailable: the server cannot be reached.
        """
        pool = await self._ready()
        await self._call(
            pool.execute(
                self._queries.remember,
                fact.key.tenant,
                fact.key.end_user_id,
                fact.id,
                fact.content,
                fact.created_at,
            )
        )
        return fact

    async def _forget(self, key: MemoryKey, memory_id: str) -> bool:
        """For ``forget``: deletes only a fact of this very key."""
        pool = await self._ready()
        gone = await self._call(
            pool.fetchval(self._queries.forget, key.tenant, key.end_user_id, memory_id)
        )
        if gone:
            await self._vacuum("psych_memories", full=True)
        return bool(gone)

    async def _recall(self, key: MemoryKey, limit: int | None) -> tuple[Memory, ...]:
        """For ``recall``: oldest first, the newest ``limit`` when given."""
        pool = await self._ready()
        # LIMIT takes a bigint; NULL (no limit) covers anything larger as well.
        bounded = None if limit is None or limit > _BIGINT_MAX else limit
        rows = await self._call(
            pool.fetch(self._queries.recall, key.tenant, key.end_user_id, bounded)
        )
        return tuple(memory_from_row(key, row) for row in reversed(rows))

    async def _erase(self, key: MemoryKey) -> int:
        """For ``erase``: a real ``DELETE``; returns how many facts went.

        The facts table is then rewritten (``VACUUM (FULL)``), so the deleted rows'
        bytes leave its files too, not only its answers. The rewrite locks the facts
        table while it runs (recalls wait), for a time that grows with the table.
        """
        pool = await self._ready()
        gone = await self._call(pool.fetchval(self._queries.erase, key.tenant, key.end_user_id))
        if gone:
            await self._vacuum("psych_memories", full=True)
        return int(gone)


__all__ = ["PostgresMemoryStore"]
