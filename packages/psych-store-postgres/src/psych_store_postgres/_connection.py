"""The store's connection pool, which never hands out a connection left in doubt.

asyncpg returns a connection to its pool after a failed or cancelled call. When the
failure was the connection itself (the server ended the session, the socket broke) or
the call was cancelled while the server was still answering, that connection may still
be mid-reply: the next call on it then fails with a confusing client error ("another
operation is in progress") instead of working. The store also skips asyncpg's reset
query on release, so nothing would notice. This wrapper closes such a connection
instead of returning it; the pool opens a fresh one on demand.
"""

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from psych_store_postgres.errors import is_unavailable

if TYPE_CHECKING:
    import asyncpg
    from asyncpg.pool import PoolConnectionProxy

_T = TypeVar("_T")


class GuardedPool:
    """The few ``asyncpg.Pool`` calls the store makes, discarding doubtful connections.

    Args:
        pool: the asyncpg pool to borrow connections from.
    """

    def __init__(self, pool: "asyncpg.Pool") -> None:
        self._pool = pool

    @asynccontextmanager
    async def acquire(self) -> AsyncIterator["PoolConnectionProxy[asyncpg.Record]"]:
        """Lend a connection; one that failed or was cancelled in use is closed, not kept."""
        async with self._pool.acquire() as conn:
            try:
                yield conn
            except BaseException as exc:
                if not isinstance(exc, Exception) or is_unavailable(exc):
                    # Cancelled mid-call or broken: it may still be mid-reply. A
                    # connection asyncpg already dropped is detached from its proxy and
                    # refuses the call, which is as good.
                    with contextlib.suppress(Exception):
                        conn.terminate()
                raise

    async def _use(
        self, work: Callable[["PoolConnectionProxy[asyncpg.Record]"], Awaitable[_T]]
    ) -> _T:
        async with self.acquire() as conn:
            return await work(conn)

    async def fetchval(self, query: str, *args: Any) -> Any:
        """``Connection.fetchval`` on a borrowed connection."""
        return await self._use(lambda conn: conn.fetchval(query, *args))

    async def fetchrow(self, query: str, *args: Any) -> "asyncpg.Record | None":
        """``Connection.fetchrow`` on a borrowed connection."""
        return await self._use(lambda conn: conn.fetchrow(query, *args))

    async def fetch(self, query: str, *args: Any) -> "list[asyncpg.Record]":
        """``Connection.fetch`` on a borrowed connection."""
        return await self._use(lambda conn: conn.fetch(query, *args))

    async def execute(self, query: str, *args: Any) -> str:
        """``Connection.execute`` on a borrowed connection."""
        return await self._use(lambda conn: conn.execute(query, *args))

    async def close(self) -> None:
        """Close every connection, waiting for those in use to come back."""
        await self._pool.close()


__all__ = ["GuardedPool"]
