"""Leaf steps: the kinds that do one thing and end (or wait) rather than run children.

Each takes the step, the frame it reads from, and its id and attempt, and returns its
output as a JSON object, raises ``StepFailed`` with a failure, or stages a suspension
and raises ``Suspend``. A step that waited finds the answer that woke it in the log
(``state.step_resumes``), so the same code both suspends and, on the next Attempt,
completes.
"""

import asyncio
from collections.abc import Mapping
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from typing import Any

from pydantic import JsonValue

from psych_runtime.core.ids import StepId
from psych_runtime.core.ids import ToolCallId
from psych_runtime.core.json_schema import value_problems
from psych_runtime.core.records import AskedQuestion
from psych_runtime.core.records import JsonObject
from psych_runtime.core.records import SuspendReason
from psych_runtime.core.spec import HttpTool
from psych_runtime.core.spec import SuspensionPolicy
from psych_runtime.core.spec.workflow import HumanStep
from psych_runtime.core.spec.workflow import MapStep
from psych_runtime.core.spec.workflow import SetStateStep
from psych_runtime.core.spec.workflow import SleepStep
from psych_runtime.core.spec.workflow import ToolStep
from psych_runtime.core.spec.workflow import WaitStep
from psych_runtime.core.state import StepResume
from psych_runtime.runtime.clock import utcnow
from psych_runtime.runtime.suspension import stage_suspension
from psych_runtime.runtime.workflow.context import StepFailed
from psych_runtime.runtime.workflow.context import Suspend
from psych_runtime.runtime.workflow.context import WorkflowContext
from psych_runtime.runtime.workflow.context import failure
from psych_runtime.runtime.workflow.values import Frame
from psych_runtime.runtime.workflow.values import render
from psych_runtime.runtime.workflow.values import resolve
from psych_runtime.tools.approval import Verdict
from psych_runtime.tools.approval import classify
from psych_runtime.tools.approval import judge
from psych_runtime.tools.context import ToolContext
from psych_runtime.tools.http.executor import call_http_tool
from psych_runtime.tools.http.request import HttpToolFailed


def as_output(value: JsonValue) -> JsonObject:
    """A step's output as an object: an object result as it is, anything else wrapped.

    A non-object result is kept under ``result``.
    """
    return dict(value) if isinstance(value, dict) else {"result": value}


def latest_resume(wctx: WorkflowContext, sid: StepId, after_seq: int = 0) -> StepResume | None:
    """The newest answer the step received after ``after_seq``, if any."""
    answers = wctx.journal.state.step_resumes.get(sid, [])
    fresh = [answer for answer in answers if answer.seq > after_seq]
    return fresh[-1] if fresh else None


def suspend_step(
    wctx: WorkflowContext,
    sid: StepId,
    name: str,
    reason: SuspendReason,
    *,
    policy: SuspensionPolicy | None = None,
    **fields: Any,
) -> Suspend:
    """Stage a suspension for a step (unless one is staged already) and say so."""
    if not wctx.suspended:
        stage_suspension(
            wctx.journal,
            policy or wctx.spec.suspension,
            reason,
            step_id=sid,
            step_name=name,
            **fields,
        )
        wctx.suspended = True
    return Suspend()


def run_map(step: MapStep, frame: Frame) -> JsonObject:
    """Build an object from paths and literals."""
    return render(step.output, frame)


def run_set_state(step: SetStateStep, frame: Frame) -> JsonObject:
    """The values to overlay on the workflow state (the reducer applies them)."""
    return render(step.values, frame)


def run_sleep(
    wctx: WorkflowContext, step: SleepStep, frame: Frame, sid: StepId, started_seq: int
) -> JsonObject:
    """Wait until a time, parked as a timer: no Worker holds the Run meanwhile."""
    if latest_resume(wctx, sid, started_seq) is not None:
        return {}
    if step.seconds is not None:
        wake = _started_at(wctx, sid) + timedelta(seconds=step.seconds)
    else:
        assert step.until is not None  # the model guarantees exactly one of the two
        wake = _parse_time(resolve(step.until.path, frame), step.until.path)
    if wake <= utcnow():
        return {}
    raise suspend_step(wctx, sid, step.name, SuspendReason.TIMER, wake_at=wake)


def _started_at(wctx: WorkflowContext, sid: StepId) -> datetime:
    record = wctx.journal.state.steps.get(sid)
    return record.started_at if record is not None else utcnow()


def _parse_time(value: object, path: str) -> datetime:
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            pass
        else:
            return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    raise StepFailed(failure("invalid_time", f"{path} is not an ISO 8601 time: {value!r}"))


