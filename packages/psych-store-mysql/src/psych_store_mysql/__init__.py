"""A durable Psych Runtime Store and MemoryStore on MySQL 8 or MariaDB 10.6+.

Example:
    >>> import psych_store_mysql
    >>> store = psych_store_mysql.MySQLStore(
    ...     "mysql://app:secret@db.internal:3306/agents?table_prefix=prod_"
    ... )
    >>> store.tables.runs
    'prod_psych_runs'

    Nothing connects until the first call; then, in an async function::

        await store.migrate()   # once per deployment; safe to repeat
        ...
        await store.close()

    or let the plugin pick it by URL scheme::

        store = await psych_runtime.open_store("mariadb://app@db/agents", migrate=True)

    The facts kept about end users live in the same database: open them with
    ``psych_store_mysql.MySQLMemoryStore(url)`` or
    ``await psych_runtime.open_memory_store(url)``.

Importing this package is cheap: the store module and the aiomysql driver load on
first use.
"""

from typing import TYPE_CHECKING

from psych_runtime.adapters.plugins import lazy_exports
from psych_store_mysql._version import __version__

if TYPE_CHECKING:
    from psych_store_mysql.memory import MySQLMemoryStore as MySQLMemoryStore
    from psych_store_mysql.settings import MySQLSettings as MySQLSettings
    from psych_store_mysql.store import MySQLStore as MySQLStore

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "MySQLStore": "psych_store_mysql.store",
        "MySQLMemoryStore": "psych_store_mysql.memory",
        "MySQLSettings": "psych_store_mysql.settings",
    },
)

__all__ = [
    "MySQLMemoryStore",
    "MySQLSettings",
    "MySQLStore",
    "__version__",
]
