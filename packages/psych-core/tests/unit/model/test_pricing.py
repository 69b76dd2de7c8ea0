"""Pricing: compute_cost arithmetic, table lookup, cost policies and the bundled catalogue."""

import json
from decimal import Decimal
from importlib.resources import files

import pytest
from pydantic import ValidationError

from psych_runtime.core.metering import Cost
from psych_runtime.core.metering import CostSource
from psych_runtime.core.metering import Usage
from psych_runtime.model.pricing import DEFAULT_PRICE_CATALOGUE_VERSION
from psych_runtime.model.pricing import DEFAULT_PRICES
from psych_runtime.model.pricing import CostPolicy
from psych_runtime.model.pricing import ModelPrice
from psych_runtime.model.pricing import PriceResolver
from psych_runtime.model.pricing import StaticPriceTable
from psych_runtime.model.pricing import compute_cost
from psych_runtime.model.pricing import load_price_table
from psych_runtime.model.pricing import resolve_cost

SONNET = ModelPrice(
    input=Decimal("3"),
    output=Decimal("15"),
    cache_read=Decimal("0.30"),
    cache_write=Decimal("3.75"),
    cache_write_1h=Decimal("6"),
)
USAGE = Usage(
    input=1000, output=500, cache_read=2000, cache_write=400, cache_write_1h=100, reasoning=80
)


def table(**prices: ModelPrice) -> StaticPriceTable:
    return StaticPriceTable(prices)


def test_compute_cost_by_hand_with_a_one_hour_rate() -> None:
    cost = compute_cost("sonnet", USAGE, table(sonnet=SONNET))
    # input 1000 x 3/M = 0.003; output 500 x 15/M = 0.0075; reads 2000 x 0.30/M = 0.0006;
    # writes 300 x 3.75/M = 0.001125 plus 100 x 6/M = 0.0006, so 0.001725.
    assert cost == Cost(
        amount=Decimal("0.012825"),
        currency="USD",
        model="sonnet",
        source=CostSource.COMPUTED,
        input_amount=Decimal("0.003"),
        output_amount=Decimal("0.0075"),
        cache_read_amount=Decimal("0.0006"),
        cache_write_amount=Decimal("0.001725"),
    )
    assert cost is not None and cost.has_breakdown


def test_one_hour_writes_fall_back_to_the_standard_write_rate() -> None:
    no_long_rate = SONNET.model_copy(update={"cache_write_1h": None})
    cost = compute_cost("sonnet", USAGE, table(sonnet=no_long_rate))
    assert cost is not None
    # All 400 writes at 3.75/M = 0.0015.
    assert cost.cache_write_amount == Decimal("0.0015")
    assert cost.amount == Decimal("0.0126")


def test_reasoning_tokens_are_not_billed_twice() -> None:
    with_reasoning = compute_cost("m", Usage(output=100, reasoning=90), table(m=SONNET))
    without = compute_cost("m", Usage(output=100), table(m=SONNET))
    assert with_reasoning is not None and without is not None
    assert with_reasoning.amount == without.amount == Decimal("0.0015")


def test_amounts_round_half_to_even_at_eight_places() -> None:
    tiny = ModelPrice(
        input=Decimal("0.005"),
        output=Decimal("0.015"),
        cache_read=Decimal("0.025"),
        cache_write=Decimal(0),
    )
    cost = compute_cost("tiny", Usage(input=1, output=1, cache_read=1), table(tiny=tiny))
    assert cost is not None
    # 0.000000005 -> 0.00000000 (half to even: 0), where half-up would give 0.00000001.
    assert cost.input_amount == Decimal("0E-8")
    # 0.000000015 -> 0.00000002 (the even neighbour).
    assert cost.output_amount == Decimal("0.00000002")
    # 0.000000025 -> 0.00000002 (half to even again), where half-up would give ...03.
    assert cost.cache_read_amount == Decimal("0.00000002")
    assert cost.amount == Decimal("0.00000004")
    assert cost.amount.as_tuple().exponent == -8


