"""Liveness locks: noticing that a Worker's process died without waiting for its lease.

When this store claims a Run for a worker id, it first makes sure it holds a
session-level advisory lock for that worker on a dedicated connection (one per worker
id per store instance), and writes the lock's key on the claimed Run's row as
``holder_lock``. PostgreSQL releases a session's advisory locks the moment the session
ends, which it does when the process holding it dies, however it dies (``kill -9``
included): the server sees the socket close. From then on no row of ``pg_locks`` holds
that key, and ``claim`` treats the Run as abandoned even though its lease still runs.

The lease keeps bounding every other failure: a process that is alive but hung keeps
its connection, hence its lock, and loses the Run only when the lease expires.

Keys are random 63-bit numbers drawn per (store instance, worker id), not a hash of the
worker id. So two processes that reuse one worker id, or a process restarted under the
same id, never make a dead predecessor's Runs look alive.

If the lock connection cannot be opened, claims go ahead without a key (the Run is then
protected by its lease alone) and the connection is retried on a later claim.
"""

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import Awaitable
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import asyncpg

_log = logging.getLogger(__name__)

RETRY_SECONDS = 2.0
"""How long to go without a lock after failing to open a lock connection."""

_MAX_KEY = (1 << 63) - 1


class _HeldLock:
    __slots__ = ("conn", "key")

    def __init__(self, conn: "asyncpg.Connection", key: int) -> None:
        self.conn = conn
        self.key = key


class LivenessLocks:
    """The advisory locks one store instance holds for the worker ids it claims for.

    Args:
        connect: opens a new, dedicated connection to the store's database.
    """

    def __init__(self, connect: Callable[[], Awaitable["asyncpg.Connection"]]) -> None:
        self._connect = connect
        self._held: dict[str, _HeldLock] = {}
        self._known: set[str] = set()
        self._locks: dict[str, asyncio.Lock] = {}
        self._retry_at: dict[str, float] = {}
        self._closed = False

    def _is_closed(self) -> bool:
        # A method, not the attribute, so type narrowing does not survive an await.
        return self._closed

    def current_key(self, worker_id: str) -> int | None:
        """The key held for ``worker_id`` right now, without opening anything."""
        held = self._held.get(worker_id)
        if held is None or held.conn.is_closed():
            return None
        return held.key

    def held_keys(self) -> list[int]:
        """Every key this instance holds right now, whatever the worker id."""
        return [held.key for held in self._held.values() if not held.conn.is_closed()]

    def knows(self, worker_id: str) -> bool:
        """Whether this instance claims for ``worker_id`` (from its first claim until release)."""
        return worker_id in self._known

    def connection_of(self, worker_id: str) -> "asyncpg.Connection | None":
        """The lock connection of ``worker_id``, for diagnostics and tests."""
        held = self._held.get(worker_id)
        return None if held is None else held.conn

    async def key_for(self, worker_id: str) -> int | None:
        """The key to record on a Run claimed by ``worker_id``, opening a lock if needed.

        Returns None (claim without liveness) when the lock cannot be had right now.
        """
        key = self.current_key(worker_id)
        if key is not None or self._is_closed():
            return key
        self._known.add(worker_id)
        if time.monotonic() < self._retry_at.get(worker_id, 0.0):
            return None
        lock = self._locks.setdefault(worker_id, asyncio.Lock())
        async with lock:
            key = self.current_key(worker_id)
            if key is not None or self._is_closed():
                return key
            stale = self._held.pop(worker_id, None)
            if stale is not None:
                stale.conn.terminate()
            try:
                held = await self._acquire()
            except Exception as exc:  # only costs the early takeover; say so and go on
                self._retry_at[worker_id] = time.monotonic() + RETRY_SECONDS
                _log.warning(
                    "psych: no liveness lock for worker %s; its Runs fall back to the lease: %s",
                    worker_id,
                    exc,
                )
                return None
            if self._is_closed():
                await held.conn.close()
                return None
            self._held[worker_id] = held
            return held.key

    async def _acquire(self) -> _HeldLock:
        conn = await self._connect()
        try:
            for _ in range(8):
                key = secrets.randbelow(_MAX_KEY) + 1
                if await conn.fetchval("SELECT pg_try_advisory_lock($1)", key):
                    return _HeldLock(conn, key)
            raise RuntimeError("could not take a free advisory-lock key")
        except BaseException:
            conn.terminate()
            raise

    async def release(self, worker_id: str) -> None:
        """Drop the lock of ``worker_id``: its running Runs become claimable by others.

        Call it when a Worker stops for good in a long-lived process that keeps the
        store open, so the dedicated connection does not linger.
        """
        held = self._held.pop(worker_id, None)
        self._locks.pop(worker_id, None)
        self._known.discard(worker_id)
        self._retry_at.pop(worker_id, None)
        if held is not None and not held.conn.is_closed():
            with contextlib.suppress(Exception):
                await held.conn.close(timeout=2.0)

    async def close(self) -> None:
        """Close every lock connection (their locks go with them)."""
        self._closed = True
        await asyncio.gather(*(self.release(worker_id) for worker_id in list(self._held)))


__all__ = ["RETRY_SECONDS", "LivenessLocks"]
