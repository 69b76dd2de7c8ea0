"""A durable Psych Runtime Store in one SQLite file: no server, nothing to install.

Installing the package registers the ``sqlite`` scheme with psych-runtime, so
``open_store`` and ``open_memory_store`` find it. ``SqliteStore`` and
``SqliteMemoryStore`` can also be built directly; they are loaded on first access, so
importing this package (or its plugin module) never imports sqlite3.

Example::

    import asyncio
    import tempfile

    import psych_runtime


    async def main() -> None:
        with tempfile.TemporaryDirectory() as folder:
            # Four slashes: an absolute path. sqlite:///psych.db is relative to the CWD.
            store = await psych_runtime.open_store(f"sqlite:///{folder}/psych.db", migrate=True)
            try:
                assert await store.head(psych_runtime.RunId("no-such-run")) == 0
            finally:
                await store.close()


    asyncio.run(main())
"""

from typing import TYPE_CHECKING

from psych_runtime.adapters.plugins import lazy_exports
from psych_store_sqlite._version import __version__

if TYPE_CHECKING:
    from psych_store_sqlite.memory import SqliteMemoryStore as SqliteMemoryStore
    from psych_store_sqlite.settings import SqliteSettings as SqliteSettings
    from psych_store_sqlite.store import SqliteStore as SqliteStore

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "SqliteStore": "psych_store_sqlite.store",
        "SqliteMemoryStore": "psych_store_sqlite.memory",
        "SqliteSettings": "psych_store_sqlite.settings",
    },
)

__all__ = [
    "SqliteMemoryStore",
    "SqliteSettings",
    "SqliteStore",
    "__version__",
]
