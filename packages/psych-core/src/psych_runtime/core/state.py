"""The folded state of one Run, as the reducer produces it.

``RunStateView`` is what every read and every runtime decision looks at: it is derived
from the log and never stored. It is a mutable dataclass so the reducer can apply one
record in place in constant time (the writer folds every record before it appends it),
but all the values it holds are immutable, which is why :meth:`RunStateView.copy` only
has to duplicate containers to give a continued fold its own state to change.
"""

from dataclasses import dataclass
from dataclasses import field
from dataclasses import fields
from datetime import datetime
from datetime import timedelta
from enum import StrEnum

from pydantic import JsonValue

from psych_runtime.core.ids import AttemptId
from psych_runtime.core.ids import EntryId
from psych_runtime.core.ids import RunId
from psych_runtime.core.ids import StepId
from psych_runtime.core.ids import ToolCallId
from psych_runtime.core.ids import VersionHash
from psych_runtime.core.metering import Cost
from psych_runtime.core.metering import Usage
from psych_runtime.core.records import AskedQuestion
from psych_runtime.core.records import Component
from psych_runtime.core.records import JsonObject
from psych_runtime.core.records import QueueKind
from psych_runtime.core.records import ResultAttachment
from psych_runtime.core.records import SuspendReason
from psych_runtime.core.records import Task
from psych_runtime.core.records import TerminalState
from psych_runtime.core.records import ToolFailure
from psych_runtime.core.records import ToolOutcome
from psych_runtime.core.scope import Scope


class Lifecycle(StrEnum):
    """Where a Run is, in the words a user interface shows.

    This is coarser than the log and finer than the store's own claim states: it
    answers "what should the user see next to this Run?".
    """

    QUEUED = "queued"
    """Admitted, but no Worker has picked it up yet."""
    RUNNING = "running"
    WAITING = "waiting"
    """Suspended until a person, an event, a timer or its children answer."""
    STOPPING = "stopping"
    """Someone asked it to stop and it has not settled yet."""
    DONE = "done"
    FAILED = "failed"
    STOPPED = "stopped"
    """Ended without finishing: aborted, abandoned or force-settled."""


_TERMINAL_LIFECYCLE: dict[TerminalState, Lifecycle] = {
    TerminalState.COMPLETED: Lifecycle.DONE,
    TerminalState.FAILED: Lifecycle.FAILED,
    TerminalState.ABORTED: Lifecycle.STOPPED,
    TerminalState.ABANDONED: Lifecycle.STOPPED,
    TerminalState.FORCE_SETTLED: Lifecycle.STOPPED,
}


@dataclass(frozen=True, slots=True)
class OpenToolCall:
    """A tool call that has started and not yet finished.

    After a crash these are the calls whose side effects may or may not have
    happened, so everything needed to re-run or close one honestly is kept here.
    """

    call_id: ToolCallId
    tool: str
    arguments: JsonObject
    turn: int
    step_id: StepId | None
    interruptible: bool
    safe_to_retry: bool
    started_at: datetime
    parent_call_id: ToolCallId | None = None


@dataclass(frozen=True, slots=True)
class ToolResult:
    """A settled tool call, kept in the order the results arrived."""

    call_id: ToolCallId
    tool: str
    outcome: ToolOutcome
    result: JsonValue
    failure: ToolFailure | None
    duration_seconds: float
    result_handle: str | None
    preview: str | None
    turn: int
    blob_key: str | None
    content_type: str | None
    attachments: tuple[ResultAttachment, ...]
    step_id: StepId | None = None
    parent_call_id: ToolCallId | None = None
    result_bytes: int = 0


@dataclass(frozen=True, slots=True)
class RepeatTally:
    """How many times in a row one call (tool plus arguments) gave the same answer.

    The repetition guard uses it to notice a model asking the same question and
    getting the same reply over and over.
    """

    result_digest: str
    count: int


@dataclass(frozen=True, slots=True)
class StepRecord:
    """One attempt of one workflow step, as far as the log has got."""

    step_id: StepId
    name: str
    kind: str
    attempt_number: int
    input: JsonObject
    path: tuple[str | int, ...]
    parent_step_id: StepId | None
    iteration: int | None
    replayed_from: RunId | None
    started_at: datetime
    started_seq: int
    completed: bool = False
    output: JsonObject | None = None
    failure: ToolFailure | None = None
    child_run_id: RunId | None = None
    skipped: bool = False
    will_retry: bool = False
    retry_at: datetime | None = None
    completed_at: datetime | None = None
    completed_seq: int | None = None

    @property
    def settled(self) -> bool:
        """True once the step is over for good (completed and not about to retry)."""
        return self.completed and not self.will_retry


