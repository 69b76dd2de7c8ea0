"""A bounded pool of per-peer connections, least recently used out first.

A connection here is an HTTP client bound to one tenant's egress judgement and one
credential, plus the peer's Agent Card as last fetched. Opening one for a key that is
already being opened waits for that opening rather than starting a second. Past
``max_connections`` the least recently used connection is retired; one unused for
``idle_seconds`` is retired on the next lease. A retired connection closes once its
last user lets go.
"""

import asyncio
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Protocol


class Poolable(Protocol):
    """What the pool needs of a connection."""

    @property
    def broken(self) -> bool:
        """Whether the connection can no longer be used."""
        ...

    async def close(self) -> None:
        """Release what the connection holds."""
        ...


@dataclass(slots=True)
class _Entry[C: Poolable]:
    connection: C
    last_used: float
    leases: int = 0
    retired: bool = False


class ConnectionPool[K: Hashable, C: Poolable]:
    """Connections by key, bounded in number and in idle time.

    Args:
        max_connections: how many stay open at once (at least 1).
        idle_seconds: how long an unused one stays open.
        clock: a monotonic clock; tests pass their own.

    Raises:
        ValueError: a bound is out of range.
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
        self._locks: dict[K, asyncio.Lock] = {}
        self._closing: set[asyncio.Task[None]] = set()

    def keys(self) -> tuple[K, ...]:
        """The keys of the open connections, least recently used first."""
        return tuple(self._entries)

    @asynccontextmanager
    async def lease(self, key: K, opener: Callable[[], Awaitable[C]]) -> AsyncIterator[C]:
        """Use the connection of ``key``, opening it with ``opener`` when there is none.

        Raises:
            Exception: whatever ``opener`` raised; nothing is pooled then.
        """
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
        """Retire ``connection`` (it failed); the next lease of ``key`` opens anew."""
        entry = self._entries.get(key)
        if entry is not None and entry.connection is connection:
            self._retire(key, entry)

    async def close(self) -> None:
        """Close every connection and wait for it; the pool stays usable."""
        for key, entry in list(self._entries.items()):
            self._retire(key, entry)
        while self._closing:
            await asyncio.gather(*list(self._closing), return_exceptions=True)

    async def _entry_for(self, key: K, opener: Callable[[], Awaitable[C]]) -> _Entry[C]:
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:
            entry = self._entries.get(key)
            if entry is not None and entry.connection.broken:
                self._retire(key, entry)
                entry = None
            if entry is None:
                entry = _Entry(await opener(), last_used=self._clock())
                self._entries[key] = entry
                self._evict_beyond_bound(keep=key)
            self._entries.move_to_end(key)
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
            lock = self._locks.get(key)
            if lock is not None and not lock.locked():
                del self._locks[key]
        if entry.retired:
            return
        entry.retired = True
        if entry.leases == 0:
            self._close_later(entry)

    def _close_later(self, entry: _Entry[C]) -> None:
        task = asyncio.get_running_loop().create_task(entry.connection.close())
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)


__all__ = ["ConnectionPool", "Poolable"]
