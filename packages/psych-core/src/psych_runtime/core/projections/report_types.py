"""The shape of a Run report: one frozen model per part.

Kept apart from the code that builds a report so a consumer reading the types (or
serialising a report to JSON) does not have to read the pairing logic too. Every
model is frozen and JSON-friendly; money is a :class:`~decimal.Decimal` inside
:class:`~psych_runtime.core.metering.Cost`, and an unknown cost is ``None``.
"""

from datetime import datetime
from typing import Literal

from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import Field
from pydantic import JsonValue

from psych_runtime.core.ids import AttemptId
from psych_runtime.core.ids import RunId
from psych_runtime.core.ids import StepId
from psych_runtime.core.ids import ToolCallId
from psych_runtime.core.ids import VersionHash
from psych_runtime.core.metering import Cost
from psych_runtime.core.metering import Usage
from psych_runtime.core.projections.latency import LatencyReport
from psych_runtime.core.records import AskedQuestion
from psych_runtime.core.records import CompactionReason
from psych_runtime.core.records import Component
from psych_runtime.core.records import JsonObject
from psych_runtime.core.records import ModelTimings
from psych_runtime.core.records import ResultAttachment
from psych_runtime.core.records import SuspendReason
from psych_runtime.core.records import Task
from psych_runtime.core.records import TerminalState
from psych_runtime.core.records import ToolFailure
from psych_runtime.core.records import ToolOutcome
from psych_runtime.core.scope import Scope

_FROZEN = ConfigDict(frozen=True, extra="forbid")

UsageSource = Literal["provider", "partial", "unknown"]
"""Whether the token totals are what the provider reported, in whole or in part."""


class ModelCallReport(BaseModel):
    """One model call, from its start record to its answer or failure.

    Attributes:
        turn: the turn it belongs to (a retry is a new turn).
        step_id: the workflow step that opened the turn, if any.
        model: the model asked.
        system_prompt: the system prompt exactly as sent.
        tool_names: the tools offered in this call.
        usage: tokens used, as the provider reported them; ``None`` when unknown:
            the call did not answer, or answered without reporting its usage (as
            many local servers do), which is not the same as using no tokens.
        usage_reported: whether the provider reported its usage; ``None`` until
            the call answers.
        cost: what the call cost; ``None`` when unknown or unanswered.
        timings: queue wait and streaming time of an answered call.
        finish_reason: why the model stopped.
        text: what the model wrote.
        tool_call_ids: the tool calls it asked for.
        started_at: when the request was about to leave.
        finished_at: when it answered or failed.
        failure: why it failed.
        will_retry: whether the loop retried after this failure.
        dangling: started and never ended (the Attempt died mid-call).
    """

    model_config = _FROZEN

    turn: int
    step_id: StepId | None = None
    model: str
    system_prompt: str = ""
    tool_names: tuple[str, ...] = ()
    usage: Usage | None = None
    usage_reported: bool | None = None
    cost: Cost | None = None
    timings: ModelTimings | None = None
    finish_reason: str | None = None
    text: str = ""
    tool_call_ids: tuple[ToolCallId, ...] = ()
    started_at: datetime
    finished_at: datetime | None = None
    failure: ToolFailure | None = None
    will_retry: bool = False
    dangling: bool = False


