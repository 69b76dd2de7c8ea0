"""Reaching outside the workflow's own log: agent steps as nested Runs, and replays.

An agent step is the agent loop run as a nested Run, inline in the workflow's Attempt.

The child is a Run of its own (its own log, so ``report()`` and ``thread()`` read it
like any other), admitted once per step through an idempotency key derived from the
step id, in the ``nested`` state no Worker ever claims: the workflow's Attempt drives
it. After a crash the next Attempt finds the same child and continues its loop from
its log, with the usual handling of calls in doubt, so a completed agent turn is never
taken again.
"""

from psych_runtime.core.ids import StepId
from psych_runtime.core.records import AttemptStarted
from psych_runtime.core.records import JsonObject
from psych_runtime.core.reducer import reduce
from psych_runtime.core.spec import AgentSpec
from psych_runtime.core.spec import WorkflowSpec
from psych_runtime.core.state import RunStateView
from psych_runtime.core.version import Version
from psych_runtime.runtime.abort import AbortSignal
from psych_runtime.runtime.agent import AgentDeps
from psych_runtime.runtime.agent import AgentLoop
from psych_runtime.runtime.children import INLINE_WORKER
from psych_runtime.runtime.children import admit_child
from psych_runtime.runtime.clock import utcnow
from psych_runtime.runtime.journal import Journal
from psych_runtime.runtime.tracing import trace_child
from psych_runtime.runtime.workflow.context import AgentOutcome
from psych_runtime.runtime.workflow.context import ReplaySource
from psych_runtime.runtime.workflow.context import failure
from psych_runtime.store.port import RunState
from psych_runtime.store.port import Store


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
    stored = await store.put_version(Version.of(spec, utcnow()), tenant=parent.scope.tenant)
    child_id = (
        await admit_child(
            store,
            parent.state,
            version_hash=stored.hash,
            key=f"workflow-step:{sid}",
            input={**data, "message": message} if message else dict(data),
            deadline_seconds=spec.limits.deadline_seconds,
            state=RunState.NESTED,
        )
    ).run_id
    child = await Journal.open(store, child_id, attempt_id=parent.attempt_id)
    if not child.state.settled:
        with trace_child(parent, child, step_id=sid):
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


__all__ = ["replay_source", "run_agent_step"]
