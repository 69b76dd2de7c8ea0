"""Registers ``postgresql://`` and ``postgres://`` with Psych Runtime's plugin manager.

psych-runtime finds this module through the ``psych_runtime`` entry point. Loading it
costs almost nothing: it imports neither asyncpg nor the store, only describes the
backends. The driver is loaded when a store is first opened.

Both schemes serve two backends: ``open_store`` builds a ``PostgresStore`` and
``open_memory_store`` a ``PostgresMemoryStore``, so one URL reaches the Runs and the
facts about end users kept in the same schema.

Options accepted by ``psych_runtime.open_store(url, **options)`` for these schemes:
``schema``, ``min_size``, ``max_size``, ``listen``, ``liveness_locks`` and
``connect_timeout`` (see ``PostgresStore``). ``open_store(url, migrate=True)`` runs
``await store.migrate()`` before returning the store; migration is never automatic
otherwise, because it needs DDL rights the application's role may (rightly) lack.
``open_memory_store(url, migrate=True)`` does the same for the memory store; either
migration prepares the whole schema.
"""

from typing import TYPE_CHECKING

from psych_runtime.adapters.plugins import StoreBackend
from psych_runtime.adapters.plugins import import_check
from psych_runtime.adapters.plugins import offer_doctor_checks
from psych_runtime.adapters.plugins import offer_store_and_memory

if TYPE_CHECKING:
    from psych_store_postgres.memory import PostgresMemoryStore
    from psych_store_postgres.store import PostgresStore

PSYCH_PLUGIN_API = 1

_PACKAGE = "psych-store-postgres"


async def open_postgres_store(url: str, **options: object) -> "PostgresStore":
    """Build a ``PostgresStore`` for ``url``; it connects on first use.

    Raises:
        TypeError: an option this store does not know was given.
        InvalidStoreUrl: the URL or an option value is malformed.
    """
    from psych_store_postgres.store import PostgresStore

    return PostgresStore(url, **options)


async def open_postgres_memory_store(url: str, **options: object) -> "PostgresMemoryStore":
    """Build a ``PostgresMemoryStore`` for ``url``; it connects on first use.

    Takes the same URL and options as ``open_postgres_store``.

    Raises:
        TypeError: an option this store does not know was given.
        InvalidStoreUrl: the URL or an option value is malformed.
    """
    from psych_store_postgres.memory import PostgresMemoryStore

    return PostgresMemoryStore(url, **options)


psych_register_stores, psych_register_memory_stores = offer_store_and_memory(
    StoreBackend(
        name="postgres",
        schemes=("postgresql", "postgres"),
        open=open_postgres_store,
        package=_PACKAGE,
        description="Durable store on PostgreSQL (asyncpg), with LISTEN/NOTIFY wake-ups.",
    ),
    memory=open_postgres_memory_store,
    memory_description="Facts about end users in the store's PostgreSQL schema.",
)

psych_doctor_checks = offer_doctor_checks(
    import_check(
        "postgres store",
        "asyncpg",
        ok="asyncpg {version} available",
        missing="asyncpg cannot be imported ({error}); reinstall psych-store-postgres",
    )
)