class ToolCallReport(BaseModel):
    """One tool call, from its start record to its ending.

    Attributes:
        call_id: the call's id.
        tool: the tool called.
        turn: the turn it belongs to.
        step_id: the workflow step it ran in, if any.
        arguments: the arguments it was called with.
        outcome: how it ended; ``None`` when it never did (dangling).
        result: the recorded result (``None`` when offloaded or failed).
        failure: why it did not succeed.
        duration_seconds: how long it ran; ``None`` when it never ended.
        result_handle: the handle the model was given for an elided result.
        preview: the opening of an elided result, as the model saw it.
        result_bytes: the size of the rendered result.
        result_blob_key: where an offloaded result's bytes live.
        result_content_type: the media type of those bytes.
        attachments: streams and files produced beside the result.
        started_at: when it started.
        finished_at: when it ended.
        interruptible: whether cancellation may cut it short.
        safe_to_retry: whether it may be re-run after a crash.
        parent_call_id: the program call that issued it, for a call made by code.
    """

    model_config = _FROZEN

    call_id: ToolCallId
    tool: str
    turn: int
    step_id: StepId | None = None
    arguments: JsonObject = Field(default_factory=dict)
    outcome: ToolOutcome | None = None
    result: JsonValue = None
    failure: ToolFailure | None = None
    duration_seconds: float | None = None
    result_handle: str | None = None
    preview: str | None = None
    result_bytes: int = 0
    result_blob_key: str | None = None
    result_content_type: str | None = None
    attachments: tuple[ResultAttachment, ...] = ()
    started_at: datetime
    finished_at: datetime | None = None
    interruptible: bool = True
    safe_to_retry: bool = False
    parent_call_id: ToolCallId | None = None


class StepReport(BaseModel):
    """One attempt of one workflow step (a retried step has one row per attempt).

    Attributes:
        step_id: the step's stable id.
        name: its name in the Spec.
        kind: its kind, or ``subagent``.
        attempt_number: which attempt this row is.
        input: the input after resolution.
        completed: whether this attempt ended.
        output: what it produced.
        failure: why it failed.
        child_run_id: the Run it delegated to, if any.
        child: that Run's report, when the caller asked for nested reports.
        path: where the step sits in the workflow tree.
        parent_step_id: the enclosing step, if any.
        iteration: the loop or map iteration, if any.
        skipped: whether it was skipped.
        will_retry: whether another attempt follows.
        replayed_from: the Run whose result was reused, for a replayed step.
        started_at: when the attempt started.
        completed_at: when it ended.
    """

    model_config = _FROZEN

    step_id: StepId
    name: str
    kind: str
    attempt_number: int
    input: JsonObject = Field(default_factory=dict)
    completed: bool = False
    output: JsonObject | None = None
    failure: ToolFailure | None = None
    child_run_id: RunId | None = None
    child: "RunReport | None" = None
    path: tuple[str | int, ...] = ()
    parent_step_id: StepId | None = None
    iteration: int | None = None
    skipped: bool = False
    will_retry: bool = False
    replayed_from: RunId | None = None
    started_at: datetime
    completed_at: datetime | None = None


class FailureStreakTrip(BaseModel):
    """The moment one tool's run of consecutive failures reached the threshold.

    From here on the runtime withholds the tool from the model until it succeeds
    again; a later streak that reaches the threshold is reported again.

    Attributes:
        tool: the failing tool.
        call_id: the call whose failure reached the threshold.
        streak: the streak length at that call.
        threshold: the Version's threshold.
        at: when that call ended.
    """

    model_config = _FROZEN

    tool: str
    call_id: ToolCallId
    streak: int
    threshold: int
    at: datetime


class SuspensionReport(BaseModel):
    """One time the Run parked itself, and how it was woken, if it was.

    Attributes:
        reason: why it parked.
        question: the one-line question or approval prompt.
        questions: the structured questions, for a ``question`` suspension.
        pending_call_id: the call awaiting a decision or answer.
        suspended_at: when it parked.
        expires_at: when a resume would have come too late.
        resumed_at: when it was resumed; ``None`` while still parked or if it ended
            parked.
        approved: the approval decision, when one was given.
        resumed_by: who resumed it, as the caller said.
        step_id: the workflow step that parked, if any.
        step_name: that step's name.
        event: the event an ``external`` wait expected.
        payload_schema: the schema the resume payload was asked to satisfy.
        wake_at: when a timer was due to fire.
        payload: what the resume carried.
    """

    model_config = _FROZEN

    reason: SuspendReason
    question: str | None = None
    questions: tuple[AskedQuestion, ...] = ()
    pending_call_id: ToolCallId | None = None
    suspended_at: datetime
    expires_at: datetime
    resumed_at: datetime | None = None
    approved: bool | None = None
    resumed_by: str | None = None
    step_id: StepId | None = None
    step_name: str | None = None
    event: str | None = None
    payload_schema: JsonObject = Field(default_factory=dict)
    wake_at: datetime | None = None
    payload: JsonObject | None = None


