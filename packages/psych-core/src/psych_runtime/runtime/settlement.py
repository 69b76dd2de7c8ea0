"""Settling a Run whose Attempt was cut short by its deadline or an interrupt.

The work was cancelled part way, so some of what it staged may never have been
written. The store is the only truth about what landed: the Run's log is read again,
finishes that were staged but not written are carried over, whatever is still open is
closed, and the Run is settled ``aborted``.
"""

from psych_runtime.core.records import RunSettled, TerminalState, ToolFailure, ToolOutcome
from psych_runtime.runtime.abort import AbortReason
from psych_runtime.runtime.journal import Journal
from psych_runtime.runtime.open_calls import (
    DEADLINE_MESSAGE,
    INTERRUPTED_MESSAGE,
    carry_over_finishes,
    close_open_calls,
    close_open_model_call,
)


async def settle_cut_short(journal: Journal, reason: AbortReason) -> None:
    """Settle the Run ``aborted`` after its work was cancelled for ``reason``.

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
    # A call that finished before the cancellation reached it keeps its real
    # outcome, even when its record was still staged and never written.
    carry_over_finishes(fresh, journal.pending_records)
    if reason is AbortReason.DEADLINE:
        kind, message = "deadline", DEADLINE_MESSAGE
        failure: ToolFailure | None = ToolFailure(
            kind="deadline", message="the run passed its deadline"
        )
    else:
        kind, message = "interrupted", INTERRUPTED_MESSAGE
        failure = None
    close_open_model_call(fresh, kind, message)
    close_open_calls(fresh, ToolOutcome.ABORTED, kind, message)
    fresh.stage(RunSettled, state=TerminalState.ABORTED, failure=failure)
    await fresh.flush()
    journal.adopt(fresh)


__all__ = ["settle_cut_short"]
