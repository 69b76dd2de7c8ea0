"""A durable Psych Runtime Store on MySQL 8 or MariaDB 10.6+.

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

Importing this package is cheap: the store module and the aiomysql driver load on
first use.
"""

from typing import TYPE_CHECKING

from psych_store_mysql._version import __version__

if TYPE_CHECKING:
    from psych_store_mysql.settings import MySQLSettings as MySQLSettings, parse_url as parse_url
    from psych_store_mysql.store import MySQLStore as MySQLStore

_EXPORTS = {
    "MySQLStore": "psych_store_mysql.store",
    "MySQLSettings": "psych_store_mysql.settings",
    "parse_url": "psych_store_mysql.settings",
}


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'psych_store_mysql' has no attribute {name!r}")
    import importlib

    value: object = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


__all__ = ["MySQLSettings", "MySQLStore", "__version__", "parse_url"]
