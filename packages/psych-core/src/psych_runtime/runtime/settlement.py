"""Settling a Run: the one place every way a Run ends goes through.

A Run ends in a ``run_settled`` record, and a settled Run holds nothing open: a call
or model call still open is closed first, with an outcome and a reason that say how
the Run ended around it. ``settle`` stages exactly that, whoever ends the Run: the
agent loop and the workflow engine with their results, the Runtime after a deadline or
an interrupt cut its work short, the Worker for a Run it ends without running (past
its deadline when claimed, claimed too often, forced after a stuck Attempt, failed by
a writer bug), the suspension rules for an expired wait, a late ``resume()``, a
parent for a child that could not finish inline.

Each way of ending is an ``Ending``; the common ones are built by the functions below,
so their kinds and messages read the same whoever writes them.
"""

from dataclasses import dataclass

from psych_runtime.core.ids import AttemptId
from psych_runtime.core.records import JsonObject
from psych_runtime.core.records import RunSettled
from psych_runtime.core.records import TerminalState
from psych_runtime.core.records import ToolFailure
from psych_runtime.core.records import ToolOutcome
from psych_runtime.runtime.abort import AbortReason
from psych_runtime.runtime.journal import Journal
from psych_runtime.runtime.open_calls import DEADLINE_MESSAGE
from psych_runtime.runtime.open_calls import INTERRUPTED_MESSAGE
from psych_runtime.runtime.open_calls import ORPHANED_MESSAGE
from psych_runtime.runtime.open_calls import Stager
from psych_runtime.runtime.open_calls import carry_over_finishes
from psych_runtime.runtime.open_calls import close_open_calls
from psych_runtime.runtime.open_calls import close_open_model_call


@dataclass(frozen=True, slots=True)
class Closing:
    """How calls still open when a Run ends are closed.

    Attributes:
        outcome: the outcome recorded for each (``aborted``, ``unknown``, ``error``).
        kind: the failure kind (``interrupted``, ``orphaned``, ``not_executed``...).
        message: what the model and an operator read about it.
    """

    outcome: ToolOutcome
    kind: str
    message: str


@dataclass(frozen=True, slots=True)
class Ending:
    """How a Run ends.

    Attributes:
        state: the terminal state.
        failure: why it did not complete, when there is a reason to give.
        closing: how calls still open are closed; None when none can be open.
        output: what a completed Run produced.
    """

    state: TerminalState
    failure: ToolFailure | None = None
    closing: Closing | None = None
    output: JsonObject | None = None


def settle(
    into: Stager, ending: Ending, *, orphaned_attempt_id: AttemptId | None = None
) -> RunSettled:
    """Stage the Run's settlement: what is still open closed first, then ``run_settled``.

    Args:
        into: the Journal (or external batch) the records are staged on.
        ending: how the Run ends.
        orphaned_attempt_id: the Attempt a forced settlement gave up on.
    """
    closing = ending.closing
    if closing is not None:
        close_open_model_call(into, closing.kind, closing.message)
        close_open_calls(into, closing.outcome, closing.kind, closing.message)
    return into.stage(
        RunSettled,
        state=ending.state,
        output=ending.output,
        failure=ending.failure,
        orphaned_attempt_id=orphaned_attempt_id,
    )


# --- the common endings ------------------------------------------------------------------


def completed(output: JsonObject | None) -> Ending:
    """The Run did its work."""
    return Ending(TerminalState.COMPLETED, output=output)


def failed(kind: str, message: str, *, traceback: str | None = None) -> Ending:
    """The Run could not go on (a limit, a failed step, a writer bug...)."""
    return Ending(
        TerminalState.FAILED, ToolFailure(kind=kind, message=message, traceback=traceback)
    )


def aborted_by_request() -> Ending:
    """Someone asked the Run to stop.

    Whatever the log still shows open when the request is noticed (a model request
    recorded as started but not yet sent, a call never run) is closed as interrupted,
    so the settled log accounts for every call it opened.
    """
    return Ending(
        TerminalState.ABORTED,
        closing=Closing(ToolOutcome.ABORTED, "interrupted", INTERRUPTED_MESSAGE),
    )


def cut_short(reason: AbortReason) -> Ending:
    """A deadline or an interrupt cancelled the Run's work part way."""
    if reason is AbortReason.DEADLINE:
        return Ending(
            TerminalState.ABORTED,
            ToolFailure(kind="deadline", message="the run passed its deadline"),
            Closing(ToolOutcome.ABORTED, "deadline", DEADLINE_MESSAGE),
        )
    return aborted_by_request()


def past_deadline_when_claimed() -> Ending:
    """No live process was there to enforce the deadline; a call left open is in doubt."""
    return Ending(
        TerminalState.ABORTED,
        ToolFailure(kind="deadline", message="the run passed its deadline"),
        Closing(ToolOutcome.UNKNOWN, "orphaned", ORPHANED_MESSAGE),
    )


def forced(grace_seconds: float, reason: AbortReason) -> Ending:
    """An Attempt did not unwind within the grace period after its deadline or interrupt."""
    after = "of its deadline" if reason is AbortReason.DEADLINE else "of an interrupt"
    return Ending(
        TerminalState.FORCE_SETTLED,
        ToolFailure(
            kind="force_settled",
            message=f"the attempt did not unwind within {grace_seconds:g}s {after}",
        ),
        Closing(ToolOutcome.UNKNOWN, "orphaned", ORPHANED_MESSAGE),
    )


def abandoned(message: str, call_message: str) -> Ending:
    """Nobody resumed the Run before its suspension expired; the waiting call never ran."""
    return Ending(
        TerminalState.ABANDONED,
        ToolFailure(kind="suspension_expired", message=message),
        Closing(ToolOutcome.ERROR, "not_executed", call_message),
    )


def not_finished(kind: str, message: str) -> Ending:
    """The Run is ended ``failed`` with calls that were never run closed ``not_executed``."""
    return Ending(
        TerminalState.FAILED,
        ToolFailure(kind=kind, message=message),
        Closing(ToolOutcome.ERROR, "not_executed", message),
    )


async def settle_cut_short(journal: Journal, reason: AbortReason) -> None:
    """Settle the Run ``aborted`` after its work was cancelled for ``reason``.

    The work was cancelled part way, so some of what it staged may never have been
    written: the store is the only truth about what landed. The log is read again,
    finishes staged but not written are carried over (a call that finished before the
    cancellation reached it keeps its real outcome), and the rest is settled.

    Args:
        journal: the cancelled Attempt's Journal; it adopts the freshly read log.
        reason: ``DEADLINE`` or ``INTERRUPT``.
    """
    fresh = await journal.reopen()
    fresh.observer = journal.observer
    if fresh.state.settled or (reason is AbortReason.INTERRUPT and fresh.state.suspended):
        # A Run that suspended before the interrupt reached it is woken by
        # ``interrupt()``; the next Attempt settles it, closing a call that waited for
        # a decision as never executed.
        journal.adopt(fresh)
        return
    carry_over_finishes(fresh, journal.pending_records)
    settle(fresh, cut_short(reason))
    await fresh.flush()
    journal.adopt(fresh)


__all__ = [
    "Closing",
    "Ending",
    "Stager",
    "abandoned",
    "aborted_by_request",
    "completed",
    "cut_short",
    "failed",
    "forced",
    "not_finished",
    "past_deadline_when_claimed",
    "settle",
    "settle_cut_short",
]
