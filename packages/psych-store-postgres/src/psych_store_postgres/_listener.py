"""Cross-process wake-ups: one LISTEN connection feeding the store's LocalNotifier.

Every committing write of this store (append, admission, release, inline settlement,
waking a parked Run) queues ``pg_notify(channel, key)`` inside its own transaction, so
PostgreSQL delivers the key to every listener exactly when the write becomes visible.
This module keeps one dedicated connection per store instance LISTENing on the
deployment's channel and turns each notification into ``LocalNotifier.signal(key)``.

Notifications that this very store sent are dropped (recognised by the sending
backend's pid): the store already signalled them locally the moment its call returned,
and waking the same waiter twice would cost it a second, pointless look at the store.

Nothing depends on delivery. If the connection cannot be made, or drops, waiters
simply wait out their timeout and look again; the connection is retried on the next
claim or read, at most once every ``RETRY_SECONDS``.
"""

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable
from collections.abc import Callable
from typing import TYPE_CHECKING

from psych_runtime.adapters.store import WORK
from psych_runtime.adapters.store import LocalNotifier

if TYPE_CHECKING:
    import asyncpg

_log = logging.getLogger(__name__)

RETRY_SECONDS = 2.0
"""How long to wait before trying again after the LISTEN connection failed to open."""


class NotificationListener:
    """Owns the LISTEN connection of one store instance.

    Args:
        connect: opens a new, dedicated connection to the store's database.
        channel: the deployment's NOTIFY channel.
        notifier: where received keys are signalled.
        own_pids: server pids of this store's pool connections, kept current by the
            store; notifications from them are ignored.
    """

    def __init__(
        self,
        connect: Callable[[], Awaitable["asyncpg.Connection"]],
        channel: str,
        notifier: LocalNotifier,
        own_pids: set[int],
    ) -> None:
        self._connect = connect
        self._channel = channel
        self._notifier = notifier
        self._own_pids = own_pids
        self._conn: asyncpg.Connection | None = None
        self._lock = asyncio.Lock()
        self._retry_at = 0.0
        self._background: asyncio.Task[None] | None = None
        self._closed = False

    def _is_closed(self) -> bool:
        # A method, not the attribute, so type narrowing does not survive an await.
        return self._closed

    @property
    def listening(self) -> bool:
        """Whether a LISTEN connection is currently open."""
        return self._is_listening()

    def _is_listening(self) -> bool:
        return self._conn is not None and not self._conn.is_closed()

    def start_soon(self) -> None:
        """Begin connecting in the background, if an event loop is running.

        Used by the synchronous ``notifier`` property, which cannot wait.
        """
        if self.listening or self._is_closed():
            return
        if self._background is not None and not self._background.done():
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._background = loop.create_task(self._ensure_quietly(), name="psych-postgres-listen")

    async def _ensure_quietly(self) -> None:
        await self.ensure()

    async def ensure(self) -> bool:
        """Make sure the LISTEN connection is up; never raises.

        Returns:
            Whether the store is listening once this returns.
        """
        if self.listening:
            return True
        if self._is_closed() or time.monotonic() < self._retry_at:
            return False
        async with self._lock:
            if self._is_listening():
                return True
            if self._is_closed():
                return False
            try:
                conn = await self._connect()
            except Exception as exc:  # any failure only costs latency; say so and go on
                self._retry_at = time.monotonic() + RETRY_SECONDS
                _log.warning("psych: no LISTEN connection, wake-ups fall back to polling: %s", exc)
                return False
            try:
                await conn.add_listener(self._channel, self._on_notification)
            except BaseException as exc:
                # Cancelled (the store is closing) or failed: never leave the socket open.
                conn.terminate()
                if not isinstance(exc, Exception):
                    raise
                self._retry_at = time.monotonic() + RETRY_SECONDS
                _log.warning("psych: LISTEN failed, wake-ups fall back to polling: %s", exc)
                return False
            conn.add_termination_listener(self._on_lost)
            if self._is_closed():
                await conn.close()
                return False
            self._conn = conn
            return True

    def _on_notification(
        self,
        connection: "asyncpg.Connection | asyncpg.pool.PoolConnectionProxy",
        pid: int,
        channel: str,
        payload: object,
    ) -> None:
        if pid in self._own_pids or not isinstance(payload, str):
            return
        self._notifier.signal(payload)

    def _on_lost(self, connection: "asyncpg.Connection | asyncpg.pool.PoolConnectionProxy") -> None:
        if connection is not self._conn:
            return
        self._conn = None
        if not self._is_closed():
            # Whatever was sent while the connection was down is lost; let idle Workers
            # look at the store once now instead of after their full timeout.
            self._notifier.signal(WORK)

    async def close(self) -> None:
        """Stop listening and close the connection."""
        self._closed = True
        task, self._background = self._background, None
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        conn, self._conn = self._conn, None
        if conn is not None and not conn.is_closed():
            with contextlib.suppress(Exception):
                await conn.close(timeout=2.0)


__all__ = ["RETRY_SECONDS", "NotificationListener"]
