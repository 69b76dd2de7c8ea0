"""The only module that touches aiomysql, imported on first use.

aiomysql and PyMySQL ship no type information, so this module describes the small part
of them the store uses as Protocols and hands out typed views. It also owns the
translation of driver exceptions into the store's own errors: nothing above this
module ever sees a PyMySQL exception.
"""

import importlib
from collections.abc import Awaitable, Sequence
from typing import Protocol, cast

import psych_runtime
from psych_store_mysql.settings import MySQLSettings

Row = tuple[object, ...]

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

SESSION_SQL_MODE = "'STRICT_ALL_TABLES,NO_ENGINE_SUBSTITUTION'"
"""Strict mode turns silent truncation into an error; quoted as aiomysql pastes it in."""
SESSION_INIT = "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED"
"""Run on every new connection: each statement sees the latest committed rows."""


class Cursor(Protocol):
    """The slice of ``aiomysql.Cursor`` the store uses."""

    @property
    def rowcount(self) -> int:
        """Rows matched (FOUND_ROWS is on) or inserted by the current result."""
        ...

    @property
    def description(self) -> Sequence[Row] | None:
        """Column descriptions, or None when the current result has no rows."""
        ...

    def mogrify(self, query: str, args: Sequence[object]) -> str:
        """The statement with every ``%s`` replaced by an escaped literal."""
        ...

    async def execute(self, query: str) -> int:
        """Send SQL text as it is and read the first result."""
        ...

    async def fetchall(self) -> Sequence[Row]:
        """Every row of the current result."""
        ...

    async def nextset(self) -> bool | None:
        """Advance to the next result of a multi-statement query."""
        ...

    async def close(self) -> None:
        """Drain unread results."""
        ...


class Connection(Protocol):
    """The slice of ``aiomysql.Connection`` the store uses."""

    @property
    def closed(self) -> bool:
        """Whether the socket is gone."""
        ...

    def cursor(self) -> Awaitable[Cursor]:
        """A new cursor on this connection."""
        ...

    async def rollback(self) -> None:
        """End the open transaction, discarding its writes."""
        ...

    def close(self) -> None:
        """Drop the socket without a goodbye; used when the state is unknown."""
        ...

    async def ensure_closed(self) -> None:
        """Say goodbye to the server, then drop the socket."""
        ...


class Pool(Protocol):
    """The slice of ``aiomysql.Pool`` the store uses."""

    def acquire(self) -> Awaitable[Connection]:
        """Wait for a free connection, opening one when below the maximum."""
        ...

    def release(self, conn: Connection) -> Awaitable[None]:
        """Give a connection back (closed ones are forgotten)."""
        ...

    async def clear(self) -> None:
        """Politely close every idle connection."""
        ...

    def close(self) -> None:
        """Refuse new acquisitions; connections close as they come back."""
        ...

    async def wait_closed(self) -> None:
        """Wait until every connection is closed."""
        ...


class _Aiomysql(Protocol):
    MySQLError: type[Exception]
    InterfaceError: type[Exception]
    OperationalError: type[Exception]

    def create_pool(self, **kwargs: object) -> Awaitable[Pool]: ...

    def connect(self, **kwargs: object) -> Awaitable[Connection]: ...


class _ClientFlags(Protocol):
    FOUND_ROWS: int


def _aiomysql() -> _Aiomysql:
    return cast(_Aiomysql, importlib.import_module("aiomysql"))


def _connect_kwargs(settings: MySQLSettings) -> dict[str, object]:
    """Arguments shared by pooled and one-off connections."""
    flags = cast(_ClientFlags, importlib.import_module("pymysql.constants.CLIENT"))
    return {
        "host": settings.host,
        "port": settings.port,
        "user": settings.user,
        "password": settings.password,
        "db": settings.database,
        "unix_socket": settings.unix_socket,
        "ssl": settings.ssl,
        "charset": "utf8mb4",
        "autocommit": True,
        "sql_mode": SESSION_SQL_MODE,
        "init_command": SESSION_INIT,
        # Report rows matched rather than rows changed, so renewing a lease to the
        # same expiry still counts as success.
        "client_flag": flags.FOUND_ROWS,
        "connect_timeout": settings.connect_timeout,
    }


async def create_pool(settings: MySQLSettings) -> Pool:
    """Open the connection pool, translating connection failures.

    Raises:
        StoreUnavailable: the server could not be reached or refused the login.
    """
    driver = _aiomysql()
    try:
        return await driver.create_pool(
            minsize=settings.pool_min_size,
            maxsize=settings.pool_max_size,
            pool_recycle=settings.pool_recycle,
            **_connect_kwargs(settings),
        )
    except Exception as exc:
        if is_driver_error(exc):
            raise translate(exc, settings, "connecting") from exc
        raise


async def connect(settings: MySQLSettings) -> Connection:
    """Open one unpooled connection (tests and tooling use it to inspect or clean up).

    Raises:
        StoreUnavailable: the server could not be reached or refused the login.
    """
    try:
        return await _aiomysql().connect(**_connect_kwargs(settings))
    except Exception as exc:
        if is_driver_error(exc):
            raise translate(exc, settings, "connecting") from exc
        raise


def error_code(exc: BaseException) -> int | None:
    """The MySQL error number carried by a driver exception, if any."""
    if not isinstance(exc, _aiomysql().MySQLError):
        return None
    code = exc.args[0] if exc.args else None
    return code if isinstance(code, int) else None


def is_driver_error(exc: BaseException) -> bool:
    """Whether ``exc`` came from the driver (or the socket under it)."""
    return isinstance(exc, _aiomysql().MySQLError | OSError)


def is_retryable(exc: BaseException) -> bool:
    """A deadlock or lock wait timeout: the whole transaction was rolled back."""
    return error_code(exc) in _RETRYABLE


def connection_lost(exc: BaseException) -> bool:
    """Whether the connection can no longer be trusted after ``exc``.

    Besides the client's and the server's connection error numbers, this covers the
    driver's own protocol errors that carry no number ("Packet sequence number
    wrong"): the reply stream is out of step, so the connection is as good as lost.
    """
    driver = _aiomysql()
    if isinstance(exc, OSError | driver.InterfaceError):
        return True
    internal: type[Exception] = importlib.import_module("pymysql.err").InternalError
    if isinstance(exc, internal) and error_code(exc) is None:
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
    "DUPLICATE_KEY",
    "NO_SUCH_TABLE",
    "Connection",
    "Cursor",
    "Pool",
    "Row",
    "connect",
    "connection_lost",
    "create_pool",
    "error_code",
    "is_driver_error",
    "is_retryable",
    "translate",
]
