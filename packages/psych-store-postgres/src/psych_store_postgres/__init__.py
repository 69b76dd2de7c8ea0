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

Installing the package is enough for ``psych_runtime.open_store`` to accept
``postgresql://`` and ``postgres://`` URLs; ``PostgresStore`` can also be built
directly. Importing this package does not import asyncpg: the driver loads when a store
first connects.
"""

from psych_store_postgres._version import __version__
from psych_store_postgres.errors import SchemaNotMigrated
from psych_store_postgres.store import PostgresStore, notify_channel

__all__ = ["PostgresStore", "SchemaNotMigrated", "__version__", "notify_channel"]
