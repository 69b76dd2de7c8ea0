"""The compaction phase: summarising the oldest turns when the conversation grows long.

Where to cut and what to ask the summarising model is planned in
``runtime/compaction.py``; this phase decides when, makes the call and records the
``compaction_applied`` that from then on stands in for the range it summarised. It runs
before a turn once the provider reported a prompt at or above the policy's trigger, and
after a context overflow, when a summary may let the same request fit.
"""

from psych_runtime.core.records import CompactionApplied
from psych_runtime.core.records import CompactionReason
from psych_runtime.core.records import TerminalState
from psych_runtime.model.port import ModelError
from psych_runtime.runtime.agent.context import EMPTY_USAGE
from psych_runtime.runtime.agent.context import AttemptContext
from psych_runtime.runtime.agent.context import Next
from psych_runtime.runtime.agent.context import failure
from psych_runtime.runtime.agent.context import settle
from psych_runtime.runtime.agent.cost import call_cost
from psych_runtime.runtime.agent.cost import refuse_cost
from psych_runtime.runtime.compaction import Cut
from psych_runtime.runtime.compaction import plan_cut
from psych_runtime.runtime.compaction import summary_request
from psych_runtime.runtime.model_call import call_model


def compaction_due(ctx: AttemptContext) -> bool:
    """Whether the last prompt reached the policy's trigger and there is a range to cut."""
    policy = ctx.spec.compaction
    if policy is None:
        return False
    state = ctx.journal.state
    return state.last_prompt_tokens >= policy.trigger_tokens and next_cut(ctx) is not None


def next_cut(ctx: AttemptContext) -> Cut | None:
    """The range a summary would replace now; None without a policy or a whole turn."""
    policy = ctx.spec.compaction
    if policy is None:
        return None
    state = ctx.journal.state
    return plan_cut(ctx.journal.records, state.compaction_boundary_seq, policy.keep_recent_turns)


async def compact(ctx: AttemptContext, reason: CompactionReason) -> Next | None:
    """Summarise the oldest turns and record the replacement; None when it worked."""
    policy = ctx.spec.compaction
    cut = next_cut(ctx)
    if policy is None or cut is None:
        return None
    model_id = policy.model or ctx.spec.model.model
    journal = ctx.journal
    request = summary_request(
        journal.records, cut, policy, model_id, ctx.spec.limits.stream_idle_seconds
    )
    if journal.observer is not None:
        journal.observer.compaction_started(reason, model_id, cut.to_seq)
    try:
        answer = await call_model(ctx.deps.model, request)
    except ModelError as error:
        return settle(
            ctx,
            TerminalState.FAILED,
            failure=failure("compaction_failed", f"the summarising call failed: {error}"),
        )
    summary = answer.text.strip()
    if not summary:
        return settle(
            ctx,
            TerminalState.FAILED,
            failure=failure("compaction_failed", "the summarising call returned no text"),
        )
    cost, inconsistent = call_cost(ctx, model_id, answer)
    journal.stage(
        CompactionApplied,
        reason=reason,
        timings=answer.timings,
        replaced_from_seq=cut.from_seq,
        replaced_to_seq=cut.to_seq,
        summary=summary,
        model=model_id,
        usage=answer.usage if answer.usage is not None else EMPTY_USAGE,
        usage_reported=answer.usage is not None,
        cost=cost,
    )
    return refuse_cost(ctx, inconsistent) if inconsistent else None
