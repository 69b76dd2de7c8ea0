"""The bundled price table covers Anthropic's models, dated releases included."""

from decimal import Decimal

import pytest

from psych_runtime.core.metering import Usage
from psych_runtime.model.pricing import DEFAULT_PRICES
from psych_runtime.model.pricing import compute_cost


@pytest.mark.parametrize(
    ("model", "input_rate", "one_hour_rate"),
    [
        ("claude-opus-4-5-20251101", "5.00", "10.00"),
        ("claude-opus-4-1-20250805", "15.00", "30.00"),
        ("claude-opus-4-20250514", "15.00", "30.00"),
        ("claude-sonnet-4-5-20250929", "3.00", "6.00"),
        ("claude-haiku-4-5-20251001", "1.00", "2.00"),
        ("claude-3-7-sonnet-20250219", "3.00", "6.00"),
        ("claude-3-haiku-20240307", "0.25", "0.50"),
    ],
)
def test_dated_releases_are_priced_by_their_family(
    model: str, input_rate: str, one_hour_rate: str
) -> None:
    price = DEFAULT_PRICES.price_for(model)
    assert price is not None
    assert price.input == Decimal(input_rate)
    assert price.cache_write_1h == Decimal(one_hour_rate)


def test_one_hour_writes_cost_more_than_five_minute_ones() -> None:
    usage = Usage(input=1_000_000, cache_write=3_000_000, cache_write_1h=1_000_000)
    cost = compute_cost("claude-opus-4-5", usage, DEFAULT_PRICES)
    assert cost is not None
    # 1M input at 5, 2M five-minute writes at 6.25, 1M one-hour writes at 10.
    assert cost.amount == Decimal("5") + Decimal("12.5") + Decimal("10")
