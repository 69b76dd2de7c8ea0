"""Which model a Spec talks to, and with what sampling settings."""

from collections.abc import Sequence
from typing import Annotated, Literal, TypedDict, Unpack

from pydantic import Field

from psych_runtime.core.spec.base import SpecModel

ModelId = Annotated[str, Field(min_length=1, max_length=256)]


class ModelSettings(TypedDict, total=False):
    """``ModelRef``'s keyword arguments, spelled out for type checkers."""

    model: str
    temperature: float | None
    top_p: float | None
    max_output_tokens: int | None
    reasoning_effort: Literal["low", "medium", "high"] | None
    fallbacks: Sequence[str]


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

    def __init__(self, model: str | None = None, /, **settings: Unpack[ModelSettings]) -> None:
        """Take the model id positionally (``ModelRef("gpt-4o")``) or as ``model=``.

        Raises:
            TypeError: the model id was given both ways.
        """
        if model is not None:
            if "model" in settings:
                raise TypeError("ModelRef takes the model id once: positionally or as model=")
            settings["model"] = model
        super().__init__(**dict(settings))


def model_name_as_ref(value: object) -> object:
    """Read a plain model name where a ``ModelRef`` is expected as that model's ref.

    Anything else passes through untouched for pydantic to validate as usual, so the
    stored and hashed form is always the full ``ModelRef``.
    """
    return {"model": value} if isinstance(value, str) else value


__all__ = ["ModelId", "ModelRef", "ModelSettings", "model_name_as_ref"]
