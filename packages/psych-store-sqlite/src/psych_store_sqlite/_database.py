"""What every store kept in one SQLite file shares: settings, lanes and the schema.

``SqliteStore`` (the Runs) and ``SqliteMemoryStore`` (the facts about end users) open
the same kind of file the same way. Both derive from ``SqliteDatabase``, so opening,
migrating and closing are written once, and either of them migrating brings the whole
file (every table of both) to this release's schema.
"""

import asyncio
import functools
import sqlite3
import weakref
from pathlib import Path

from psych_runtime.adapters.store import RawItem
from psych_runtime.adapters.store import settings_from
from psych_store_sqlite import schema
from psych_store_sqlite._lanes import Lanes
from psych_store_sqlite.settings import SqliteSettings


class SqliteDatabase:
    """The lifecycle of one SQLite file: its lanes, its migrations, closing it.

    Construction does no IO; the file is opened on first use (or by ``connect``).

    Args:
        url: ``sqlite:////absolute/path.db`` or ``sqlite:///relative/path.db``,
            optionally with options in the query string; or ``SqliteSettings``.
        **options: ``synchronous``, ``busy_timeout_ms``, ``readers``; they override
            the same names in the URL's query.

    Raises:
        InvalidStoreUrl: the URL is malformed.
        TypeError: an unknown option, or a value of the wrong type.
        ValueError: an option value is out of range.
    """

    def __init__(self, url: str | SqliteSettings, /, **options: object) -> None:
        settings = settings_from(url, SqliteSettings, options)
        self._settings = settings
        # A weak reference, so the lanes (whose finaliser stops the threads of a store
        # dropped without close()) do not keep the store itself alive.
        hook = weakref.WeakMethod(self._init_connection)

        def on_open(conn: sqlite3.Connection) -> None:
            init = hook()
            if init is not None:
                init(conn)

        self._lanes = Lanes(settings, on_open)

    def _init_connection(self, conn: sqlite3.Connection) -> None:
        """Prepare each new connection; a subclass may override (nothing here).

        Called on the lane thread that owns ``conn``, after the store's own pragmas
        and before its first statement. A test may install a trace callback here to
        count the statements and commits a workload costs.
        """

    @property
    def path(self) -> Path:
        """The absolute path of the database file."""
        return self._settings.path

    @property
    def settings(self) -> SqliteSettings:
        """The resolved settings this store runs with."""
        return self._settings

    async def connect(self) -> None:
        """Open the writer's connection now, so a bad path fails here, not mid-Run.

        Raises:
            StoreUnavailable: the file cannot be opened or created.
        """
        await self._lanes.maintain(_nothing)

    async def migrate(self) -> list[int]:
        """Create or upgrade the tables; returns the schema versions it applied.

        Safe to run on every start: a file already at this release's version applies
        nothing, and two processes migrating at once serialise on the file's lock.

        Raises:
            SchemaTooNew: a newer release migrated the file.
            StoreUnavailable: the file cannot be opened or switched to WAL mode.
        """
        where = str(self._settings.path)
        wait_s = self._settings.busy_timeout_ms / 1000
        return await self._lanes.maintain(
            functools.partial(schema.migrate, where=where, wait_s=wait_s)
        )

    @property
    def expected_schema_version(self) -> int:
        """The schema version this release writes and needs."""
        return schema.SCHEMA_VERSION

    async def schema_version(self) -> int:
        """The schema version recorded in the file (0 before the first migration).

        A file that does not exist reads as 0 and is not created.
        """
        if not self._settings.path.exists():
            return 0
        return await self._lanes.maintain(schema.current_version)

    async def raw_storage(self) -> list[RawItem]:
        """See ``RawStorage.raw_storage``: the database file and its WAL, byte for byte.

        The whole files, free pages and write-ahead frames included; a rollback
        journal too when one is lying beside the file.
        """
        return await asyncio.to_thread(_read_files, self._settings.path)

    async def scrub(self) -> bool:
        """Copy the write-ahead log into the file and cut the log to zero bytes.

        Erase and Run deletion call it after they commit: the rows they delete are
        zeroed in the file (``secure_delete``), but the log still holds the frames
        that wrote them until it is truncated. A reader of another connection still
        inside a read transaction keeps the log from being cut; the next scrub (or the
        next checkpoint that truncates) does it then.

        Returns:
            Whether the log was cut to zero bytes.
        """
        return await self._lanes.maintain(_truncate_wal)

    async def close(self) -> None:
        """Finish queued operations and close every connection; idempotent."""
        await self._lanes.close()


def _nothing(conn: object) -> None:
    """An operation that only makes the lane open its connection."""


def _truncate_wal(conn: sqlite3.Connection) -> bool:
    busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    return int(busy) == 0


def _read_files(path: Path) -> list[RawItem]:
    items: list[RawItem] = []
    for suffix in ("", "-wal", "-journal"):
        part = path.with_name(path.name + suffix)
        try:
            items.append(RawItem(f"file {part.name}", part.read_bytes()))
        except FileNotFoundError:
            continue
    return items


__all__ = ["SqliteDatabase"]
