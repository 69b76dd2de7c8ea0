"""Entry point: registers the MySQL / MariaDB backends under ``mysql://`` and ``mariadb://``.

Both schemes open two backends: ``open_store`` gets a ``MySQLStore`` and
``open_memory_store`` a ``MySQLMemoryStore`` for the same URL, so the Runs and the
facts of a deployment share one database and table prefix.

Importing this module is cheap: it imports neither the stores nor aiomysql. They load
when somebody opens a store with one of these schemes.
"""

from typing import TYPE_CHECKING

from psych_runtime.adapters.plugins import StoreBackend
from psych_runtime.adapters.plugins import import_check
from psych_runtime.adapters.plugins import offer_doctor_checks
from psych_runtime.adapters.plugins import offer_store_and_memory

if TYPE_CHECKING:
    from psych_store_mysql.memory import MySQLMemoryStore
    from psych_store_mysql.store import MySQLStore

PSYCH_PLUGIN_API = 1

_PACKAGE = "psych-store-mysql"
_SCHEMES = ("mysql", "mariadb")


async def open_mysql_store(url: str, **options: object) -> "MySQLStore":
    """Build a MySQLStore for ``url``; it connects on first use.

    Migrating is opt-in because it needs DDL privileges that a Worker's database account
    often lacks; run it once per deployment (``psych_runtime.open_store(url,
    migrate=True)``) from a process that has them. Without it the store checks the
    schema version on first use and refuses a database that is behind or ahead.

    Raises:
        InvalidStoreUrl: the URL or an option is malformed.
        TypeError: an option this store does not know.
    """
    from psych_store_mysql.store import MySQLStore  # deferred: keeps plugin loading cheap

    return MySQLStore(url, **options)


async def open_mysql_memory_store(url: str, **options: object) -> "MySQLMemoryStore":
    """Build a MySQLMemoryStore for ``url``; it connects on first use.

    As for ``open_mysql_store``, migrating is opt-in
    (``psych_runtime.open_memory_store(url, migrate=True)``); it creates every table of
    the prefix, the Runs' as well as the facts'.

    Raises:
        InvalidStoreUrl: the URL or an option is malformed.
        TypeError: an option this store does not know.
    """
    from psych_store_mysql.memory import MySQLMemoryStore  # deferred: keeps loading cheap

    return MySQLMemoryStore(url, **options)


psych_register_stores, psych_register_memory_stores = offer_store_and_memory(
    StoreBackend(
        name="mysql",
        schemes=_SCHEMES,
        open=open_mysql_store,
        package=_PACKAGE,
        description="Durable store on MySQL 8 or MariaDB 10.6+ (aiomysql).",
    ),
    memory=open_mysql_memory_store,
    memory_description="Facts about end users in the store's MySQL / MariaDB database.",
)

psych_doctor_checks = offer_doctor_checks(
    import_check(
        "mysql store",
        "aiomysql",
        ok="aiomysql importable (mysql:// and mariadb:// URLs)",
        missing="cannot import aiomysql: {error}; pip install psych-store-mysql",
    )
)
