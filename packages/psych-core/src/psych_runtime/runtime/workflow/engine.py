"""The workflow engine: one Attempt of a workflow Run, resuming from the last completed step.

Every step has an id derived from the Run and its path (``ids.py``). Before running a
step the engine looks it up in the folded log: a step completed for good is not run
again, its output is read back; a step in progress is continued (a composite's
children are memoised one by one; a leaf that may already have acted is settled as a
call in doubt is); a step waiting to retry is started again once its backoff is over.

Writes: a tool step's ``step_started`` is made durable before the tool runs (its
``step_completed`` rides along with the next write), so a workflow of N tool steps
costs about N durable writes; pure steps (map, set_state, a skipped step) add none.

Waiting never holds the lease: a sleep, an event, a person or a retry backoff stages a
suspension and ends the Attempt (``Suspend``), and the Worker parks the Run.
"""

import asyncio
import contextlib
from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from pydantic import JsonValue

from psych_runtime.core.ids import RunId
from psych_runtime.core.ids import StepId
from psych_runtime.core.json_schema import value_problems
from psych_runtime.core.records import JsonObject
from psych_runtime.core.records import StepCompleted
from psych_runtime.core.records import StepStarted
from psych_runtime.core.records import SuspendReason
from psych_runtime.core.records import TerminalState
from psych_runtime.core.records import ToolFailure
from psych_runtime.core.spec import HttpTool
from psych_runtime.core.spec import WorkflowSpec
from psych_runtime.core.spec.workflow import AgentStep
from psych_runtime.core.spec.workflow import BranchStep
from psych_runtime.core.spec.workflow import ForeachStep
from psych_runtime.core.spec.workflow import HumanStep
from psych_runtime.core.spec.workflow import LoopStep
from psych_runtime.core.spec.workflow import MapStep
from psych_runtime.core.spec.workflow import ParallelStep
from psych_runtime.core.spec.workflow import SetStateStep
from psych_runtime.core.spec.workflow import SleepStep
from psych_runtime.core.spec.workflow import Step
from psych_runtime.core.spec.workflow import ToolStep
from psych_runtime.core.spec.workflow import WaitStep
from psych_runtime.core.spec.workflow import WorkflowStepRef
from psych_runtime.core.state import RunStateView
from psych_runtime.core.state import StepRecord
from psych_runtime.runtime.clock import utcnow
from psych_runtime.runtime.settlement import Ending
from psych_runtime.runtime.settlement import aborted_by_request
from psych_runtime.runtime.settlement import completed
from psych_runtime.runtime.settlement import settle
from psych_runtime.runtime.workflow import composites
from psych_runtime.runtime.workflow import leaves
from psych_runtime.runtime.workflow.context import StepFailed
from psych_runtime.runtime.workflow.context import Suspend
from psych_runtime.runtime.workflow.context import WorkflowContext
from psych_runtime.runtime.workflow.context import failure
from psych_runtime.runtime.workflow.ids import step_id
from psych_runtime.runtime.workflow.retry import backoff
from psych_runtime.runtime.workflow.retry import will_retry
from psych_runtime.runtime.workflow.values import Frame
from psych_runtime.runtime.workflow.values import StepView
from psych_runtime.runtime.workflow.values import holds
from psych_runtime.runtime.workflow.values import render

Path = composites.Path

ORPHANED_MESSAGE = (
    "the worker running this step stopped before it reported back; the tool may or may "
    "not have acted"
)


class _Fatal(StepFailed):
    """A failure no ``on_failure: continue`` may swallow (the Run's step budget)."""


class _Aborted(Exception):
    """The Run was asked to stop (``interrupt``): no further step starts."""


class _Ended(Exception):
    """Carries the frame of a workflow that a step ended early."""

    def __init__(self, frame: Frame) -> None:
        super().__init__("ended")
        self.frame = frame


