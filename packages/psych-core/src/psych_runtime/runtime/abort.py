"""Why an Attempt is being told to stop, and the signal that carries it."""

import asyncio
from enum import StrEnum


class AbortReason(StrEnum):
    """The three reasons a Worker stops an Attempt it holds.

    They differ in what may still be written: a deadline ends the Run (settled
    ``aborted``), a shutdown hands it to the next Worker untouched, and a lost lease
    means another Worker owns the log now, so nothing at all may be written.
    """

    DEADLINE = "deadline"
    SHUTDOWN = "shutdown"
    LEASE_LOST = "lease_lost"


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
