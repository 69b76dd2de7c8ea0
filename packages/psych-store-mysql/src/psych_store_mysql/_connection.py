"""The only module that touches aiomysql, imported on first use.

aiomysql and PyMySQL ship no type information, so this module describes the small part
of them the store uses as Protocols and hands out typed views. Driver exceptions are
translated into the store's own errors by ``errors``.
"""

import importlib
from collections.abc import Awaitable
from collections.abc import Sequence
from typing import Protocol
from typing import cast

from psych_store_mysql.errors import is_driver_error
from psych_store_mysql.errors import translate
from psych_store_mysql.settings import MySQLSettings

Row = tuple[object, ...]

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


__all__ = [
    "Connection",
    "Cursor",
    "Pool",
    "Row",
    "connect",
    "create_pool",
]