class WorkflowEngine:
    """Runs one Attempt of a workflow Run to its end, its next wait, or its failure."""

    def __init__(self, wctx: WorkflowContext) -> None:
        self.wctx = wctx

    @property
    def _state(self) -> RunStateView:
        """The folded state, read fresh: every staged record is already in it."""
        return self.wctx.journal.state

    async def run(self) -> None:
        """Run the workflow from wherever its log has got to."""
        journal = self.wctx.journal
        spec = self.wctx.spec
        if self._state.settled:
            return
        try:
            output = await self.run_workflow(spec, dict(self._state.run_input), (spec.name,))
        except Suspend:
            await journal.flush()
            return
        except _Aborted:
            settle(journal, aborted_by_request())
            await journal.flush()
            return
        except StepFailed as failed:
            settle(journal, Ending(TerminalState.FAILED, failed.failure))
            await journal.flush()
            return
        settle(journal, completed(output))
        await journal.flush()

    async def run_workflow(self, spec: WorkflowSpec, data: JsonObject, prefix: Path) -> JsonObject:
        """Check the input, run the steps in order, and build the output."""
        problems = value_problems(data, spec.input_schema)
        if problems:
            # Checked before any step: a bad input never starts the workflow.
            raise StepFailed(failure("input_invalid", "; ".join(problems)))
        frame = Frame(input=data, state=self.workflow_state())
        try:
            frame = await self.run_sequence(spec.steps, frame, prefix, None)
        except _Ended as ended:
            frame = ended.frame
        if spec.output is not None:
            return render(spec.output, frame)
        return {
            step.name: frame.steps[step.name].output
            for step in spec.steps
            if step.name in frame.steps
        }

    async def run_sequence(
        self, steps: Sequence[Step], frame: Frame, prefix: Path, parent: StepId | None
    ) -> Frame:
        """Steps one after the other, each seeing the ones before it."""
        for index, step in enumerate(steps):
            view = await self.run_step(step, frame, (*prefix, index, step.name), parent)
            frame = frame.with_step(step.name, view).with_state(self.workflow_state())
            if step.ends_workflow and view.status == "completed":
                raise _Ended(frame)
        return frame

    def workflow_state(self) -> dict[str, JsonValue]:
        """The initial state overlaid with every completed ``set_state``, in log order."""
        return {**self.wctx.spec.initial_state, **self._state.workflow_state_updates}

    # --- one step ---------------------------------------------------------------------

    async def run_step(
        self, step: Step, frame: Frame, path: Path, parent: StepId | None
    ) -> StepView:
        """Run (or read back) one step and say how it ended."""
        sid = step_id(self.wctx.run_id, path)
        record = self._state.steps.get(sid)
        pending: ToolFailure | None = None
        if record is not None and record.settled:
            return self._read_back(step, record)
        self._check_stop()
        if record is None:
            replayed = self._replayed(step, sid, path, parent, frame)
            if replayed is not None:
                return replayed
            self._break_before(step, sid)
            if step.when is not None and not holds(step.when, frame):
                self._start(step, sid, path, parent, 1, frame)
                self.wctx.journal.stage(StepCompleted, step_id=sid, skipped=True)
                return StepView("skipped")
            attempt = 1
            self._start(step, sid, path, parent, attempt, frame)
        elif record.completed:  # failed, and waiting to try again
            woken = leaves.latest_resume(self.wctx, sid, record.completed_seq or 0)
            if record.retry_at is not None and utcnow() < record.retry_at and woken is None:
                raise leaves.suspend_step(
                    self.wctx, sid, step.name, SuspendReason.TIMER, wake_at=record.retry_at
                )
            attempt = record.attempt_number + 1
            self._start(step, sid, path, parent, attempt, frame)
        else:  # an attempt in progress: a wait that was answered, or a crash
            attempt = record.attempt_number
            if isinstance(step, ToolStep) and self._in_doubt(record) and not self._repeatable(step):
                pending = failure("orphaned", ORPHANED_MESSAGE)
        while True:
            outcome = pending or await self._attempt(step, frame, path, sid, attempt)
            pending = None
            if isinstance(outcome, StepView):
                return outcome
            retry = await self._retry(step, sid, attempt, outcome)
            if retry is None:
                return self._failed(step, sid, outcome)
            attempt = retry
            self._start(step, sid, path, parent, attempt, frame)

    async def _attempt(
        self, step: Step, frame: Frame, path: Path, sid: StepId, attempt: int
    ) -> StepView | ToolFailure:
        """One attempt: its output recorded and returned, or its failure returned."""
        started_seq = self._state.steps[sid].started_seq
        child_run = None
        try:
            async with _time_limit(step):
                output, child_run = await self._execute(
                    step, frame, path, sid, attempt, started_seq
                )
        except StepFailed as failed:
            if isinstance(failed, _Fatal):
                raise
            return failed.failure
        except TimeoutError:
            return failure("step_timeout", f"the step took longer than {step.timeout_seconds}s")
        problems = value_problems(output, step.output_schema)
        if problems:
            return failure("schema_violation", "; ".join(problems))
        self.wctx.journal.stage(StepCompleted, step_id=sid, output=output, child_run_id=child_run)
        return StepView("completed", output)

    async def _retry(
        self, step: Step, sid: StepId, attempt: int, failed: ToolFailure
    ) -> int | None:
        """Record a failed attempt that will be tried again; the next attempt's number.

        None when the step is not tried again (the caller records the failure). A
        backoff is waited as a timer suspension, never while holding the lease.
        """
        if _composite(step):
            return None
        policy = step.retry or self.wctx.spec.retry
        if not will_retry(policy, failed.kind, attempt):
            return None
        delay = backoff(policy, attempt + 1)
        if delay == 0:
            self.wctx.journal.stage(StepCompleted, step_id=sid, failure=failed, will_retry=True)
            return attempt + 1
        retry_at = utcnow() + timedelta(seconds=delay)
        self.wctx.journal.stage(
            StepCompleted, step_id=sid, failure=failed, will_retry=True, retry_at=retry_at
        )
        raise leaves.suspend_step(self.wctx, sid, step.name, SuspendReason.TIMER, wake_at=retry_at)

    def _failed(self, step: Step, sid: StepId, failed: ToolFailure) -> StepView:
        self.wctx.journal.stage(StepCompleted, step_id=sid, failure=failed)
        if step.on_failure == "continue":
            return StepView("failed", None, failed.model_dump(mode="json", exclude_none=True))
        raise StepFailed(failed)

    def _read_back(self, step: Step, record: StepRecord) -> StepView:
        """A step completed for good, as the log has it; it is never run again."""
        if record.skipped:
            return StepView("skipped")
        if record.failure is not None:
            if step.on_failure == "continue":
                return StepView(
                    "failed", None, record.failure.model_dump(mode="json", exclude_none=True)
                )
            raise StepFailed(record.failure)
        return StepView("completed", record.output)

    def _start(
        self,
        step: Step,
        sid: StepId,
        path: Path,
        parent: StepId | None,
        attempt: int,
        frame: Frame,
        *,
        replayed_from: RunId | None = None,
    ) -> None:
        limit = self.wctx.spec.limits.max_steps
        if attempt == 1 and len(self._state.step_starts) >= limit:
            raise _Fatal(failure("budget_exhausted", f"reached max_steps={limit}"))
        inputs: JsonObject = {}
        if isinstance(step, ToolStep):
            inputs = {**step.arguments, **render(step.arguments_from, frame)}
        self.wctx.journal.stage(
            StepStarted,
            step_id=sid,
            name=step.name,
            kind=step.kind,
            attempt_number=attempt,
            input=inputs,
            path=path,
            parent_step_id=parent,
            iteration=frame.iteration if isinstance(frame.iteration, int) else None,
            replayed_from=replayed_from,
        )

    def _replayed(
        self, step: Step, sid: StepId, path: Path, parent: StepId | None, frame: Frame
    ) -> StepView | None:
        """Reuse the earlier Run's result of a step before the replay point, if any."""
        replay = self.wctx.replay
        top_index = path[1] if len(path) > 1 else None
        if replay is None or not isinstance(top_index, int) or top_index >= replay.from_index:
            return None
        earlier = replay.steps.get(step_id(replay.run_id, path))
        if earlier is None or not earlier.settled or earlier.failure is not None:
            return None
        self._start(step, sid, path, parent, 1, frame, replayed_from=replay.run_id)
        if earlier.skipped:
            self.wctx.journal.stage(StepCompleted, step_id=sid, skipped=True)
            return StepView("skipped")
        self.wctx.journal.stage(StepCompleted, step_id=sid, output=earlier.output)
        return StepView("completed", earlier.output)

    def _break_before(self, step: Step, sid: StepId) -> None:
        """Suspend before a breakpoint's step (or any step, stepping) until resumed."""
        state = self._state
        if step.name not in state.breakpoints and not state.step_mode:
            return
        answers = state.step_resumes.get(sid, [])
        if any(answer.reason is SuspendReason.BREAKPOINT for answer in answers):
            return
        raise leaves.suspend_step(self.wctx, sid, step.name, SuspendReason.BREAKPOINT)

    def _check_stop(self) -> None:
        if self._state.aborted:
            raise _Aborted()

    def _in_doubt(self, record: StepRecord) -> bool:
        """Whether an earlier Attempt may already have run this step's tool.

        A step waiting for a decision had not acted; the first Attempt after the
        decision is the one that acts. Otherwise the step was started by an Attempt
        that is gone, which may have run the tool before it vanished.
        """
        attempts = [r.seq for r in self.wctx.journal.records if r.type == "attempt_started"]
        current = attempts[-1] if attempts else 0
        answer = leaves.latest_resume(self.wctx, record.step_id, record.started_seq)
        if answer is None:
            return record.started_seq < current
        return any(answer.seq < seq < current for seq in attempts)

    def _repeatable(self, step: ToolStep) -> bool:
        """Whether the step's tool may safely run again (idempotent, or an HTTP GET)."""
        for tool in self.wctx.spec.tools:
            if isinstance(tool, HttpTool) and tool.name == step.tool:
                return tool.method == "GET"
        registered = self.wctx.deps.registry.get(step.tool)
        return registered is not None and registered.idempotent

    # --- the kinds ----------------------------------------------------------------------

    async def _execute(
        self, step: Step, frame: Frame, path: Path, sid: StepId, attempt: int, started_seq: int
    ) -> tuple[JsonObject, RunId | None]:
        kind = STEP_KINDS.get(type(step))
        if kind is None:
            raise StepFailed(failure("unsupported_step", f"step kind {step.kind!r} is not run"))
        return await kind.run(self, step, Started(frame, path, sid, attempt, started_seq))


