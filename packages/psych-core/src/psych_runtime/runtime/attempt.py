"""One Attempt's life in a Worker: open, run, release; and its heartbeat.

An Attempt opens the Run's Journal, deals first with what the log says before anything
runs (a settled Run, a suspension whose time has or has not come, a Run claimed too
often or past its deadline), then hands the Run to the runner (the ``Runtime``) with a
heartbeat renewing its lease and a watch for interrupts. However it ends, the Run is
released in the state its stored log shows, or, when the Attempt died or lost its
lease, not touched at all.

``AttemptLifecycle`` is the part of the ``Worker`` that does this; the claim loop
(``worker.py``) starts one per claimed Run and the supervisor (``supervisor.py``)
watches them.
"""

import asyncio
import logging
import time
import traceback
from collections.abc import Awaitable
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from datetime import datetime

from psych_runtime.core.corruption import CorruptLog
from psych_runtime.core.ids import AttemptId
from psych_runtime.core.ids import RunId
from psych_runtime.core.ids import WorkerId
from psych_runtime.core.records import AttemptStarted
from psych_runtime.core.scope import Scope
from psych_runtime.core.state import RunStateView
from psych_runtime.runtime.abort import LIVE_ATTEMPTS
from psych_runtime.runtime.abort import AbortReason
from psych_runtime.runtime.abort import AbortSignal
from psych_runtime.runtime.children import report_to_parent
from psych_runtime.runtime.clock import utcnow
from psych_runtime.runtime.control import interrupt
from psych_runtime.runtime.interrupt_watch import watch_for_interrupt
from psych_runtime.runtime.journal import Journal
from psych_runtime.runtime.journal import JournalClosed
from psych_runtime.runtime.reads import FOLDS
from psych_runtime.runtime.settlement import failed
from psych_runtime.runtime.settlement import past_deadline_when_claimed
from psych_runtime.runtime.settlement import settle
from psych_runtime.runtime.suspension import OnClaim
from psych_runtime.runtime.suspension import on_claim
from psych_runtime.runtime.suspension import parked_until
from psych_runtime.store.errors import LeaseLost
from psych_runtime.store.errors import SeqConflict
from psych_runtime.store.errors import StoreUnavailable
from psych_runtime.store.notify import LocalNotifier
from psych_runtime.store.port import Fence
from psych_runtime.store.port import RunHeader
from psych_runtime.store.port import RunState
from psych_runtime.store.port import Store
from psych_runtime.telemetry.port import Telemetry
from psych_runtime.telemetry.tracer import RunTracer

log = logging.getLogger(__name__)

AttemptRunner = Callable[[Journal, RunHeader, AbortSignal], Awaitable[None]]
"""What a Worker calls for each claimed Run; ``Runtime`` is one."""

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


class AttemptLifecycle:
    """The Worker's part that runs one claimed Attempt from open to release."""

    store: Store
    runner: AttemptRunner
    lease_seconds: float
    heartbeat_seconds: float
    poll_interval: float
    max_attempts: int
    attempts_ended: LocalNotifier
    _id: WorkerId
    _telemetry: Telemetry
    _killed: bool

    def _forget(self, attempt: ActiveAttempt) -> None:
        raise NotImplementedError  # the Worker's claim loop keeps the list of Attempts

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
                settle(
                    journal,
                    failed(
                        "attempts_exhausted",
                        f"the run was claimed {header.attempt_count} times without "
                        f"settling (max_attempts={self.max_attempts})",
                    ),
                )
                await journal.flush()
                return
            attempt.deadline_at = state.effective_deadline_at or header.deadline_at
            journal.stage(
                AttemptStarted,
                worker_id=self._id,
                attempt_number=state.attempt_count + 1,
                reclaimed_expired_lease=header.attempt_count > 1
                and not state.resumed_since_attempt,
            )
            if utcnow() >= attempt.deadline_at:
                # Claimed after its deadline (no live process was there to enforce it):
                # settle it aborted without running anything.
                settle(journal, past_deadline_when_claimed())
                await journal.flush()
                return
            watch = asyncio.create_task(
                watch_for_interrupt(
                    self.store,
                    journal,
                    attempt.abort,
                    poll_seconds=self.poll_interval,
                    quiet_seconds=self.heartbeat_seconds,
                )
            )
            LIVE_ATTEMPTS.add(attempt.run_id, attempt.abort)
            try:
                await self.runner(journal, header, attempt.abort)
            finally:
                LIVE_ATTEMPTS.remove(attempt.run_id, attempt.abort)
                watch.cancel()
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
                    _hand_fold_to_readers(self.store, attempt.journal)
            self.attempts_ended.signal(attempt.run_id)

    def _trace(self, attempt: ActiveAttempt, journal: Journal) -> None:
        """Open the Run's spans for this Attempt, unless no telemetry is installed."""
        try:
            if not self._telemetry.enabled:
                return
            model = getattr(self.runner, "model", None)
            tracer = RunTracer.for_attempt(self._telemetry, journal.records, journal.state, model)
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
                settle(
                    journal,
                    failed(
                        kind,
                        f"{type(error).__name__}: {error}",
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
                self._id,
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
                    self._id,
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


def _hand_fold_to_readers(store: Store, journal: Journal | None) -> None:
    """Give this process's readers the Attempt's fold of the log, when it is all durable.

    The Journal folded every record as it was written; a reader waiting for the Run in
    this process would otherwise read the whole log back and fold it again. Only a
    Journal that wrote everything it staged and met no outage knows the stored log.
    """
    if journal is None or journal.lost is not None or journal.has_pending:
        return
    if journal.committed_seq != journal.head or len(journal.records) != journal.head:
        return
    FOLDS.offer(store, list(journal.records), journal.state)


__all__ = [
    "ORPHAN_REASON",
    "ActiveAttempt",
    "AttemptKilled",
    "AttemptLifecycle",
    "AttemptRunner",
]
