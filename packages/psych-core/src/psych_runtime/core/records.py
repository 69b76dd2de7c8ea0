"""The Record types: everything that can happen to a Run, as an append-only log.

Every record carries the same envelope (``run_id``, ``seq``, ``at``, ``scope``,
``attempt_id``) plus a literal ``type`` that discriminates the union. Records are frozen
and refuse unknown fields, so a log written by a newer or buggier writer fails loudly on
read instead of being half-understood.

The writer supplies the envelope; callers of the Journal supply only the type-specific
fields.
"""

from datetime import datetime
from enum import StrEnum
from typing import Annotated
from typing import Literal
from typing import Self

from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import Field
from pydantic import JsonValue
from pydantic import TypeAdapter
from pydantic import field_validator
from pydantic import model_validator

from psych_runtime.core.ids import AttemptId
from psych_runtime.core.ids import EntryId
from psych_runtime.core.ids import RunId
from psych_runtime.core.ids import StepId
from psych_runtime.core.ids import ToolCallId
from psych_runtime.core.ids import VersionHash
from psych_runtime.core.ids import WorkerId
from psych_runtime.core.metering import Cost
from psych_runtime.core.metering import Usage
from psych_runtime.core.scope import Scope

JsonObject = dict[str, JsonValue]

_FROZEN = ConfigDict(frozen=True, extra="forbid")

MESSAGE_CAP = 8192
TRACEBACK_CAP = 65_536
_TRUNCATED = "... [truncated]"


def _clip(text: str, cap: int) -> str:
    if len(text) <= cap:
        return text
    return text[: cap - len(_TRUNCATED)] + _TRUNCATED


class TerminalState(StrEnum):
    """How a Run ended."""

    COMPLETED = "completed"
    FAILED = "failed"
    ABORTED = "aborted"
    ABANDONED = "abandoned"
    """A suspension outlived its expiry."""
    FORCE_SETTLED = "force_settled"
    """The supervisor settled work that did not unwind within its grace period."""


class ToolOutcome(StrEnum):
    """How a tool call ended."""

    OK = "ok"
    ERROR = "error"
    ABORTED = "aborted"
    """Cancelled while running."""
    UNKNOWN = "unknown"
    """Closed by a later Attempt that cannot know whether the side effect happened."""


class SuspendReason(StrEnum):
    """Why a Run is parked without a Worker."""

    APPROVAL = "approval"
    QUESTION = "question"
    EXTERNAL = "external"
    TIMER = "timer"
    BREAKPOINT = "breakpoint"
    CHILDREN = "children"


class QueueKind(StrEnum):
    """Where a message sent to a running Run is delivered."""

    STEER = "steer"
    """Into the next turn of this Run."""
    FOLLOW_UP = "follow_up"
    """After this Run's current work would otherwise finish."""
    NEXT_RUN = "next_run"
    """To whichever Run continues this one."""


class CompactionReason(StrEnum):
    """What triggered a compaction."""

    THRESHOLD = "threshold"
    MANUAL = "manual"
    OVERFLOW = "overflow"


class ToolFailure(BaseModel):
    """Why something failed, in a form the model and an operator can both read.

    Over-long messages and tracebacks are cut to their caps instead of being refused,
    because losing the tail of a traceback is better than losing the whole record.

    Attributes:
        kind: a short stable classifier (``timeout``, ``denied``, ``orphaned``...).
        message: a human-readable explanation.
        traceback: the traceback, kept in the log.
        transient: whether retrying could succeed.
        traceback_is_for_the_model: show the traceback to the model (code execution).
    """

    model_config = _FROZEN

    kind: Annotated[str, Field(min_length=1, max_length=128)]
    message: Annotated[str, Field(max_length=MESSAGE_CAP)] = ""
    traceback: Annotated[str | None, Field(max_length=TRACEBACK_CAP)] = None
    transient: bool = False
    traceback_is_for_the_model: bool = False

    @field_validator("message", mode="before")
    @classmethod
    def _clip_message(cls, value: object) -> object:
        return _clip(value, MESSAGE_CAP) if isinstance(value, str) else value

    @field_validator("traceback", mode="before")
    @classmethod
    def _clip_traceback(cls, value: object) -> object:
        return _clip(value, TRACEBACK_CAP) if isinstance(value, str) else value


