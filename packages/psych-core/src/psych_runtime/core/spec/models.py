"""Which model a Spec talks to, and with what sampling settings."""

from collections.abc import Sequence
from typing import Annotated
from typing import Any
from typing import Literal
from typing import TypedDict
from typing import Unpack

from pydantic import Field
from pydantic import SerializerFunctionWrapHandler
from pydantic import field_validator
from pydantic import model_serializer

from psych_runtime.core.spec.base import SpecModel

ModelId = Annotated[str, Field(min_length=1, max_length=256)]

ToolChoiceMode = Literal["auto", "required", "none"]
"""How freely the model may choose tools: as it likes, at least one, or none at all."""

TOOL_CHOICE_MODES: frozenset[str] = frozenset({"auto", "required", "none"})


class NamedToolChoice(SpecModel):
    """Makes the model call one particular tool.

    Attributes:
        name: the tool, as the model sees it: a static tool's name, a built-in's, or
            ``<server>__<tool>`` for a tool an MCP server or A2A peer offers.
    """

    name: Annotated[str, Field(min_length=1, max_length=256)]


ToolChoice = ToolChoiceMode | NamedToolChoice
"""A ``ModelRef.tool_choice``: one of the modes, or a tool the model must call."""


def tool_name_as_choice(value: object) -> object:
    """Read a plain tool name where a tool choice is expected as that tool, named.

    The three modes stay as they are, and anything else passes through for pydantic
    to validate, so the stored form is always a mode or a ``NamedToolChoice``.
    """
    if isinstance(value, str) and value not in TOOL_CHOICE_MODES:
        return {"name": value}
    return value


class ModelSettings(TypedDict, total=False):
    """``ModelRef``'s keyword arguments, spelled out for type checkers."""

    model: str
    temperature: float | None
    top_p: float | None
    max_output_tokens: int | None
    reasoning_effort: Literal["low", "medium", "high"] | None
    fallbacks: Sequence[str]
    tool_choice: ToolChoice | str | None


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
        tool_choice: whether the model must, may or may not call tools: ``"auto"``
            (it decides), ``"required"`` (at least one call per answer), ``"none"``
            (no calls), or a ``NamedToolChoice`` for one particular tool; a plain
            tool name is read as the latter. None leaves the provider's default,
            which is ``"auto"`` whenever tools are offered. ``"required"`` and a
            named tool force a call for each new input (the task, a steer, a
            follow-up); once the model has called tools for it, the next call is
            sent ``"auto"`` so the model can answer. Publishing refuses a named tool
            the Spec cannot offer.

    The Version hash leaves ``tool_choice`` out while it is None, so Specs written
    before the setting existed keep the hash they were published under.
    """

    model: ModelId
    temperature: Annotated[float | None, Field(ge=0, le=2)] = None
    top_p: Annotated[float | None, Field(gt=0, le=1)] = None
    max_output_tokens: Annotated[int | None, Field(gt=0)] = None
    reasoning_effort: Literal["low", "medium", "high"] | None = None
    fallbacks: tuple[ModelId, ...] = ()
    tool_choice: ToolChoice | None = None

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

    @field_validator("tool_choice", mode="before")
    @classmethod
    def _tool_name_as_choice(cls, value: object) -> object:
        return tool_name_as_choice(value)

    @model_serializer(mode="wrap")
    def _unset_tool_choice_left_out(self, handler: SerializerFunctionWrapHandler) -> Any:
        dumped = handler(self)
        if self.tool_choice is None and isinstance(dumped, dict):
            dumped.pop("tool_choice", None)
        return dumped


def model_name_as_ref(value: object) -> object:
    """Read a plain model name where a ``ModelRef`` is expected as that model's ref.

    Anything else passes through untouched for pydantic to validate as usual, so the
    stored and hashed form is always the full ``ModelRef``.
    """
    return {"model": value} if isinstance(value, str) else value


__all__ = [
    "TOOL_CHOICE_MODES",
    "ModelId",
    "ModelRef",
    "ModelSettings",
    "NamedToolChoice",
    "ToolChoice",
    "ToolChoiceMode",
    "model_name_as_ref",
    "tool_name_as_choice",
]