@dataclass(frozen=True, slots=True)
class StepResume:
    """One answer a suspended step received, in the order they came."""

    reason: SuspendReason
    payload: JsonObject
    approved: bool | None
    seq: int


@dataclass(frozen=True, slots=True)
class PendingQueueEntry:
    """A queued message that has been neither delivered nor withdrawn."""

    entry_id: EntryId
    queue: QueueKind
    payload: JsonObject
    enqueued_seq: int


@dataclass(frozen=True, slots=True)
class ChildRun:
    """A subagent this Run spawned, and how it ended once it has."""

    run_id: RunId
    name: str
    call_id: ToolCallId
    version_hash: VersionHash
    depth: int
    background: bool
    tools: tuple[str, ...]
    model: str
    spawned_seq: int
    terminal_state: TerminalState | None = None
    output: JsonObject | None = None
    failure: ToolFailure | None = None
    usage: Usage = field(default_factory=Usage)
    unreported_usage_calls: int = 0
    cost: Cost | None = None
    unpriced_model_calls: int = 0
    messages_sent: int = 0
    finished_seq: int | None = None
    runs: int = 1
    run_seconds: float = 0.0

    @property
    def alive(self) -> bool:
        """True until the parent's log records the child's ending."""
        return self.finished_seq is None


@dataclass(slots=True)
class RunStateView:
    """Everything the log says about one Run, folded.

    Two views compare equal when every field is equal, which is what lets tests
    check that a continued fold lands exactly where a whole-log fold does.

    Only the reducer should change a view. Code that wants to fold further without
    disturbing a view it was handed calls :meth:`copy` first.
    """

    # identity and admission
    run_id: RunId
    scope: Scope
    version_hash: VersionHash | None = None
    head_seq: int = 0
    admitted: bool = False
    deadline_at: datetime | None = None
    parent_run_id: RunId | None = None
    delegation_depth: int = 0
    continues_run_id: RunId | None = None
    idempotency_key: str | None = None
    run_input: JsonObject = field(default_factory=dict)
    replays_run_id: RunId | None = None
    replay_from_step: str | None = None
    breakpoints: tuple[str, ...] = ()
    step_mode: bool = False
    trace_context: dict[str, str] = field(default_factory=dict)

    # ending
    settled: bool = False
    terminal_state: TerminalState | None = None
    output: JsonObject | None = None
    failure: ToolFailure | None = None

    # attempts and turns
    attempt_count: int = 0
    current_attempt: AttemptId | None = None
    turn: int = 0
    turn_open: bool = False
    model_call_open: bool = False
    abort_seq: int | None = None

    # suspension
    suspended: bool = False
    suspend_reason: SuspendReason | None = None
    suspend_expires_at: datetime | None = None
    suspended_at: datetime | None = None
    pending_approval_call_id: ToolCallId | None = None
    suspend_question: str | None = None
    suspend_questions: tuple[AskedQuestion, ...] = ()
    suspended_step_id: StepId | None = None
    suspended_step_name: str | None = None
    suspend_event: str | None = None
    suspend_wake_at: datetime | None = None
    suspend_payload_schema: JsonObject = field(default_factory=dict)
    resumed_since_attempt: bool = False
    suspended_seconds: float = 0.0
    resume_payloads: dict[ToolCallId, JsonObject] = field(default_factory=dict)
    approval_decisions: dict[ToolCallId, bool] = field(default_factory=dict)
    decided_at_attempt: dict[ToolCallId, int] = field(default_factory=dict)
    step_resumes: dict[StepId, list[StepResume]] = field(default_factory=dict)

    # tools
    open_tool_calls: dict[ToolCallId, OpenToolCall] = field(default_factory=dict)
    tool_results: list[ToolResult] = field(default_factory=list)
    result_handles: dict[str, ToolCallId] = field(default_factory=dict)
    failure_streaks: dict[str, int] = field(default_factory=dict)
    repeat_counts: dict[str, RepeatTally] = field(default_factory=dict)
    program_call_ids: set[ToolCallId] = field(default_factory=set)
    program_binding_call_ids: set[ToolCallId] = field(default_factory=set)
    program_preserved_bytes: dict[ToolCallId, int] = field(default_factory=dict)
    program_tool_calls: int = 0
    started_call_ids: set[ToolCallId] = field(default_factory=set)

    # workflow steps
    steps: dict[StepId, StepRecord] = field(default_factory=dict)
    step_starts: list[StepRecord] = field(default_factory=list)
    step_start_index: dict[StepId, int] = field(default_factory=dict)
    workflow_state_updates: JsonObject = field(default_factory=dict)

    # queues
    pending_steer: list[PendingQueueEntry] = field(default_factory=list)
    pending_follow_up: list[PendingQueueEntry] = field(default_factory=list)
    pending_next_run: list[PendingQueueEntry] = field(default_factory=list)
    queue_entries: dict[EntryId, PendingQueueEntry] = field(default_factory=dict)
    cancelled_entry_ids: set[EntryId] = field(default_factory=set)
    consumed_entry_ids: set[EntryId] = field(default_factory=set)

    # content
    tasks: tuple[Task, ...] = ()
    components: list[Component] = field(default_factory=list)

    # metering
    usage: Usage = field(default_factory=Usage)
    unreported_usage_calls: int = 0
    cost: Cost | None = None
    unpriced_model_calls: int = 0
    provider_reported_costs: int = 0
    model_calls: int = 0
    failed_model_calls: int = 0
    transient_retries_used: int = 0
    last_prompt_tokens: int = 0
    compaction_boundary_seq: int = 0
    compaction_summaries: list[str] = field(default_factory=list)
    compaction_calls: int = 0

    # subagents
    children: dict[RunId, ChildRun] = field(default_factory=dict)

    # --- derived -------------------------------------------------------------------

    @property
    def has_dangling_tool_calls(self) -> bool:
        """True when some call started and has no recorded ending."""
        return bool(self.open_tool_calls)

    @property
    def aborted(self) -> bool:
        """True once anyone asked the Run to stop."""
        return self.abort_seq is not None

    @property
    def effective_deadline_at(self) -> datetime | None:
        """The admission deadline pushed back by the time spent suspended.

        Time parked waiting on a person is not time the Run had to work, so it
        does not count against the deadline. Only finished suspensions count: a
        pure fold has no clock to measure an ongoing one.
        """
        if self.deadline_at is None:
            return None
        return self.deadline_at + timedelta(seconds=self.suspended_seconds)

    @property
    def pending_call(self) -> OpenToolCall | None:
        """The open tool call the current suspension is waiting to decide, if any."""
        if not self.suspended or self.pending_approval_call_id is None:
            return None
        return self.open_tool_calls.get(self.pending_approval_call_id)

    @property
    def live_children(self) -> list[ChildRun]:
        """Children that have not finished, in the order they were spawned."""
        return [child for child in self.children.values() if child.alive]

    @property
    def is_runnable(self) -> bool:
        """True when a Worker could usefully take this Run."""
        return self.admitted and not self.settled and not self.suspended

    @property
    def lifecycle(self) -> Lifecycle:
        """The user-facing state; an ending wins over an abort, which wins over waiting."""
        if self.settled and self.terminal_state is not None:
            return _TERMINAL_LIFECYCLE[self.terminal_state]
        if self.aborted:
            return Lifecycle.STOPPING
        if self.suspended:
            return Lifecycle.WAITING
        if self.attempt_count == 0:
            return Lifecycle.QUEUED
        return Lifecycle.RUNNING

    def copy(self) -> "RunStateView":
        """Return a view that can be folded further without changing this one.

        Every value held is immutable (frozen records and dataclasses), so copying
        the containers is enough; the cost is linear in the number of entries and
        nothing is serialised.
        """
        clone = object.__new__(RunStateView)
        for name in _SHARED_FIELDS:
            setattr(clone, name, getattr(self, name))
        for name in _CONTAINER_FIELDS:
            setattr(clone, name, getattr(self, name).copy())
        clone.step_resumes = {key: list(items) for key, items in self.step_resumes.items()}
        return clone


_CONTAINER_FIELDS: tuple[str, ...] = tuple(
    spec.name for spec in fields(RunStateView) if spec.default_factory in (dict, list, set)
)
"""Fields holding a mutable container, which a copy must not share."""

_SHARED_FIELDS: tuple[str, ...] = tuple(
    spec.name for spec in fields(RunStateView) if spec.name not in _CONTAINER_FIELDS
)
"""Fields holding immutable values, which a copy may share."""


__all__ = [
    "ChildRun",
    "Lifecycle",
    "OpenToolCall",
    "PendingQueueEntry",
    "RepeatTally",
    "RunStateView",
    "StepRecord",
    "StepResume",
    "ToolResult",
]
