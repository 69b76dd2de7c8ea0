"""The subagent built-ins, and ``delegate``: a roster child run inline to its end.

``run_subagent_tool`` carries out any of the four built-ins; a refusal is an ordinary
failed call. ``delegate`` runs a roster child as a nested Run driven by this Attempt
and returns its answer; the composed, background children are ``background.py``'s.
Every child is recorded in the parent's log with ``subagent_spawned`` before it runs,
and its ending with ``subagent_finished``.

Crash safety: a child is admitted under an idempotency key made of the parent Run and
the call, so a ``delegate`` retried after a crash finds the child it started and
carries on its loop from the child's own log, rather than starting another.
"""

import time
from typing import Any

from psych_runtime.core.ids import ToolCallId
from psych_runtime.core.records import AttemptStarted
from psych_runtime.core.records import JsonObject
from psych_runtime.core.records import SubagentFinished
from psych_runtime.core.records import SubagentSpawned
from psych_runtime.core.records import TerminalState
from psych_runtime.core.records import ToolOutcome
from psych_runtime.core.spec import AgentSpec
from psych_runtime.core.state import RunStateView
from psych_runtime.runtime.agent.background import check_child
from psych_runtime.runtime.agent.background import message_child
from psych_runtime.runtime.agent.background import spawn_child
from psych_runtime.runtime.agent.context import AttemptContext
from psych_runtime.runtime.agent.context import failure
from psych_runtime.runtime.agent.finish import Executed
from psych_runtime.runtime.agent.subagent_calls import SubagentRefused
from psych_runtime.runtime.agent.subagent_calls import alive
from psych_runtime.runtime.agent.subagent_calls import check_depth
from psych_runtime.runtime.agent.subagent_calls import check_fanout
from psych_runtime.runtime.agent.subagent_calls import child_input
from psych_runtime.runtime.agent.subagent_calls import child_of_call
from psych_runtime.runtime.agent.subagent_calls import elapsed
from psych_runtime.runtime.agent.subagent_calls import stored_version
from psych_runtime.runtime.children import INLINE_WORKER
from psych_runtime.runtime.children import admit_child
from psych_runtime.runtime.children import child_ending
from psych_runtime.runtime.journal import Journal
from psych_runtime.runtime.settlement import not_finished
from psych_runtime.runtime.settlement import settle
from psych_runtime.runtime.tracing import trace_child
from psych_runtime.store.port import RunState
from psych_runtime.tools.errors import ToolArgumentsInvalid
from psych_runtime.tools.subagents import CHECK_SUBAGENT
from psych_runtime.tools.subagents import DELEGATE
from psych_runtime.tools.subagents import SPAWN_SUBAGENT
from psych_runtime.tools.subagents import read_delegation
from psych_runtime.tools.subagents import roster_child_spec

SUSPENDED_CHILD_MESSAGE = (
    "the subagent stopped to wait for a person or an event, which a delegated subagent "
    "cannot do; it was ended"
)


async def run_subagent_tool(
    ctx: AttemptContext, call_id: ToolCallId, name: str, arguments: JsonObject
) -> Executed:
    """Carry out one subagent built-in; a refusal is an ordinary failed call."""
    started = time.perf_counter()
    try:
        if name == DELEGATE:
            result = await _delegate(ctx, call_id, arguments)
        elif name == SPAWN_SUBAGENT:
            result = await spawn_child(ctx, call_id, arguments)
        elif name == CHECK_SUBAGENT:
            result = await check_child(ctx, arguments)
        else:
            result = await message_child(ctx, call_id, arguments)
    except ToolArgumentsInvalid as error:
        refused = failure("invalid_arguments", str(error))
    except SubagentRefused as error:
        refused = failure(error.kind, str(error))
    else:
        return Executed(ToolOutcome.OK, result, None, elapsed(started))
    return Executed(ToolOutcome.ERROR, None, refused, elapsed(started))


# --- delegate: a roster child, run inline ----------------------------------------------


async def _delegate(ctx: AttemptContext, call_id: ToolCallId, arguments: JsonObject) -> Any:
    spec, journal = ctx.spec, ctx.journal
    ref, task = read_delegation(spec, arguments)
    state = journal.state
    existing = child_of_call(state, call_id)
    if existing is None:
        check_depth(state, spec.limits.max_delegation_depth)
        check_fanout(ctx, call_id)
    child_spec = roster_child_spec(ref, spec)
    stored = await stored_version(ctx, child_spec)
    child = await admit_child(
        ctx.deps.store,
        state,
        version_hash=stored.hash,
        key=f"delegate:{journal.run_id}:{call_id}",
        input=child_input(state, task),
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
        with trace_child(journal, nested, call_id=call_id):
            await _drive(ctx, nested, child_spec)
    await ctx.deps.store.settle_inline(child.run_id)
    ending = await child_ending(ctx.deps.store, child.run_id, ref.name)
    if alive(journal.state, child.run_id):
        journal.stage(SubagentFinished, **ending)
    return _outcome(child.run_id, nested.state)


async def _drive(ctx: AttemptContext, nested: Journal, spec: AgentSpec) -> None:
    """Run a nested child's loop to its end within this Attempt.

    A child that suspends (a question, an approval) would wait for ever, since no
    Worker claims a nested Run: it is ended ``failed`` instead, its open calls closed.
    """
    nested.stage(
        AttemptStarted, worker_id=INLINE_WORKER, attempt_number=nested.state.attempt_count + 1
    )
    await ctx.run_nested(ctx, nested, spec)
    await nested.flush()
    if not nested.state.settled:
        settle(nested, not_finished("child_suspended", SUSPENDED_CHILD_MESSAGE))
        await nested.flush()


def _outcome(child_id: str, state: RunStateView) -> JsonObject:
    """What the parent's model is told of a finished child."""
    result: JsonObject = {"run_id": child_id, "state": str(state.terminal_state)}
    if state.terminal_state is TerminalState.COMPLETED and state.output is not None:
        result.update(state.output)
    elif state.failure is not None:
        result["error"] = state.failure.message
    return result


__all__ = ["run_subagent_tool"]
