"""What a screen needs to show about a Run right now.

``RunStatus`` is small, frozen and made only of JSON-friendly values, so a consumer
can hand it straight to a browser. When the Run is parked it says exactly what it is
waiting for: an approval of one call, answers to questions, or an event, a timer or a
breakpoint of a workflow step, each with enough detail to build the form that
unblocks it.
"""

from datetime import datetime

from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import Field

from psych_runtime.core.ids import AttemptId
from psych_runtime.core.ids import RunId
from psych_runtime.core.ids import StepId
from psych_runtime.core.ids import ToolCallId
from psych_runtime.core.ids import VersionHash
from psych_runtime.core.records import AskedQuestion
from psych_runtime.core.records import Component
from psych_runtime.core.records import JsonObject
from psych_runtime.core.records import SuspendReason
from psych_runtime.core.records import Task
from psych_runtime.core.records import TerminalState
from psych_runtime.core.scope import Scope
from psych_runtime.core.state import Lifecycle
from psych_runtime.core.state import RunStateView
from psych_runtime.core.suspend_reasons import Shown
from psych_runtime.core.suspend_reasons import rules

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class PendingApproval(BaseModel):
    """A call that will run only if a person approves it.

    Attributes:
        call_id: the waiting call; ``None`` when a workflow tool step is waiting.
        step_id: the workflow step that is waiting, if any.
        tool: the tool that would run (for a step, the step's name).
        arguments: what it would be called with (for a step, the step's resolved input).
        question: the prompt to show the approver.
        expires_at: after this, a decision abandons the Run instead of resuming it.
    """

    model_config = _FROZEN

    call_id: ToolCallId | None
    step_id: StepId | None = None
    tool: str
    arguments: JsonObject = Field(default_factory=dict)
    question: str | None = None
    expires_at: datetime


class PendingQuestion(BaseModel):
    """Questions the agent (or a ``human`` workflow step) put to a person.

    Attributes:
        call_id: the ``ask_question`` call that receives the answers, if any.
        step_id: the workflow step that asked, if any.
        questions: the structured questions.
        summary: the questions on one line, for places with no room for a form.
        expires_at: after this, an answer abandons the Run instead of resuming it.
    """

    model_config = _FROZEN

    call_id: ToolCallId | None
    step_id: StepId | None = None
    questions: tuple[AskedQuestion, ...] = ()
    summary: str = ""
    expires_at: datetime


class PendingWait(BaseModel):
    """An event, a timer or a breakpoint the Run is parked on.

    Attributes:
        step_id: the workflow step that is waiting, if a step owns the wait.
        step_name: that step's name.
        reason: ``external``, ``timer`` or ``breakpoint``.
        event: the event name an ``external`` wait expects.
        payload_schema: the JSON Schema the resume payload should satisfy, as declared.
        wake_at: when a timer fires on its own.
        expires_at: after this, a resume abandons the Run instead.
    """

    model_config = _FROZEN

    step_id: StepId | None = None
    step_name: str | None = None
    reason: SuspendReason
    event: str | None = None
    payload_schema: JsonObject = Field(default_factory=dict)
    wake_at: datetime | None = None
    expires_at: datetime


class RunStatus(BaseModel):
    """A snapshot of one Run for display and polling.

    Attributes:
        run_id: the Run.
        scope: the tenancy it runs under.
        version_hash: the Version it pinned at admission.
        lifecycle: the user-facing state.
        terminal_state: how it ended, once it has.
        output: what it produced, once completed.
        failure_message: why it failed (or was stopped), when there is a reason.
        failure_kind: the stable classifier of that failure.
        suspend_reason: why it is parked, while it is.
        suspend_expires_at: when the current suspension stops accepting a resume.
        pending_approval: the call awaiting approval, for an ``approval`` suspension.
        pending_question: the questions awaiting answers, for a ``question`` suspension.
        pending_wait: the event, timer or breakpoint being waited on.
        suspended_step_id: the workflow step that owns the suspension, if any.
        components: UI components shown so far, in order.
        tasks: the agent's latest task list.
        turn: the number of turns opened so far.
        tool_calls: how many tool calls have ended.
        model_calls: how many model calls have answered.
        head_seq: the last record folded; a cache of this status is fresh while
            the log's head is still here.
        attempt_count: how many execution passes have started.
        current_attempt: the latest pass's id.
        deadline_at: the admission deadline pushed back by time spent suspended.
        continues_run_id: the Run this one continues in a chat thread.
        parent_run_id: the Run that delegated this one.
        has_dangling_tool_calls: a call started and has no recorded ending.
        steps_completed: workflow steps completed for good with an output.
        steps_failed: workflow steps that failed for good.
        steps_skipped: workflow steps whose ``when`` was false.
        steps_running: names of the workflow steps started and not yet ended (a
            composite, and whichever of its children are under way).
    """

    model_config = _FROZEN

    run_id: RunId
    scope: Scope
    version_hash: VersionHash | None
    lifecycle: Lifecycle
    terminal_state: TerminalState | None = None
    output: JsonObject | None = None
    failure_message: str | None = None
    failure_kind: str | None = None
    suspend_reason: SuspendReason | None = None
    suspend_expires_at: datetime | None = None
    pending_approval: PendingApproval | None = None
    pending_question: PendingQuestion | None = None
    pending_wait: PendingWait | None = None
    suspended_step_id: StepId | None = None
    components: tuple[Component, ...] = ()
    tasks: tuple[Task, ...] = ()
    turn: int = 0
    tool_calls: int = 0
    model_calls: int = 0
    head_seq: int
    attempt_count: int = 0
    current_attempt: AttemptId | None = None
    deadline_at: datetime | None = None
    continues_run_id: RunId | None = None
    parent_run_id: RunId | None = None
    has_dangling_tool_calls: bool = False
    steps_completed: int = 0
    steps_failed: int = 0
    steps_skipped: int = 0
    steps_running: tuple[str, ...] = ()


