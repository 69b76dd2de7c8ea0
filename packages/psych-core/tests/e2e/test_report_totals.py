"""report() over a Run that mixes cached tokens, an unpriced fallback and a provider cost."""

from decimal import Decimal

import psych_runtime
from psych_runtime import AgentSpec
from psych_runtime import CodeTool
from psych_runtime import ModelRef
from psych_runtime import TerminalState
from psych_runtime.records import Cost
from psych_runtime.records import CostSource
from psych_runtime.records import Usage
from psych_runtime.testing import FakeModel

from .conftest import ACME
from .conftest import price
from .conftest import run_once

PRICES = psych_runtime.models.StaticPriceTable(
    {"priced-model": price("3", "15", "0.30", "3.75", cache_write_1h="6")}
)


async def lookup(order_id: str) -> dict[str, str]:
    """Look up an order."""
    return {"order_id": order_id, "state": "packed"}


async def test_report_totals_are_exact_and_honest_about_what_is_unpriced() -> None:
    spec = AgentSpec(
        name="mixed",
        model=ModelRef(model="priced-model", fallbacks=("unpriced-model",)),
        tools=(CodeTool(name="lookup"),),
    )
    model = (
        FakeModel()
        # Turn 1, priced by the table: 1000 input, 200 output, 4000 cache reads,
        # 2000 cache writes of which 500 at one-hour retention.
        .turn(
            tool_calls=[("lookup", {"order_id": "A1"})],
            usage=Usage(
                input=1000, output=200, cache_read=4000, cache_write=2000, cache_write_1h=500
            ),
        )
        # Turn 2 fails on the primary and fails over to a model nobody priced.
        .raises_transient(503)
        .turn(
            tool_calls=[("lookup", {"order_id": "B2"})],
            usage=Usage(input=300, output=40, cache_read=5000),
        )
        # Turn 4 is back on the primary, and the provider states its own cost.
        .turn(
            text="Both are packed.",
            usage=Usage(input=100, output=60, cache_read=5200),
            cost=Cost(amount=Decimal("0.0042"), currency="USD"),
        )
    )
    store, run_id, log = await run_once(spec, model, lookup, message="A1 and B2?", prices=PRICES)
    assert log[-1].state is TerminalState.COMPLETED
    report = await psych_runtime.report(store, run_id, scope=ACME)

    models = [(c.model, c.failure is None) for c in report.model_calls]
    assert models == [
        ("priced-model", True),
        ("priced-model", False),
        ("unpriced-model", True),
        ("priced-model", True),
    ]
    costs = [c.cost for c in report.model_calls if c.failure is None]
    # Turn 1 by hand, per million tokens:
    #   input 1000 x 3 = 3000; output 200 x 15 = 3000; cache read 4000 x 0.30 = 1200;
    #   cache write 1500 x 3.75 + 500 x 6 = 5625 + 3000 = 8625  -> 15825 / 1e6
    assert costs[0] is not None
    assert costs[0].amount == Decimal("0.015825")
    assert costs[0].cache_write_amount == Decimal("0.008625")
    assert costs[1] is None  # unknown price: None, never zero
    assert costs[2] is not None and costs[2].source is CostSource.PROVIDER
    assert costs[2].amount == Decimal("0.0042")

    totals = report.totals
    assert totals.usage == Usage(
        input=1400, output=300, cache_read=14200, cache_write=2000, cache_write_1h=500
    )
    assert totals.cost is not None
    assert totals.cost.amount == Decimal("0.015825") + Decimal("0.0042")
    assert totals.cost.source is CostSource.MIXED
    assert totals.cost_is_incomplete is True
    assert totals.unpriced_model_calls == 1
    assert totals.provider_reported_costs == 1
    assert totals.model_calls == 3 and totals.failed_model_calls == 1
    assert totals.tool_calls == 2
