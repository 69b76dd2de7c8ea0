"""A bounded pool of open connections, keyed by everything that makes one reusable.

Whoever keys a pool decides who may share a connection; the tool sources that use one
(psych-mcp's ``McpTools``, psych-a2a's ``A2ATools``) key it by tenant, principal,
server or peer, URL and a digest of the credential, so one tenant's connection (and
the token it carries) is never handed to another. The pool itself only
keeps the promises every key needs:

* at most ``max_connections`` stay open: opening one more retires the least recently
  used (one still in use is closed when its last user lets go);
* a connection unused for ``idle_seconds`` is closed the next time the pool is used;
* a connection that reports itself broken is dropped and opened afresh on next use;
* callers asking for the same key at once share one opening;
* ``close`` closes everything, waiting for each connection to finish closing.

Connections are closed in tasks of their own, so a slow goodbye to one server never
holds up a call to another.
"""

import asyncio
import time
from collections import OrderedDict
from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Hashable
from contextlib import asynccontextmanager
from contextlib import suppress
from dataclasses import dataclass
from dataclasses import field
from typing import Protocol


class Poolable(Protocol):
    """What the pool needs of a connection."""

    @property
    def broken(self) -> bool:
        """Whether the connection can no longer be used."""
        ...

    async def close(self) -> None:
        """Close the connection; must return in bounded time and never raise."""
        ...


@dataclass(slots=True, eq=False)
class _Entry[C: Poolable]:
    connection: C
    last_used: float
    leases: int = 0
    retired: bool = field(default=False)


class ConnectionPool[K: Hashable, C: Poolable]:
    """Open connections by key, bounded in number and closed when idle.

    Args:
        max_connections: how many connections may stay open at once (at least 1).
        idle_seconds: how long an unused connection is kept.
        clock: seconds on a monotonic clock; tests pass a fake one.

    Raises:
        ValueError: ``max_connections`` is below 1 or ``idle_seconds`` is negative.
    """

    def __init__(
        self,
        *,
        max_connections: int = 64,
        idle_seconds: float = 300.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_connections < 1:
            raise ValueError(f"max_connections must be at least 1, got {max_connections}")
        if idle_seconds < 0:
            raise ValueError(f"idle_seconds may not be negative, got {idle_seconds}")
        self._max = max_connections
        self._idle = idle_seconds
        self._clock = clock
        self._entries: OrderedDict[K, _Entry[C]] = OrderedDict()
        self._opening: dict[K, asyncio.Future[_Entry[C]]] = {}
        self._closing: set[asyncio.Task[None]] = set()
        self._loop: asyncio.AbstractEventLoop | None = None

    def __len__(self) -> int:
        """How many connections are open and available."""
        return len(self._entries)

    def keys(self) -> tuple[K, ...]:
        """The keys of the open connections, least recently used first."""
        return tuple(self._entries)

    @asynccontextmanager
    async def lease(self, key: K, opener: Callable[[], Awaitable[C]]) -> AsyncIterator[C]:
        """Use the connection for ``key``, opening it with ``opener`` when there is none.

        A broken connection is dropped and a new one opened in its place. The
        connection stays the caller's to use until the block exits; eviction waits
        for that before closing it.

        Raises:
            Exception: whatever ``opener`` raised; nothing is pooled then.
        """
        self._bind_loop()
        self._expire_idle()
        entry = await self._entry_for(key, opener)
        entry.leases += 1
        try:
            yield entry.connection
        finally:
            entry.leases -= 1
            entry.last_used = self._clock()
            if entry.retired and entry.leases == 0:
                self._close_later(entry)

    def discard(self, key: K, connection: C) -> None:
        """Drop ``connection`` (it failed); the next lease of ``key`` opens a new one."""
        entry = self._entries.get(key)
        if entry is not None and entry.connection is connection:
            self._retire(key, entry)

    def drop(self, key: K) -> None:
        """Retire the connection of ``key``, if any: it closes once its last user lets go."""
        entry = self._entries.get(key)
        if entry is not None:
            self._retire(key, entry)

    async def close(self) -> None:
        """Close every connection and wait until each has closed.

        The pool stays usable: a later lease opens connections again.
        """
        for key, entry in list(self._entries.items()):
            self._retire(key, entry)
        while self._closing:
            await asyncio.gather(*list(self._closing), return_exceptions=True)

    async def _entry_for(self, key: K, opener: Callable[[], Awaitable[C]]) -> _Entry[C]:
        while True:
            entry = self._entries.get(key)
            if entry is not None and entry.connection.broken:
                self._retire(key, entry)
                entry = None
            if entry is not None:
                self._entries.move_to_end(key)
                return entry
            pending = self._opening.get(key)
            if pending is None:
                return await self._open(key, opener)
            # Someone else is opening it: share their connection (or their failure).
            with suppress(asyncio.CancelledError):
                return await asyncio.shield(pending)
            if not pending.cancelled():
                raise asyncio.CancelledError  # we were cancelled ourselves
            # Their opening was cancelled, not ours: try again.

    async def _open(self, key: K, opener: Callable[[], Awaitable[C]]) -> _Entry[C]:
        future: asyncio.Future[_Entry[C]] = asyncio.get_running_loop().create_future()
        self._opening[key] = future
        try:
            connection = await opener()
        except BaseException as error:
            if isinstance(error, asyncio.CancelledError):
                future.cancel()
            else:
                future.set_exception(error)
                future.exception()  # retrieved: nobody else may be waiting
            raise
        finally:
            self._opening.pop(key, None)
        entry = _Entry(connection, last_used=self._clock())
        self._entries[key] = entry
        self._evict_beyond_bound(keep=key)
        future.set_result(entry)
        return entry

    def _evict_beyond_bound(self, *, keep: K) -> None:
        while len(self._entries) > self._max:
            victim = next(k for k in self._entries if k != keep)
            self._retire(victim, self._entries[victim])

    def _expire_idle(self) -> None:
        now = self._clock()
        for key, entry in list(self._entries.items()):
            if entry.leases == 0 and now - entry.last_used > self._idle:
                self._retire(key, entry)

    def _retire(self, key: K, entry: _Entry[C]) -> None:
        if self._entries.get(key) is entry:
            del self._entries[key]
        if entry.retired:
            return
        entry.retired = True
        if entry.leases == 0:
            self._close_later(entry)

    def _close_later(self, entry: _Entry[C]) -> None:
        task = asyncio.get_running_loop().create_task(entry.connection.close())
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    def _bind_loop(self) -> None:
        """Forget connections opened on an event loop that is no longer the running one.

        They belong to tasks of the old loop and cannot be closed from this one.
        """
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            if self._loop is not None:
                self._entries.clear()
                self._opening.clear()
                self._closing.clear()
            self._loop = loop


__all__ = ["ConnectionPool", "Poolable"]
