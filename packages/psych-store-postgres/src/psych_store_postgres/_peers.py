"""Waking an idle instance the moment another claiming process dies.

A claiming process holds a session-level advisory lock (see ``_liveness``); when the
process dies the lock goes with its session and the Runs it held become claimable at
once. PostgreSQL says nothing when that happens, though: an idle Worker elsewhere
would find those Runs only at its next poll. So an instance that claims also watches
a few of its peers: for each it keeps one connection blocked in
``pg_advisory_lock(peer_key)``. The server grants that lock exactly when the peer's
session ends; the watcher lets go of it at once (holding it would make the dead
peer's Runs look alive again), signals ``WORK`` locally and announces ``WORK`` on the
deployment's channel so every other listener wakes as well.

Which peers: the keys on the ``holder_lock`` of running Runs, minus this instance's
own, taken in ring order after this instance's smallest key. Each instance watching
the next few keys around the ring means every busy process is watched by a few others
while the number of connections grows with the number of processes, not its square. A
peer with no running Run has nothing to orphan and is not watched; a watch that is no
longer wanted is dropped after a grace period, so a peer that goes briefly idle does
not cost a reconnect. Nothing depends on any of this: when a watch cannot be set up,
the claim loop's poll still finds the Runs.
"""

import asyncio
import logging
import time
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Iterable
from typing import TYPE_CHECKING

from psych_runtime.adapters.store import WORK
from psych_runtime.adapters.store import LocalNotifier

if TYPE_CHECKING:
    import asyncpg

_log = logging.getLogger(__name__)

GRACE_SECONDS = 30.0
"""How long a watch outlives the last refresh that still wanted it."""

RETRY_SECONDS = 2.0
"""How long to wait before opening watches again after one failed to connect."""


def ring_after(pivot: int, keys: Iterable[int], limit: int) -> list[int]:
    """The first ``limit`` of ``keys`` after ``pivot`` in ring order (wrapping round)."""
    ordered = sorted(set(keys))
    later = [key for key in ordered if key > pivot]
    earlier = [key for key in ordered if key < pivot]
    return (later + earlier)[:limit]


class _Watch:
    __slots__ = ("task", "wanted_at")

    def __init__(self, task: "asyncio.Task[None]", wanted_at: float) -> None:
        self.task = task
        self.wanted_at = wanted_at


class PeerWatch:
    """The watches one store instance keeps on its peers' liveness locks.

    Args:
        connect: opens a new, dedicated connection to the store's database.
        notifier: the store's notifier, signalled with ``WORK`` when a peer dies.
        channel: the deployment's NOTIFY channel, where ``WORK`` is announced to other
            processes when a peer dies.
        limit: how many peers to watch at once (0 watches none).
    """

    def __init__(
        self,
        connect: Callable[[], Awaitable["asyncpg.Connection"]],
        notifier: LocalNotifier,
        channel: str,
        limit: int,
    ) -> None:
        self._connect = connect
        self._notifier = notifier
        self._channel = channel
        self._limit = limit
        self._watches: dict[int, _Watch] = {}
        self._retry_at = 0.0
        self._closed = False

    @property
    def watched(self) -> frozenset[int]:
        """The peer keys being watched right now."""
        return frozenset(key for key, watch in self._watches.items() if not watch.task.done())

    def update(self, holders: Iterable[int], own: Iterable[int]) -> None:
        """Watch the ring neighbours of ``own`` among ``holders``; drop stale watches.

        Args:
            holders: the liveness keys on running Runs.
            own: the keys this instance holds itself (never watched).
        """
        mine = set(own)
        if self._closed or self._limit <= 0 or not mine:
            return
        now = time.monotonic()
        wanted = ring_after(min(mine), (key for key in holders if key not in mine), self._limit)
        for key in wanted:
            watch = self._watches.get(key)
            if watch is not None and not watch.task.done():
                watch.wanted_at = now
            elif now >= self._retry_at:
                self._watches[key] = _Watch(asyncio.create_task(self._watch(key)), now)
        for key, watch in list(self._watches.items()):
            if watch.task.done() or (key not in wanted and now - watch.wanted_at > GRACE_SECONDS):
                watch.task.cancel()
                del self._watches[key]

    async def _watch(self, key: int) -> None:
        try:
            conn = await self._connect()
        except Exception as exc:
            self._retry_at = time.monotonic() + RETRY_SECONDS
            _log.debug("psych: cannot watch a peer's liveness lock: %s", exc)
            return
        try:
            # No server-side timeout may end the wait early: it is meant to last.
            await conn.execute("SET lock_timeout = 0; SET statement_timeout = 0")
            await conn.fetchval("SELECT pg_advisory_lock($1)", key)
            # Let go, and tell every other listener, in one statement on this same
            # connection: the pool's connections stay free for the claims it sets off.
            await conn.fetchval(
                "SELECT pg_advisory_unlock($1), pg_notify($2, $3)", key, self._channel, WORK
            )
        except Exception as exc:  # the connection broke: the next refresh starts again
            _log.debug("psych: a watch on a peer's liveness lock ended: %s", exc)
            return
        finally:
            conn.terminate()
        _log.debug("psych: a peer holding liveness key %d has gone; waking claimers", key)
        self._notifier.signal(WORK)

    async def close(self) -> None:
        """Stop every watch (terminating its connection releases anything it held)."""
        self._closed = True
        tasks = [watch.task for watch in self._watches.values()]
        self._watches.clear()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


__all__ = ["GRACE_SECONDS", "PeerWatch", "ring_after"]
