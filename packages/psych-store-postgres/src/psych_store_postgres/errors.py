"""The translation of driver errors into the port's.

Callers of a Store handle ``psych_runtime`` errors only; nothing asyncpg-specific may
escape. Translation needs the driver's exception classes, so it imports asyncpg, but
only when an error is actually being translated (the driver is loaded by then).
"""

from psych_runtime import StoreUnavailable


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
        pg.IdleSessionTimeoutError,
        pg.TooManyConnectionsError,
        # The client side of a connection that broke under an operation: its protocol
        # is stuck mid-reply ("another operation is in progress"), or it is closed.
        pg.InternalClientError,
        pg.InterfaceError,
    )


def _not_connection_error_types() -> tuple[type[BaseException], ...]:
    import asyncpg.exceptions as pg

    return (
        # Raised before anything is sent: our arguments, not the connection.
        pg.DataError,
        pg.ClientConfigurationError,
        pg.UnsupportedClientFeatureError,
        pg.UnsupportedServerFeatureError,
        # asyncpg's signal to re-prepare after a schema change; the connection is fine.
        pg.OutdatedSchemaCacheError,
    )


def _refused_for_now_types() -> tuple[type[BaseException], ...]:
    import asyncpg.exceptions as pg

    return (
        # Class 57: an operator or the server ended the session or the statement
        # (pg_terminate_backend, shutdown, crash recovery, statement cancelled).
        pg.OperatorInterventionError,
        # Class 53: out of connections, memory or disk; class 58: an I/O error.
        pg.InsufficientResourcesError,
        pg.PostgresSystemError,
        # Class 40: the transaction was rolled back whole (deadlock, serialization).
        pg.TransactionRollbackError,
        # A standby reached during a failover.
        pg.ReadOnlySQLTransactionError,
    )


def is_connection_error(exc: BaseException) -> bool:
    """Whether ``exc`` means the connection it came from can no longer be trusted.

    The connection is then discarded rather than handed out again, and the error is
    reported as ``StoreUnavailable``.
    """
    return isinstance(exc, _connection_error_types()) and not isinstance(
        exc, _not_connection_error_types()
    )


def is_unavailable(exc: BaseException) -> bool:
    """Whether ``exc`` means the server is gone or refusing for now, not that we erred.

    Such an error is reported as ``StoreUnavailable`` (nothing of the statement took
    effect, or the outcome is unknown); anything else (a constraint, a bug in a query)
    propagates unchanged so it is not mistaken for an outage.
    """
    return is_connection_error(exc) or isinstance(exc, _refused_for_now_types())


def unavailable(address: str, exc: BaseException, *, connecting: bool) -> StoreUnavailable:
    """A ``StoreUnavailable`` naming where the store points, never the password."""
    if connecting:
        action = "cannot connect to"
    elif is_connection_error(exc):
        action = "lost the connection to"
    else:
        action = "the statement was refused for now by"
    detail = str(exc) or type(exc).__name__
    return StoreUnavailable(f"{action} PostgreSQL at {address}: {detail}")


__all__ = ["is_connection_error", "is_unavailable", "unavailable"]