class ModelTimings(BaseModel):
    """Where the time went in one model call.

    Attributes:
        queue_wait_seconds: time before the provider started answering.
        time_to_first_token_seconds: until the first streamed chunk, when streamed.
        stream_duration_seconds: from the first chunk to the end of the stream.
    """

    model_config = _FROZEN

    queue_wait_seconds: Annotated[float, Field(ge=0)] = 0.0
    time_to_first_token_seconds: Annotated[float | None, Field(ge=0)] = None
    stream_duration_seconds: Annotated[float, Field(ge=0)] = 0.0

    @property
    def total_seconds(self) -> float:
        """Queue wait plus streaming time."""
        return self.queue_wait_seconds + self.stream_duration_seconds


class AttachmentStorage(StrEnum):
    """Where an attachment's bytes are kept."""

    INLINE = "inline"
    BLOB = "blob"
    PREVIEW_ONLY = "preview_only"


class ResultAttachment(BaseModel):
    """A named stream or file produced beside a tool result (used by code execution).

    Attributes:
        name: ``stdout``, ``stderr``, ``value``, ``execution`` or ``file:<path>``.
        handle: the handle ``read_tool_output`` accepts for it.
        content_type: its media type.
        size_bytes: bytes kept.
        observed_bytes: bytes produced (at least ``size_bytes``).
        truncated: whether bytes were dropped.
        data: the bytes, when stored inline.
        stored: where the bytes are.
        sha256: hex digest of the kept bytes.
        readable: whether ``read_tool_output`` may page through it.
    """

    model_config = _FROZEN

    name: Annotated[str, Field(min_length=1, max_length=512)]
    handle: Annotated[str, Field(min_length=1, max_length=256)]
    content_type: str = "application/octet-stream"
    size_bytes: Annotated[int, Field(ge=0)] = 0
    observed_bytes: Annotated[int, Field(ge=0)] = 0
    truncated: bool = False
    data: bytes | None = None
    stored: AttachmentStorage = AttachmentStorage.INLINE
    sha256: Annotated[str | None, Field(pattern=r"^[0-9a-f]{64}$")] = None
    readable: bool = True

    @model_validator(mode="after")
    def _storage_matches_data(self) -> Self:
        if self.stored is AttachmentStorage.INLINE and self.data is None:
            raise ValueError("an inline attachment carries its data")
        if self.stored is not AttachmentStorage.INLINE and self.data is not None:
            raise ValueError(f"a {self.stored.value} attachment must not carry data")
        if self.observed_bytes < self.size_bytes:
            raise ValueError("observed_bytes cannot be smaller than size_bytes")
        return self


class QuestionOption(BaseModel):
    """One answer a person may pick."""

    model_config = _FROZEN

    label: Annotated[str, Field(min_length=1, max_length=256)]
    description: Annotated[str, Field(max_length=1024)] = ""


class AskedQuestion(BaseModel):
    """One structured question put to a person while a Run is suspended."""

    model_config = _FROZEN

    question: Annotated[str, Field(min_length=1, max_length=4096)]
    header: Annotated[str, Field(max_length=64)] = ""
    options: Annotated[tuple[QuestionOption, ...], Field(max_length=4)] = ()
    multi_select: bool = False


class Task(BaseModel):
    """One item of the plan an agent keeps with ``update_tasks``."""

    model_config = _FROZEN

    title: Annotated[str, Field(min_length=1, max_length=1024)]
    status: Literal["pending", "in_progress", "completed", "cancelled"] = "pending"
    note: Annotated[str, Field(max_length=4096)] = ""


