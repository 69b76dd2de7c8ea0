"""The subagent built-ins: delegate, spawn, check and message children, and wait on them.

``delegate`` runs a roster child inline, as a nested Run driven by this Attempt, and
returns its answer. ``spawn_subagent`` admits a composed child that any Worker may
claim and returns at once; ``check_subagent`` reads a child's log; ``message_subagent``
queues a steer into it. Every child is recorded in the parent's log with
``subagent_spawned`` before it can run, and its ending with ``subagent_finished``.

Crash safety: children are admitted under an idempotency key made of the parent Run
and the call, so a call retried after a crash finds the child it started rather than
starting another. A background child is admitted parked (until its deadline) and only
released to the Workers once its ``subagent_spawned`` is durable, so its ending can
never reach a parent that does not yet know it.

When the model answers while background children are still working, the Run does not
settle: it suspends on its children (``wait_for_children``) and releases its lease.
Each child's ending is written into its log by whoever settles the child, and the last
one wakes it (``runtime/children.py``).
"""

import time
from typing import Any

from psych_runtime.core.errors import PsychError
from psych_runtime.core.ids import ToolCallId
from psych_runtime.core.records import (
    AttemptStarted,
    JsonObject,
    QueueEnqueued,
    QueueKind,
    Record,
    Resumed,
    RunSettled,
    SubagentFinished,
    SubagentMessaged,
    SubagentSpawned,
    SuspendReason,
    TerminalState,
    ToolFailure,
    ToolOutcome,
)
from psych_runtime.core.scope import Scope
from psych_runtime.core.spec import AgentSpec
from psych_runtime.core.state import ChildRun, RunStateView
from psych_runtime.core.validation import validate
from psych_runtime.core.version import Version
from psych_runtime.runtime.agent.context import AttemptContext, Next, failure
from psych_runtime.runtime.agent.finish import Executed
from psych_runtime.runtime.children import (
    INLINE_WORKER,
    WOKEN_BY_CHILDREN,
    admit_child,
    child_ending,
)
from psych_runtime.runtime.clock import utcnow
from psych_runtime.runtime.external import append_external
from psych_runtime.runtime.ids import new_entry_id
from psych_runtime.runtime.journal import Journal
from psych_runtime.runtime.open_calls import close_open_calls
from psych_runtime.runtime.reads import FOLDS
from psych_runtime.runtime.suspension import stage_suspension
from psych_runtime.store.port import RunState
from psych_runtime.tools.errors import ToolArgumentsInvalid
from psych_runtime.tools.memory import END_USER_INPUT_KEY
from psych_runtime.tools.subagents import (
    CHECK_SUBAGENT,
    DELEGATE,
    MESSAGE_SUBAGENT,
    SPAWN_SUBAGENT,
    composed_child_spec,
    read_delegation,
    read_named,
    read_spawn,
    roster_child_spec,
)

SUSPENDED_CHILD_MESSAGE = (
    "the subagent stopped to wait for a person or an event, which a delegated subagent "
    "cannot do; it was ended"
)


