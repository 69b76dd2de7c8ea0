"""Composed children in the background: spawn, check and message them, and wait on them.

``spawn_subagent`` admits a child that any Worker may claim and returns at once. The
child is admitted parked (until the parent's deadline) and only released to the
Workers once its ``subagent_spawned`` is durable, so its ending can never reach a
parent that does not know it yet; a crash in between leaves it parked, and the retried
call (found by its idempotency key) releases it. ``check_subagent`` reads a child's
log; ``message_subagent`` queues a steer into it.

When the model answers while children still work, the Run does not settle: it
suspends on its children (``wait_for_children``) and releases its lease. Each child's
ending is written into its log by whoever settles the child, and the last one wakes it
(``runtime/children.py``).
"""

from typing import Any

from psych_runtime.core.ids import ToolCallId
from psych_runtime.core.records import JsonObject
from psych_runtime.core.records import QueueEnqueued
from psych_runtime.core.records import QueueKind
from psych_runtime.core.records import Record
from psych_runtime.core.records import Resumed
from psych_runtime.core.records import SubagentFinished
from psych_runtime.core.records import SubagentMessaged
from psych_runtime.core.records import SubagentSpawned
from psych_runtime.core.records import SuspendReason
from psych_runtime.core.scope import Scope
from psych_runtime.core.state import RunStateView
from psych_runtime.core.validation import validate
from psych_runtime.runtime.agent.context import AttemptContext
from psych_runtime.runtime.agent.context import Next
from psych_runtime.runtime.agent.subagent_calls import SubagentRefused
from psych_runtime.runtime.agent.subagent_calls import alive
from psych_runtime.runtime.agent.subagent_calls import check_depth
from psych_runtime.runtime.agent.subagent_calls import check_fanout
from psych_runtime.runtime.agent.subagent_calls import child_input
from psych_runtime.runtime.agent.subagent_calls import child_of_call
from psych_runtime.runtime.agent.subagent_calls import named_child
from psych_runtime.runtime.agent.subagent_calls import stored_version
from psych_runtime.runtime.children import WOKEN_BY_CHILDREN
from psych_runtime.runtime.children import admit_child
from psych_runtime.runtime.children import child_ending
from psych_runtime.runtime.clock import utcnow
from psych_runtime.runtime.external import append_external
from psych_runtime.runtime.ids import new_entry_id
from psych_runtime.runtime.reads import FOLDS
from psych_runtime.runtime.suspension import stage_suspension
from psych_runtime.store.port import RunState
from psych_runtime.tools.subagents import CHECK_SUBAGENT
from psych_runtime.tools.subagents import MESSAGE_SUBAGENT
from psych_runtime.tools.subagents import composed_child_spec
from psych_runtime.tools.subagents import read_named
from psych_runtime.tools.subagents import read_spawn

# --- spawn, check, message: composed children in the background ------------------------


async def spawn_child(ctx: AttemptContext, call_id: ToolCallId, arguments: JsonObject) -> Any:
    """``spawn_subagent``: compose, publish and admit a child, then free it to run."""
    spec, journal = ctx.spec, ctx.journal
    envelope = spec.spawn
    assert envelope is not None  # only offered with an envelope
    request = read_spawn(arguments)
    state = journal.state
    existing = child_of_call(state, call_id)
    if existing is not None:
        await ctx.deps.store.set_runnable_at(existing.run_id, None)
        return {"name": existing.name, "run_id": existing.run_id, "state": "running"}
    cap = min(envelope.max_depth, spec.limits.max_delegation_depth)
    check_depth(state, cap)
    check_fanout(ctx, call_id)
    alive = [child for child in state.live_children if child.background]
    if len(alive) >= envelope.max_alive:
        raise SubagentRefused(
            "too_many_subagents",
            f"{len(alive)} subagents are already running (at most {envelope.max_alive}); "
            "wait for one to finish",
        )
    if any(child.name == request.name for child in state.live_children):
        raise SubagentRefused("name_taken", f"a running subagent is already named {request.name!r}")
    child_spec = composed_child_spec(
        request, envelope, spec, may_spawn=state.delegation_depth + 2 <= cap
    )
    validate(child_spec)
    stored = await stored_version(ctx, child_spec)
    child = await admit_child(
        ctx.deps.store,
        state,
        version_hash=stored.hash,
        key=f"spawn:{journal.run_id}:{call_id}",
        input=child_input(state, request.task),
        deadline_seconds=child_spec.limits.deadline_seconds,
        state=RunState.RUNNABLE,
        runnable_at=state.effective_deadline_at or utcnow(),
        trace_context=journal.observer.carrier(call_id=call_id) if journal.observer else None,
    )
    journal.stage(
        SubagentSpawned,
        child_run_id=child.run_id,
        name=request.name,
        call_id=call_id,
        child_version_hash=stored.hash,
        purpose=request.purpose,
        task=request.task,
        deliverable=request.deliverable,
        tools=tuple(tool.name for tool in child_spec.tools),
        model=child_spec.model.model,
        delegation_depth=child.delegation_depth,
        background=True,
    )
    await journal.flush()
    # Known to the parent now, so any Worker may run it: its ending has somewhere to go.
    await ctx.deps.store.set_runnable_at(child.run_id, None)
    return {"name": request.name, "run_id": child.run_id, "state": "running"}


