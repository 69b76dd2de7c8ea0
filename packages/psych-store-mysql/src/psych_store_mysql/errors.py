"""Translating driver errors into the port's errors.

Callers of a Store handle ``psych_runtime`` errors only: nothing PyMySQL raises may
escape. The driver's exception classes are looked up when an error is being examined,
so importing this module never imports the driver.
"""

import importlib
from types import ModuleType

import psych_runtime
from psych_store_mysql.settings import MySQLSettings

DUPLICATE_KEY = 1062
"""ER_DUP_ENTRY: a PRIMARY KEY or UNIQUE constraint refused the row."""
LOCK_WAIT_TIMEOUT = 1205
DEADLOCK = 1213
NO_SUCH_TABLE = 1146
PACKET_TOO_LARGE = 1153
_RETRYABLE = frozenset({DEADLOCK, LOCK_WAIT_TIMEOUT})
_UNAVAILABLE = frozenset(
    {
        1040,  # too many connections
        1045,  # access denied
        1049,  # unknown database
        1053,  # server shutting down
        1129,  # host blocked
        1317,  # statement interrupted (KILL QUERY, a server timeout): nothing took effect
        1927,  # connection killed (MariaDB)
        4031,  # the server closed an idle session (MySQL 8)
        PACKET_TOO_LARGE,  # the server drops the connection after this one
    }
)


def _pymysql_errors() -> ModuleType:
    """PyMySQL's exception module (aiomysql raises PyMySQL's exceptions)."""
    return importlib.import_module("pymysql.err")


def error_code(exc: BaseException) -> int | None:
    """The MySQL error number carried by a driver exception, if any."""
    if not isinstance(exc, _pymysql_errors().MySQLError):
        return None
    code = exc.args[0] if exc.args else None
    return code if isinstance(code, int) else None


def is_driver_error(exc: BaseException) -> bool:
    """Whether ``exc`` came from the driver (or the socket under it)."""
    return isinstance(exc, _pymysql_errors().MySQLError | OSError)


def is_retryable(exc: BaseException) -> bool:
    """A deadlock or lock wait timeout: the whole transaction was rolled back."""
    return error_code(exc) in _RETRYABLE


def connection_lost(exc: BaseException) -> bool:
    """Whether the connection can no longer be trusted after ``exc``.

    Besides the client's and the server's connection error numbers, this covers the
    driver's own protocol errors that carry no number ("Packet sequence number
    wrong"): the reply stream is out of step, so the connection is as good as lost.
    """
    driver = _pymysql_errors()
    if isinstance(exc, OSError | driver.InterfaceError):
        return True
    if isinstance(exc, driver.InternalError) and error_code(exc) is None:
        return True
    code = error_code(exc)
    return code is not None and (2000 <= code < 3000 or code in _UNAVAILABLE)


def translate(exc: BaseException, settings: MySQLSettings, doing: str) -> Exception:
    """A store error describing a driver error, naming the server but never the password.

    Lost or refused connections become ``StoreUnavailable``, and so does contention
    that outlasted the store's own retries (a deadlock or lock wait timeout rolls the
    whole transaction back, so nothing landed and trying again later is safe);
    anything else the server refused becomes a plain ``StoreError``.
    """
    detail = _message(exc)
    if connection_lost(exc):
        return psych_runtime.StoreUnavailable(
            f"{settings.where} is unavailable ({doing} failed): {detail}"
        )
    if is_retryable(exc):
        return psych_runtime.StoreUnavailable(
            f"{settings.where} is busy ({doing} kept meeting lock contention): {detail}"
        )
    return psych_runtime.StoreError(f"{settings.where}: {doing} failed: {detail}")


def _message(exc: BaseException) -> str:
    """The driver's own words plus the socket error underneath, if there is one."""
    parts = [f"{type(exc).__name__}: {exc}"]
    cause = exc.__cause__
    if cause is not None:
        parts.append(f"{type(cause).__name__}: {cause}")
    return " <- ".join(parts)


__all__ = [
    "DEADLOCK",
    "DUPLICATE_KEY",
    "LOCK_WAIT_TIMEOUT",
    "NO_SUCH_TABLE",
    "PACKET_TOO_LARGE",
    "connection_lost",
    "error_code",
    "is_driver_error",
    "is_retryable",
    "translate",
]