def test_an_unknown_model_costs_none_never_zero() -> None:
    assert compute_cost("mystery", Usage(input=10), table(sonnet=SONNET)) is None
    assert compute_cost("mystery", Usage(input=10), None) is None


def test_the_price_currency_is_kept() -> None:
    euro = ModelPrice(
        input=Decimal("1"),
        output=Decimal("1"),
        currency="EUR",
        cache_read=Decimal(0),
        cache_write=Decimal(0),
    )
    cost = compute_cost("m", Usage(input=1_000_000), table(m=euro))
    assert cost is not None
    assert (cost.amount, cost.currency) == (Decimal("1.00000000"), "EUR")


def test_prices_validate() -> None:
    with pytest.raises(ValidationError):
        ModelPrice(
            input=Decimal("-1"), output=Decimal("1"), cache_read=Decimal(0), cache_write=Decimal(0)
        )
    with pytest.raises(ValidationError):
        ModelPrice(
            input=Decimal("1"),
            output=Decimal("1"),
            currency="usd",
            cache_read=Decimal(0),
            cache_write=Decimal(0),
        )


CHEAP = ModelPrice(
    input=Decimal("1"), output=Decimal("2"), cache_read=Decimal(0), cache_write=Decimal(0)
)
DEAR = ModelPrice(
    input=Decimal("10"), output=Decimal("20"), cache_read=Decimal(0), cache_write=Decimal(0)
)
MID = ModelPrice(
    input=Decimal("5"), output=Decimal("6"), cache_read=Decimal(0), cache_write=Decimal(0)
)


def test_exact_match_then_longest_prefix() -> None:
    prices = StaticPriceTable({"gpt-4o": DEAR, "gpt-4o-mini": CHEAP, "gpt-4o-mini-2024-07-18": MID})
    assert prices.price_for("gpt-4o-mini-2024-07-18") is MID
    assert prices.price_for("gpt-4o-mini-2025-01-01") is CHEAP
    assert prices.price_for("gpt-4o-2024-08-06") is DEAR
    assert prices.price_for("gpt-4") is None
    assert prices.price_for("o3") is None


def test_overrides_come_before_the_base_table_even_for_a_shorter_prefix() -> None:
    prices = StaticPriceTable({"gpt-4o-mini": CHEAP}, overrides={"gpt-4o": DEAR})
    # The override layer is consulted first, so its prefix wins over a longer base key.
    assert prices.price_for("gpt-4o-mini") is DEAR
    assert prices.price_for("other") is None


def test_with_overrides_layers_on_without_changing_the_original() -> None:
    base = StaticPriceTable({"a": CHEAP}, overrides={"b": MID})
    layered = base.with_overrides({"a": DEAR})
    assert layered.price_for("a") is DEAR
    assert layered.price_for("b") is MID
    assert base.price_for("a") is CHEAP


PROVIDER = Cost(amount=Decimal("0.5"), model="whatever", source=CostSource.COMPUTED)
PRICES = table(m=CHEAP)
USED = Usage(input=1_000_000)


@pytest.mark.parametrize(
    ("policy", "provider", "usage", "prices", "expected"),
    [
        ("prefer_provider", PROVIDER, USED, PRICES, "provider"),
        ("prefer_provider", None, USED, PRICES, "computed"),
        ("prefer_provider", None, None, PRICES, None),
        ("prefer_provider", None, USED, None, None),
        ("computed", PROVIDER, USED, PRICES, "computed"),
        ("computed", PROVIDER, None, PRICES, None),
        ("computed", PROVIDER, USED, None, None),
        ("provider_only", PROVIDER, USED, PRICES, "provider"),
        ("provider_only", None, USED, PRICES, None),
    ],
)
def test_resolve_cost_under_each_policy(
    policy: CostPolicy,
    provider: Cost | None,
    usage: Usage | None,
    prices: PriceResolver | None,
    expected: str | None,
) -> None:
    cost = resolve_cost("m", usage, provider, prices, policy)
    if expected is None:
        assert cost is None
    elif expected == "provider":
        assert cost is not None
        assert cost.amount == Decimal("0.5")
        # Re-stamped: whatever the adapter set, the figure came from the provider.
        assert cost.source is CostSource.PROVIDER
        assert cost.model == "m"
    else:
        assert cost is not None
        assert cost.amount == Decimal("1")
        assert cost.source is CostSource.COMPUTED


