"""Closing tool calls the log still shows open, the one way every writer does it.

A call is open from its ``tool_call_started`` until its ``tool_call_finished``. Three
writers find calls left open and must close them before the Run moves on: the agent
loop at the start of an Attempt (calls a previous Attempt left in doubt), the Runtime
when the Run's deadline cut an Attempt short, and the Worker when it settles a Run
without running it (claimed past its deadline, or force-settled after a stuck
Attempt). They all stage their finishes here, so the records and the messages a
model and an operator read stay the same whoever wrote them.

This module stands apart from the agent loop so the Worker can close calls without
importing the loop.
"""

from collections.abc import Iterable
from datetime import datetime
from typing import Any
from typing import Protocol
from typing import TypeVar

from psych_runtime.core.ids import ToolCallId
from psych_runtime.core.records import ModelCallFailed
from psych_runtime.core.records import ModelCallStarted
from psych_runtime.core.records import Record
from psych_runtime.core.records import ToolCallFinished
from psych_runtime.core.records import ToolFailure
from psych_runtime.core.records import ToolOutcome
from psych_runtime.core.state import RunStateView
from psych_runtime.runtime.journal import Journal

R = TypeVar("R", bound=Record)


class Stager(Protocol):
    """Where closing records are staged: a ``Journal``, or a batch appended from outside."""

    @property
    def state(self) -> RunStateView:
        """The folded state, including what is staged."""
        ...

    @property
    def records(self) -> list[Record]:
        """Every record known, staged ones included."""
        ...

    def stage(self, record_type: type[R], *, at: datetime | None = None, **fields: Any) -> R:
        """Build, fold and queue the next record (``at`` defaults to now)."""
        ...


ORPHANED_MESSAGE = (
    "The worker running this call stopped before it reported back. The call may or may "
    "not have taken effect."
)
"""What a call left in doubt by a stopped Worker is closed with (kind ``orphaned``)."""

DEADLINE_MESSAGE = "cancelled at the run's deadline"
"""What a call cut short by the Run's deadline is closed with (kind ``deadline``)."""

INTERRUPTED_MESSAGE = "cancelled because the run was interrupted"
"""What a call cut short by an interrupt is closed with (kind ``interrupted``)."""

_ENVELOPE = {"run_id", "seq", "at", "scope", "attempt_id", "type"}
"""The fields the Journal fills in itself when it stages a record."""


def close_call(
    journal: Stager, call_id: ToolCallId, outcome: ToolOutcome, kind: str, message: str
) -> None:
    """Stage the finish of one open call, with ``outcome`` and a failure saying why."""
    journal.stage(
        ToolCallFinished,
        call_id=call_id,
        outcome=outcome,
        failure=ToolFailure(kind=kind, message=message),
    )


def close_open_calls(journal: Stager, outcome: ToolOutcome, kind: str, message: str) -> None:
    """Stage a finish for every call the log still shows open."""
    for call in list(journal.state.open_tool_calls.values()):
        close_call(journal, call.call_id, outcome, kind, message)


def close_open_model_call(journal: Stager, kind: str, message: str) -> None:
    """Stage the failure of the model call the log still shows open, if there is one.

    A model call cut short (its stream cancelled by an interrupt or the deadline) has
    no answer to record; saying so keeps the log's account of each call complete.
    """
    if not journal.state.model_call_open:
        return
    started = next(
        record for record in reversed(journal.records) if isinstance(record, ModelCallStarted)
    )
    journal.stage(
        ModelCallFailed,
        turn=started.turn,
        model=started.model,
        failure=ToolFailure(kind=kind, message=message),
    )


def carry_over_finishes(journal: Journal, staged: Iterable[Record]) -> None:
    """Stage again, on a freshly read ``journal``, the finishes another one never wrote.

    A call that finished before a cancellation reached it keeps its real outcome, even
    when its record was still staged and never written. Each finish keeps its original
    time; a finish for a call the fresh log no longer shows open is left out.
    """
    for record in staged:
        if isinstance(record, ToolCallFinished) and record.call_id in journal.state.open_tool_calls:
            journal.stage(ToolCallFinished, at=record.at, **record.model_dump(exclude=_ENVELOPE))
