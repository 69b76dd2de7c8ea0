"""Suspension, the one way a Run waits: for a person, an event, a timer or its children.

A suspending Attempt writes ``suspended`` and ends; the Worker hands the Run back
parked until the moment it next needs looking at (the wake time of a timer, otherwise
the suspension's expiry), so no Worker holds or polls a waiting Run. ``resume()``
clears the parking and the notifier wakes a Worker at once.

A Worker that claims a Run the log still shows suspended (its parking ran out) does
exactly one of three things before anything else, and writes nothing else:

* a timer whose wake time has come: append ``resumed`` (woken by the timer) and run;
* a suspension past its expiry: settle the Run ``abandoned`` (``suspension_expired``),
  so a stale approval can never run;
* otherwise (claimed early, by a clock ahead of the writer's): hand the Run back parked.
"""

from dataclasses import dataclass
from datetime import datetime
from datetime import timedelta
from enum import Enum
from typing import Any

from psych_runtime.core.records import Resumed
from psych_runtime.core.records import Suspended
from psych_runtime.core.records import SuspendReason
from psych_runtime.core.spec import SuspensionPolicy
from psych_runtime.core.state import RunStateView
from psych_runtime.core.suspend_reasons import TIMER_EXPIRY_SECONDS
from psych_runtime.core.suspend_reasons import rules
from psych_runtime.runtime.clock import utcnow
from psych_runtime.runtime.journal import Journal
from psych_runtime.runtime.settlement import abandoned
from psych_runtime.runtime.settlement import settle

EXPIRED_MESSAGE = "the run waited longer than its suspension allows and was abandoned"
"""The failure message of a Run settled because its suspension expired."""

TIMER_EXPIRY = timedelta(seconds=TIMER_EXPIRY_SECONDS)
"""How long after its wake time a timer suspension may still be woken."""


def expires_in(policy: SuspensionPolicy, reason: SuspendReason) -> float:
    """Seconds a suspension for ``reason`` may wait, by the Spec's policy."""
    return rules(reason).expiry(policy)


def stage_suspension(
    journal: Journal,
    policy: SuspensionPolicy,
    reason: SuspendReason,
    *,
    wake_at: datetime | None = None,
    **fields: Any,
) -> Suspended:
    """Stage ``suspended`` for ``reason``, expiring as the policy says.

    A reason whose expiry counts from its wake time (a timer) expires that long after
    it; every other one counts from now.
    """
    now = utcnow()
    start = wake_at if rules(reason).expiry_from_wake and wake_at is not None else now
    expires_at = start + timedelta(seconds=expires_in(policy, reason))
    return journal.stage(
        Suspended, at=now, reason=reason, expires_at=expires_at, wake_at=wake_at, **fields
    )


def parked_until(state: RunStateView) -> datetime | None:
    """When a suspended Run should next be claimed: its wake time, else its expiry.

    ``None`` (claim it now) for a Run that is not suspended, and for one whose abort
    was requested: an interrupt that lands while the Worker is still releasing the Run
    is already in the log the release is decided from, so parking the Run would hide
    it until the expiry.
    """
    if not state.suspended or state.aborted:
        return None
    if state.suspend_reason is SuspendReason.TIMER and state.suspend_wake_at is not None:
        return state.suspend_wake_at
    return state.suspend_expires_at


def expired(state: RunStateView, now: datetime) -> bool:
    """Whether the Run's suspension has outlived its expiry (inclusive)."""
    expires = state.suspend_expires_at
    return state.suspended and expires is not None and now >= expires


EXPIRED_CALL_MESSAGE = "not run: nobody decided on this call before the run's suspension expired"
"""What a call still open when its Run's suspension expired is closed with."""


def settle_expired(journal: Journal) -> None:
    """Stage the Run's settlement as ``abandoned`` because nobody resumed it in time.

    A call waiting for approval never ran; it is closed ``not_executed`` first, so a
    settled Run holds no open call.
    """
    settle(journal, abandoned(EXPIRED_MESSAGE, EXPIRED_CALL_MESSAGE))


class OnClaim(Enum):
    """What a Worker does with a claimed Run whose log shows it suspended."""

    RUN = "run"
    """The timer woke it (``resumed`` is staged), or it was interrupted while waiting:
    the Attempt goes on, and settles it in the second case."""
    SETTLED = "settled"
    """Its suspension expired: the abandonment is staged."""
    PARK = "park"
    """Claimed early: hand it back parked, writing nothing."""


@dataclass(frozen=True, slots=True)
class ClaimedSuspension:
    """The decision for a claimed suspended Run, and until when to park it."""

    action: OnClaim
    parked_until: datetime | None = None


def on_claim(journal: Journal, now: datetime) -> ClaimedSuspension:
    """Decide (and stage) what a Worker does with a claimed, still suspended Run."""
    state = journal.state
    if state.aborted:
        return ClaimedSuspension(OnClaim.RUN)  # interrupted while waiting: settle it
    if expired(state, now):
        settle_expired(journal)
        return ClaimedSuspension(OnClaim.SETTLED)
    wake = state.suspend_wake_at
    if state.suspend_reason is SuspendReason.TIMER and wake is not None and now >= wake:
        journal.stage(Resumed, payload={"woken_by": "timer"})
        return ClaimedSuspension(OnClaim.RUN)
    return ClaimedSuspension(OnClaim.PARK, parked_until(state))


__all__ = [
    "EXPIRED_CALL_MESSAGE",
    "EXPIRED_MESSAGE",
    "TIMER_EXPIRY",
    "ClaimedSuspension",
    "OnClaim",
    "expired",
    "expires_in",
    "on_claim",
    "parked_until",
    "settle_expired",
    "stage_suspension",
]