@dataclass(frozen=True, slots=True)
class Started:
    """Where a step is being run: its data frame, its path, its id and attempt.

    Attributes:
        frame: the data the step's references read.
        path: the names from the workflow down to the step.
        sid: the step's id.
        attempt: which attempt of the step this is.
        started_seq: the seq of its ``step_started``.
    """

    frame: Frame
    path: Path
    sid: StepId
    attempt: int
    started_seq: int


Run = Callable[[WorkflowEngine, Any, Started], Awaitable[tuple[JsonObject, RunId | None]]]
"""Runs one attempt of a step: its output, and the child Run that produced it, if any.

The step is typed loosely here only because each entry's runner takes its own kind's
model: the table is keyed by that model, so a runner never sees another kind.
"""


@dataclass(frozen=True, slots=True)
class StepKind:
    """How the engine runs one kind of step.

    Attributes:
        run: runs one attempt.
        composite: the step runs other steps; it has no retries or time limit of its
            own (its children have theirs).
    """

    run: Run
    composite: bool = False


async def _map(engine: WorkflowEngine, step: MapStep, at: Started) -> tuple[JsonObject, None]:
    return leaves.run_map(step, at.frame), None


async def _set_state(
    engine: WorkflowEngine, step: SetStateStep, at: Started
) -> tuple[JsonObject, None]:
    return leaves.run_set_state(step, at.frame), None


