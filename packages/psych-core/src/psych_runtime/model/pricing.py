"""Turning reported usage into money.

Cost is resolved once, when the model call finishes, and written into the record;
reads never re-price. A model without a known price gets ``cost=None``: a zero would
make incomplete metering look complete.
"""

import json
from collections.abc import Mapping
from decimal import ROUND_HALF_EVEN
from decimal import Decimal
from functools import cache
from importlib.resources import files
from typing import Annotated
from typing import Final
from typing import Literal
from typing import Protocol
from typing import runtime_checkable

from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import Field
from pydantic import TypeAdapter

from psych_runtime.core.metering import Cost
from psych_runtime.core.metering import CostSource
from psych_runtime.core.metering import Usage

CostPolicy = Literal["prefer_provider", "computed", "provider_only"]
"""Which figure wins when both a provider-reported cost and a price table exist.

``prefer_provider`` uses the provider's figure when it sent one and computes otherwise;
``computed`` always computes from the table; ``provider_only`` records only what the
provider reported.
"""

_MILLION = Decimal(1_000_000)
_QUANTUM = Decimal("0.00000001")
Rate = Annotated[Decimal, Field(ge=Decimal(0))]


class ModelPrice(BaseModel):
    """Per-million-token rates for one model, in one currency.

    Every rate that tokens can be billed at is required: a price entered without its
    cache rates would bill cached tokens at zero and call the total complete. A model
    whose provider does not cache says so with an explicit ``Decimal(0)``.

    Attributes:
        input: uncached input tokens.
        output: generated tokens.
        cache_read: tokens served from the prompt cache.
        cache_write: tokens written to the cache at default retention.
        cache_write_1h: tokens written at one-hour retention; None means the
            ``cache_write`` rate applies to them too.
        currency: ISO 4217 code.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    input: Rate
    output: Rate
    cache_read: Rate
    cache_write: Rate
    cache_write_1h: Rate | None = None
    currency: Annotated[str, Field(pattern=r"^[A-Z]{3}$")] = "USD"


@runtime_checkable
class PriceResolver(Protocol):
    """Finds the price of a model, or None when nobody entered one."""

    def price_for(self, model: str) -> ModelPrice | None:
        """The price of ``model``, or None."""
        ...


class StaticPriceTable:
    """A PriceResolver over a fixed mapping: exact match first, then longest prefix.

    Prefix matching lets ``gpt-4o`` price ``gpt-4o-2024-08-06`` without a table entry
    for every dated release; it is still a rate somebody entered, never a guess.
    Overrides are consulted before the base table.
    """

    def __init__(
        self,
        prices: Mapping[str, ModelPrice],
        *,
        overrides: Mapping[str, ModelPrice] | None = None,
    ) -> None:
        self._layers = [dict(overrides or {}), dict(prices)]

    def with_overrides(self, overrides: Mapping[str, ModelPrice]) -> "StaticPriceTable":
        """A new table whose overrides layer on top of this one's."""
        merged = {**self._layers[0], **overrides}
        return StaticPriceTable(self._layers[1], overrides=merged)

    def price_for(self, model: str) -> ModelPrice | None:
        """See ``PriceResolver.price_for``."""
        for layer in self._layers:
            if model in layer:
                return layer[model]
            best = max((k for k in layer if model.startswith(k)), key=len, default=None)
            if best is not None:
                return layer[best]
        return None


def _amount(tokens: int, rate: Decimal) -> Decimal:
    return (Decimal(tokens) * rate / _MILLION).quantize(_QUANTUM, rounding=ROUND_HALF_EVEN)


