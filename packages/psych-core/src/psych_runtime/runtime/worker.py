"""The Worker: claims runnable Runs, executes them under a lease, and supervises them.

Three loops, kept apart on purpose:

- the claim loop takes Runs (woken by the store's notifier, or by polling);
- one heartbeat per Attempt keeps its lease alive for as long as the process lives;
- the supervisor enforces wall-clock deadlines and force-settles an Attempt that does
  not unwind within the grace period.

Supervision runs in its own task, so an Attempt stuck in a model stream or a tool can
never block the code that would time it out.
"""

import asyncio
import contextlib
import gc
import logging
import time
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime

from psych_runtime.core.corruption import CorruptLog
from psych_runtime.core.ids import AttemptId, RunId, WorkerId
from psych_runtime.core.records import (
    AttemptStarted,
    RunSettled,
    TerminalState,
    ToolFailure,
    ToolOutcome,
)
from psych_runtime.core.scope import Scope
from psych_runtime.core.state import RunStateView
from psych_runtime.plugins.urls import installed_telemetry
from psych_runtime.runtime.abort import AbortReason, AbortSignal
from psych_runtime.runtime.children import report_to_parent
from psych_runtime.runtime.clock import utcnow
from psych_runtime.runtime.control import interrupt
from psych_runtime.runtime.ids import new_attempt_id, new_worker_id
from psych_runtime.runtime.journal import Journal, JournalClosed
from psych_runtime.runtime.open_calls import ORPHANED_MESSAGE, close_open_calls
from psych_runtime.runtime.suspension import OnClaim, on_claim, parked_until
from psych_runtime.store.errors import LeaseLost, SeqConflict, StoreUnavailable
from psych_runtime.store.notify import WORK, LocalNotifier, Notifier
from psych_runtime.store.port import Fence, RunHeader, RunState, Store
from psych_runtime.telemetry.port import Telemetry
from psych_runtime.telemetry.tracer import RunTracer

log = logging.getLogger(__name__)

AttemptRunner = Callable[[Journal, RunHeader, AbortSignal], Awaitable[None]]
"""What a Worker calls for each claimed Run; ``Runtime`` is one."""

_MAX_BACKOFF_SECONDS = 30.0

_RELEASE_FIRST_PAUSE = 0.05
"""Seconds before the first retry of handing back a Run after a store outage."""
_RELEASE_MAX_PAUSE = 2.0

ORPHAN_REASON = "its parent run ended"
"""Why a background child still running when its parent settles is interrupted."""


class AttemptKilled(BaseException):
    """Ends an Attempt as abruptly as a process death: no release, no record.

    Raised by crash-injection seams (see ``psych_runtime.testing.crash``). It derives
    from ``BaseException`` so that no ``except Exception`` on the way up can turn the
    simulated death into an orderly failure.
    """


@dataclass(eq=False)
class ActiveAttempt:
    """One Run this Worker is executing right now."""

    run_id: RunId
    attempt_id: AttemptId
    scope: Scope
    fence: Fence
    deadline_at: datetime
    abort: AbortSignal = field(default_factory=AbortSignal)
    task: "asyncio.Task[None] | None" = None
    abort_fired_at: float | None = None
    journal: Journal | None = None
    tracer: RunTracer | None = None


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


