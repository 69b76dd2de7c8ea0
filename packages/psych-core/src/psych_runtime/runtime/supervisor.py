"""Supervision: deadlines fired, and Attempts that will not unwind dealt with.

It runs in its own task, apart from the Attempts it watches, so an Attempt stuck in a
model stream or a tool can never block the code that would time it out. Each pass
fires the abort signal of an Attempt past its deadline; once an aborted Attempt has
had the grace period to unwind, one that ends its Run (a deadline or an interrupt) is
settled by force, and any other (shutdown, lost lease) is abandoned as a dying process
would abandon it: no more writes, no release.
"""

import asyncio
import logging
import time

from psych_runtime.core.ids import RunId
from psych_runtime.runtime.abort import AbortReason
from psych_runtime.runtime.attempt import ActiveAttempt
from psych_runtime.runtime.attempt import AttemptLifecycle
from psych_runtime.runtime.clock import utcnow
from psych_runtime.runtime.journal import Journal
from psych_runtime.runtime.settlement import forced
from psych_runtime.runtime.settlement import settle
from psych_runtime.store.errors import StoreUnavailable
from psych_runtime.store.port import RunState

log = logging.getLogger(__name__)


class Supervision(AttemptLifecycle):
    """The Worker's part that supervises the Attempts it runs."""

    supervisor_interval: float
    grace_seconds: float
    active: dict[RunId, ActiveAttempt]

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
            reason = attempt.abort.reason
            if reason is not None and reason.ends_run:
                try:
                    await self._force_settle(attempt, reason)
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

    async def _force_settle(self, attempt: ActiveAttempt, reason: AbortReason) -> None:
        # Stop the stuck Attempt writing first, so the two cannot interleave records.
        if attempt.journal is not None:
            attempt.journal.close()
        journal = await Journal.open(
            self.store, attempt.run_id, attempt_id=attempt.attempt_id, fence=attempt.fence
        )
        if not journal.state.settled:
            settle(
                journal,
                forced(self.grace_seconds, reason),
                orphaned_attempt_id=attempt.attempt_id,
            )
            await journal.flush()
        if attempt.tracer is not None:
            attempt.tracer.close(journal.state, error="the attempt was settled by force")
        self._forget(attempt)
        if attempt.task is not None:
            attempt.task.cancel()
        if await self._tell_family(journal.state):
            await self._release(attempt, RunState.SETTLED)


__all__ = ["Supervision"]