class _Refused(PsychError):
    """A subagent call the runtime will not carry out; the model is told why."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


async def run_subagent_tool(
    ctx: AttemptContext, call_id: ToolCallId, name: str, arguments: JsonObject
) -> Executed:
    """Carry out one subagent built-in; a refusal is an ordinary failed call."""
    started = time.perf_counter()
    try:
        if name == DELEGATE:
            result = await _delegate(ctx, call_id, arguments)
        elif name == SPAWN_SUBAGENT:
            result = await _spawn(ctx, call_id, arguments)
        elif name == CHECK_SUBAGENT:
            result = await _check(ctx, arguments)
        else:
            result = await _message(ctx, call_id, arguments)
    except ToolArgumentsInvalid as error:
        refused = failure("invalid_arguments", str(error))
    except _Refused as error:
        refused = failure(error.kind, str(error))
    else:
        return Executed(ToolOutcome.OK, result, None, _elapsed(started))
    return Executed(ToolOutcome.ERROR, None, refused, _elapsed(started))


# --- delegate: a roster child, run inline ----------------------------------------------


async def _delegate(ctx: AttemptContext, call_id: ToolCallId, arguments: JsonObject) -> Any:
    spec, journal = ctx.spec, ctx.journal
    ref, task = read_delegation(spec, arguments)
    state = journal.state
    existing = _child_of_call(state, call_id)
    if existing is None:
        _check_depth(state, spec.limits.max_delegation_depth)
        _check_fanout(ctx, call_id)
    child_spec = roster_child_spec(ref, spec)
    stored = await _stored(ctx, child_spec)
    child = await admit_child(
        ctx.deps.store,
        state,
        version_hash=stored.hash,
        key=f"delegate:{journal.run_id}:{call_id}",
        input=_child_input(state, task),
        deadline_seconds=child_spec.limits.deadline_seconds,
        state=RunState.NESTED,
    )
    if existing is None:
        journal.stage(
            SubagentSpawned,
            child_run_id=child.run_id,
            name=ref.name,
            call_id=call_id,
            child_version_hash=stored.hash,
            task=task,
            tools=tuple(tool.name for tool in child_spec.tools),
            model=child_spec.model.model,
            delegation_depth=child.delegation_depth,
            background=False,
        )
        await journal.flush()
    nested = await Journal.open(ctx.deps.store, child.run_id, attempt_id=journal.attempt_id)
    if not nested.state.settled:
        await _drive(ctx, nested, child_spec)
    await ctx.deps.store.settle_inline(child.run_id)
    ending = await child_ending(ctx.deps.store, child.run_id, ref.name)
    if _alive(journal.state, child.run_id):
        journal.stage(SubagentFinished, **ending)
    return _outcome(child.run_id, nested.state)


async def _drive(ctx: AttemptContext, nested: Journal, spec: AgentSpec) -> None:
    """Run a nested child's loop to its end within this Attempt.

    A child that suspends (a question, an approval) would wait for ever, since no
    Worker claims a nested Run: it is ended ``failed`` instead, its open calls closed.
    """
    from psych_runtime.runtime.agent.loop import AgentLoop  # the loop runs this module

    nested.stage(
        AttemptStarted, worker_id=INLINE_WORKER, attempt_number=nested.state.attempt_count + 1
    )
    await AgentLoop(ctx.deps, nested, spec, ctx.abort).run()
    await nested.flush()
    if not nested.state.settled:
        close_open_calls(nested, ToolOutcome.ERROR, "not_executed", SUSPENDED_CHILD_MESSAGE)
        nested.stage(
            RunSettled,
            state=TerminalState.FAILED,
            failure=ToolFailure(kind="child_suspended", message=SUSPENDED_CHILD_MESSAGE),
        )
        await nested.flush()


def _outcome(child_id: str, state: RunStateView) -> JsonObject:
    """What the parent's model is told of a finished child."""
    result: JsonObject = {"run_id": child_id, "state": str(state.terminal_state)}
    if state.terminal_state is TerminalState.COMPLETED and state.output is not None:
        result.update(state.output)
    elif state.failure is not None:
        result["error"] = state.failure.message
    return result


def _check_depth(state: RunStateView, cap: int) -> None:
    depth = state.delegation_depth + 1
    if depth > cap:
        raise _Refused(
            "delegation_depth",
            f"a subagent here would sit {depth} levels deep, but at most {cap} are allowed; "
            "do the work yourself",
        )


def _check_fanout(ctx: AttemptContext, call_id: ToolCallId) -> None:
    """At most ``max_fanout_per_turn`` children per turn, counting this call."""
    cap = ctx.spec.limits.max_fanout_per_turn
    turn = ctx.journal.state.turn
    started = {
        record.call_id
        for record in ctx.journal.records
        if record.type == "tool_call_started"
        and record.turn == turn
        and record.tool in (DELEGATE, SPAWN_SUBAGENT)
    }
    earlier = [
        child
        for child in ctx.journal.state.children.values()
        if child.call_id in started and child.call_id != call_id
    ]
    if len(earlier) >= cap:
        raise _Refused(
            "fanout_exceeded",
            f"at most {cap} subagents may be started in one turn; wait for their answers",
        )


