"""What every store kept in one SQLite file shares: settings, lanes and the schema.

``SqliteStore`` (the Runs) and ``SqliteMemoryStore`` (the facts about end users) open
the same kind of file the same way. Both derive from ``SqliteDatabase``, so opening,
migrating and closing are written once, and either of them migrating brings the whole
file (every table of both) to this release's schema.
"""

import functools
from pathlib import Path

from psych_runtime.adapters import settings_from
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
        self._lanes = Lanes(settings)

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

    async def close(self) -> None:
        """Finish queued operations and close every connection; idempotent."""
        await self._lanes.close()


def _nothing(conn: object) -> None:
    """An operation that only makes the lane open its connection."""


__all__ = ["SqliteDatabase"]
