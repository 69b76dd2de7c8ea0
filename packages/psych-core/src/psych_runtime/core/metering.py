"""Token usage and money, as recorded on model calls.

These are value types only. Turning usage into cost needs a price table, which is
Runtime configuration (``psych_runtime.model.pricing``); the result is written into
the record once and never recomputed by a read.
"""

from decimal import Decimal
from enum import StrEnum
from typing import Annotated
from typing import Self

from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import Field
from pydantic import model_validator

NonNegInt = Annotated[int, Field(ge=0)]
Money = Annotated[Decimal, Field(ge=Decimal(0))]
CurrencyCode = Annotated[str, Field(pattern=r"^[A-Z]{3}$")]


class Usage(BaseModel):
    """Tokens one model call consumed, split the way providers bill them.

    Attributes:
        input: input tokens that were not served from a prompt cache.
        output: generated tokens (reasoning tokens are included here by providers).
        cache_read: input tokens served from the provider's prompt cache.
        cache_write: input tokens written into the prompt cache.
        cache_write_1h: the part of ``cache_write`` written with one-hour retention.
        reasoning: reasoning tokens, for visibility only; already counted in ``output``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    input: NonNegInt = 0
    output: NonNegInt = 0
    cache_read: NonNegInt = 0
    cache_write: NonNegInt = 0
    cache_write_1h: NonNegInt = 0
    reasoning: NonNegInt = 0

    @model_validator(mode="after")
    def _one_hour_writes_are_writes(self) -> Self:
        if self.cache_write_1h > self.cache_write:
            raise ValueError("cache_write_1h counts a subset of cache_write and cannot exceed it")
        return self

    @property
    def total_billable(self) -> int:
        """Every token a provider charges for: input, output and both cache sides."""
        return self.input + self.output + self.cache_read + self.cache_write

    @property
    def prompt_tokens(self) -> int:
        """The size of the prompt as the provider saw it, cached or not."""
        return self.input + self.cache_read + self.cache_write

    def __add__(self, other: "Usage") -> "Usage":
        return Usage(
            input=self.input + other.input,
            output=self.output + other.output,
            cache_read=self.cache_read + other.cache_read,
            cache_write=self.cache_write + other.cache_write,
            cache_write_1h=self.cache_write_1h + other.cache_write_1h,
            reasoning=self.reasoning + other.reasoning,
        )


class CostSource(StrEnum):
    """Where a cost figure came from."""

    COMPUTED = "computed"
    PROVIDER = "provider"
    MIXED = "mixed"


_BREAKDOWN = ("input_amount", "output_amount", "cache_read_amount", "cache_write_amount")


class Cost(BaseModel):
    """What one or more model calls cost, in one currency.

    An unknown cost is represented by the absence of a ``Cost`` (``None``), never by a
    zero amount: a zero would make incomplete metering look complete.

    Attributes:
        amount: the total.
        currency: ISO 4217 code.
        model: the model priced, or ``"<mixed>"`` for a sum over several models.
        source: computed from a price table, reported by the provider, or a mixture.
        input_amount: the part billed for uncached input, when known.
        output_amount: the part billed for output, when known.
        cache_read_amount: the part billed for cache reads, when known.
        cache_write_amount: the part billed for cache writes, when known.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    amount: Money
    currency: CurrencyCode = "USD"
    model: str = ""
    source: CostSource = CostSource.COMPUTED
    input_amount: Money | None = None
    output_amount: Money | None = None
    cache_read_amount: Money | None = None
    cache_write_amount: Money | None = None

    @property
    def has_breakdown(self) -> bool:
        """True when every per-category amount is known."""
        return all(getattr(self, name) is not None for name in _BREAKDOWN)

    def __add__(self, other: "Cost") -> "Cost":
        if self.currency != other.currency:
            raise ValueError(f"cannot add {self.currency} to {other.currency}")
        parts: dict[str, Decimal | None] = {}
        for name in _BREAKDOWN:
            mine: Decimal | None = getattr(self, name)
            theirs: Decimal | None = getattr(other, name)
            parts[name] = None if mine is None or theirs is None else mine + theirs
        return Cost(
            amount=self.amount + other.amount,
            currency=self.currency,
            model=self.model if self.model == other.model else "<mixed>",
            source=self.source if self.source == other.source else CostSource.MIXED,
            **parts,
        )


__all__ = ["Cost", "CostSource", "Usage"]
