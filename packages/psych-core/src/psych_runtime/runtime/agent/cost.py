"""What one model call cost, as the log records it.

Used by the model turn and by the summarising call of compaction alike, so both are
priced the same way and count towards the same total.
"""

from psych_runtime.core.metering import Cost
from psych_runtime.core.records import TerminalState
from psych_runtime.model.pricing import resolve_cost
from psych_runtime.runtime.agent.context import AttemptContext
from psych_runtime.runtime.agent.context import Next
from psych_runtime.runtime.agent.context import failure
from psych_runtime.runtime.agent.context import settle
from psych_runtime.runtime.model_call import ModelAnswer


def call_cost(ctx: AttemptContext, model_id: str, answer: ModelAnswer) -> tuple[Cost | None, str]:
    """The cost to record for one call (None when unknown), and why it cannot be added.

    A Run's total is kept in one currency; summing two would be wrong and dropping one
    would hide it. A call priced in another currency (a provider reporting USD into a
    EUR table, say) is recorded unpriced, with its usage, and the second value says
    why; the caller then fails the Run ``inconsistent_cost`` (see ``refuse_cost``).
    The second value is empty when the cost joins the total.
    """
    deps = ctx.deps
    cost = resolve_cost(model_id, answer.usage, answer.provider_cost, deps.prices, deps.cost_policy)
    total = ctx.journal.state.cost
    if cost is not None and total is not None and cost.currency != total.currency:
        return None, (
            f"model {model_id!r} cost {cost.amount} {cost.currency}, but this run's total is "
            f"kept in {total.currency}; price every model a run uses in one currency"
        )
    return cost, ""


def refuse_cost(ctx: AttemptContext, why: str) -> Next:
    """Fail the Run ``inconsistent_cost``: its calls were priced in two currencies."""
    return settle(ctx, TerminalState.FAILED, failure=failure("inconsistent_cost", why))


__all__ = ["call_cost", "refuse_cost"]
