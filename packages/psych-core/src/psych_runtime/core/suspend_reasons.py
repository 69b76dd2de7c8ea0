"""What each reason for suspending a Run implies, in one table.

A Run waits for one of a few reasons: a person's decision on a call, an answer to a
question, an outside event, a clock, a debugger's breakpoint, its own background
children. The reasons differ in a handful of ways, and every part of the runtime that
cares asks this table rather than naming reasons itself:

* how long a suspension may wait before the Run is abandoned (``expiry``), and whether
  that is counted from the wake time (a timer) rather than from when it began;
* what a ``resume()`` must carry: a decision (an approval), or a payload that fits the
  schema the wait declared (an event);
* how ``status()`` presents it: a pending approval, a pending question, a pending wait,
  or nothing a person can provide (children);
* whether the time spent suspended pushes back the deadline the Worker enforces.

A new reason is a ``SuspendReason`` member and one entry here.
"""

from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType

from psych_runtime.core.records import SuspendReason
from psych_runtime.core.spec import SuspensionPolicy

TIMER_EXPIRY_SECONDS = 7 * 86_400.0
"""How long after its wake time a timer suspension may still be woken."""


class Shown(StrEnum):
    """How ``status()`` presents a suspension."""

    APPROVAL = "approval"
    """``pending_approval``: the call (or step) that waits for a decision."""
    QUESTION = "question"
    """``pending_question``: the questions waiting for answers."""
    WAIT = "wait"
    """``pending_wait``: the event, timer or breakpoint being waited on."""
    NOTHING = "nothing"
    """Nothing a person can provide (the Run waits on its children)."""


@dataclass(frozen=True, slots=True)
class ReasonRules:
    """What one reason for suspending implies.

    Attributes:
        expiry: seconds a suspension may wait, read from the Spec's policy.
        expiry_from_wake: counted from the wake time rather than from the suspension.
        needs_decision: ``resume()`` must say ``approved=True`` or ``False``.
        checks_payload: ``resume()``'s payload must fit the schema the wait declared.
        shown: how ``status()`` presents it.
        extends_deadline: time spent suspended pushes back the deadline the Worker
            enforces (a Run is not blamed for the time it waited).
    """

    expiry: Callable[[SuspensionPolicy], float]
    expiry_from_wake: bool = False
    needs_decision: bool = False
    checks_payload: bool = False
    shown: Shown = Shown.WAIT
    extends_deadline: bool = True


SUSPEND_REASONS: Mapping[SuspendReason, ReasonRules] = MappingProxyType(
    {
        SuspendReason.APPROVAL: ReasonRules(
            expiry=lambda policy: policy.approval_expires_seconds,
            needs_decision=True,
            shown=Shown.APPROVAL,
        ),
        SuspendReason.QUESTION: ReasonRules(
            expiry=lambda policy: policy.question_expires_seconds,
            shown=Shown.QUESTION,
        ),
        SuspendReason.EXTERNAL: ReasonRules(
            expiry=lambda policy: policy.external_expires_seconds,
            checks_payload=True,
        ),
        SuspendReason.TIMER: ReasonRules(
            expiry=lambda policy: TIMER_EXPIRY_SECONDS,
            expiry_from_wake=True,
        ),
        SuspendReason.BREAKPOINT: ReasonRules(
            expiry=lambda policy: policy.question_expires_seconds,
        ),
        SuspendReason.CHILDREN: ReasonRules(
            expiry=lambda policy: policy.children_expires_seconds,
            shown=Shown.NOTHING,
        ),
    }
)
"""The rules of every reason; a test requires an entry for each ``SuspendReason``."""


def rules(reason: SuspendReason) -> ReasonRules:
    """The rules of ``reason``."""
    return SUSPEND_REASONS[reason]


__all__ = ["SUSPEND_REASONS", "TIMER_EXPIRY_SECONDS", "ReasonRules", "Shown", "rules"]