class Component(BaseModel):
    """A structured piece of UI an agent asked the consumer to show."""

    model_config = _FROZEN

    kind: Literal["card", "carousel", "detail", "timeline", "chart", "metric"]
    title: Annotated[str, Field(max_length=1024)] = ""
    data: JsonObject = Field(default_factory=dict)


class _Envelope(BaseModel):
    model_config = _FROZEN

    run_id: RunId
    seq: Annotated[int, Field(ge=1)]
    at: datetime
    scope: Scope
    attempt_id: AttemptId | None = None


# --- lifecycle -------------------------------------------------------------------------


class RunAdmitted(_Envelope):
    """Always the first record: the Run exists and pins its Version for life."""

    type: Literal["run_admitted"] = "run_admitted"
    version_hash: VersionHash
    input: JsonObject = Field(default_factory=dict)
    idempotency_key: Annotated[str | None, Field(max_length=256)] = None
    deadline_at: datetime
    parent_run_id: RunId | None = None
    delegation_depth: Annotated[int, Field(ge=0)] = 0
    replays_run_id: RunId | None = None
    replay_from_step: Annotated[str | None, Field(max_length=128)] = None
    breakpoints: tuple[str, ...] = ()
    step_mode: bool = False
    continues_run_id: RunId | None = None
    trace_context: Annotated[
        dict[Annotated[str, Field(max_length=64)], Annotated[str, Field(max_length=1024)]],
        Field(max_length=8),
    ] = Field(default_factory=dict)
    """The W3C trace context (``traceparent``, ``tracestate``) of the span that
    dispatched the Run, so the spans of whichever process runs it join that trace."""


class AttemptStarted(_Envelope):
    """A Worker took the lease and began an execution pass."""

    type: Literal["attempt_started"] = "attempt_started"
    worker_id: WorkerId
    attempt_number: Annotated[int, Field(ge=1)]
    reclaimed_expired_lease: bool = False


class RunSettled(_Envelope):
    """The Run ended. Nothing may follow this record."""

    type: Literal["run_settled"] = "run_settled"
    state: TerminalState
    output: JsonObject | None = None
    failure: ToolFailure | None = None
    orphaned_attempt_id: AttemptId | None = None


# --- turns and model calls -------------------------------------------------------------


class TurnStarted(_Envelope):
    """A new turn of the agent loop opened."""

    type: Literal["turn_started"] = "turn_started"
    turn: Annotated[int, Field(ge=1)]
    step_id: StepId | None = None


class ModelCallStarted(_Envelope):
    """A model request is about to leave; written before it does."""

    type: Literal["model_call_started"] = "model_call_started"
    turn: Annotated[int, Field(ge=1)]
    model: Annotated[str, Field(min_length=1)]
    prompt_tokens_estimate: Annotated[int | None, Field(ge=0)] = None
    tool_names: tuple[str, ...] = ()
    system_prompt: str = ""


class ModelCallFinished(_Envelope):
    """The model answered. ``cost`` is ``None`` when the price is unknown, never zero."""

    type: Literal["model_call_finished"] = "model_call_finished"
    turn: Annotated[int, Field(ge=1)]
    model: Annotated[str, Field(min_length=1)]
    usage: Usage
    usage_reported: bool = True
    cost: Cost | None
    timings: ModelTimings
    finish_reason: Annotated[str, Field(min_length=1)]
    text: str = ""
    tool_calls: tuple[ToolCallId, ...] = ()


class ModelCallFailed(_Envelope):
    """The model call failed; ``will_retry`` says whether the loop will try again."""

    type: Literal["model_call_failed"] = "model_call_failed"
    turn: Annotated[int, Field(ge=1)]
    model: Annotated[str, Field(min_length=1)]
    failure: ToolFailure
    will_retry: bool = False


