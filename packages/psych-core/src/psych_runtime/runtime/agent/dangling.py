"""Calls a previous Attempt left open, settled before this one takes a turn.

A question (``ask_question``) is closed with the person's answer from the log. A call
a person decided is settled by the decision: denied, it is closed ``denied``;
approved, the first Attempt after the approval runs it (``gate.approved_now``). Its
start is made durable first, so if this Attempt vanishes while the call runs, the next
one finds it in doubt like any other call and does not run it blindly again.

A call in doubt (started, never finished) is run again when doing so is safe: a
``read_tool_output`` or another in-process built-in, an HTTP GET, or a code tool registered
idempotent, provided this process can still execute it. Every other one is closed
``unknown`` with the ``orphaned`` failure, the same finish the Worker writes for a Run
it settles without running (see ``runtime/open_calls.py``).
"""

from psych_runtime.core.records import ToolOutcome
from psych_runtime.core.reducer import READ_TOOL_OUTPUT
from psych_runtime.runtime.agent.context import AttemptContext
from psych_runtime.runtime.agent.execute import execute
from psych_runtime.runtime.agent.finish import finish
from psych_runtime.runtime.agent.gate import approved_now
from psych_runtime.runtime.agent.gate import denied
from psych_runtime.runtime.agent.question import close_answered
from psych_runtime.runtime.agent.remote import refresh_remote
from psych_runtime.runtime.open_calls import ORPHANED_MESSAGE
from psych_runtime.runtime.open_calls import close_call
from psych_runtime.tools.access import permitted_for
from psych_runtime.tools.ask_question import ASK_QUESTION

UNDECIDED = "not run: the run was stopped before anyone decided on this call"


async def settle_dangling(ctx: AttemptContext) -> None:
    """Re-run or close every call the log shows open; the finishes are staged."""
    state = ctx.journal.state
    if state.settled or not state.open_tool_calls:
        return
    if any(not ctx.tools.executable(call.tool) for call in state.open_tool_calls.values()):
        # A call of a remote tool can only be sent again once its source is asked what
        # it offers; one whose source cannot be reached now is closed like any other.
        await refresh_remote(ctx, await permitted_for(ctx.deps.access, ctx.journal.scope))
    for call in list(state.open_tool_calls.values()):
        if call.tool == ASK_QUESTION:
            await close_answered(ctx, call.call_id)
            continue
        runnable = (
            ctx.tools.executable(call.tool)
            or call.tool == READ_TOOL_OUTPUT
            or ctx.tools.built_in(call.tool)
        )
        decision = approved_now(ctx, call.call_id)
        if decision is None and call.call_id == state.pending_approval_call_id:
            # Still waiting for a decision (the Run was interrupted meanwhile).
            close_call(ctx.journal, call.call_id, ToolOutcome.ERROR, "not_executed", UNDECIDED)
            continue
        if decision is False:
            denied(ctx, call.call_id)
            continue
        if decision is True:
            if not runnable:
                close_call(
                    ctx.journal,
                    call.call_id,
                    ToolOutcome.ERROR,
                    "tool_unavailable",
                    f"approved, but no tool {call.tool!r} is registered in this process",
                )
                continue
            # Durable before the call runs: a vanished Attempt leaves it in doubt.
            await ctx.journal.flush()
            executed = await execute(ctx, call.call_id, call.tool, call.arguments)
            await finish(ctx, call.call_id, call.tool, executed)
            continue
        if call.parent_call_id is not None:
            # A program's call: the program itself is gone, so there is nobody to
            # hand a result to; it is closed in doubt, never sent again.
            close_call(ctx.journal, call.call_id, ToolOutcome.UNKNOWN, "orphaned", ORPHANED_MESSAGE)
            continue
        if call.safe_to_retry and runnable:
            executed = await execute(ctx, call.call_id, call.tool, call.arguments)
            await finish(ctx, call.call_id, call.tool, executed)
            continue
        close_call(ctx.journal, call.call_id, ToolOutcome.UNKNOWN, "orphaned", ORPHANED_MESSAGE)