class CompactionReport(BaseModel):
    """One compaction: the range the model stopped seeing and what replaced it.

    Attributes:
        seq: the compaction record's position.
        reason: what triggered it.
        replaced_from_seq: first record of the replaced range.
        replaced_to_seq: last record of the replaced range.
        summary: the text the model sees instead.
        model: the model that wrote the summary (empty for a mechanical trim).
        usage: tokens the summarising call used; ``None`` when unknown (a
            mechanical trim made no call, or the provider reported nothing).
        usage_reported: whether the provider reported them.
        cost: what it cost; ``None`` when unknown.
        timings: how long the summarising call took.
        at: when it was applied.
    """

    model_config = _FROZEN

    seq: int
    reason: CompactionReason
    replaced_from_seq: int
    replaced_to_seq: int
    summary: str
    model: str = ""
    usage: Usage | None = None
    usage_reported: bool = False
    cost: Cost | None = None
    timings: ModelTimings = Field(default_factory=ModelTimings)
    at: datetime


class TotalsReport(BaseModel):
    """What the Run consumed, summed over its model calls and compactions.

    Attributes:
        usage: tokens, split by cache state, summed over the calls that reported
            them; read it together with ``usage_source``.
        usage_source: ``provider`` when every metered call reported its usage,
            ``unknown`` when none did (``usage`` is then zero for want of figures, not
            because nothing was used), ``partial`` in between.
        unreported_usage_calls: metered calls whose usage the provider did not report.
        cost: the summed cost of the priced calls; ``None`` when no call was priced.
        unpriced_model_calls: metered calls with no known price.
        cost_is_incomplete: some call is missing from ``cost`` because it was unpriced.
        provider_reported_costs: calls whose cost came from the provider.
        model_calls: model calls that answered.
        failed_model_calls: model calls that failed.
        tool_calls: tool calls that ended.
        latency: where the wall-clock time went.
        compaction_calls: compactions applied.
    """

    model_config = _FROZEN

    usage: Usage = Field(default_factory=Usage)
    usage_source: UsageSource = "provider"
    unreported_usage_calls: int = 0
    cost: Cost | None = None
    unpriced_model_calls: int = 0
    cost_is_incomplete: bool = False
    provider_reported_costs: int = 0
    model_calls: int = 0
    failed_model_calls: int = 0
    tool_calls: int = 0
    latency: LatencyReport = Field(default_factory=LatencyReport)
    compaction_calls: int = 0


class SubtreeTotals(BaseModel):
    """Consumption of a Run together with the subagents it composed.

    Attributes:
        usage: tokens of the Run and every finished child.
        unreported_usage_calls: calls in all of them whose usage went unreported.
        cost: the summed cost of their priced calls; ``None`` when none was priced.
        unpriced_model_calls: calls in all of them with no known price.
        cost_is_incomplete: ``cost`` misses something: an unpriced call, or a child
            still running whose spending is not known yet.
        runs: how many Runs the figures cover.
        run_seconds: the wall-clock seconds of each of those Runs, added together (two
            children working side by side for a minute count two minutes).
        complete: every child has finished, so nothing is left out.
    """

    model_config = _FROZEN

    usage: Usage = Field(default_factory=Usage)
    unreported_usage_calls: int = 0
    cost: Cost | None = None
    unpriced_model_calls: int = 0
    cost_is_incomplete: bool = False
    runs: int = 1
    run_seconds: float = 0.0
    complete: bool = True


