"""Where a Run's wall-clock time went.

A latency breakdown is only trustworthy if its parts add up to the whole, so the
measured parts here (model, tool, compaction, queue and suspended time) are reported
beside an ``unaccounted_seconds`` remainder that makes the sum exact. The remainder
is not clamped: a negative value means two measured parts overlapped, for instance
a writer's clock ran ahead of a provider's timings, and hiding that would hide a bug.
"""

from collections.abc import Sequence
from datetime import datetime

from pydantic import BaseModel
from pydantic import ConfigDict

from psych_runtime.core.ids import ToolCallId
from psych_runtime.core.records import AttemptStarted
from psych_runtime.core.records import CompactionApplied
from psych_runtime.core.records import ModelCallFailed
from psych_runtime.core.records import ModelCallFinished
from psych_runtime.core.records import ModelCallStarted
from psych_runtime.core.records import Record
from psych_runtime.core.records import Resumed
from psych_runtime.core.records import RunAdmitted
from psych_runtime.core.records import Suspended
from psych_runtime.core.records import ToolCallFinished
from psych_runtime.core.records import ToolCallStarted


class LatencyReport(BaseModel):
    """The wall clock of a Run, split by what it was spent on.

    Attributes:
        wall_clock_seconds: from the first record to the last.
        model_seconds: queue wait plus streaming of answered model calls, plus the time
            between start and failure of failed ones.
        tool_seconds: the recorded durations of tool calls the model issued directly.
            Calls a model-written program issued run inside that program's call and
            are already counted in its duration.
        compaction_seconds: time spent in summarising calls.
        queue_seconds: from admission until a Worker first picked the Run up (or until
            the last record, if none has).
        suspended_seconds: time parked, from each suspension to its resume, or to
            the last record for a suspension still open.
        unaccounted_seconds: the rest, so that the parts sum to the wall clock
            (loop overhead, retry back-off, waiting for a Worker after a resume or a
            crash, calls cut off by a crash).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    wall_clock_seconds: float = 0.0
    model_seconds: float = 0.0
    tool_seconds: float = 0.0
    compaction_seconds: float = 0.0
    queue_seconds: float = 0.0
    suspended_seconds: float = 0.0
    unaccounted_seconds: float = 0.0

    @property
    def accounted_seconds(self) -> float:
        """The sum of every measured part, without the remainder."""
        return (
            self.model_seconds
            + self.tool_seconds
            + self.compaction_seconds
            + self.queue_seconds
            + self.suspended_seconds
        )


def _seconds(start: datetime, end: datetime) -> float:
    return (end - start).total_seconds()


def measure_latency(records: Sequence[Record]) -> LatencyReport:
    """Split the wall clock of one Run's log.

    Args:
        records: the Run's records in log order.

    Returns:
        The breakdown; all zero for an empty log.
    """
    if not records:
        return LatencyReport()
    last_at = records[-1].at
    admitted_at: datetime | None = None
    first_attempt_at: datetime | None = None
    model = tool = compaction = suspended = 0.0
    model_started_at: dict[int, datetime] = {}
    program_calls: set[ToolCallId] = set()
    suspended_at: datetime | None = None
    for record in records:
        match record:
            case RunAdmitted():
                admitted_at = record.at
            case AttemptStarted() if first_attempt_at is None:
                first_attempt_at = record.at
            case ModelCallStarted():
                model_started_at[record.turn] = record.at
            case ModelCallFinished():
                model += record.timings.total_seconds
            case ModelCallFailed() if record.turn in model_started_at:
                model += max(0.0, _seconds(model_started_at[record.turn], record.at))
            case ToolCallStarted() if record.parent_call_id is not None:
                program_calls.add(record.call_id)
            case ToolCallFinished() if record.call_id not in program_calls:
                tool += record.duration_seconds
            case CompactionApplied():
                compaction += record.timings.total_seconds
            case Suspended():
                suspended_at = record.at
            case Resumed() if suspended_at is not None:
                suspended += max(0.0, _seconds(suspended_at, record.at))
                suspended_at = None
            case _:
                pass
    if suspended_at is not None:
        suspended += max(0.0, _seconds(suspended_at, last_at))
    queue = 0.0
    if admitted_at is not None:
        queue = max(0.0, _seconds(admitted_at, first_attempt_at or last_at))
    wall = _seconds(records[0].at, last_at)
    accounted = model + tool + compaction + queue + suspended
    return LatencyReport(
        wall_clock_seconds=wall,
        model_seconds=model,
        tool_seconds=tool,
        compaction_seconds=compaction,
        queue_seconds=queue,
        suspended_seconds=suspended,
        unaccounted_seconds=wall - accounted,
    )


__all__ = ["LatencyReport", "measure_latency"]
