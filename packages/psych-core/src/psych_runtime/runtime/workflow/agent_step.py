"""Reaching outside the workflow's own log: agent steps as nested Runs, and replays.

An agent step is the agent loop run as a nested Run, inline in the workflow's Attempt.

The child is a Run of its own (its own log, so ``report()`` and ``thread()`` read it
like any other), admitted once per step through an idempotency key derived from the
step id, in the ``nested`` state no Worker ever claims: the workflow's Attempt drives
it. After a crash the next Attempt finds the same child and continues its loop from
its log, with the usual handling of calls in doubt, so a completed agent turn is never
taken again.
"""

from datetime import timedelta

from psych_runtime.core.ids import StepId, WorkerId
from psych_runtime.core.records import AttemptStarted, JsonObject, RunAdmitted
from psych_runtime.core.reducer import reduce
from psych_runtime.core.spec import AgentSpec, WorkflowSpec
from psych_runtime.core.state import RunStateView
from psych_runtime.core.version import Version
from psych_runtime.runtime.abort import AbortSignal
from psych_runtime.runtime.agent import AgentDeps, AgentLoop
from psych_runtime.runtime.clock import utcnow
from psych_runtime.runtime.ids import new_run_id
from psych_runtime.runtime.journal import Journal
from psych_runtime.runtime.workflow.context import AgentOutcome, ReplaySource, failure
from psych_runtime.store.port import RunHeader, RunState, Store

INLINE_WORKER = WorkerId("wrk_inline_step")
"""The worker id a nested agent's Attempts are recorded under (its parent's Attempt)."""


async def run_agent_step(
    store: Store,
    deps: AgentDeps,
    parent: Journal,
    abort: AbortSignal,
    spec: AgentSpec,
    sid: StepId,
    message: str,
    data: JsonObject,
) -> AgentOutcome:
    """Run (or continue) the step's child Run to its end and say how it ended."""
    now = utcnow()
    stored = await store.put_version(Version.of(spec, now), tenant=parent.scope.tenant)
    deadline = parent.state.effective_deadline_at or now + timedelta(
        seconds=spec.limits.deadline_seconds
    )
    depth = parent.state.delegation_depth + 1
    run_id = new_run_id()
    key = f"workflow-step:{sid}"
    header = RunHeader(
        run_id=run_id,
        scope=parent.scope,
        version_hash=stored.hash,
        state=RunState.NESTED,
        created_at=now,
        deadline_at=deadline,
        idempotency_key=key,
        parent_run_id=parent.run_id,
        delegation_depth=depth,
    )
    admitted = RunAdmitted(
        run_id=run_id,
        seq=1,
        at=now,
        scope=parent.scope,
        version_hash=stored.hash,
        input={**data, "message": message} if message else dict(data),
        idempotency_key=key,
        deadline_at=deadline,
        parent_run_id=parent.run_id,
        delegation_depth=depth,
    )
    child_id = (await store.create_run(header, admitted)).header.run_id
    child = await Journal.open(store, child_id, attempt_id=parent.attempt_id)
    if not child.state.settled:
        child.stage(
            AttemptStarted,
            worker_id=INLINE_WORKER,
            attempt_number=child.state.attempt_count + 1,
        )
        await AgentLoop(deps, child, spec, abort).run()
        await child.flush()
    state = child.state
    if not state.settled:
        return AgentOutcome(
            child_id,
            None,
            failure("child_suspended", "an agent step cannot wait for a person or an event yet"),
        )
    await store.settle_inline(child_id)
    if state.failure is not None or state.output is None:
        return AgentOutcome(
            child_id,
            None,
            state.failure or failure(str(state.terminal_state), "the agent gave no answer"),
        )
    return AgentOutcome(child_id, state.output, None)


async def replay_source(
    store: Store, state: RunStateView, spec: WorkflowSpec
) -> ReplaySource | None:
    """The earlier Run a replay reuses steps of (read once per Attempt), if any."""
    earlier = state.replays_run_id
    if earlier is None or state.replay_from_step is None:
        return None
    names = [step.name for step in spec.steps]
    if state.replay_from_step not in names:
        return None
    records = await store.read(earlier, tenant=state.scope.tenant)
    if not records:
        return None
    return ReplaySource(earlier, reduce(records).steps, names.index(state.replay_from_step))


__all__ = ["INLINE_WORKER", "replay_source", "run_agent_step"]