def _catalogue() -> dict[str, object]:
    text = files("psych_runtime.model").joinpath("default_prices.json").read_text()
    loaded: dict[str, object] = json.loads(text)
    return loaded


def test_the_catalogue_version_matches_the_shipped_file() -> None:
    assert _catalogue()["catalogue_version"] == DEFAULT_PRICE_CATALOGUE_VERSION == "2026-12-01"
    assert "own" in str(_catalogue()["note"])


def test_default_prices_cover_every_catalogue_entry() -> None:
    entries = _catalogue()["prices"]
    assert isinstance(entries, dict) and entries
    for model, raw in entries.items():
        price = DEFAULT_PRICES.price_for(model)
        assert price is not None, model
        assert price.input == Decimal(raw["input"])
        assert price.output == Decimal(raw["output"])
        assert price.cache_read <= price.input
        assert price.currency == "USD"


def test_default_prices_price_dated_releases_by_prefix() -> None:
    assert DEFAULT_PRICES.price_for("gpt-4o-mini-2024-07-18") == DEFAULT_PRICES.price_for(
        "gpt-4o-mini"
    )
    assert DEFAULT_PRICES.price_for("no-such-model-anywhere") is None
    assert isinstance(DEFAULT_PRICES, PriceResolver)


def test_default_prices_accept_overrides() -> None:
    layered = DEFAULT_PRICES.with_overrides({"gpt-4o": DEAR})
    assert layered.price_for("gpt-4o") is DEAR
    assert layered.price_for("gpt-4.1") == DEFAULT_PRICES.price_for("gpt-4.1")


def test_load_price_table_reads_strings_exactly() -> None:
    loaded = load_price_table(
        '{"prices": {"m": {"input": "0.1", "output": "0.3", "cache_read": "0.01", '
        '"cache_write": "0.125"}}}'
    )
    price = loaded.price_for("m")
    assert price is not None
    assert price.input == Decimal("0.1")  # not 0.1000000000000000055...


@pytest.mark.parametrize(
    "text",
    [
        "[]",
        '{"prices": []}',
        '{"prices": {"m": {"input": "x", "output": "1"}}}',
        '{"prices": {"m": {"input": "1", "output": "1"}}}',  # no cache rates
        "not json",
    ],
)
def test_load_price_table_refuses_bad_catalogues(text: str) -> None:
    with pytest.raises(ValueError):
        load_price_table(text)


@pytest.mark.parametrize("missing", ["cache_read", "cache_write"])
def test_a_price_without_its_cache_rates_is_refused_not_priced_at_zero(missing: str) -> None:
    rates = {
        "input": Decimal("1"),
        "output": Decimal("2"),
        "cache_read": Decimal("0.1"),
        "cache_write": Decimal("1.25"),
    }
    del rates[missing]
    with pytest.raises(ValidationError, match=missing):
        ModelPrice(**rates)


def test_two_million_cached_tokens_are_billed_at_the_cache_rate_entered() -> None:
    price = ModelPrice(
        input=Decimal("1"), output=Decimal("2"), cache_read=Decimal("0.1"), cache_write=Decimal(1)
    )
    cost = compute_cost("m", Usage(input=0, output=0, cache_read=2_000_000), table(m=price))
    assert cost is not None and cost.amount == Decimal("0.2")
