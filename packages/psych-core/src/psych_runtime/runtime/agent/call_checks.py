"""The checks a tool call passes before it may run, each refusal recorded as data.

Every call the model asked for gets its ``tool_call_started``, whatever happens next,
so the log shows each request with its arguments. A call is then refused (finished
``error`` without running, and the model told why) when its arguments are malformed or
unstorable, when it names a tool this turn did not offer (unknown, or withheld after
failing too often), when it reads a handle this Run never issued, or when it repeats
a call that already returned the same result too often; past the hard stop for
repeats the rest of the turn is not run either. Calls beyond the per-turn cap are
recorded started and finished ``not_executed`` by ``close_unexecuted``.

Unissued handles: a model-issued read naming a handle this Run never issued cannot be
logged as asked (the log would be corrupt, since such a start record is what
``invalid_deferred_handle`` forbids), so its start record carries the handle under
``unissued_handle`` instead of ``handle`` and the call is failed ``unknown_handle``:
every argument stays visible in the log, and the model is told plainly that the handle
does not exist.
"""

from collections.abc import Sequence
from enum import Enum

from psych_runtime.core.digest import call_digest
from psych_runtime.core.ids import ToolCallId
from psych_runtime.core.records import JsonObject
from psych_runtime.core.records import ToolCallFinished
from psych_runtime.core.records import ToolCallStarted
from psych_runtime.core.records import ToolOutcome
from psych_runtime.core.reducer import READ_TOOL_OUTPUT
from psych_runtime.runtime.agent.arguments import read_arguments
from psych_runtime.runtime.agent.context import AttemptContext
from psych_runtime.runtime.agent.context import failure
from psych_runtime.runtime.model_call import AssembledCall
from psych_runtime.tools.large_results.reader import unknown_handle_message
from psych_runtime.tools.memory import MEMORY_TOOLS
from psych_runtime.tools.memory import recorded_arguments

UNISSUED_HANDLE_ARGUMENT = "unissued_handle"
"""Where a ``read_tool_output`` start record keeps a handle this Run never issued."""


class Refused(Enum):
    """What became of a call that did not pass its checks (its finish is staged)."""

    CALL = "call"
    """Only this call was refused; the turn goes on with the next one."""
    TURN = "turn"
    """This call was refused and the rest of the turn was closed unexecuted."""


async def check_call(
    ctx: AttemptContext,
    turn: int,
    calls: Sequence[AssembledCall],
    ids: Sequence[ToolCallId],
    index: int,
    offered: frozenset[str],
) -> JsonObject | Refused:
    """Record the start of call ``index`` and check it; its arguments when it may run."""
    journal = ctx.journal
    limits = ctx.spec.limits
    call, call_id = calls[index], ids[index]
    name = call.name or "unnamed"
    arguments: JsonObject | None = None
    parse_error: str | None = call.refusal
    if parse_error is None:
        arguments, parse_error = await read_arguments(call.arguments)
    recorded, unissued = _recorded_arguments(ctx, name, arguments or {})
    stage_started(
        ctx, call_id, name, recorded, turn, safe_to_retry=ctx.tools.safe_to_retry(name, arguments)
    )
    if parse_error is not None or arguments is None:
        reject(ctx, call_id, "malformed_arguments", parse_error or "bad arguments")
        return Refused.CALL
    if name not in offered:
        _reject_unoffered(ctx, call_id, name, offered)
        return Refused.CALL
    if unissued is not None:
        reject(ctx, call_id, "unknown_handle", unknown_handle_message(unissued))
        return Refused.CALL
    tally = journal.state.repeat_counts.get(call_digest(name, arguments))
    repeats = (tally.count if tally is not None else 0) + 1
    if repeats >= limits.repeat_call_threshold:
        reject(
            ctx,
            call_id,
            "repeated_call",
            f"this exact call already returned the same result {repeats - 1} times; "
            "use that result instead of asking again",
        )
        if repeats >= limits.repeat_call_hard_stop:
            await close_unexecuted(
                ctx,
                turn,
                calls[index + 1 :],
                ids[index + 1 :],
                "the turn was stopped because a call kept being repeated",
            )
            return Refused.TURN
        return Refused.CALL
    return arguments


def reject(ctx: AttemptContext, call_id: ToolCallId, kind: str, message: str) -> None:
    """Stage the finish of a call refused without running."""
    ctx.journal.stage(
        ToolCallFinished,
        call_id=call_id,
        outcome=ToolOutcome.ERROR,
        failure=failure(kind, message),
    )


def stage_started(
    ctx: AttemptContext,
    call_id: ToolCallId,
    name: str,
    arguments: JsonObject,
    turn: int,
    *,
    safe_to_retry: bool = False,
    parent: ToolCallId | None = None,
) -> None:
    """Stage a call's start record: the one place its interruptibility is decided."""
    ctx.journal.stage(
        ToolCallStarted,
        call_id=call_id,
        tool=name,
        arguments=arguments,
        turn=turn,
        interruptible=ctx.tools.interruptible(name),
        safe_to_retry=safe_to_retry,
        parent_call_id=parent,
    )


async def close_unexecuted(
    ctx: AttemptContext,
    turn: int,
    calls: Sequence[AssembledCall],
    ids: Sequence[ToolCallId],
    why: str,
) -> None:
    """Record calls the turn will not run as started and finished ``not_executed``."""
    for call, call_id in zip(calls, ids, strict=True):
        name = call.name or "unnamed"
        parsed = (await read_arguments(call.arguments))[0] if call.refusal is None else None
        arguments, _ = _recorded_arguments(ctx, name, parsed or {})
        stage_started(ctx, call_id, name, arguments, turn)
        reject(ctx, call_id, "not_executed", why)


def _recorded_arguments(
    ctx: AttemptContext, name: str, arguments: JsonObject
) -> tuple[JsonObject, str | None]:
    """The arguments a start record may carry, and a handle this Run never issued.

    The reducer treats a model-issued ``read_tool_output`` of an unissued handle as
    a corrupt log, so such a handle is recorded under ``unissued_handle`` instead. A
    ``remember`` call's fact is recorded withheld: its text is kept only where
    ``erase`` reaches it.
    """
    if ctx.memory_key is not None and name in MEMORY_TOOLS:
        return recorded_arguments(name, arguments), None
    if name != READ_TOOL_OUTPUT:
        return arguments, None
    handle = arguments.get("handle")
    if not isinstance(handle, str) or handle in ctx.journal.state.result_handles:
        return arguments, None
    recorded = {key: value for key, value in arguments.items() if key != "handle"}
    recorded[UNISSUED_HANDLE_ARGUMENT] = handle
    return recorded, handle


def _reject_unoffered(
    ctx: AttemptContext, call_id: ToolCallId, name: str, offered: frozenset[str]
) -> None:
    """Refuse a call to a tool this turn did not offer.

    A tool withheld for failing is told apart from a name that is simply unknown:
    calling it after the model was told it is gone is misuse of that tool and
    lengthens its streak towards the hard stop, while an unknown name says nothing
    about any tool (see ``counts_toward_streak``).
    """
    available = ", ".join(sorted(offered)) or "none"
    threshold = ctx.spec.limits.failure_streak_threshold
    streak = ctx.tools.withheld_by_streak(name, ctx.journal.state, threshold)
    if streak is not None:
        reject(
            ctx,
            call_id,
            "withheld_tool",
            f"the tool {name!r} failed {streak} times in a row and is no longer "
            f"available in this run. Available tools: {available}.",
        )
        return
    reject(
        ctx,
        call_id,
        "unknown_tool",
        f"there is no tool named {name!r} this turn. Available tools: {available}.",
    )
