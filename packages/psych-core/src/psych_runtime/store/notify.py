"""Wake-ups for idle Workers and waiting readers.

A Notifier turns "poll every half second" into "wake the moment something changed".
It only ever accelerates: every waiter also has a timeout and re-checks the store, so a
lost or spurious signal costs latency, never correctness.

The protocol is generation based so no signal can slip between a reader's check and its
wait: read the generation, look at the store, then wait for the generation to move past
what was read.
"""

import asyncio
from typing import Protocol
from typing import runtime_checkable

WORK = "__work__"
"""The key signalled when some Run may have become claimable."""


@runtime_checkable
class Notifier(Protocol):
    """Signals keyed by a string: ``WORK`` for claimable Runs, a run id for its log."""

    @property
    def complete(self) -> bool:
        """Whether every writer's commits reach this notifier, not only this process's.

        Only a complete notifier lets a reader skip a read because "nothing changed";
        a partial one (signalled by one store instance's own commits) still wakes
        waiters early, but readers must look at the store before concluding anything.
        """
        ...

    def generation(self, key: str) -> int:
        """A counter for ``key`` that each signal moves up by exactly one.

        It never goes back and never repeats a value for the key, so a reader may
        compare two readings: equal means no signal in between, one more means exactly
        one. A key not signalled for a long time may jump forward (spuriously
        "changed"), which costs a reader one look at the store, never a missed change.
        """
        ...

    def signal(self, key: str) -> None:
        """Record that ``key`` changed and wake everyone waiting on it."""
        ...

    async def wait(self, key: str, seen: int, timeout: float) -> bool:
        """Wait until ``key`` moves past generation ``seen``, or the timeout passes.

        Returns:
            True when a signal arrived, False on timeout.
        """
        ...


def signal_run(notifier: Notifier, run_id: str, *, runnable: bool) -> None:
    """Signal a Run's key after a write that changed its header, and ``WORK`` if runnable.

    Waiters on the Run (someone waiting for it to stop, a reader) hear the first; an
    idle Worker hears ``WORK`` and claims the Run. A store calls it after the commit of
    ``create_run`` and ``release``.

    Args:
        notifier: the store's notifier.
        run_id: the Run written.
        runnable: the Run is now ``runnable``, so a Worker may claim it.
    """
    notifier.signal(run_id)
    if runnable:
        notifier.signal(WORK)


DEFAULT_KEYS_KEPT = 4096
"""Keys a ``LocalNotifier`` remembers before it forgets the least recently signalled."""


class LocalNotifier:
    """An in-process Notifier built on asyncio futures.

    Stores that span processes (PostgreSQL's LISTEN/NOTIFY, say) feed their remote
    events into one of these, so waiters only ever deal with this class.

    A long-lived process hears about every Run any process works on, so the counters
    are bounded: past ``keys_kept`` keys, the least recently signalled half of those
    nobody waits on are forgotten. A forgotten key reads as the floor, a value above
    every counter forgotten so far, so it never reads as a value it had before.

    Args:
        complete: see ``Notifier.complete``.
        keys_kept: how many keys to remember before forgetting some.
    """

    def __init__(self, *, complete: bool = True, keys_kept: int = DEFAULT_KEYS_KEPT) -> None:
        if keys_kept < 1:
            raise ValueError(f"keys_kept must be at least 1, got {keys_kept}")
        self._complete = complete
        self._keys_kept = keys_kept
        self._floor = 0
        self._generations: dict[str, int] = {}
        self._waiters: dict[str, list[asyncio.Future[None]]] = {}

    @property
    def complete(self) -> bool:
        """See ``Notifier.complete``; chosen by the store that signals it."""
        return self._complete

    def generation(self, key: str) -> int:
        """See ``Notifier.generation``."""
        return self._generations.get(key, self._floor)

    def signal(self, key: str) -> None:
        """See ``Notifier.signal``."""
        # Re-inserted, so the dict's order is the order keys were last signalled in.
        self._generations[key] = self._generations.pop(key, self._floor) + 1
        if len(self._generations) > self._keys_kept:
            self._forget()
        waiters = self._waiters.pop(key, None)
        if waiters:
            for future in waiters:
                if not future.done():
                    future.set_result(None)

    def _forget(self) -> None:
        """Drop the least recently signalled half of the keys nobody waits on."""
        excess = len(self._generations) - self._keys_kept // 2
        idle = [key for key in self._generations if key not in self._waiters][:excess]
        for key in idle:
            self._floor = max(self._floor, self._generations.pop(key))

    async def wait(self, key: str, seen: int, timeout: float) -> bool:
        """See ``Notifier.wait``."""
        if self.generation(key) > seen:
            return True
        if timeout <= 0:
            return False
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.setdefault(key, []).append(future)
        try:
            await asyncio.wait_for(future, timeout)
        except TimeoutError:
            return self.generation(key) > seen
        finally:
            waiters = self._waiters.get(key)
            if waiters is not None and future in waiters:
                waiters.remove(future)
                if not waiters:
                    del self._waiters[key]
        return True


__all__ = ["WORK", "LocalNotifier", "Notifier", "signal_run"]