# --- tools -----------------------------------------------------------------------------


class ToolCallStarted(_Envelope):
    """A tool call is about to execute; written before any side effect."""

    type: Literal["tool_call_started"] = "tool_call_started"
    call_id: ToolCallId
    tool: Annotated[str, Field(min_length=1)]
    arguments: JsonObject = Field(default_factory=dict)
    turn: Annotated[int, Field(ge=1)]
    step_id: StepId | None = None
    interruptible: bool = True
    safe_to_retry: bool = False
    parent_call_id: ToolCallId | None = None


class ToolCallFinished(_Envelope):
    """A tool call ended, with its result or its failure."""

    type: Literal["tool_call_finished"] = "tool_call_finished"
    call_id: ToolCallId
    outcome: ToolOutcome
    result: JsonValue = None
    failure: ToolFailure | None = None
    duration_seconds: Annotated[float, Field(ge=0)] = 0.0
    result_handle: str | None = None
    preview: str | None = None
    result_bytes: Annotated[int, Field(ge=0)] = 0
    result_blob_key: str | None = None
    result_content_type: str | None = None
    attachments: tuple[ResultAttachment, ...] = ()

    @model_validator(mode="after")
    def _offload_fields_agree(self) -> Self:
        if (self.result_blob_key is None) != (self.result_content_type is None):
            raise ValueError("result_blob_key and result_content_type are set together")
        if self.result_blob_key is not None and self.result is not None:
            raise ValueError("an offloaded result keeps its bytes in the blob store only")
        handles = [a.handle for a in self.attachments]
        if len(set(handles)) != len(handles):
            raise ValueError("attachment handles must be distinct")
        if self.result_handle is not None and self.result_handle in handles:
            raise ValueError("an attachment cannot reuse the result handle")
        return self


# --- workflow steps --------------------------------------------------------------------


class StepStarted(_Envelope):
    """A workflow step began an attempt."""

    type: Literal["step_started"] = "step_started"
    step_id: StepId
    name: Annotated[str, Field(min_length=1, max_length=128)]
    kind: Annotated[str, Field(min_length=1, max_length=32)]
    attempt_number: Annotated[int, Field(ge=1)] = 1
    input: JsonObject = Field(default_factory=dict)
    path: tuple[str | int, ...] = ()
    parent_step_id: StepId | None = None
    iteration: int | None = None
    replayed_from: RunId | None = None


class StepCompleted(_Envelope):
    """A workflow step's attempt ended."""

    type: Literal["step_completed"] = "step_completed"
    step_id: StepId
    output: JsonObject | None = None
    failure: ToolFailure | None = None
    child_run_id: RunId | None = None
    skipped: bool = False
    will_retry: bool = False
    retry_at: datetime | None = None

    @model_validator(mode="after")
    def _flags_agree(self) -> Self:
        if self.will_retry and self.failure is None:
            raise ValueError("will_retry requires a failure")
        if self.skipped and (self.output is not None or self.failure is not None):
            raise ValueError("a skipped step has neither output nor failure")
        return self


# --- interrupts, queues, suspension ----------------------------------------------------


class AbortRequested(_Envelope):
    """Someone asked the Run to stop."""

    type: Literal["abort_requested"] = "abort_requested"
    reason: Annotated[str, Field(max_length=1024)] = ""
    requested_by: Annotated[str | None, Field(max_length=256)] = None


class QueueEnqueued(_Envelope):
    """A message was queued for the Run (or for the Run that continues it)."""

    type: Literal["queue_enqueued"] = "queue_enqueued"
    queue: QueueKind
    entry_id: Annotated[EntryId, Field(min_length=1, max_length=128)]
    payload: JsonObject = Field(default_factory=dict)


class QueueCancelled(_Envelope):
    """A queued message was withdrawn before it was delivered."""

    type: Literal["queue_cancelled"] = "queue_cancelled"
    entry_id: Annotated[EntryId, Field(min_length=1, max_length=128)]


