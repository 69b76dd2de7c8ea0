"""What one model call cost, as the log records it.

Used by the model turn and by the summarising call of compaction alike, so both are
priced the same way and count towards the same total.
"""

import logging

from psych_runtime.core.metering import Cost
from psych_runtime.model.pricing import resolve_cost
from psych_runtime.runtime.agent.context import AttemptContext
from psych_runtime.runtime.model_call import ModelAnswer

log = logging.getLogger(__name__)


def call_cost(ctx: AttemptContext, model_id: str, answer: ModelAnswer) -> Cost | None:
    """The cost to record for one call; None when it is unknown.

    A Run's total is kept in one currency. A call priced in another (a provider
    reporting USD into a EUR table, say) is recorded as unpriced rather than as a
    record the log would refuse: the total then says it is incomplete.
    """
    deps = ctx.deps
    cost = resolve_cost(model_id, answer.usage, answer.provider_cost, deps.prices, deps.cost_policy)
    total = ctx.journal.state.cost
    if cost is not None and total is not None and cost.currency != total.currency:
        log.warning(
            "run %s: a %s cost cannot join a total kept in %s; recorded as unpriced",
            ctx.journal.run_id,
            cost.currency,
            total.currency,
        )
        return None
    return cost
