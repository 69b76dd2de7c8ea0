"""Entry point: registers the MySQL / MariaDB Store under ``mysql://`` and ``mariadb://``.

Importing this module is cheap: it imports neither the store nor aiomysql. Both load
when somebody opens a store with one of these schemes.
"""

from typing import TYPE_CHECKING

from psych_runtime.adapters import (
    StoreBackend,
    import_check,
    offer_doctor_checks,
    offer_stores,
)

if TYPE_CHECKING:
    from psych_store_mysql.store import MySQLStore

PSYCH_PLUGIN_API = 1

_PACKAGE = "psych-store-mysql"


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


psych_register_stores = offer_stores(
    StoreBackend(
        name="mysql",
        schemes=("mysql", "mariadb"),
        open=open_mysql_store,
        package=_PACKAGE,
        description="Durable store on MySQL 8 or MariaDB 10.6+ (aiomysql).",
    )
)

psych_doctor_checks = offer_doctor_checks(
    import_check(
        "mysql store",
        "aiomysql",
        ok="aiomysql importable (mysql:// and mariadb:// URLs)",
        missing="cannot import aiomysql: {error}; pip install psych-store-mysql",
    )
)