class QueueConsumed(_Envelope):
    """A queued message reached the model."""

    type: Literal["queue_consumed"] = "queue_consumed"
    entry_id: Annotated[EntryId, Field(min_length=1, max_length=128)]


class Suspended(_Envelope):
    """The Run parked itself and gave up its lease."""

    type: Literal["suspended"] = "suspended"
    reason: SuspendReason
    payload_schema: JsonObject = Field(default_factory=dict)
    expires_at: datetime
    step_id: StepId | None = None
    step_name: str | None = None
    event: str | None = None
    wake_at: datetime | None = None
    pending_call_id: ToolCallId | None = None
    question: Annotated[str | None, Field(max_length=8192)] = None
    questions: tuple[AskedQuestion, ...] = ()


class Resumed(_Envelope):
    """A suspension ended: a decision, an answer or an event arrived."""

    type: Literal["resumed"] = "resumed"
    payload: JsonObject = Field(default_factory=dict)
    approved: bool | None = None
    resumed_by: Annotated[str | None, Field(max_length=256)] = None


# --- other -----------------------------------------------------------------------------


class CompactionApplied(_Envelope):
    """A range of the conversation is replaced by a summary in the model's view only."""

    type: Literal["compaction_applied"] = "compaction_applied"
    reason: CompactionReason
    timings: ModelTimings = Field(default_factory=ModelTimings)
    replaced_from_seq: Annotated[int, Field(ge=1)]
    replaced_to_seq: Annotated[int, Field(ge=1)]
    summary: Annotated[str, Field(min_length=1)]
    model: str = ""
    usage: Usage = Field(default_factory=Usage)
    usage_reported: bool = False
    cost: Cost | None = None


class TaskListUpdated(_Envelope):
    """The agent replaced its whole task list."""

    type: Literal["task_list_updated"] = "task_list_updated"
    tasks: tuple[Task, ...] = ()


class ComponentShown(_Envelope):
    """The agent produced a UI component; components accumulate in order."""

    type: Literal["component_shown"] = "component_shown"
    component: Component


# --- subagents -------------------------------------------------------------------------


class SubagentSpawned(_Envelope):
    """The Run started a child Run composed at run time."""

    type: Literal["subagent_spawned"] = "subagent_spawned"
    child_run_id: RunId
    name: Annotated[str, Field(min_length=1, max_length=128)]
    call_id: ToolCallId
    child_version_hash: VersionHash
    purpose: Annotated[str, Field(max_length=2048)] = ""
    task: Annotated[str, Field(max_length=65_536)] = ""
    deliverable: Annotated[str, Field(max_length=4096)] = ""
    tools: tuple[str, ...] = ()
    model: str = ""
    delegation_depth: Annotated[int, Field(ge=0)] = 0
    background: bool = True


class SubagentMessaged(_Envelope):
    """The Run sent a message into a live child."""

    type: Literal["subagent_messaged"] = "subagent_messaged"
    child_run_id: RunId
    name: Annotated[str, Field(min_length=1, max_length=128)]
    call_id: ToolCallId
    entry_id: EntryId
    message: str


class SubagentFinished(_Envelope):
    """A child settled; written into the parent's log by whoever settled the child.

    The figures cover the child's whole subtree (the child and every Run below it), so
    a parent's totals add up down the tree without reading any child's log: ``usage``
    and ``cost`` summed, ``runs`` counted, and ``run_seconds`` the wall-clock seconds
    of each of those Runs added together.
    """

    type: Literal["subagent_finished"] = "subagent_finished"
    child_run_id: RunId
    name: Annotated[str, Field(min_length=1, max_length=128)]
    state: TerminalState
    output: JsonObject | None = None
    failure: ToolFailure | None = None
    usage: Usage = Field(default_factory=Usage)
    unreported_usage_calls: Annotated[int, Field(ge=0)] = 0
    cost: Cost | None = None
    unpriced_model_calls: Annotated[int, Field(ge=0)] = 0
    runs: Annotated[int, Field(ge=1)] = 1
    run_seconds: Annotated[float, Field(ge=0)] = 0.0


