"""The agent loop: one Attempt of an agent Run, as a short list of phases.

Each turn is written at its durable points and no more often:

1. before the model request: ``turn_started``, consumed steers and
   ``model_call_started`` (together with whatever the previous step left staged);
2. after the model answers: ``model_call_finished`` plus the first ``tool_call_started``
   (or the ``run_settled`` of a final answer);
3. after each tool: its ``tool_call_finished`` rides along with the next durable point.

A tool never starts before its ``tool_call_started`` is durable, so after a crash every
call is either known to have finished or visibly in doubt.
"""

from psych_runtime.core.messages import Message
from psych_runtime.core.records import CompactionReason
from psych_runtime.core.records import TerminalState
from psych_runtime.core.spec import AgentSpec
from psych_runtime.runtime.abort import AbortSignal
from psych_runtime.runtime.agent.built_ins import BUILT_INS
from psych_runtime.runtime.agent.compact import compact
from psych_runtime.runtime.agent.compact import compaction_due
from psych_runtime.runtime.agent.context import AttemptContext
from psych_runtime.runtime.agent.context import Next
from psych_runtime.runtime.agent.context import failure
from psych_runtime.runtime.agent.context import settle
from psych_runtime.runtime.agent.dangling import settle_dangling
from psych_runtime.runtime.agent.deps import AgentDeps
from psych_runtime.runtime.agent.execute import execute
from psych_runtime.runtime.agent.memory import recall
from psych_runtime.runtime.agent.model_turn import answered
from psych_runtime.runtime.agent.model_turn import model_turn
from psych_runtime.runtime.agent.stops import stop_reason
from psych_runtime.runtime.agent.tool_calls import run_calls
from psych_runtime.runtime.journal import Journal


class AgentLoop:
    """Runs one Attempt of an agent Run until it settles, suspends or is told to stop.

    Args:
        deps: the model, tools, prices and egress the process runs with.
        journal: the Attempt's Journal on the Run's log.
        spec: the Spec the Run pinned.
        abort: fired by the Worker when the Attempt must stop.
        history: what the model is shown first of the Runs this one continues.
    """

    def __init__(
        self,
        deps: AgentDeps,
        journal: Journal,
        spec: AgentSpec,
        abort: AbortSignal,
        history: tuple[Message, ...] = (),
    ) -> None:
        self._ctx = AttemptContext.open(
            deps,
            journal,
            spec,
            abort,
            history,
            built_ins=BUILT_INS,
            execute=execute,
            run_nested=_run_nested,
        )

    async def run(self) -> None:
        """Settle what a previous Attempt left dangling, then take turns until done."""
        ctx = self._ctx
        if ctx.missing_end_user is not None:
            # Memory is configured but nobody says whose facts these are: refuse plainly
            # rather than pour every person's facts into one bucket.
            settle(
                ctx,
                TerminalState.FAILED,
                failure=failure("end_user_required", ctx.missing_end_user),
            )
            await ctx.journal.flush()
            return
        await settle_dangling(ctx)
        await recall(ctx)
        while True:
            while await self._turn() is Next.CONTINUE:
                pass
            await ctx.journal.flush()
            # A steer or follow-up that landed just before the completion was written
            # withdrew it: the message was accepted, so the Run answers it first.
            if not ctx.journal.take_withdrawn_settlement():
                return

    async def _turn(self) -> Next:
        """One turn: stop checks, compaction, the model, then the tools it asked for."""
        ctx = self._ctx
        await ctx.journal.refresh()
        stop = stop_reason(ctx)
        if stop is not None:
            return stop
        if compaction_due(ctx):
            stop = await compact(ctx, CompactionReason.THRESHOLD)
            if stop is not None:
                return stop
        answer = await model_turn(ctx)
        if isinstance(answer, Next):
            return answer
        if not answer.calls:
            return await answered(ctx, answer.text)
        return await run_calls(ctx, answer)


async def _run_nested(ctx: AttemptContext, journal: Journal, spec: AgentSpec) -> None:
    """An inline child's loop, in the parent's Attempt, with the parent's deps and abort."""
    await AgentLoop(ctx.deps, journal, spec, ctx.abort).run()
