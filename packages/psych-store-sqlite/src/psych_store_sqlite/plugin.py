"""The entry point psych-runtime loads: registers the ``sqlite://`` backends.

One scheme, two backends: ``open_store`` gets a ``SqliteStore`` and
``open_memory_store`` a ``SqliteMemoryStore`` for the same URL, so the Runs and the
facts of a deployment share one file.

Loading this module must stay cheap, since psych-runtime imports every installed
plugin when it first looks for backends. So nothing here imports ``sqlite3`` or the
stores themselves; they are imported inside the ``open_*`` factories and the doctor
check.
"""

from typing import TYPE_CHECKING

from psych_runtime.adapters.plugins import DoctorCheck
from psych_runtime.adapters.plugins import DoctorResult
from psych_runtime.adapters.plugins import StoreBackend
from psych_runtime.adapters.plugins import offer_doctor_checks
from psych_runtime.adapters.plugins import offer_store_and_memory

if TYPE_CHECKING:
    from psych_runtime import Store
    from psych_store_sqlite._database import SqliteDatabase
    from psych_store_sqlite.memory import SqliteMemoryStore

PSYCH_PLUGIN_API = 1

_PACKAGE = "psych-store-sqlite"


async def open_sqlite_store(url: str, **options: object) -> "Store":
    """Open a ``sqlite://`` store, as ``psych_runtime.open_store`` does for this scheme.

    The file is opened (and created when missing) before this returns, so a path that
    cannot work fails here. Tables are created only when asked:
    ``open_store(url, migrate=True)`` (convenient for a single process or a test), or
    ``await store.migrate()`` yourself, for example once from a deploy step.

    Args:
        url: ``sqlite:////absolute/path.db`` or ``sqlite:///relative/path.db``.
        **options: ``synchronous``, ``busy_timeout_ms``, ``readers`` (see
            ``SqliteStore``); they override the same names in the URL's query.

    Raises:
        InvalidStoreUrl: the URL is malformed.
        TypeError: an unknown option, or a value of the wrong type.
        StoreUnavailable: the file cannot be opened.
    """
    from psych_store_sqlite.store import SqliteStore  # deferred: keep loading cheap

    return await _connected(SqliteStore(url, **options))


async def open_sqlite_memory_store(url: str, **options: object) -> "SqliteMemoryStore":
    """Open a ``sqlite://`` memory store, as ``psych_runtime.open_memory_store`` does.

    Like ``open_sqlite_store``: the file is opened before this returns, and the
    tables are created only by ``open_memory_store(url, migrate=True)`` or
    ``await memory.migrate()`` (either store's migration prepares both).

    Args:
        url: ``sqlite:////absolute/path.db`` or ``sqlite:///relative/path.db``.
        **options: ``synchronous``, ``busy_timeout_ms``, ``readers``.

    Raises:
        InvalidStoreUrl: the URL is malformed.
        TypeError: an unknown option, or a value of the wrong type.
        StoreUnavailable: the file cannot be opened.
    """
    from psych_store_sqlite.memory import SqliteMemoryStore  # deferred: keep loading cheap

    return await _connected(SqliteMemoryStore(url, **options))


async def _connected[D: "SqliteDatabase"](database: D) -> D:
    """Open ``database``'s file now, closing it again when that fails."""
    try:
        await database.connect()
    except BaseException:
        await database.close()
        raise
    return database


def _sqlite_usable() -> DoctorResult:
    """Check that the SQLite library linked into this Python supports the store."""
    import sqlite3

    from psych_store_sqlite._connection import MINIMUM_SQLITE

    needed = ".".join(map(str, MINIMUM_SQLITE))
    if sqlite3.sqlite_version_info < MINIMUM_SQLITE:
        return DoctorResult(
            False,
            f"Python is linked against SQLite {sqlite3.sqlite_version}; psych-store-sqlite "
            f"needs {needed} or newer (use a newer Python build)",
        )
    return DoctorResult(True, f"SQLite {sqlite3.sqlite_version} (needs {needed} or newer)")


psych_register_stores, psych_register_memory_stores = offer_store_and_memory(
    StoreBackend(
        name="sqlite",
        schemes=("sqlite",),
        open=open_sqlite_store,
        package=_PACKAGE,
        description="Durable store in one SQLite file; several processes may share it.",
    ),
    memory=open_sqlite_memory_store,
    memory_description="Facts about end users in the store's SQLite file.",
)

psych_doctor_checks = offer_doctor_checks(DoctorCheck("sqlite store", _sqlite_usable))
