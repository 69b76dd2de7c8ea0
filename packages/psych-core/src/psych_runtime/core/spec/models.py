"""Which model a Spec talks to, and with what sampling settings."""

from typing import Annotated, Literal

from pydantic import Field

from psych_runtime.core.spec.base import SpecModel

ModelId = Annotated[str, Field(min_length=1, max_length=256)]


class ModelRef(SpecModel):
    """A model id plus the settings sent with every request to it.

    There is no routing here on purpose: ``fallbacks`` are tried, in order, only when
    the primary model fails, never chosen by cost or load.

    Attributes:
        model: the provider's model id.
        temperature: sampling temperature, 0 to 2; None leaves the provider default.
        top_p: nucleus sampling mass, above 0 and at most 1.
        max_output_tokens: a cap on generated tokens per call.
        reasoning_effort: for models that reason before answering.
        fallbacks: model ids to fail over to, in the author's order.
    """

    model: ModelId
    temperature: Annotated[float | None, Field(ge=0, le=2)] = None
    top_p: Annotated[float | None, Field(gt=0, le=1)] = None
    max_output_tokens: Annotated[int | None, Field(gt=0)] = None
    reasoning_effort: Literal["low", "medium", "high"] | None = None
    fallbacks: tuple[ModelId, ...] = ()


__all__ = ["ModelId", "ModelRef"]
