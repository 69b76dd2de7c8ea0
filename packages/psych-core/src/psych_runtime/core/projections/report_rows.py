"""Rows of a Run report, each paired from the records that open and close it.

A model call is paired by its turn, a tool call by its call id, a step attempt by its
step id, a suspension with the resume that follows it and a subagent by its child Run
id. A row whose closing record never came (the Attempt died first) is kept and marked
as such rather than dropped, because those are the rows an operator most needs.
"""

from collections.abc import Sequence

from psych_runtime.core.ids import RunId
from psych_runtime.core.ids import StepId
from psych_runtime.core.ids import ToolCallId
from psych_runtime.core.projections.report_types import CompactionReport
from psych_runtime.core.projections.report_types import FailureStreakTrip
from psych_runtime.core.projections.report_types import ModelCallReport
from psych_runtime.core.projections.report_types import StepReport
from psych_runtime.core.projections.report_types import SubagentReport
from psych_runtime.core.projections.report_types import SuspensionReport
from psych_runtime.core.projections.report_types import ToolCallReport
from psych_runtime.core.records import CompactionApplied
from psych_runtime.core.records import ModelCallFailed
from psych_runtime.core.records import ModelCallFinished
from psych_runtime.core.records import ModelCallStarted
from psych_runtime.core.records import Record
from psych_runtime.core.records import Resumed
from psych_runtime.core.records import SubagentFinished
from psych_runtime.core.records import SubagentMessaged
from psych_runtime.core.records import SubagentSpawned
from psych_runtime.core.records import Suspended
from psych_runtime.core.records import ToolCallFinished
from psych_runtime.core.records import ToolCallStarted
from psych_runtime.core.records import ToolOutcome
from psych_runtime.core.records import TurnStarted
from psych_runtime.core.reducer import counts_toward_streak
from psych_runtime.core.state import StepRecord


def model_call_reports(records: Sequence[Record]) -> tuple[ModelCallReport, ...]:
    """Pair each model call's start with its answer or failure, by turn."""
    turn_steps: dict[int, StepId | None] = {}
    rows: list[ModelCallReport] = []
    open_row: dict[int, int] = {}
    for record in records:
        match record:
            case TurnStarted():
                turn_steps[record.turn] = record.step_id
            case ModelCallStarted():
                open_row[record.turn] = len(rows)
                rows.append(
                    ModelCallReport(
                        turn=record.turn,
                        step_id=turn_steps.get(record.turn),
                        model=record.model,
                        system_prompt=record.system_prompt,
                        tool_names=record.tool_names,
                        started_at=record.at,
                        dangling=True,
                    )
                )
            case ModelCallFinished():
                index = open_row.pop(record.turn)
                rows[index] = rows[index].model_copy(
                    update={
                        "usage": record.usage if record.usage_reported else None,
                        "usage_reported": record.usage_reported,
                        "cost": record.cost,
                        "timings": record.timings,
                        "finish_reason": record.finish_reason,
                        "text": record.text,
                        "tool_call_ids": record.tool_calls,
                        "finished_at": record.at,
                        "dangling": False,
                    }
                )
            case ModelCallFailed():
                index = open_row.pop(record.turn)
                rows[index] = rows[index].model_copy(
                    update={
                        "failure": record.failure,
                        "will_retry": record.will_retry,
                        "finished_at": record.at,
                        "dangling": False,
                    }
                )
            case _:
                pass
    return tuple(rows)


def tool_call_reports(records: Sequence[Record]) -> tuple[ToolCallReport, ...]:
    """Pair each tool call's start with its ending, by call id."""
    rows: dict[ToolCallId, ToolCallReport] = {}
    for record in records:
        match record:
            case ToolCallStarted():
                rows[record.call_id] = ToolCallReport(
                    call_id=record.call_id,
                    tool=record.tool,
                    turn=record.turn,
                    step_id=record.step_id,
                    arguments=record.arguments,
                    started_at=record.at,
                    interruptible=record.interruptible,
                    safe_to_retry=record.safe_to_retry,
                    parent_call_id=record.parent_call_id,
                )
            case ToolCallFinished():
                rows[record.call_id] = rows[record.call_id].model_copy(
                    update={
                        "outcome": record.outcome,
                        "result": record.result,
                        "failure": record.failure,
                        "duration_seconds": record.duration_seconds,
                        "result_handle": record.result_handle,
                        "preview": record.preview,
                        "result_bytes": record.result_bytes,
                        "result_blob_key": record.result_blob_key,
                        "result_content_type": record.result_content_type,
                        "attachments": record.attachments,
                        "finished_at": record.at,
                    }
                )
            case _:
                pass
    return tuple(rows.values())