class SubagentReport(BaseModel):
    """A subagent the Run composed and spawned, and how it ended.

    Attributes:
        name: the name the parent gave it.
        child_run_id: its Run.
        call_id: the parent's tool call that spawned it.
        child_version_hash: the Version composed for it.
        purpose: why the parent spawned it.
        task: what it was asked to do.
        deliverable: what it was asked to hand back.
        tools: the tools it held after narrowing.
        model: the model it ran on.
        delegation_depth: its depth below the top-level Run.
        background: whether the parent carried on while it ran.
        spawned_at: when it was spawned.
        finished_at: when the parent's log recorded its ending.
        terminal_state: how it ended.
        output: what it produced.
        failure: why it failed.
        messages_sent: how many messages the parent sent into it.
        usage: its tokens, as reported when it finished.
        unreported_usage_calls: its calls with unreported usage.
        cost: its cost; ``None`` when unknown.
        unpriced_model_calls: its calls with no known price.
        report: its own report, when the caller asked for nested reports.
        subtree: its subtree totals, when its own report was built.
    """

    model_config = _FROZEN

    name: str
    child_run_id: RunId
    call_id: ToolCallId
    child_version_hash: VersionHash
    purpose: str = ""
    task: str = ""
    deliverable: str = ""
    tools: tuple[str, ...] = ()
    model: str = ""
    delegation_depth: int = 0
    background: bool = True
    spawned_at: datetime
    finished_at: datetime | None = None
    terminal_state: TerminalState | None = None
    output: JsonObject | None = None
    failure: ToolFailure | None = None
    messages_sent: int = 0
    usage: Usage = Field(default_factory=Usage)
    unreported_usage_calls: int = 0
    cost: Cost | None = None
    unpriced_model_calls: int = 0
    report: "RunReport | None" = None
    subtree: SubtreeTotals | None = None


class RunReport(BaseModel):
    """A whole Run: every call, step, suspension and compaction, and the totals.

    Attributes:
        run_id: the Run.
        scope: the tenancy it ran under.
        version_hash: the Version it pinned.
        spec_name: the name of the Spec behind that Version.
        system_prompt: the last non-empty system prompt sent to a model.
        steps: workflow step attempts, in the order they started.
        tool_calls: tool calls, in the order they started.
        model_calls: model calls, in the order they started.
        suspensions: each time the Run parked, in order.
        failure_streak_trips: each time a tool's failures reached the threshold.
        terminal_state: how the Run ended, once it has.
        output: what it produced.
        failure: why it failed.
        orphaned_attempt_id: the Attempt a force-settlement wrote over.
        admitted_at: when it was admitted.
        settled_at: when it ended.
        totals: what it consumed.
        components: UI components it showed, in order.
        subagents: the subagents it composed, in the order they were spawned.
        subtree: consumption of the Run plus its finished subagents.
        tasks: its final task list.
        compactions: each compaction, in order.
        continues_run_id: the Run this one continues in a chat thread.
    """

    model_config = _FROZEN

    run_id: RunId
    scope: Scope
    version_hash: VersionHash | None = None
    spec_name: str = ""
    system_prompt: str = ""
    steps: tuple[StepReport, ...] = ()
    tool_calls: tuple[ToolCallReport, ...] = ()
    model_calls: tuple[ModelCallReport, ...] = ()
    suspensions: tuple[SuspensionReport, ...] = ()
    failure_streak_trips: tuple[FailureStreakTrip, ...] = ()
    terminal_state: TerminalState | None = None
    output: JsonObject | None = None
    failure: ToolFailure | None = None
    orphaned_attempt_id: AttemptId | None = None
    admitted_at: datetime | None = None
    settled_at: datetime | None = None
    totals: TotalsReport = Field(default_factory=TotalsReport)
    components: tuple[Component, ...] = ()
    subagents: tuple[SubagentReport, ...] = ()
    subtree: SubtreeTotals = Field(default_factory=SubtreeTotals)
    tasks: tuple[Task, ...] = ()
    compactions: tuple[CompactionReport, ...] = ()
    continues_run_id: RunId | None = None


StepReport.model_rebuild()
SubagentReport.model_rebuild()


__all__ = [
    "CompactionReport",
    "FailureStreakTrip",
    "LatencyReport",
    "ModelCallReport",
    "RunReport",
    "StepReport",
    "SubagentReport",
    "SubtreeTotals",
    "SuspensionReport",
    "ToolCallReport",
    "TotalsReport",
    "UsageSource",
]
