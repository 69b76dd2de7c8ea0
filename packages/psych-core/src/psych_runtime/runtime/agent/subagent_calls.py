"""What the subagent built-ins share: their refusal, the caps, and reading the children.

``delegation.py`` runs roster children inline and ``background.py`` composes children
that run on their own; both refuse the same way, count depth and fan-out the same way
and find a Run's children in its fold through the helpers here.
"""

import time

from psych_runtime.core.errors import PsychError
from psych_runtime.core.ids import ToolCallId
from psych_runtime.core.records import JsonObject
from psych_runtime.core.spec import AgentSpec
from psych_runtime.core.state import ChildRun
from psych_runtime.core.state import RunStateView
from psych_runtime.core.version import Version
from psych_runtime.runtime.agent.context import AttemptContext
from psych_runtime.runtime.clock import utcnow
from psych_runtime.tools.memory import END_USER_INPUT_KEY
from psych_runtime.tools.subagents import DELEGATE
from psych_runtime.tools.subagents import SPAWN_SUBAGENT


class SubagentRefused(PsychError):
    """A subagent call the runtime will not carry out; the model is told why.

    Attributes:
        kind: the failure kind the call is closed with.
    """

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def check_depth(state: RunStateView, cap: int) -> None:
    """Refuse a child deeper than ``cap`` levels below the root Run."""
    depth = state.delegation_depth + 1
    if depth > cap:
        raise SubagentRefused(
            "delegation_depth",
            f"a subagent here would sit {depth} levels deep, but at most {cap} are allowed; "
            "do the work yourself",
        )


def check_fanout(ctx: AttemptContext, call_id: ToolCallId) -> None:
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
        raise SubagentRefused(
            "fanout_exceeded",
            f"at most {cap} subagents may be started in one turn; wait for their answers",
        )


async def stored_version(ctx: AttemptContext, spec: AgentSpec) -> Version:
    """Publish a child's Spec for the Run's tenant (a no-op when it already is)."""
    return await ctx.deps.store.put_version(
        Version.of(spec, utcnow()), tenant=ctx.journal.scope.tenant
    )


def child_input(state: RunStateView, task: str) -> JsonObject:
    """A child's input: its task, and the end user it works for (its parent's)."""
    child: JsonObject = {"message": task}
    end_user = state.run_input.get(END_USER_INPUT_KEY)
    if isinstance(end_user, str):
        child[END_USER_INPUT_KEY] = end_user
    return child


def child_of_call(state: RunStateView, call_id: ToolCallId) -> ChildRun | None:
    """The child a call of this Run started, if it got that far."""
    return next((c for c in state.children.values() if c.call_id == call_id), None)


def alive(state: RunStateView, child_id: str) -> bool:
    """Whether the Run's log still waits for that child's ending."""
    child = state.children.get(child_id)  # type: ignore[call-overload]
    return child is not None and child.alive


def named_child(state: RunStateView, name: str) -> ChildRun:
    """The most recent child of that name."""
    for child in reversed(list(state.children.values())):
        if child.name == name:
            return child
    known = ", ".join(sorted({c.name for c in state.children.values()})) or "none"
    raise SubagentRefused("unknown_subagent", f"no subagent is named {name!r}; started: {known}")


def elapsed(started: float) -> float:
    """Seconds since ``started`` (a ``perf_counter`` reading), to the microsecond."""
    return round(time.perf_counter() - started, 6)


__all__ = [
    "SubagentRefused",
    "alive",
    "check_depth",
    "check_fanout",
    "child_input",
    "child_of_call",
    "elapsed",
    "named_child",
    "stored_version",
]
