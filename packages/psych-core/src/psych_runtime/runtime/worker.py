"""The Worker: claims runnable Runs, executes them under a lease, and supervises them.

Three loops, kept apart on purpose, in three modules:

- the claim loop (here) takes Runs, woken by the store's notifier or by polling, and
  starts an Attempt for each, up to ``concurrency`` at once;
- each Attempt (``attempt.py``) runs with a heartbeat that keeps its lease alive for as
  long as the process lives;
- the supervisor (``supervisor.py``) enforces wall-clock deadlines and settles by force
  an Attempt that does not unwind within the grace period.

Supervision runs in its own task, so an Attempt stuck in a model stream or a tool can
never block the code that would time it out.
"""

import asyncio
import contextlib
import gc
import logging
from dataclasses import dataclass

from psych_runtime.core.ids import RunId
from psych_runtime.core.ids import WorkerId
from psych_runtime.plugins.installed import installed_telemetry
from psych_runtime.runtime.abort import AbortReason
from psych_runtime.runtime.attempt import ActiveAttempt
from psych_runtime.runtime.attempt import AttemptRunner
from psych_runtime.runtime.clock import utcnow
from psych_runtime.runtime.ids import new_attempt_id
from psych_runtime.runtime.ids import new_worker_id
from psych_runtime.runtime.settings import WorkerSettings
from psych_runtime.runtime.supervisor import Supervision
from psych_runtime.store.notify import WORK
from psych_runtime.store.notify import LocalNotifier
from psych_runtime.store.notify import Notifier
from psych_runtime.store.port import Fence
from psych_runtime.store.port import RunHeader
from psych_runtime.store.port import RunState
from psych_runtime.store.port import Store
from psych_runtime.telemetry.port import Telemetry

log = logging.getLogger(__name__)

_MAX_BACKOFF_SECONDS = 30.0


_collected_once = False


def _collect_while_idle() -> None:
    """Run one full garbage collection, the first time any Worker of the process idles.

    A process that has just imported its libraries holds a large heap of long-lived
    objects, and the first full collection of it (tens of milliseconds on a small
    machine) comes due at the first burst of allocation: in practice, in the middle of
    the first Run, or of taking over a dead Worker's Run. Collecting once while idle
    pays that pause when nobody waits; later full collections come due only as the
    heap grows by a quarter. Once per process, not per Worker: a process that starts
    many Workers (a test suite) pays it once.
    """
    global _collected_once
    _collected_once = True
    gc.collect()


@dataclass(eq=False)
class _Core:
    """The two things a Worker cannot do without; they come first."""

    store: Store
    runner: AttemptRunner