# --- spawn, check, message: composed children in the background ------------------------


async def _spawn(ctx: AttemptContext, call_id: ToolCallId, arguments: JsonObject) -> Any:
    spec, journal = ctx.spec, ctx.journal
    envelope = spec.spawn
    assert envelope is not None  # only offered with an envelope
    request = read_spawn(arguments)
    state = journal.state
    existing = _child_of_call(state, call_id)
    if existing is not None:
        await ctx.deps.store.set_runnable_at(existing.run_id, None)
        return {"name": existing.name, "run_id": existing.run_id, "state": "running"}
    cap = min(envelope.max_depth, spec.limits.max_delegation_depth)
    _check_depth(state, cap)
    _check_fanout(ctx, call_id)
    alive = [child for child in state.live_children if child.background]
    if len(alive) >= envelope.max_alive:
        raise _Refused(
            "too_many_subagents",
            f"{len(alive)} subagents are already running (at most {envelope.max_alive}); "
            "wait for one to finish",
        )
    if any(child.name == request.name for child in state.live_children):
        raise _Refused("name_taken", f"a running subagent is already named {request.name!r}")
    child_spec = composed_child_spec(
        request, envelope, spec, may_spawn=state.delegation_depth + 2 <= cap
    )
    validate(child_spec)
    stored = await _stored(ctx, child_spec)
    child = await admit_child(
        ctx.deps.store,
        state,
        version_hash=stored.hash,
        key=f"spawn:{journal.run_id}:{call_id}",
        input=_child_input(state, request.task),
        deadline_seconds=child_spec.limits.deadline_seconds,
        state=RunState.RUNNABLE,
        runnable_at=state.effective_deadline_at or utcnow(),
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


async def _check(ctx: AttemptContext, arguments: JsonObject) -> Any:
    name, _ = read_named(CHECK_SUBAGENT, arguments)
    child = _named(ctx.journal.state, name)
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


async def _message(ctx: AttemptContext, call_id: ToolCallId, arguments: JsonObject) -> Any:
    name, text = read_named(MESSAGE_SUBAGENT, arguments, message=True)
    child = _named(ctx.journal.state, name)
    if not child.alive or not child.background:
        raise _Refused("subagent_finished", f"the subagent {name!r} is no longer running")
    header = await ctx.deps.store.get_run(child.run_id)
    assert header is not None
    entry_id = new_entry_id()

    def build(state: RunStateView, seq: int, scope: Scope) -> Record:
        if state.settled:
            raise _Refused("subagent_finished", f"the subagent {name!r} has just finished")
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
        if _alive(ctx.journal.state, child.run_id):
            ctx.journal.stage(SubagentFinished, **ending)


# --- helpers ---------------------------------------------------------------------------


async def _stored(ctx: AttemptContext, spec: AgentSpec) -> Version:
    return await ctx.deps.store.put_version(
        Version.of(spec, utcnow()), tenant=ctx.journal.scope.tenant
    )


def _child_input(state: RunStateView, task: str) -> JsonObject:
    """A child's input: its task, and the end user it works for (its parent's)."""
    child: JsonObject = {"message": task}
    end_user = state.run_input.get(END_USER_INPUT_KEY)
    if isinstance(end_user, str):
        child[END_USER_INPUT_KEY] = end_user
    return child


def _child_of_call(state: RunStateView, call_id: ToolCallId) -> ChildRun | None:
    return next((c for c in state.children.values() if c.call_id == call_id), None)


def _alive(state: RunStateView, child_id: str) -> bool:
    child = state.children.get(child_id)  # type: ignore[call-overload]
    return child is not None and child.alive


def _named(state: RunStateView, name: str) -> ChildRun:
    """The most recent child of that name."""
    for child in reversed(list(state.children.values())):
        if child.name == name:
            return child
    known = ", ".join(sorted({c.name for c in state.children.values()})) or "none"
    raise _Refused("unknown_subagent", f"no subagent is named {name!r}; started: {known}")


def _elapsed(started: float) -> float:
    return round(time.perf_counter() - started, 6)


__all__ = ["run_subagent_tool", "wait_for_children"]
