"""A durable Psych Runtime Store in one SQLite file: no server, nothing to install.

Installing the package registers the ``sqlite`` scheme with psych-runtime, so
``open_store`` finds it. ``SqliteStore`` can also be built directly; it is loaded on
first access, so importing this package (or its plugin module) never imports sqlite3.

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

from psych_store_sqlite._version import __version__

if TYPE_CHECKING:
    from psych_store_sqlite.store import SqliteStore as SqliteStore


def __getattr__(name: str) -> object:
    """Load ``SqliteStore`` (and with it sqlite3) only when someone asks for it."""
    if name == "SqliteStore":
        from psych_store_sqlite.store import SqliteStore

        return SqliteStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["SqliteStore", "__version__"]
