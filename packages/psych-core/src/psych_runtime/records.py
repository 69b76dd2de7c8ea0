"""The Record types of a Run's log, the fold over them, and the views the reads return."""

from psych_runtime.core.corruption import (
    CorruptionReason as CorruptionReason,
    CorruptLog as CorruptLog,
)
from psych_runtime.core.ids import (
    AttemptId as AttemptId,
    EntryId as EntryId,
    RunId as RunId,
    StepId as StepId,
    ToolCallId as ToolCallId,
    VersionHash as VersionHash,
    WorkerId as WorkerId,
)
from psych_runtime.core.messages import (
    ToolDefinition as ToolDefinition,
)
from psych_runtime.core.metering import (
    Cost as Cost,
    CostSource as CostSource,
    Usage as Usage,
)
from psych_runtime.core.projections.answer import (
    AnswerView as AnswerView,
    ToolCallView as ToolCallView,
    WorkTurn as WorkTurn,
)
from psych_runtime.core.projections.report_types import (
    CompactionReport as CompactionReport,
    FailureStreakTrip as FailureStreakTrip,
    LatencyReport as LatencyReport,
    ModelCallReport as ModelCallReport,
    RunReport as RunReport,
    StepReport as StepReport,
    SubagentReport as SubagentReport,
    SubtreeTotals as SubtreeTotals,
    SuspensionReport as SuspensionReport,
    ToolCallReport as ToolCallReport,
    TotalsReport as TotalsReport,
)
from psych_runtime.core.projections.status import (
    PendingApproval as PendingApproval,
    PendingQuestion as PendingQuestion,
    PendingWait as PendingWait,
    RunStatus as RunStatus,
)
from psych_runtime.core.projections.thread import (
    MessageView as MessageView,
    ThreadView as ThreadView,
)
from psych_runtime.core.records import (
    AbortRequested as AbortRequested,
    AskedQuestion as AskedQuestion,
    AttemptStarted as AttemptStarted,
    CompactionApplied as CompactionApplied,
    CompactionReason as CompactionReason,
    Component as Component,
    ComponentShown as ComponentShown,
    ModelCallFailed as ModelCallFailed,
    ModelCallFinished as ModelCallFinished,
    ModelCallStarted as ModelCallStarted,
    ModelTimings as ModelTimings,
    QuestionOption as QuestionOption,
    QueueCancelled as QueueCancelled,
    QueueConsumed as QueueConsumed,
    QueueEnqueued as QueueEnqueued,
    QueueKind as QueueKind,
    Record as Record,
    ResultAttachment as ResultAttachment,
    Resumed as Resumed,
    RunAdmitted as RunAdmitted,
    RunSettled as RunSettled,
    StepCompleted as StepCompleted,
    StepStarted as StepStarted,
    SubagentFinished as SubagentFinished,
    SubagentMessaged as SubagentMessaged,
    SubagentSpawned as SubagentSpawned,
    Suspended as Suspended,
    SuspendReason as SuspendReason,
    Task as Task,
    TaskListUpdated as TaskListUpdated,
    TerminalState as TerminalState,
    ToolCallFinished as ToolCallFinished,
    ToolCallStarted as ToolCallStarted,
    ToolFailure as ToolFailure,
    ToolOutcome as ToolOutcome,
    TurnStarted as TurnStarted,
    record_from_json as record_from_json,
    record_to_json as record_to_json,
)
from psych_runtime.core.reducer import (
    reduce as reduce,
)
from psych_runtime.core.state import (
    Lifecycle as Lifecycle,
    RunStateView as RunStateView,
)
from psych_runtime.runtime.abort import (
    AbortReason as AbortReason,
)

# Each name above is imported ``as`` itself, the explicit re-export type checkers
# honour; the list of public names is that list of imports.
__all__ = sorted(name for name in globals() if not name.startswith("_"))