RECORD_TYPES: tuple[type[_Envelope], ...] = (
    RunAdmitted,
    AttemptStarted,
    RunSettled,
    TurnStarted,
    ModelCallStarted,
    ModelCallFinished,
    ModelCallFailed,
    ToolCallStarted,
    ToolCallFinished,
    StepStarted,
    StepCompleted,
    AbortRequested,
    QueueEnqueued,
    QueueCancelled,
    QueueConsumed,
    Suspended,
    Resumed,
    CompactionApplied,
    TaskListUpdated,
    ComponentShown,
    SubagentSpawned,
    SubagentMessaged,
    SubagentFinished,
)

Record = Annotated[
    RunAdmitted
    | AttemptStarted
    | RunSettled
    | TurnStarted
    | ModelCallStarted
    | ModelCallFinished
    | ModelCallFailed
    | ToolCallStarted
    | ToolCallFinished
    | StepStarted
    | StepCompleted
    | AbortRequested
    | QueueEnqueued
    | QueueCancelled
    | QueueConsumed
    | Suspended
    | Resumed
    | CompactionApplied
    | TaskListUpdated
    | ComponentShown
    | SubagentSpawned
    | SubagentMessaged
    | SubagentFinished,
    Field(discriminator="type"),
]
"""Any record, discriminated by its ``type``."""

EXTERNAL_RECORD_TYPES: frozenset[str] = frozenset(
    {"abort_requested", "queue_enqueued", "queue_cancelled", "resumed", "subagent_finished"}
)
"""Types a consumer or another Run may append while an Attempt holds the lease."""

RECORD_ADAPTER: TypeAdapter[Record] = TypeAdapter(Record)
RECORDS_ADAPTER: TypeAdapter[list[Record]] = TypeAdapter(list[Record])


def record_from_json(data: str | bytes) -> Record:
    """Parse one record from its JSON form, refusing unknown types and fields."""
    return RECORD_ADAPTER.validate_json(data)


def record_to_json(record: Record) -> bytes:
    """Serialise one record to compact JSON bytes.

    Fields equal to their defaults are left out (they come back on parse), which keeps
    a typical record to a few hundred bytes. The ``type`` discriminator is always
    written first, because it is the one default a reader cannot do without.
    """
    body = record.model_dump_json(exclude_defaults=True).encode()
    head = b'{"type":"' + record.type.encode() + b'"'
    return head + b"}" if body == b"{}" else head + b"," + body[1:]


__all__ = [
    "EXTERNAL_RECORD_TYPES",
    "RECORD_TYPES",
    "AbortRequested",
    "AskedQuestion",
    "AttachmentStorage",
    "AttemptStarted",
    "CompactionApplied",
    "CompactionReason",
    "Component",
    "ComponentShown",
    "JsonObject",
    "ModelCallFailed",
    "ModelCallFinished",
    "ModelCallStarted",
    "ModelTimings",
    "QuestionOption",
    "QueueCancelled",
    "QueueConsumed",
    "QueueEnqueued",
    "QueueKind",
    "Record",
    "ResultAttachment",
    "Resumed",
    "RunAdmitted",
    "RunSettled",
    "StepCompleted",
    "StepStarted",
    "SubagentFinished",
    "SubagentMessaged",
    "SubagentSpawned",
    "SuspendReason",
    "Suspended",
    "Task",
    "TaskListUpdated",
    "TerminalState",
    "ToolCallFinished",
    "ToolCallStarted",
    "ToolFailure",
    "ToolOutcome",
    "TurnStarted",
    "record_from_json",
    "record_to_json",
]