def compute_cost(model: str, usage: Usage, prices: PriceResolver | None) -> Cost | None:
    """Price ``usage`` for ``model``; None when no price is known."""
    price = prices.price_for(model) if prices is not None else None
    if price is None:
        return None
    standard_writes = usage.cache_write - usage.cache_write_1h
    long_rate = price.cache_write_1h if price.cache_write_1h is not None else price.cache_write
    input_amount = _amount(usage.input, price.input)
    output_amount = _amount(usage.output, price.output)
    read_amount = _amount(usage.cache_read, price.cache_read)
    write_amount = _amount(standard_writes, price.cache_write) + _amount(
        usage.cache_write_1h, long_rate
    )
    total = input_amount + output_amount + read_amount + write_amount
    return Cost(
        amount=total.quantize(_QUANTUM, rounding=ROUND_HALF_EVEN),
        currency=price.currency,
        model=model,
        source=CostSource.COMPUTED,
        input_amount=input_amount,
        output_amount=output_amount,
        cache_read_amount=read_amount,
        cache_write_amount=write_amount,
    )


def resolve_cost(
    model: str,
    usage: Usage | None,
    provider_cost: Cost | None,
    prices: PriceResolver | None,
    policy: CostPolicy,
) -> Cost | None:
    """Pick the cost to record for one call under ``policy``."""
    reported = (
        provider_cost.model_copy(update={"source": CostSource.PROVIDER, "model": model})
        if provider_cost is not None
        else None
    )
    if policy == "provider_only":
        return reported
    if policy == "prefer_provider" and reported is not None:
        return reported
    if usage is None:
        return None
    return compute_cost(model, usage, prices)


DEFAULT_PRICE_CATALOGUE_VERSION: Final = "2026-12-01"
"""The date of the bundled price list; check it before trusting ``DEFAULT_PRICES``."""

_CATALOGUE_FILE = "default_prices.json"
_PRICE_MAP = TypeAdapter(dict[str, ModelPrice])


def load_price_table(text: str | bytes) -> StaticPriceTable:
    """A table from catalogue JSON: ``{"prices": {model: {input, output, ...}}}``.

    Rates are written as strings in the file so they reach ``Decimal`` without ever
    being binary floats. The same format serves a consumer's own catalogue file.

    Raises:
        ValueError: the text is not JSON, or a price is not a valid ``ModelPrice``.
    """
    document = json.loads(text)
    if not isinstance(document, dict) or not isinstance(document.get("prices"), dict):
        raise ValueError("a price catalogue is a JSON object with a 'prices' object")
    return StaticPriceTable(_PRICE_MAP.validate_python(document["prices"]))


@cache
def _bundled() -> StaticPriceTable:
    resource = files("psych_runtime.model").joinpath(_CATALOGUE_FILE)
    return load_price_table(resource.read_bytes())


class BundledPriceTable:
    """The price list shipped with the library, read from disk the first time it is used.

    Importing the package stays free of file IO; the first ``price_for`` pays for it
    once per process.
    """

    @property
    def table(self) -> StaticPriceTable:
        """The loaded table."""
        return _bundled()

    def price_for(self, model: str) -> ModelPrice | None:
        """See ``PriceResolver.price_for``."""
        return _bundled().price_for(model)

    def with_overrides(self, overrides: Mapping[str, ModelPrice]) -> StaticPriceTable:
        """The bundled prices with ``overrides`` consulted first."""
        return _bundled().with_overrides(overrides)

    def __repr__(self) -> str:
        return f"BundledPriceTable(catalogue_version={DEFAULT_PRICE_CATALOGUE_VERSION!r})"


DEFAULT_PRICES: Final = BundledPriceTable()
"""A few well-known models at list price (see ``DEFAULT_PRICE_CATALOGUE_VERSION``).

Meant for trying the library out. Prices change and this list is short, so a
deployment that reports money should pass its own ``StaticPriceTable``, or
``DEFAULT_PRICES.with_overrides(...)`` with its negotiated rates.
"""


__all__ = [
    "DEFAULT_PRICES",
    "DEFAULT_PRICE_CATALOGUE_VERSION",
    "BundledPriceTable",
    "CostPolicy",
    "ModelPrice",
    "PriceResolver",
    "StaticPriceTable",
    "compute_cost",
    "load_price_table",
    "resolve_cost",
]
