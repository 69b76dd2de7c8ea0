"""The checks made before every turn: whether the Run must stop instead of going on.

Each check reads only the folded state and the Spec's limits, so a reclaiming Worker
stops a Run at exactly the turn the first one would have.
"""

from psych_runtime.core.records import TerminalState
from psych_runtime.core.reducer import was_refused
from psych_runtime.runtime.abort import AbortReason
from psych_runtime.runtime.agent.context import AttemptContext
from psych_runtime.runtime.agent.context import Next
from psych_runtime.runtime.agent.context import end
from psych_runtime.runtime.agent.context import failure
from psych_runtime.runtime.agent.context import settle
from psych_runtime.runtime.settlement import aborted_by_request


def stop_reason(ctx: AttemptContext) -> Next | None:
    """The checks made before every turn, in order; None means keep going."""
    state = ctx.journal.state
    limits = ctx.spec.limits
    if ctx.abort.fired and not state.aborted:
        if ctx.abort.reason is AbortReason.DEADLINE:
            return settle(
                ctx,
                TerminalState.ABORTED,
                failure=failure("deadline", "the run passed its deadline"),
            )
        return Next.STOP
    if state.aborted:
        return end(ctx, aborted_by_request())
    if state.suspended:
        return Next.STOP
    for tool, streak in state.failure_streaks.items():
        if streak >= limits.failure_streak_hard_stop:
            return settle(
                ctx,
                TerminalState.FAILED,
                failure=failure("failure_streak", f"tool {tool} failed {streak} times in a row"),
            )
    if state.turn >= limits.max_turns:
        return settle(
            ctx,
            TerminalState.FAILED,
            failure=failure("budget_exhausted", f"reached max_turns={limits.max_turns}"),
        )
    # A call the runtime refused to run did no work and is no step (see
    # ``was_refused``): 300 calls in one answer spend 16 steps, not 300.
    steps = sum(1 for r in state.tool_results if not was_refused(r.outcome, r.failure))
    if steps >= limits.max_steps:
        return settle(
            ctx,
            TerminalState.FAILED,
            failure=failure("budget_exhausted", f"reached max_steps={limits.max_steps}"),
        )
    return None