async def _tool(engine: WorkflowEngine, step: ToolStep, at: Started) -> tuple[JsonObject, None]:
    output = await leaves.run_tool(engine.wctx, step, at.frame, at.sid, at.attempt, at.started_seq)
    return output, None


async def _sleep(engine: WorkflowEngine, step: SleepStep, at: Started) -> tuple[JsonObject, None]:
    return leaves.run_sleep(engine.wctx, step, at.frame, at.sid, at.started_seq), None


async def _wait(engine: WorkflowEngine, step: WaitStep, at: Started) -> tuple[JsonObject, None]:
    return leaves.run_wait(engine.wctx, step, at.sid, at.started_seq), None


async def _human(engine: WorkflowEngine, step: HumanStep, at: Started) -> tuple[JsonObject, None]:
    return leaves.run_human(engine.wctx, step, at.sid, at.started_seq), None


async def _agent(
    engine: WorkflowEngine, step: AgentStep, at: Started
) -> tuple[JsonObject, RunId | None]:
    wctx = engine.wctx
    # Durable before the agent acts, with what finished before it.
    await wctx.journal.flush()
    data = render(step.input, at.frame)
    message = data.get("message")
    outcome = await wctx.run_agent(
        step.spec, at.sid, message if isinstance(message, str) else "", data
    )
    if outcome.failure is not None:
        raise StepFailed(outcome.failure)
    return outcome.output or {}, outcome.child_run_id


