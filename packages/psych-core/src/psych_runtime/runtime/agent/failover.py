"""When a model call fails: fall over to the next model, retry, compact, or give up.

Every decision here is made from the log alone (the last model call on record and the
retries already used), so a reclaiming Worker carries on a failover or a backoff
exactly where the previous one left it.

- A transient failure is retried while the Spec's ``transient_retry_budget`` lasts,
  with the next fallback model when there is one, after a backoff when there is not.
- A model that is gone or refuses the request outright (404) is worth failing over
  from, but never worth retrying as it is.
- A context overflow is rescued by compaction when there is a range to summarise.
"""

import asyncio

from psych_runtime.core.records import CompactionReason
from psych_runtime.core.records import ModelCallFailed
from psych_runtime.core.records import TerminalState
from psych_runtime.core.records import ToolFailure
from psych_runtime.model.port import ContextOverflow
from psych_runtime.model.port import ModelError
from psych_runtime.runtime.agent.compact import compact
from psych_runtime.runtime.agent.compact import next_cut
from psych_runtime.runtime.agent.context import AttemptContext
from psych_runtime.runtime.agent.context import Next
from psych_runtime.runtime.agent.context import settle
from psych_runtime.runtime.model_call import replace_lone_surrogates


def model_for_turn(ctx: AttemptContext) -> str:
    """The model this turn calls: the primary, or the next fallback after a failure.

    Decided from the log alone (the last model call on record), so a reclaiming
    Worker continues the failover exactly where the previous one left it.
    """
    chain = (ctx.spec.model.model, *ctx.spec.model.fallbacks)
    for record in reversed(ctx.journal.records):
        if record.type == "model_call_finished":
            break
        if record.type == "model_call_failed":
            if not record.will_retry or record.failure.kind == "context_overflow":
                break
            index = chain.index(record.model) if record.model in chain else -1
            return chain[min(index + 1, len(chain) - 1)]
    return chain[0]


def _has_fallback_after(ctx: AttemptContext, model_id: str) -> bool:
    chain = (ctx.spec.model.model, *ctx.spec.model.fallbacks)
    return model_id in chain and chain.index(model_id) < len(chain) - 1


async def model_failed(ctx: AttemptContext, turn: int, model_id: str, error: ModelError) -> Next:
    """Record a failed model call and decide what the Run does about it."""
    journal = ctx.journal
    state = journal.state
    budget = ctx.spec.limits.transient_retry_budget
    within_budget = state.transient_retries_used < budget
    overflow = isinstance(error, ContextOverflow)
    rescuable = overflow and next_cut(ctx) is not None
    failover = error.status_code == 404 and _has_fallback_after(ctx, model_id)
    will_retry = within_budget and (error.transient or rescuable or failover)
    failure = ToolFailure(
        kind=error.kind,
        message=replace_lone_surrogates(str(error)),
        transient=error.transient,
    )
    journal.stage(
        ModelCallFailed, turn=turn, model=model_id, failure=failure, will_retry=will_retry
    )
    if not will_retry:
        return settle(ctx, TerminalState.FAILED, failure=failure)
    if rescuable:
        stop = await compact(ctx, CompactionReason.OVERFLOW)
        return stop if stop is not None else Next.CONTINUE
    await journal.flush()
    delay = 0.0
    if error.transient and not _has_fallback_after(ctx, model_id):
        delay = ctx.deps.retry_delay(state.transient_retries_used - 1, error.retry_after)
    if delay > 0:
        await _pause(ctx, delay)
    return Next.CONTINUE


async def _pause(ctx: AttemptContext, seconds: float) -> None:
    """Wait before a retry; cut short by the Worker's abort or a new record.

    A record landing in the log (an interrupt, a steer) ends the pause early so the
    next turn's checks see it now rather than after a long backoff.
    """
    waiters: list[asyncio.Future[object]] = [asyncio.ensure_future(ctx.abort.wait())]
    notifier = ctx.deps.store.notifier
    if notifier is not None:
        run_id = ctx.journal.run_id
        seen = notifier.generation(run_id)
        waiters.append(asyncio.ensure_future(notifier.wait(run_id, seen, seconds)))
    try:
        await asyncio.wait(waiters, timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()
