"""This store's own error, and the translation of driver errors into the port's.

Callers of a Store handle ``psych_runtime`` errors only; nothing asyncpg-specific may
escape. Translation needs the driver's exception classes, so it imports asyncpg, but
only when an error is actually being translated (the driver is loaded by then).
"""

from psych_runtime import StoreError, StoreUnavailable


class SchemaNotMigrated(StoreError):
    """The store's schema is missing or older than this release needs.

    Run ``await store.migrate()`` (or open the store with ``migrate=True``) once per
    deployment, from a process allowed to create tables.
    """


def _connection_error_types() -> tuple[type[BaseException], ...]:
    import asyncpg.exceptions as pg

    return (
        OSError,
        TimeoutError,
        pg.PostgresConnectionError,
        pg.AdminShutdownError,
        pg.CrashShutdownError,
        pg.CannotConnectNowError,
        pg.DatabaseDroppedError,
        pg.TooManyConnectionsError,
    )


def is_connection_error(exc: BaseException) -> bool:
    """Whether ``exc`` means the server (or the path to it) went away.

    Such an error is reported as ``StoreUnavailable``; anything else (a constraint, a
    bug in a query) propagates unchanged so it is not mistaken for an outage.
    """
    return isinstance(exc, _connection_error_types())


def unavailable(address: str, exc: BaseException, *, connecting: bool) -> StoreUnavailable:
    """A ``StoreUnavailable`` naming where the store points, never the password."""
    action = "cannot connect to" if connecting else "lost the connection to"
    detail = str(exc) or type(exc).__name__
    return StoreUnavailable(f"{action} PostgreSQL at {address}: {detail}")


__all__ = ["SchemaNotMigrated", "is_connection_error", "unavailable"]