class Worker:
    """Claims runnable Runs from a store and executes them until told to stop.

    Args:
        store: where Runs are claimed from.
        runner: executes one Attempt (a ``Runtime``).
        worker_id: this Worker's identity in leases and records; minted if omitted.
        lease_seconds: how long a claim is honoured without a heartbeat.
        heartbeat_seconds: how often the lease is renewed.
        grace_seconds: how long an aborted Attempt may take to unwind before the
            supervisor settles it by force.
        supervisor_interval: how often deadlines are checked.
        poll_interval: how long an idle Worker waits between claims when no notifier
            wakes it sooner.
        concurrency: Attempts executed at once.
        max_attempts: claims after which a Run is failed instead of retried, so a Run
            that kills every Worker that touches it eventually stops.
        telemetry: where each Attempt's spans and metrics go. None takes the runner's
            (``Runtime(telemetry=...)``), else the installed adapter's (``psych-otel``),
            else nothing is recorded.
    """

    def __init__(
        self,
        store: Store,
        runner: AttemptRunner,
        *,
        worker_id: WorkerId | None = None,
        lease_seconds: float = 30.0,
        heartbeat_seconds: float = 10.0,
        grace_seconds: float = 60.0,
        supervisor_interval: float = 5.0,
        poll_interval: float = 0.5,
        concurrency: int = 4,
        max_attempts: int = 10,
        telemetry: Telemetry | None = None,
    ) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        if heartbeat_seconds >= lease_seconds:
            raise ValueError("heartbeat_seconds must be shorter than lease_seconds")
        self.store = store
        self.runner = runner
        self.worker_id: WorkerId = worker_id or new_worker_id()
        self.lease_seconds = lease_seconds
        self.heartbeat_seconds = heartbeat_seconds
        self.grace_seconds = grace_seconds
        self.supervisor_interval = supervisor_interval
        self.poll_interval = poll_interval
        self.concurrency = concurrency
        self.max_attempts = max_attempts
        if telemetry is None:
            telemetry = getattr(runner, "telemetry", None)
        self.telemetry: Telemetry = telemetry if telemetry is not None else installed_telemetry()
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
                    header = await self.store.claim(self.worker_id, utcnow(), self.lease_seconds)
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
                self.worker_id,
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
        fence = Fence(self.worker_id, header.attempt_count)
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

    # --- one attempt ----------------------------------------------------------------

    async def _attempt(self, attempt: ActiveAttempt, header: RunHeader) -> None:
        heartbeat = asyncio.create_task(self._heartbeat(attempt))
        release = True
        outage = False
        ended: str | None = None
        try:
            try:
                journal = await Journal.open(
                    self.store, attempt.run_id, attempt_id=attempt.attempt_id, fence=attempt.fence
                )
            except CorruptLog as error:
                # The stored log itself contradicts the protocol: park the Run, write
                # nothing, so no Worker keeps reclaiming it.
                log.error("run %s: corrupt log, parked untouched: %s", attempt.run_id, error)
                await self._release(attempt, RunState.SETTLED)
                release = False
                return
            attempt.journal = journal
            state = journal.state
            if state.settled:
                return
            if state.suspended:
                claimed = on_claim(journal, utcnow())
                if claimed.action is OnClaim.PARK:
                    # Claimed before its time (a clock ahead of the suspending one's):
                    # hand it back parked, having written nothing.
                    await self._release(
                        attempt, RunState.RUNNABLE, runnable_at=claimed.parked_until
                    )
                    release = False
                    return
                if claimed.action is OnClaim.SETTLED:
                    await journal.flush()
                    return
            self._trace(attempt, journal)
            if header.attempt_count > self.max_attempts:
                journal.stage(
                    RunSettled,
                    state=TerminalState.FAILED,
                    failure=ToolFailure(
                        kind="attempts_exhausted",
                        message=f"the run was claimed {header.attempt_count} times without "
                        f"settling (max_attempts={self.max_attempts})",
                    ),
                )
                await journal.flush()
                return
            attempt.deadline_at = state.effective_deadline_at or header.deadline_at
            journal.stage(
                AttemptStarted,
                worker_id=self.worker_id,
                attempt_number=state.attempt_count + 1,
                reclaimed_expired_lease=header.attempt_count > 1
                and not state.resumed_since_attempt,
            )
            if utcnow() >= attempt.deadline_at:
                # Claimed after its deadline (no live process was there to enforce it):
                # settle it aborted without running anything.
                close_open_calls(journal, ToolOutcome.UNKNOWN, "orphaned", ORPHANED_MESSAGE)
                journal.stage(
                    RunSettled,
                    state=TerminalState.ABORTED,
                    failure=ToolFailure(kind="deadline", message="the run passed its deadline"),
                )
                await journal.flush()
                return
            await self.runner(journal, header, attempt.abort)
            if attempt.abort.writes_allowed:
                await journal.flush()
        except (AttemptKilled, JournalClosed) as error:
            release = False
            ended = f"the attempt was abandoned ({type(error).__name__})"
        except (LeaseLost, SeqConflict) as error:
            # Another Worker owns this Run's log now; writing or releasing would fight it.
            log.info("run %s: stopped writing (%s)", attempt.run_id, error)
            release = False
            ended = f"the attempt lost its lease ({type(error).__name__})"
        except StoreUnavailable as error:
            # An outage is transient, never the Run's failure. The write that met it may
            # or may not have landed, so this Attempt writes nothing more; the Run is
            # handed back as the log shows it, and the next Attempt carries on from
            # what really landed (closing any call left open, as after a crash).
            log.warning(
                "run %s: store unavailable, attempt stopped and run handed back: %s",
                attempt.run_id,
                error,
            )
            outage = True
            ended = f"the store became unavailable: {error}"
        except asyncio.CancelledError:
            ended = "the attempt was cancelled"
            if self._killed:
                release = False
            raise
        except Exception as error:
            # Including a CorruptLog raised while staging: a writer bug. The Run is
            # settled FAILED with a record that does fold, never parked half-written.
            log.exception("run %s: attempt failed", attempt.run_id)
            ended = f"{type(error).__name__}: {error}"
            await self._fail_attempt(attempt, error)
        finally:
            heartbeat.cancel()
            if attempt.tracer is not None:
                attempt.tracer.close(
                    attempt.journal.state if attempt.journal is not None else None, error=ended
                )
            self._forget(attempt)
            if release and not self._killed and attempt.abort.writes_allowed:
                if outage:
                    await self._release_after_outage(attempt)
                else:
                    await self._release_from_log(attempt)
            self.attempts_ended.signal(attempt.run_id)

    def _trace(self, attempt: ActiveAttempt, journal: Journal) -> None:
        """Open the Run's spans for this Attempt, unless no telemetry is installed."""
        try:
            if not self.telemetry.enabled:
                return
            model = getattr(self.runner, "model", None)
            tracer = RunTracer.for_attempt(self.telemetry, journal.records, journal.state, model)
        except Exception:
            log.warning(
                "run %s: telemetry unavailable for this attempt", attempt.run_id, exc_info=True
            )
            return
        attempt.tracer = journal.observer = tracer

    async def _fail_attempt(self, attempt: ActiveAttempt, error: Exception) -> None:
        kind = "writer_refused" if isinstance(error, CorruptLog) else "attempt_failed"
        try:
            journal = await Journal.open(
                self.store, attempt.run_id, attempt_id=attempt.attempt_id, fence=attempt.fence
            )
            if not journal.state.settled:
                journal.stage(
                    RunSettled,
                    state=TerminalState.FAILED,
                    failure=ToolFailure(
                        kind=kind,
                        message=f"{type(error).__name__}: {error}",
                        traceback="".join(traceback.format_exception(error)),
                    ),
                )
                await journal.flush()
            attempt.journal = journal
        except Exception:
            log.exception("run %s: could not record the failed attempt", attempt.run_id)
            attempt.journal = None

    async def _release_after_outage(self, attempt: ActiveAttempt) -> None:
        """Hand a Run back after a store outage, retrying briefly while the store is down.

        Release is fenced by the claim's attempt count, so trying again is always safe:
        once another Worker has claimed the Run, a late release changes nothing. When
        the store stays down for about a lease, the lease expires instead and any
        Worker may claim the Run then.
        """
        pause = _RELEASE_FIRST_PAUSE
        give_up_at = time.monotonic() + self.lease_seconds
        while not self._killed:
            if await self._release_from_log(attempt, fresh=True, quiet=True):
                return
            if time.monotonic() + pause >= give_up_at:
                break
            await asyncio.sleep(pause)
            pause = min(pause * 2, _RELEASE_MAX_PAUSE)
        log.warning("run %s: store still unavailable; the run is left to its lease", attempt.run_id)

    async def _release_from_log(
        self, attempt: ActiveAttempt, *, fresh: bool = False, quiet: bool = False
    ) -> bool:
        """Release the Run in the state its stored log shows; returns whether it worked.

        Args:
            attempt: the Attempt whose claim is released.
            fresh: read the whole log again instead of trusting the Attempt's Journal
                (after an outage, the Journal cannot know what its last write did).
            quiet: a store outage is expected (it is being retried): log no traceback.
        """
        # Decide from what the store holds, never from staged records that may not have
        # been written: a settlement that never landed must not release the Run settled.
        journal = attempt.journal
        try:
            if fresh or journal is None or journal.has_pending:
                journal = await Journal.open(self.store, attempt.run_id)
            else:
                try:
                    await journal.refresh()
                except SeqConflict:
                    journal = await Journal.open(self.store, attempt.run_id)
        except StoreUnavailable:
            if not quiet:
                log.exception("run %s: could not read the log to release it", attempt.run_id)
            return False
        except Exception:
            log.exception("run %s: could not read the log to release it", attempt.run_id)
            return False
        state = journal.state
        # A suspended Run is parked until it next needs looking at (a timer's wake
        # time, else the suspension's expiry); resume() clears the parking.
        runnable_at = parked_until(state)
        target = RunState.SETTLED if state.settled else RunState.RUNNABLE
        if state.settled and not await self._tell_family(state):
            return False
        released = await self._release(
            attempt,
            target,
            runnable_at=runnable_at,
            state_deadline=state.effective_deadline_at,
            quiet=quiet,
        )
        if released and runnable_at is not None:
            await self._unpark_if_resumed(attempt.run_id, state.head_seq)
        return released

    async def _unpark_if_resumed(self, run_id: RunId, seen_seq: int) -> None:
        """Clear the parking just set if the log grew meanwhile (a resume raced it).

        ``resume()`` appends before it clears parking, so either it cleared after
        this release (nothing to do), or its record is already in the log here.
        """
        try:
            if await self.store.head(run_id) > seen_seq:
                await self.store.set_runnable_at(run_id, None)
        except Exception:
            log.exception("run %s: could not check for a resume that raced parking", run_id)

    async def _release(
        self,
        attempt: ActiveAttempt,
        target: RunState,
        *,
        runnable_at: datetime | None = None,
        state_deadline: datetime | None = None,
        quiet: bool = False,
    ) -> bool:
        try:
            await self.store.release(
                attempt.run_id,
                self.worker_id,
                target,
                runnable_at=runnable_at,
                deadline_at=state_deadline,
                attempt_count=attempt.fence.attempt_count,
            )
        except StoreUnavailable:
            if not quiet:
                log.exception(
                    "run %s: release failed; the lease will expire instead", attempt.run_id
                )
            return False
        except Exception:
            log.exception("run %s: release failed; the lease will expire instead", attempt.run_id)
            return False
        return True

    async def _heartbeat(self, attempt: ActiveAttempt) -> None:
        while True:
            await asyncio.sleep(self.heartbeat_seconds)
            try:
                held = await self.store.renew(
                    attempt.run_id,
                    self.worker_id,
                    utcnow(),
                    self.lease_seconds,
                    attempt_count=attempt.fence.attempt_count,
                )
            except Exception:
                log.exception("run %s: lease renewal failed; retrying", attempt.run_id)
                continue
            if not held:
                attempt.abort.fire(AbortReason.LEASE_LOST)
                return

    # --- supervision ----------------------------------------------------------------

    async def _supervise(self) -> None:
        while True:
            pause = asyncio.ensure_future(asyncio.sleep(self.supervisor_interval))
            try:
                await self.supervise_once()
            except Exception:
                log.exception("supervisor pass failed")
            await pause

    async def supervise_once(self) -> None:
        """One supervisor pass: fire overdue deadlines, deal with what will not unwind.

        After the grace period, an Attempt aborted by its deadline is force-settled;
        one that lost its lease (or is being shut down) is abandoned without writing,
        so a hung call never holds a concurrency slot for ever.
        """
        now = utcnow()
        mono = time.monotonic()
        for attempt in list(self.active.values()):
            if attempt.abort_fired_at is None:
                if now >= attempt.deadline_at:
                    attempt.abort.fire(AbortReason.DEADLINE)
                if attempt.abort.fired:
                    attempt.abort_fired_at = mono
                continue
            if mono - attempt.abort_fired_at < self.grace_seconds:
                continue
            if attempt.abort.reason is AbortReason.DEADLINE:
                try:
                    await self._force_settle(attempt)
                except StoreUnavailable as error:
                    # The Attempt stays listed, so the next pass tries again from a
                    # fresh read of the log (which shows whether this settle landed).
                    log.warning(
                        "run %s: store unavailable while force-settling; retrying: %s",
                        attempt.run_id,
                        error,
                    )
            else:
                self._abandon(attempt)

    def _abandon(self, attempt: ActiveAttempt) -> None:
        """Give up on an Attempt as a dying process would: no more writes, no release."""
        if attempt.journal is not None:
            attempt.journal.close()
        if attempt.task is not None:
            attempt.task.cancel()
        self._forget(attempt)

    async def _force_settle(self, attempt: ActiveAttempt) -> None:
        # Stop the stuck Attempt writing first, so the two cannot interleave records.
        if attempt.journal is not None:
            attempt.journal.close()
        journal = await Journal.open(
            self.store, attempt.run_id, attempt_id=attempt.attempt_id, fence=attempt.fence
        )
        if not journal.state.settled:
            close_open_calls(journal, ToolOutcome.UNKNOWN, "orphaned", ORPHANED_MESSAGE)
            journal.stage(
                RunSettled,
                state=TerminalState.FORCE_SETTLED,
                orphaned_attempt_id=attempt.attempt_id,
                failure=ToolFailure(
                    kind="force_settled",
                    message=f"the attempt did not unwind within {self.grace_seconds:g}s "
                    "of its deadline",
                ),
            )
            await journal.flush()
        if attempt.tracer is not None:
            attempt.tracer.close(journal.state, error="the attempt was settled by force")
        self._forget(attempt)
        if attempt.task is not None:
            attempt.task.cancel()
        if await self._tell_family(journal.state):
            await self._release(attempt, RunState.SETTLED)

    async def _tell_family(self, state: RunStateView) -> bool:
        """Before a settled Run is released: its ending to its parent, a stop to its children.

        Done first so that a crash in between leaves the Run leased: whoever reclaims
        it finds it settled and does this again (both steps write nothing twice).

        Returns:
            Whether it worked; if not, the Run is not released and its lease expires.
        """
        try:
            await report_to_parent(self.store, state)
            for child in state.live_children:
                await interrupt(self.store, child.run_id, reason=ORPHAN_REASON)
        except Exception:
            log.exception("run %s: could not tell its parent or children it ended", state.run_id)
            return False
        return True

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
