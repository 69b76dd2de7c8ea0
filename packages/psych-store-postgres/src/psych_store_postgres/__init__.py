"""PostgreSQL Store for Psych Runtime.

Example:
    >>> import asyncio
    >>> import psych_runtime
    >>> async def main() -> int:
    ...     store = await psych_runtime.open_store(
    ...         "postgresql://postgres@127.0.0.1:5432/test?schema=psych_example",
    ...         migrate=True,
    ...     )
    ...     try:
    ...         return await store.head(psych_runtime.RunId("run_nobody"))
    ...     finally:
    ...         await store.close()
    >>> asyncio.run(main())
    0

Installing the package is enough for ``psych_runtime.open_store`` and
``psych_runtime.open_memory_store`` to accept ``postgresql://`` and ``postgres://``
URLs; ``PostgresStore`` and ``PostgresMemoryStore`` can also be built directly.
Importing this package does not import asyncpg: the driver loads when a store first
connects.
"""

from typing import TYPE_CHECKING

from psych_runtime.adapters.plugins import lazy_exports
from psych_store_postgres._version import __version__

if TYPE_CHECKING:
    from psych_store_postgres.memory import PostgresMemoryStore as PostgresMemoryStore
    from psych_store_postgres.settings import PostgresSettings as PostgresSettings
    from psych_store_postgres.store import PostgresStore as PostgresStore
    from psych_store_postgres.store import notify_channel as notify_channel

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "PostgresStore": "psych_store_postgres.store",
        "PostgresMemoryStore": "psych_store_postgres.memory",
        "PostgresSettings": "psych_store_postgres.settings",
        "notify_channel": "psych_store_postgres.store",
    },
)

__all__ = [
    "PostgresMemoryStore",
    "PostgresSettings",
    "PostgresStore",
    "__version__",
    "notify_channel",
]
