"""The store's connection pool: lean, and never handing out a connection left in doubt.

Every store call borrows one connection for one statement, so the pool sits on the
hot path of every append. asyncpg's own pool costs about 60 microseconds a call on top
of the statement (its release goes through ``asyncio.shield``, a task of its own, and
its acquire through a queue and a timeout wrapper), which is a sixth of a commit on a
local server. This pool does the least that is needed instead: idle connections on a
stack (the most recently used first, so the rest can age out), and callers queued
first come, first served. A caller who finds none idle waits for whichever comes
first: a connection given back by another caller (statements are short, so usually
within a millisecond) or, while the pool is below its size, one opened for it in the
background (tens of milliseconds). A burst therefore never waits for a connection to
be opened when one is about to come free, and the pool still grows to meet it.

A connection is closed rather than given back when its call failed on the connection
itself (the server ended the session, the socket broke) or was cancelled while the
server was still answering: such a connection may still be mid-reply, and the next
call on it would fail with a confusing client error ("another operation is in
progress"). The store leaves no session state on a pooled connection (no LISTEN, no
advisory lock, no SET; a transaction is always closed by its block), so nothing is
reset between borrowers.
"""

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING
from typing import Any
from typing import TypeVar

from psych_store_postgres.errors import is_unavailable

if TYPE_CHECKING:
    import asyncpg

_T = TypeVar("_T")

IDLE_SECONDS = 300.0
"""How long a connection beyond ``min_size`` may sit idle before it is closed."""


class PoolClosed(Exception):
    """The pool was closed while a caller waited for a connection."""


class GuardedPool:
    """A bounded pool of connections, each lent to one caller at a time.

    Args:
        connect: opens a new connection, ready for use (settings applied, initialised).
        min_size: connections kept open even when idle (opened by ``start``).
        max_size: the most connections open at once.
    """

    def __init__(
        self,
        connect: Callable[[], Awaitable["asyncpg.Connection"]],
        *,
        min_size: int,
        max_size: int,
    ) -> None:
        self._connect = connect
        self._min = min_size
        self._max = max_size
        self._idle: list[tuple[asyncpg.Connection, float]] = []
        self._open = 0
        """Connections open or being opened, idle or lent."""
        self._lent = 0
        self._waiters: deque[asyncio.Future[asyncpg.Connection]] = deque()
        self._closed = False
        self._drained: asyncio.Event | None = None

    @property
    def size(self) -> int:
        """Connections open or being opened right now."""
        return self._open

    @property
    def idle(self) -> int:
        """Connections open and not lent."""
        return len(self._idle)

    async def start(self) -> None:
        """Open ``min_size`` connections (the first failure is raised)."""
        opened = await asyncio.gather(
            *(self._open_one() for _ in range(self._min - self._open)), return_exceptions=True
        )
        for item in opened:
            if isinstance(item, BaseException):
                raise item
            self._give_back(item)

    async def _open_one(self) -> "asyncpg.Connection":
        self._open += 1
        try:
            return await self._connect()
        except BaseException:
            self._open -= 1
            raise

    def _open_in_background(self) -> None:
        """Open one more connection for whoever is waiting first when it is ready."""
        self._open += 1
        opening = asyncio.ensure_future(self._connect())
        opening.add_done_callback(self._opened)

    def _opened(self, opening: "asyncio.Future[asyncpg.Connection]") -> None:
        if opening.cancelled() or opening.exception() is not None:
            self._open -= 1
            error = PoolClosed("the pool is closed") if opening.cancelled() else opening.exception()
            # The first waiter hears why (a server that is down must not leave callers
            # waiting for ever); the others keep waiting for a connection coming back.
            while self._waiters:
                waiter = self._waiters.popleft()
                if not waiter.done():
                    assert error is not None
                    waiter.set_exception(error)
                    break
            if self._drained is not None and self._open == 0:
                self._drained.set()
            return
        self._give_back(opening.result())

    async def _take(self) -> "asyncpg.Connection":
        if self._closed:
            raise PoolClosed("the pool is closed")
        while self._idle:
            conn, _ = self._idle.pop()
            if not conn.is_closed():
                return conn
            self._open -= 1
        # None idle. Wait for whichever comes first: a connection given back (calls
        # are short, so usually within a millisecond) or, while the pool may grow, a
        # new one opened for this caller (tens of milliseconds, more under load).
        if self._open < self._max and len(self._waiters) >= self._opening():
            self._open_in_background()
        waiter: asyncio.Future[asyncpg.Connection] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            return await waiter
        except BaseException:
            if waiter.done() and not waiter.cancelled() and waiter.exception() is None:
                # Cancelled just after being handed a connection: pass it on.
                self._give_back(waiter.result())
            else:
                with contextlib.suppress(ValueError):
                    self._waiters.remove(waiter)
            raise

    def _opening(self) -> int:
        """Connections being opened right now (counted in ``size``, neither idle nor lent)."""
        return self._open - self._lent - len(self._idle)

    def _give_back(self, conn: "asyncpg.Connection") -> None:
        if conn.is_closed() or self._closed:
            self._discard(conn)
            return
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(conn)
                return
        now = time.monotonic()
        self._idle.append((conn, now))
        self._expire_idle(now)

    def _expire_idle(self, now: float) -> None:
        """Close the longest-idle connections beyond ``min_size`` (they sit at the bottom)."""
        while self._idle and self._open > self._min and now - self._idle[0][1] > IDLE_SECONDS:
            conn, _ = self._idle.pop(0)
            self._discard(conn)

    def _discard(self, conn: "asyncpg.Connection") -> None:
        with contextlib.suppress(Exception):
            conn.terminate()
        self._open -= 1
        if self._waiters and not self._closed and self._open < self._max:
            self._open_in_background()  # a slot came free while callers wait
        if self._drained is not None and self._open == 0:
            self._drained.set()

    @asynccontextmanager
    async def acquire(self) -> AsyncIterator["asyncpg.Connection"]:
        """Lend a connection; one that failed or was cancelled in use is closed, not kept."""
        conn = await self._take()
        self._lent += 1
        try:
            yield conn
        except BaseException as exc:
            self._lent -= 1
            if not isinstance(exc, Exception) or is_unavailable(exc):
                # Cancelled mid-call or broken: it may still be mid-reply.
                self._discard(conn)
            else:
                self._give_back(conn)
            raise
        self._lent -= 1
        self._give_back(conn)

    async def _use(self, work: Callable[["asyncpg.Connection"], Awaitable[_T]]) -> _T:
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
        """Close every connection, waiting for those lent out to come back."""
        self._closed = True
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_exception(PoolClosed("the pool is closed"))
        self._waiters.clear()
        idle, self._idle = self._idle, []
        for conn, _ in idle:
            with contextlib.suppress(Exception):
                await conn.close(timeout=2.0)
            self._open -= 1
        if self._open > 0:
            self._drained = asyncio.Event()
            await self._drained.wait()


__all__ = ["IDLE_SECONDS", "GuardedPool", "PoolClosed"]