async def _parallel(
    engine: WorkflowEngine, step: ParallelStep, at: Started
) -> tuple[JsonObject, None]:
    return await composites.run_parallel(step, at.frame, at.path, at.sid, engine.run_step), None


async def _branch(engine: WorkflowEngine, step: BranchStep, at: Started) -> tuple[JsonObject, None]:
    return await composites.run_branch(step, at.frame, at.path, at.sid, engine.run_step), None


async def _foreach(
    engine: WorkflowEngine, step: ForeachStep, at: Started
) -> tuple[JsonObject, None]:
    return await composites.run_foreach(step, at.frame, at.path, at.sid, engine.run_step), None


async def _loop(engine: WorkflowEngine, step: LoopStep, at: Started) -> tuple[JsonObject, None]:
    output = await composites.run_loop(
        step, at.frame, at.path, at.sid, engine.run_step, engine.workflow_state
    )
    return output, None


async def _nested(
    engine: WorkflowEngine, step: WorkflowStepRef, at: Started
) -> tuple[JsonObject, None]:
    data = render(step.input, at.frame)
    return await engine.run_workflow(step.spec, data, (*at.path, step.spec.name)), None


STEP_KINDS: dict[type[Step], StepKind] = {
    MapStep: StepKind(_map),
    SetStateStep: StepKind(_set_state),
    ToolStep: StepKind(_tool),
    SleepStep: StepKind(_sleep),
    WaitStep: StepKind(_wait),
    HumanStep: StepKind(_human),
    AgentStep: StepKind(_agent),
    ParallelStep: StepKind(_parallel, composite=True),
    BranchStep: StepKind(_branch, composite=True),
    ForeachStep: StepKind(_foreach, composite=True),
    LoopStep: StepKind(_loop, composite=True),
    WorkflowStepRef: StepKind(_nested, composite=True),
}
"""Every kind of step the engine runs, by its Spec model; a new kind is one entry."""


def _composite(step: Step) -> bool:
    kind = STEP_KINDS.get(type(step))
    return kind is not None and kind.composite


@contextlib.asynccontextmanager
async def _time_limit(step: Step) -> AsyncIterator[None]:
    """The step's own time limit per attempt; composites are bounded by their children."""
    if step.timeout_seconds is None or _composite(step):
        yield
        return
    async with asyncio.timeout(step.timeout_seconds):
        yield


__all__ = ["ORPHANED_MESSAGE", "WorkflowEngine"]