async def check_child(ctx: AttemptContext, arguments: JsonObject) -> Any:
    """``check_subagent``: a snapshot of a child, read from its own log."""
    name, _ = read_named(CHECK_SUBAGENT, arguments)
    child = named_child(ctx.journal.state, name)
    fold = await FOLDS.fold(ctx.deps.store, child.run_id)
    state = fold.state
    latest = next(
        (r.text for r in reversed(fold.records) if r.type == "model_call_finished" and r.text),
        "",
    )
    snapshot: JsonObject = {
        "name": name,
        "run_id": child.run_id,
        "state": str(state.terminal_state) if state.settled else _lifecycle(state),
        "turns": state.turn,
        "tool_calls": len(state.tool_results),
        "latest_text": latest[-2_000:],
    }
    if state.output is not None:
        snapshot["output"] = state.output
    if state.failure is not None:
        snapshot["error"] = state.failure.message
    return snapshot


def _lifecycle(state: RunStateView) -> str:
    if state.suspended:
        return "waiting"
    return "running" if state.attempt_count else "queued"


async def message_child(ctx: AttemptContext, call_id: ToolCallId, arguments: JsonObject) -> Any:
    """``message_subagent``: queue a steer into a running child, and record it."""
    name, text = read_named(MESSAGE_SUBAGENT, arguments, message=True)
    child = named_child(ctx.journal.state, name)
    if not child.alive or not child.background:
        raise SubagentRefused("subagent_finished", f"the subagent {name!r} is no longer running")
    header = await ctx.deps.store.get_run(child.run_id)
    assert header is not None
    entry_id = new_entry_id()

    def build(state: RunStateView, seq: int, scope: Scope) -> Record:
        if state.settled:
            raise SubagentRefused("subagent_finished", f"the subagent {name!r} has just finished")
        return QueueEnqueued(
            run_id=child.run_id,
            seq=seq,
            at=utcnow(),
            scope=scope,
            queue=QueueKind.STEER,
            entry_id=entry_id,
            payload={"message": text},
        )

    await append_external(ctx.deps.store, child.run_id, header, build)
    ctx.journal.stage(
        SubagentMessaged,
        child_run_id=child.run_id,
        name=name,
        call_id=call_id,
        entry_id=entry_id,
        message=text,
    )
    return {"name": name, "delivered": True}


# --- waiting for background children ---------------------------------------------------


async def wait_for_children(ctx: AttemptContext) -> Next | None:
    """Suspend a Run that answered while background children still work.

    Returns None when no child is running (the answer stands), ``Next.CONTINUE`` when
    every child finished meanwhile (another turn reads their results), ``Next.STOP``
    when the Run is now parked waiting on them.
    """
    journal = ctx.journal
    if not journal.state.live_children:
        return None
    await _collect_settled(ctx)
    await journal.flush()
    if not journal.state.live_children:
        return Next.CONTINUE
    stage_suspension(journal, ctx.spec.suspension, SuspendReason.CHILDREN)
    await journal.flush()
    await journal.refresh()
    state = journal.state
    if not state.suspended:
        return Next.CONTINUE  # the last child's ending woke it already
    if not state.live_children:
        journal.stage(Resumed, payload=WOKEN_BY_CHILDREN)
        return Next.CONTINUE
    return Next.STOP


async def _collect_settled(ctx: AttemptContext) -> None:
    """Stage the ending of every live child that has settled but not reported yet."""
    for child in list(ctx.journal.state.live_children):
        header = await ctx.deps.store.get_run(child.run_id)
        if header is None or header.state is not RunState.SETTLED:
            continue
        ending = await child_ending(ctx.deps.store, child.run_id, child.name)
        await ctx.journal.refresh()
        if alive(ctx.journal.state, child.run_id):
            ctx.journal.stage(SubagentFinished, **ending)


__all__ = ["check_child", "message_child", "spawn_child", "wait_for_children"]
