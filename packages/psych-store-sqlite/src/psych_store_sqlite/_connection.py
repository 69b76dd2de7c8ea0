"""Opening a configured sqlite3 connection (its errors are explained by ``errors``).

Every connection of a store is set up the same way: transactions are controlled by
hand (``isolation_level=None``, so Python never opens one behind our back), the busy
timeout makes a writer wait for the file's write lock instead of failing at once, and
``synchronous`` trades durability on power loss against an fsync per commit.
"""

import sqlite3

from psych_runtime import StoreUnavailable
from psych_store_sqlite.errors import open_failure
from psych_store_sqlite.settings import SqliteSettings

MINIMUM_SQLITE = (3, 35, 0)
"""``UPDATE ... RETURNING`` arrived in SQLite 3.35; claims depend on it."""


def open_connection(settings: SqliteSettings) -> sqlite3.Connection:
    """Open and configure one connection to the store's file.

    ``check_same_thread`` is off only so that ``close()`` can close every connection
    from one thread after the lanes stopped; while the store runs, each connection is
    used by exactly one thread.

    Raises:
        StoreUnavailable: the file cannot be opened or configured, or the SQLite
            library linked into Python is too old.
    """
    if sqlite3.sqlite_version_info < MINIMUM_SQLITE:
        raise StoreUnavailable(
            f"psych-store-sqlite needs SQLite {'.'.join(map(str, MINIMUM_SQLITE))} or newer; "
            f"this Python is linked against {sqlite3.sqlite_version}"
        )
    try:
        conn = sqlite3.connect(
            settings.path,
            timeout=settings.busy_timeout_ms / 1000,
            isolation_level=None,
            check_same_thread=False,
            cached_statements=64,
        )
    except sqlite3.Error as exc:
        raise StoreUnavailable(open_failure(settings.path, exc)) from exc
    try:
        conn.execute(f"PRAGMA busy_timeout = {settings.busy_timeout_ms:d}")
        # The level comes from a fixed list (see settings.SYNCHRONOUS_MODES).
        conn.execute(f"PRAGMA synchronous = {settings.synchronous}")
        # Deleted rows and freed pages are overwritten with zeros, so what erase and
        # Run deletion remove is gone from the file, not only unlinked.
        conn.execute("PRAGMA secure_delete = ON")
    except sqlite3.Error as exc:
        conn.close()
        raise StoreUnavailable(open_failure(settings.path, exc)) from exc
    return conn


__all__ = ["MINIMUM_SQLITE", "open_connection"]
