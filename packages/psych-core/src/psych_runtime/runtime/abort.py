"""Why an Attempt is being told to stop, and the signal that carries it."""

import asyncio
from enum import StrEnum

from psych_runtime.core.ids import RunId


class AbortReason(StrEnum):
    """The four reasons a Worker stops an Attempt it holds.

    They differ in what may still be written: a deadline or an interrupt ends the Run
    (settled ``aborted``), a shutdown hands it to the next Worker untouched, and a lost
    lease means another Worker owns the log now, so nothing at all may be written.
    """

    DEADLINE = "deadline"
    INTERRUPT = "interrupt"
    SHUTDOWN = "shutdown"
    LEASE_LOST = "lease_lost"

    @property
    def ends_run(self) -> bool:
        """Whether the Attempt settles the Run ``aborted`` once its work has unwound."""
        return self in (AbortReason.DEADLINE, AbortReason.INTERRUPT)


class AbortSignal:
    """A one-shot signal whose first reason wins."""

    __slots__ = ("_event", "_reason")

    def __init__(self) -> None:
        self._event = asyncio.Event()
        self._reason: AbortReason | None = None

    @property
    def reason(self) -> AbortReason | None:
        """The reason the signal fired with, or None while it has not fired."""
        return self._reason

    @property
    def fired(self) -> bool:
        """Whether the signal has fired."""
        return self._reason is not None

    @property
    def writes_allowed(self) -> bool:
        """False once the lease is lost: the log belongs to someone else."""
        return self._reason is not AbortReason.LEASE_LOST

    def fire(self, reason: AbortReason) -> bool:
        """Fire with ``reason``; returns False when it had already fired."""
        if self._reason is not None:
            return False
        self._reason = reason
        self._event.set()
        return True

    async def wait(self) -> AbortReason:
        """Wait until the signal fires and return its reason."""
        await self._event.wait()
        assert self._reason is not None
        return self._reason


class LiveAttempts:
    """The abort signals of the Attempts this process is executing, by Run.

    ``interrupt()`` fires the signal of an Attempt held in the same process the moment
    its ``abort_requested`` is durable, so the Attempt is cut short without waiting for
    any store round trip. An Attempt in another process learns of it from its store
    (see ``runtime/interrupt_watch.py``).
    """

    __slots__ = ("_signals",)

    def __init__(self) -> None:
        self._signals: dict[RunId, list[AbortSignal]] = {}

    def add(self, run_id: RunId, signal: AbortSignal) -> None:
        """Note that an Attempt of ``run_id`` runs here with ``signal``."""
        self._signals.setdefault(run_id, []).append(signal)

    def remove(self, run_id: RunId, signal: AbortSignal) -> None:
        """Forget ``signal`` (its Attempt ended); unknown signals are ignored."""
        signals = self._signals.get(run_id)
        if signals is None:
            return
        if signal in signals:
            signals.remove(signal)
        if not signals:
            del self._signals[run_id]

    def interrupt(self, run_id: RunId) -> int:
        """Fire every signal of ``run_id`` with ``INTERRUPT``; returns how many fired."""
        return sum(signal.fire(AbortReason.INTERRUPT) for signal in self._signals.get(run_id, ()))


LIVE_ATTEMPTS = LiveAttempts()
"""This process's registry: every Worker adds its Attempts to it."""