def run_wait(wctx: WorkflowContext, step: WaitStep, sid: StepId, started_seq: int) -> JsonObject:
    """Wait for an event the consumer delivers with ``resume(payload=...)``."""
    answer = latest_resume(wctx, sid, started_seq)
    if answer is not None:
        problems = value_problems(answer.payload, step.payload_schema)
        if problems:
            raise StepFailed(failure("schema_violation", "; ".join(problems)))
        return dict(answer.payload)
    raise suspend_step(
        wctx,
        sid,
        step.name,
        SuspendReason.EXTERNAL,
        event=step.event,
        payload_schema=dict(step.payload_schema),
    )


def run_human(wctx: WorkflowContext, step: HumanStep, sid: StepId, started_seq: int) -> JsonObject:
    """Ask a person; their answer (the resume payload) is the step's output."""
    answer = latest_resume(wctx, sid, started_seq)
    if answer is not None:
        return dict(answer.payload)
    questions = tuple(AskedQuestion(question=q) for q in step.questions)
    policy = wctx.spec.suspension
    if step.expires_seconds is not None:
        # A human step's own expiry overrides the workflow's question expiry.
        policy = policy.model_copy(update={"question_expires_seconds": step.expires_seconds})
    raise suspend_step(
        wctx,
        sid,
        step.name,
        SuspendReason.QUESTION,
        policy=policy,
        question=" ".join(step.prompt.split())[:8192],
        questions=questions,
    )


def _http_tools(wctx: WorkflowContext) -> Mapping[str, HttpTool]:
    return {tool.name: tool for tool in wctx.spec.tools if isinstance(tool, HttpTool)}


async def run_tool(
    wctx: WorkflowContext,
    step: ToolStep,
    frame: Frame,
    sid: StepId,
    attempt: int,
    started_seq: int,
) -> JsonObject:
    """Call a code or HTTP tool, through the same approval rules as an agent's calls."""
    arguments: JsonObject = {**step.arguments, **render(step.arguments_from, frame)}
    http = _http_tools(wctx).get(step.tool)
    registered = wctx.deps.registry.get(step.tool)
    if http is None and registered is None:
        raise StepFailed(failure("unknown_tool", f"no tool named {step.tool!r} is available"))
    await _approve(wctx, step, sid, arguments, http, started_seq)
    await wctx.journal.flush()  # durable before the tool can act
    attempt_id = wctx.journal.attempt_id
    assert attempt_id is not None
    context = ToolContext.for_call(
        run_id=wctx.run_id,
        call_id=ToolCallId(f"{sid}.{attempt}"),
        scope=wctx.journal.scope,
        attempt_id=attempt_id,
    )
    try:
        if http is not None:
            result = await call_http_tool(
                http,
                arguments,
                scope=wctx.journal.scope,
                transport=wctx.deps.http,
                secrets=wctx.deps.secrets,
            )
        else:
            assert registered is not None
            result = await registered.invoke(arguments, context)
    except asyncio.CancelledError:
        raise
    except HttpToolFailed as error:
        raise StepFailed(failure(error.kind, str(error))) from None
    except BaseException as error:  # a tool's SystemExit fails the step, not the Worker
        kind = getattr(error, "kind", None) or type(error).__name__
        raise StepFailed(failure(str(kind), str(error) or type(error).__name__)) from None
    return as_output(result)


async def _approve(
    wctx: WorkflowContext,
    step: ToolStep,
    sid: StepId,
    arguments: JsonObject,
    http: HttpTool | None,
    started_seq: int,
) -> None:
    """Let the call go ahead, or refuse it, or suspend for a person's decision."""
    decided = latest_resume(wctx, sid, started_seq)
    if decided is not None and decided.reason is SuspendReason.APPROVAL:
        if decided.approved:
            return
        why = decided.payload.get("reason")
        raise StepFailed(
            failure(
                "denied", f"a person denied this call{': ' + why if isinstance(why, str) else ''}"
            )
        )
    if http is not None:
        hints = {"GET": ("read-only",), "DELETE": ("destructive",)}.get(http.method, ("write",))
        tool_class = classify(hints)
    else:
        registered = wctx.deps.registry.get(step.tool)
        tool_class = classify(registered.annotations if registered is not None else ())
    judgement = await judge(
        wctx.deps.approvals, wctx.deps.policy, wctx.journal.scope, step.tool, tool_class, arguments
    )
    if judgement.verdict is Verdict.DENY:
        raise StepFailed(failure("access_denied", judgement.reason))
    if judgement.verdict is Verdict.ASK:
        raise suspend_step(
            wctx, sid, step.name, SuspendReason.APPROVAL, question=judgement.reason or None
        )


__all__ = [
    "as_output",
    "latest_resume",
    "run_human",
    "run_map",
    "run_set_state",
    "run_sleep",
    "run_tool",
    "run_wait",
    "suspend_step",
]
