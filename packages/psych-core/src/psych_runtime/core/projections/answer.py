"""One Run split into its final answer and the work that led to it.

A chat screen usually wants to show the answer prominently and fold the tool calls
away behind a one-line summary. The answer is the text of the last model call that
asked for no tools: that is the moment the model stopped working and replied.
Everything else the model did is work, turn by turn, with the tool calls each turn
made.
"""

from collections.abc import Sequence
from datetime import datetime

from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import JsonValue

from psych_runtime.core.ids import RunId
from psych_runtime.core.ids import ToolCallId
from psych_runtime.core.records import JsonObject
from psych_runtime.core.records import ModelCallFailed
from psych_runtime.core.records import ModelCallFinished
from psych_runtime.core.records import Record
from psych_runtime.core.records import RunSettled
from psych_runtime.core.records import TerminalState
from psych_runtime.core.records import ToolCallFinished
from psych_runtime.core.records import ToolCallStarted
from psych_runtime.core.records import ToolFailure
from psych_runtime.core.records import ToolOutcome

_FROZEN = ConfigDict(frozen=True, extra="forbid")


def _failure_message(failure: ToolFailure | None) -> str | None:
    if failure is None:
        return None
    return failure.message or failure.kind


class ToolCallView(BaseModel):
    """One tool call and how it ended, if it has.

    Attributes:
        call_id: the call's id.
        tool: the tool called.
        arguments: the arguments it was called with.
        outcome: how it ended; ``None`` while it has not (or a crash left it open).
        result: the recorded result (``None`` for an offloaded one).
        failure_message: why it failed, when it did.
        duration_seconds: how long it ran; ``None`` until it ends.
        started_at: when it started.
        finished_at: when it ended.
    """

    model_config = _FROZEN

    call_id: ToolCallId
    tool: str
    arguments: JsonObject
    outcome: ToolOutcome | None = None
    result: JsonValue = None
    failure_message: str | None = None
    duration_seconds: float | None = None
    started_at: datetime
    finished_at: datetime | None = None


class WorkTurn(BaseModel):
    """A turn that was not the answer: what the model said and the calls it made.

    Attributes:
        turn: the turn number.
        text: anything the model wrote alongside its tool calls.
        tool_calls: the calls made in this turn, in the order they started.
        failure_message: why the model call failed, for a failed turn.
        at: when the model call ended (or, for a turn known only by its tool calls,
            when the first of them started).
    """

    model_config = _FROZEN

    turn: int
    text: str = ""
    tool_calls: tuple[ToolCallView, ...] = ()
    failure_message: str | None = None
    at: datetime


class AnswerView(BaseModel):
    """The final answer of one Run and the work before it.

    Attributes:
        run_id: the Run.
        text: the answer; empty while no model call has replied without tools.
        work: the other turns, oldest first.
        finished: True once the Run settled as completed.
    """

    model_config = _FROZEN

    run_id: RunId
    text: str = ""
    work: tuple[WorkTurn, ...] = ()
    finished: bool = False

    @property
    def tool_call_count(self) -> int:
        """How many tool calls the work made."""
        return sum(len(turn.tool_calls) for turn in self.work)

    def summary(self) -> str:
        """A short line such as ``"2 turns, 3 tool calls"``; empty when there was no work."""
        if not self.work:
            return ""
        turns = len(self.work)
        calls = self.tool_call_count
        return (
            f"{turns} turn{'' if turns == 1 else 's'}, {calls} tool call{'' if calls == 1 else 's'}"
        )


class _TurnDraft:
    """The pieces of a turn gathered while walking the log."""

    __slots__ = ("at", "calls", "failure_message", "text", "turn")

    def __init__(self, turn: int, at: datetime) -> None:
        self.turn = turn
        self.at = at
        self.text = ""
        self.failure_message: str | None = None
        self.calls: list[ToolCallId] = []


def project_answer(records: Sequence[Record]) -> AnswerView:
    """Split one Run's log into its answer and its work.

    Tool calls are grouped under the turn number stamped on their start record, which
    keeps a call with the model-issued id replaced (because that id was already used)
    with the turn that asked for it. Calls issued by a model-written program carry the
    turn of the program's call and are grouped the same way.

    Args:
        records: the Run's records in log order; a prefix of a log is fine.

    Returns:
        The answer view. A turn whose model call is still in flight shows nothing yet.
    """
    if not records:
        raise ValueError("a Run's log has at least its admission record")
    drafts: dict[int, _TurnDraft] = {}
    answer: ModelCallFinished | None = None
    started: dict[ToolCallId, ToolCallStarted] = {}
    finished: dict[ToolCallId, ToolCallFinished] = {}
    completed = False
    for record in records:
        match record:
            case ModelCallFinished():
                draft = drafts.setdefault(record.turn, _TurnDraft(record.turn, record.at))
                draft.text = record.text
                draft.at = record.at
                if not record.tool_calls:
                    answer = record
            case ModelCallFailed():
                draft = drafts.setdefault(record.turn, _TurnDraft(record.turn, record.at))
                draft.at = record.at
                draft.failure_message = _failure_message(record.failure)
            case ToolCallStarted():
                started[record.call_id] = record
                drafts.setdefault(record.turn, _TurnDraft(record.turn, record.at))
                drafts[record.turn].calls.append(record.call_id)
            case ToolCallFinished():
                finished[record.call_id] = record
            case RunSettled():
                completed = record.state is TerminalState.COMPLETED
            case _:
                pass

    def view(call_id: ToolCallId) -> ToolCallView:
        start = started[call_id]
        end = finished.get(call_id)
        return ToolCallView(
            call_id=call_id,
            tool=start.tool,
            arguments=start.arguments,
            outcome=None if end is None else end.outcome,
            result=None if end is None else end.result,
            failure_message=None if end is None else _failure_message(end.failure),
            duration_seconds=None if end is None else end.duration_seconds,
            started_at=start.at,
            finished_at=None if end is None else end.at,
        )

    answer_turn = None if answer is None else answer.turn
    work = tuple(
        WorkTurn(
            turn=draft.turn,
            text="" if draft.turn == answer_turn else draft.text,
            tool_calls=tuple(view(call_id) for call_id in draft.calls),
            failure_message=draft.failure_message,
            at=draft.at,
        )
        for draft in sorted(drafts.values(), key=lambda d: d.turn)
        if draft.turn != answer_turn or draft.calls
    )
    return AnswerView(
        run_id=records[0].run_id,
        text="" if answer is None else answer.text,
        work=work,
        finished=completed,
    )


__all__ = ["AnswerView", "ToolCallView", "WorkTurn", "project_answer"]