def _questions_summary(state: RunStateView) -> str:
    if state.suspend_question:
        return state.suspend_question
    return " / ".join(question.question for question in state.suspend_questions)


def _pending_approval(state: RunStateView, expires_at: datetime) -> PendingApproval:
    call = state.pending_call
    if call is not None:
        return PendingApproval(
            call_id=call.call_id,
            step_id=call.step_id or state.suspended_step_id,
            tool=call.tool,
            arguments=call.arguments,
            question=state.suspend_question,
            expires_at=expires_at,
        )
    step = None if state.suspended_step_id is None else state.steps.get(state.suspended_step_id)
    return PendingApproval(
        call_id=state.pending_approval_call_id,
        step_id=state.suspended_step_id,
        tool=state.suspended_step_name or (step.name if step is not None else ""),
        arguments=step.input if step is not None else {},
        question=state.suspend_question,
        expires_at=expires_at,
    )


def project_status(state: RunStateView) -> RunStatus:
    """Project a folded Run into its status.

    Args:
        state: the reducer's view of the Run.

    Returns:
        The status, with exactly one ``pending_*`` field set while the Run waits on
        an approval, a question or an event/timer/breakpoint, and none otherwise
        (a Run waiting on its subagents has nothing for a person to provide).
    """
    if state.head_seq == 0:
        raise ValueError("a Run's status needs at least its admission record")
    steps = list(state.steps.values())
    approval: PendingApproval | None = None
    question: PendingQuestion | None = None
    wait: PendingWait | None = None
    # A Run that settled while parked (an expired suspension) can no longer be resumed.
    reason = state.suspend_reason if state.suspended and not state.settled else None
    expires_at = state.suspend_expires_at
    if reason is not None and expires_at is not None:
        shown = rules(reason).shown
        if shown is Shown.APPROVAL:
            approval = _pending_approval(state, expires_at)
        elif shown is Shown.QUESTION:
            question = PendingQuestion(
                call_id=state.pending_approval_call_id,
                step_id=state.suspended_step_id,
                questions=state.suspend_questions,
                summary=_questions_summary(state),
                expires_at=expires_at,
            )
        elif shown is Shown.WAIT:
            wait = PendingWait(
                step_id=state.suspended_step_id,
                step_name=state.suspended_step_name,
                reason=reason,
                event=state.suspend_event,
                payload_schema=state.suspend_payload_schema,
                wake_at=state.suspend_wake_at,
                expires_at=expires_at,
            )
    failure = state.failure
    return RunStatus(
        run_id=state.run_id,
        scope=state.scope,
        version_hash=state.version_hash,
        lifecycle=state.lifecycle,
        terminal_state=state.terminal_state,
        output=state.output,
        failure_message=None if failure is None else failure.message or None,
        failure_kind=None if failure is None else failure.kind,
        suspend_reason=reason,
        suspend_expires_at=expires_at if reason is not None else None,
        pending_approval=approval,
        pending_question=question,
        pending_wait=wait,
        suspended_step_id=state.suspended_step_id if reason is not None else None,
        components=tuple(state.components),
        tasks=state.tasks,
        turn=state.turn,
        tool_calls=len(state.tool_results),
        model_calls=state.model_calls,
        head_seq=state.head_seq,
        attempt_count=state.attempt_count,
        current_attempt=state.current_attempt,
        deadline_at=state.effective_deadline_at,
        continues_run_id=state.continues_run_id,
        parent_run_id=state.parent_run_id,
        has_dangling_tool_calls=state.has_dangling_tool_calls,
        steps_completed=sum(1 for s in steps if s.settled and not s.skipped and not s.failure),
        steps_failed=sum(1 for s in steps if s.settled and s.failure is not None),
        steps_skipped=sum(1 for s in steps if s.skipped),
        steps_running=tuple(s.name for s in steps if not s.completed),
    )


__all__ = ["PendingApproval", "PendingQuestion", "PendingWait", "RunStatus", "project_status"]
