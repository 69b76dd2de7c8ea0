"""``cost.py``: what a model call cost, in the Run's one currency, or why it cannot join."""

from decimal import Decimal

from psych_runtime.core.metering import Cost
from psych_runtime.core.metering import CostSource
from psych_runtime.core.metering import Usage
from psych_runtime.core.records import ModelTimings
from psych_runtime.core.records import TerminalState
from psych_runtime.model.pricing import ModelPrice
from psych_runtime.model.pricing import StaticPriceTable
from psych_runtime.runtime.agent.context import Next
from psych_runtime.runtime.agent.cost import call_cost
from psych_runtime.runtime.agent.cost import refuse_cost
from psych_runtime.runtime.model_call import ModelAnswer
from psych_runtime.testing import LogBuilder

from .conftest import open_attempt
from .conftest import started

PRICES = StaticPriceTable(
    {
        "m": ModelPrice(
            input=Decimal(2), output=Decimal(8), cache_read=Decimal(0), cache_write=Decimal(0)
        ),
        "m-eu": ModelPrice(
            input=Decimal(1),
            output=Decimal(1),
            cache_read=Decimal(0),
            cache_write=Decimal(0),
            currency="EUR",
        ),
    }
)

USAGE = Usage(input=1_000_000, output=500_000)


def _answer(usage: Usage | None = USAGE, provider_cost: Cost | None = None) -> ModelAnswer:
    return ModelAnswer("hi", [], "stop", usage, provider_cost, ModelTimings())


def _usd(amount: str) -> Cost:
    return Cost(amount=Decimal(amount), currency="USD", model="m", source=CostSource.COMPUTED)


async def test_a_model_nobody_priced_costs_none_and_nothing_is_wrong() -> None:
    attempt = await open_attempt()
    assert call_cost(attempt.ctx, "m", _answer()) == (None, "")
    attempt = await open_attempt(prices=PRICES)
    assert call_cost(attempt.ctx, "unpriced", _answer()) == (None, "")


async def test_a_priced_model_is_priced_from_its_reported_usage() -> None:
    attempt = await open_attempt(prices=PRICES)
    cost, why = call_cost(attempt.ctx, "m", _answer())
    assert why == "" and cost is not None
    assert (cost.amount, cost.currency, cost.source) == (Decimal(6), "USD", CostSource.COMPUTED)


async def test_no_reported_usage_means_no_computed_cost() -> None:
    attempt = await open_attempt(prices=PRICES)
    assert call_cost(attempt.ctx, "m", _answer(usage=None)) == (None, "")


async def test_the_providers_own_figure_wins_unless_the_policy_says_compute() -> None:
    reported = _usd("0.5")
    attempt = await open_attempt(prices=PRICES)
    cost, _ = call_cost(attempt.ctx, "m", _answer(provider_cost=reported))
    assert cost is not None and (cost.amount, cost.source) == (Decimal("0.5"), CostSource.PROVIDER)
    attempt = await open_attempt(prices=PRICES, cost_policy="computed")
    cost, _ = call_cost(attempt.ctx, "m", _answer(provider_cost=reported))
    assert cost is not None and cost.amount == Decimal(6)


def _spent_in_usd() -> LogBuilder:
    return started().turn().model_started().model_finished(cost=_usd("1"))


async def test_a_cost_in_the_runs_currency_joins_the_total() -> None:
    attempt = await open_attempt(_spent_in_usd(), prices=PRICES)
    cost, why = call_cost(attempt.ctx, "m", _answer())
    assert why == "" and cost is not None and cost.currency == "USD"


async def test_a_cost_in_a_second_currency_is_recorded_unpriced_with_the_reason() -> None:
    attempt = await open_attempt(_spent_in_usd(), prices=PRICES)
    cost, why = call_cost(attempt.ctx, "m-eu", _answer())
    assert cost is None
    assert why.startswith("model 'm-eu' cost 1.5")
    assert "EUR, but this run's total is kept in USD" in why
    assert attempt.new() == []


async def test_refusing_a_cost_fails_the_run_inconsistent_cost() -> None:
    attempt = await open_attempt(_spent_in_usd())
    assert refuse_cost(attempt.ctx, "two currencies") is Next.STOP
    settled = attempt.settlement()
    assert settled.state is TerminalState.FAILED
    assert settled.failure is not None
    assert (settled.failure.kind, settled.failure.message) == (
        "inconsistent_cost",
        "two currencies",
    )
