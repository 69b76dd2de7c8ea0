"""The conversation as a model sees it, provider-neutral.

The agent loop projects these from the log for every request; they are never stored.
"""

from typing import Annotated
from typing import Literal

from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import Field
from pydantic import JsonValue

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class ToolDefinition(BaseModel):
    """A tool as offered to the model for one turn.

    Attributes:
        name: what the model calls it.
        description: what the model reads to decide whether to call it.
        input_schema: JSON Schema of the arguments object.
        annotations: MCP-style hints (``read-only``, ``write``, ``destructive``...).
    """

    model_config = _FROZEN

    name: Annotated[str, Field(min_length=1)]
    description: str = ""
    input_schema: dict[str, JsonValue] = Field(default_factory=dict)
    annotations: frozenset[str] = frozenset()


class ToolCallRequest(BaseModel):
    """A tool call as the model asked for it; ``arguments`` is the raw JSON text."""

    model_config = _FROZEN

    id: str
    name: str
    arguments: str = ""


class SystemMessage(BaseModel):
    """Instructions that frame the conversation."""

    model_config = _FROZEN
    role: Literal["system"] = "system"
    content: str


class UserMessage(BaseModel):
    """What the person (or a queued message) said."""

    model_config = _FROZEN
    role: Literal["user"] = "user"
    content: str


class AssistantMessage(BaseModel):
    """What the model said, and the tool calls it made."""

    model_config = _FROZEN
    role: Literal["assistant"] = "assistant"
    content: str = ""
    tool_calls: tuple[ToolCallRequest, ...] = ()


class ToolResultMessage(BaseModel):
    """A tool's result (or failure) as the model is shown it."""

    model_config = _FROZEN
    role: Literal["tool"] = "tool"
    tool_call_id: str
    name: str = ""
    content: str
    is_error: bool = False


Message = Annotated[
    SystemMessage | UserMessage | AssistantMessage | ToolResultMessage,
    Field(discriminator="role"),
]

__all__ = [
    "AssistantMessage",
    "Message",
    "SystemMessage",
    "ToolCallRequest",
    "ToolDefinition",
    "ToolResultMessage",
    "UserMessage",
]