@dataclass(eq=False, repr=False)
class Worker(WorkerSettings, _Core, Supervision):
    """Claims runnable Runs from a store and executes them until told to stop.

    Args:
        store: where Runs are claimed from.
        runner: executes one Attempt (a ``Runtime``).

    Every other argument is a setting, documented once on ``WorkerSettings``.

    Raises:
        ValueError: ``concurrency`` or ``max_attempts`` below 1, or a heartbeat not
            shorter than the lease.
    """

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        if self.heartbeat_seconds >= self.lease_seconds:
            raise ValueError("heartbeat_seconds must be shorter than lease_seconds")
        self._id: WorkerId = self.worker_id or new_worker_id()
        self.worker_id = self._id
        telemetry = self.telemetry
        if telemetry is None:
            telemetry = getattr(self.runner, "telemetry", None)
        self._telemetry: Telemetry = telemetry if telemetry is not None else installed_telemetry()
        self.telemetry = self._telemetry
        self.active: dict[RunId, ActiveAttempt] = {}
        self.attempts_ended = LocalNotifier()
        """Signalled with a run id each time this Worker finishes an Attempt of it.

        Lets code in the same process (``Session.wait``) sleep until an Attempt it
        cares about is over instead of re-reading the log after every append.
        """
        self._stopping = False
        self._killed = False
        self._wake = asyncio.Event()
        self._supervisor: asyncio.Task[None] | None = None
        self._stopped = asyncio.Event()
        self.running = False

    def __repr__(self) -> str:
        return f"Worker(worker_id={self._id!r}, concurrency={self.concurrency})"

    # --- the claim loop -------------------------------------------------------------

    async def run(self) -> None:
        """Claim and execute Runs until ``stop()`` (or ``kill()``) is called."""
        self.running = True
        self._stopped.clear()
        self._supervisor = asyncio.create_task(self._supervise(), name="psych-supervisor")
        backoff = self.poll_interval
        notifier = self.store.notifier
        try:
            while not self._stopping:
                if len(self.active) >= self.concurrency:
                    self._wake.clear()
                    await self._wake.wait()
                    continue
                generation = notifier.generation(WORK) if notifier is not None else 0
                try:
                    header = await self.store.claim(self._id, utcnow(), self.lease_seconds)
                except Exception:
                    log.exception("claim failed; backing off %.1fs", backoff)
                    await self._idle(None, 0, backoff)
                    backoff = min(backoff * 2, _MAX_BACKOFF_SECONDS)
                    continue
                backoff = self.poll_interval
                if header is None:
                    if not self.active and not _collected_once:
                        _collect_while_idle()
                    await self._idle(notifier, generation, self.poll_interval)
                    continue
                if self._stop_requested():
                    # Claimed just as we were told to stop: hand it straight back.
                    await self._hand_back(header)
                    break
                self._start(header)
        finally:
            if not self._killed:
                await self._shutdown()
            self.running = False
            self._stopped.set()

    def _stop_requested(self) -> bool:
        return self._stopping

    async def _hand_back(self, header: RunHeader) -> None:
        try:
            await self.store.release(
                header.run_id,
                self._id,
                RunState.RUNNABLE,
                attempt_count=header.attempt_count,
            )
        except Exception:
            log.exception("run %s: could not hand back a late claim", header.run_id)

    async def _idle(self, notifier: Notifier | None, generation: int, timeout: float) -> None:
        if self._stopping:
            return
        waiter: asyncio.Future[bool | None] = asyncio.ensure_future(
            notifier.wait(WORK, generation, timeout)
            if notifier is not None
            else asyncio.sleep(timeout)
        )
        stop: asyncio.Future[bool | None] = asyncio.ensure_future(self._wake.wait())
        try:
            await asyncio.wait({waiter, stop}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()
            stop.cancel()
            if not self._stopping:
                self._wake.clear()

    def _start(self, header: RunHeader) -> None:
        stale = self.active.get(header.run_id)
        if stale is not None:
            # Our own earlier Attempt of this Run lost its lease (we were too slow to
            # renew it) and we claimed the Run again: the old one must stop writing.
            stale.abort.fire(AbortReason.LEASE_LOST)
            if stale.journal is not None:
                stale.journal.close()
        fence = Fence(self._id, header.attempt_count)
        attempt = ActiveAttempt(
            run_id=header.run_id,
            attempt_id=new_attempt_id(),
            scope=header.scope,
            fence=fence,
            deadline_at=header.deadline_at,
        )
        self.active[header.run_id] = attempt
        attempt.task = asyncio.create_task(
            self._attempt(attempt, header), name=f"psych-attempt-{header.run_id}"
        )

    def _forget(self, attempt: ActiveAttempt) -> None:
        if self.active.get(attempt.run_id) is not attempt:
            return
        del self.active[attempt.run_id]
        # Only a claim loop held back by a full house needs waking: one already below
        # capacity is waiting for work, and a finished Attempt is not work (a Run it
        # hands back runnable signals WORK through the store).
        if len(self.active) + 1 >= self.concurrency:
            self._wake.set()

    # --- stopping -------------------------------------------------------------------

    def request_stop(self) -> None:
        """Ask the claim loop to stop; ``run()`` then shuts down and returns."""
        self._stopping = True
        self._wake.set()

    async def stop(self) -> None:
        """Stop claiming, hand running Attempts back (released runnable), and wait."""
        self.request_stop()
        if self.running:
            await self._stopped.wait()
        else:
            await self._shutdown()

    async def _shutdown(self) -> None:
        for attempt in list(self.active.values()):
            attempt.abort.fire(AbortReason.SHUTDOWN)
        attempts = [a for a in self.active.values() if a.task is not None]
        if attempts:
            done, _ = await asyncio.wait(
                [a.task for a in attempts if a.task is not None], timeout=self.grace_seconds
            )
            stuck = [a for a in attempts if a.task not in done]
            for attempt in stuck:
                # A call that will not unwind (an uninterruptible one that hangs): leave
                # it as a crash would, and let its lease expire for another Worker.
                self._abandon(attempt)
            if stuck:
                await asyncio.wait([a.task for a in stuck if a.task is not None], timeout=1.0)
        if self._supervisor is not None:
            self._supervisor.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._supervisor

    async def kill(self) -> None:
        """Die as a process would: stop everything, release nothing, write nothing.

        For tests of crash recovery; the Runs this Worker held become claimable again
        only when their leases expire.
        """
        self._killed = True
        self._stopping = True
        self._wake.set()
        attempts = list(self.active.values())
        for attempt in attempts:
            if attempt.journal is not None:
                attempt.journal.close()
        tasks = [a.task for a in attempts if a.task is not None]
        for task in tasks:
            task.cancel()
        if self._supervisor is not None:
            self._supervisor.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=1.0)
        self.active.clear()
