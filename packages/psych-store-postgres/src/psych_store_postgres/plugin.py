"""Registers ``postgresql://`` and ``postgres://`` with Psych Runtime's plugin manager.

psych-runtime finds this module through the ``psych_runtime`` entry point. Loading it
costs almost nothing: it imports neither asyncpg nor the store, only describes the
backend. The driver is loaded when a store is first opened.

Options accepted by ``psych_runtime.open_store(url, **options)`` for these schemes:
``schema``, ``min_size``, ``max_size``, ``listen``, ``liveness_locks`` and
``connect_timeout`` (see ``PostgresStore``). ``open_store(url, migrate=True)`` runs
``await store.migrate()`` before returning the store; migration is never automatic
otherwise, because it needs DDL rights the application's role may (rightly) lack.
"""

from collections.abc import Callable
from typing import TYPE_CHECKING

from psych_runtime.adapters import DoctorCheck, StoreBackend, hookimpl, import_check

if TYPE_CHECKING:
    from psych_store_postgres.store import PostgresStore

PSYCH_PLUGIN_API = 1

_PACKAGE = "psych-store-postgres"
_OPTIONS = frozenset(
    {"schema", "min_size", "max_size", "listen", "liveness_locks", "connect_timeout"}
)


async def open_postgres_store(url: str, **options: object) -> "PostgresStore":
    """Build a ``PostgresStore`` for ``url``; it connects on first use.

    Raises:
        TypeError: an option this store does not know was given.
        InvalidStoreUrl: the URL or an option value is malformed.
    """
    unknown = sorted(set(options) - _OPTIONS)
    if unknown:
        raise TypeError(
            f"unknown option(s) for the PostgreSQL store: {', '.join(unknown)}; "
            f"known: {', '.join(sorted(_OPTIONS))}"
        )
    from psych_store_postgres.store import PostgresStore

    store = PostgresStore(
        url,
        schema=_optional(options, "schema", str),
        min_size=_optional(options, "min_size", int),
        max_size=_optional(options, "max_size", int),
        listen=_optional(options, "listen", bool),
        liveness_locks=_optional(options, "liveness_locks", bool),
        connect_timeout=float(_optional(options, "connect_timeout", float) or 10.0),
    )
    return store


def _optional[T](options: dict[str, object], name: str, kind: type[T]) -> T | None:
    """The option ``name`` if given, checked against ``kind`` (an int passes as a float)."""
    value = options.get(name)
    if value is None:
        return None
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise TypeError(f"option {name} must be {kind.__name__}, got {value!r}")
    return value


@hookimpl
def psych_register_stores(register: Callable[[StoreBackend], None]) -> None:
    """Offer the PostgreSQL Store under ``postgresql://`` and ``postgres://``."""
    register(
        StoreBackend(
            name="postgres",
            schemes=("postgresql", "postgres"),
            open=open_postgres_store,
            package=_PACKAGE,
            description="Durable store on PostgreSQL (asyncpg), with LISTEN/NOTIFY wake-ups.",
        )
    )


@hookimpl
def psych_doctor_checks(register: Callable[[DoctorCheck], None]) -> None:
    """Report whether the PostgreSQL driver can be imported."""
    register(
        import_check(
            "postgres store",
            "asyncpg",
            ok="asyncpg {version} available",
            missing="asyncpg cannot be imported ({error}); reinstall psych-store-postgres",
        )
    )