def step_reports(steps: Sequence[StepRecord]) -> tuple[StepReport, ...]:
    """One row per step attempt, in the order they started, as the fold left each one.

    The reducer already pairs every completion with the latest attempt of its step
    (and refuses a log where that fails), so the rows are read from its list.
    """
    return tuple(StepReport.model_validate(step, from_attributes=True) for step in steps)


def failure_streak_trips(
    records: Sequence[Record], threshold: int
) -> tuple[FailureStreakTrip, ...]:
    """Replay the per-tool failure streaks and note each time one reaches the threshold.

    The counting is the reducer's own (``counts_toward_streak``): a success ends a
    tool's streak, a failure of the tool or a call left in doubt lengthens it, and a
    cancelled call or one the runtime refused to run leaves it as it was.
    """
    tools: dict[ToolCallId, str] = {}
    streaks: dict[str, int] = {}
    trips: list[FailureStreakTrip] = []
    for record in records:
        match record:
            case ToolCallStarted():
                tools[record.call_id] = record.tool
            case ToolCallFinished():
                tool = tools[record.call_id]
                if record.outcome is ToolOutcome.OK:
                    streaks.pop(tool, None)
                elif counts_toward_streak(record.outcome, record.failure):
                    streak = streaks.get(tool, 0) + 1
                    streaks[tool] = streak
                    if streak == threshold:
                        trips.append(
                            FailureStreakTrip(
                                tool=tool,
                                call_id=record.call_id,
                                streak=streak,
                                threshold=threshold,
                                at=record.at,
                            )
                        )
            case _:
                pass
    return tuple(trips)


def suspension_reports(records: Sequence[Record]) -> tuple[SuspensionReport, ...]:
    """Pair each suspension with the resume that ended it, if one did."""
    rows: list[SuspensionReport] = []
    for record in records:
        match record:
            case Suspended():
                rows.append(
                    SuspensionReport(
                        reason=record.reason,
                        question=record.question,
                        questions=record.questions,
                        pending_call_id=record.pending_call_id,
                        suspended_at=record.at,
                        expires_at=record.expires_at,
                        step_id=record.step_id,
                        step_name=record.step_name,
                        event=record.event,
                        payload_schema=record.payload_schema,
                        wake_at=record.wake_at,
                    )
                )
            case Resumed():
                rows[-1] = rows[-1].model_copy(
                    update={
                        "resumed_at": record.at,
                        "approved": record.approved,
                        "resumed_by": record.resumed_by,
                        "payload": record.payload,
                    }
                )
            case _:
                pass
    return tuple(rows)


def compaction_reports(records: Sequence[Record]) -> tuple[CompactionReport, ...]:
    """One row per compaction; each record is complete on its own."""
    return tuple(
        CompactionReport(
            seq=record.seq,
            reason=record.reason,
            replaced_from_seq=record.replaced_from_seq,
            replaced_to_seq=record.replaced_to_seq,
            summary=record.summary,
            model=record.model,
            usage=record.usage if record.usage_reported else None,
            usage_reported=record.usage_reported,
            cost=record.cost,
            timings=record.timings,
            at=record.at,
        )
        for record in records
        if isinstance(record, CompactionApplied)
    )


def subagent_reports(records: Sequence[Record]) -> tuple[SubagentReport, ...]:
    """Follow each composed child from its spawn to its ending in the parent's log."""
    rows: dict[RunId, SubagentReport] = {}
    for record in records:
        match record:
            case SubagentSpawned():
                rows[record.child_run_id] = SubagentReport(
                    name=record.name,
                    child_run_id=record.child_run_id,
                    call_id=record.call_id,
                    child_version_hash=record.child_version_hash,
                    purpose=record.purpose,
                    task=record.task,
                    deliverable=record.deliverable,
                    tools=record.tools,
                    model=record.model,
                    delegation_depth=record.delegation_depth,
                    background=record.background,
                    spawned_at=record.at,
                )
            case SubagentMessaged():
                row = rows[record.child_run_id]
                rows[record.child_run_id] = row.model_copy(
                    update={"messages_sent": row.messages_sent + 1}
                )
            case SubagentFinished():
                rows[record.child_run_id] = rows[record.child_run_id].model_copy(
                    update={
                        "finished_at": record.at,
                        "terminal_state": record.state,
                        "output": record.output,
                        "failure": record.failure,
                        "usage": record.usage,
                        "unreported_usage_calls": record.unreported_usage_calls,
                        "cost": record.cost,
                        "unpriced_model_calls": record.unpriced_model_calls,
                    }
                )
            case _:
                pass
    return tuple(rows.values())


__all__ = [
    "compaction_reports",
    "failure_streak_trips",
    "model_call_reports",
    "step_reports",
    "subagent_reports",
    "suspension_reports",
    "tool_call_reports",
]
