"""``SqliteMemoryStore``: facts about end users, kept in the store's SQLite file.

The facts live in the ``psych_memories`` table of the same file a ``SqliteStore``
uses (one migration list covers both), so one URL opens the Runs and the facts of a
deployment. Writes go through the writer thread inside ``BEGIN IMMEDIATE`` like every
write of the store; a recall is one statement on a reader thread.
"""

from psych_runtime.adapters.memory import CheckedMemoryStore
from psych_runtime.adapters.memory import Memory
from psych_runtime.adapters.memory import MemoryKey
from psych_store_sqlite import _queries as ops
from psych_store_sqlite._database import SqliteDatabase


class SqliteMemoryStore(CheckedMemoryStore, SqliteDatabase):
    """A MemoryStore kept in one SQLite database file.

    Construction does no IO; the file is opened on first use (or by ``connect``).
    The table is created by ``await memory.migrate()``, which migrates the whole file,
    or by migrating a ``SqliteStore`` on the same file. Until then every call raises
    ``SchemaNotMigrated``.

    Args:
        url: ``sqlite:////absolute/path.db`` or ``sqlite:///relative/path.db``, the
            same URL the file's ``SqliteStore`` uses; or ``SqliteSettings``.
        **options: ``synchronous``, ``busy_timeout_ms`` and ``readers``, as for
            ``SqliteStore``.

    Raises:
        InvalidStoreUrl: the URL is malformed.
        TypeError: an unknown option, or a value of the wrong type.
        ValueError: an option value is out of range.
    """

    async def _keep(self, fact: Memory) -> Memory:
        """For ``remember``: one insert, committed before this returns.

        Raises:
            SchemaNotMigrated: the file's schema is missing or older than this release's.
            StoreUnavailable: the file cannot be written.
        """
        await self._lanes.write(lambda conn: ops.remember(conn, fact))
        return fact

    async def _forget(self, key: MemoryKey, memory_id: str) -> bool:
        """For ``forget``: deletes only a fact of this very key."""
        gone = await self._lanes.write(lambda conn: ops.forget(conn, key, memory_id))
        if gone:
            await self.scrub()
        return gone

    async def _recall(self, key: MemoryKey, limit: int | None) -> tuple[Memory, ...]:
        """For ``recall``: oldest first, the newest ``limit`` when given."""
        facts = await self._lanes.read(lambda conn: ops.recall(conn, key, limit))
        return tuple(facts)

    async def _erase(self, key: MemoryKey) -> int:
        """For ``erase``: a real ``DELETE``; returns how many facts went.

        The deleted rows are overwritten with zeros in the file and the write-ahead
        log is then cut (``scrub``), so the facts' text is gone from the bytes on disk.
        """
        gone = await self._lanes.write(lambda conn: ops.erase(conn, key))
        await self.scrub()
        return gone


__all__ = ["SqliteMemoryStore"]
