"""The ModelClient port: one streamed request at a time.

A client turns a ``ModelRequest`` into an async stream of events that ends with exactly
one ``StreamDone``. A stream that stops without it is a transient failure the agent loop
may retry; the client raises ``ModelError`` subclasses for everything else.
"""

from collections.abc import AsyncIterator
from typing import Annotated
from typing import Literal
from typing import Protocol
from typing import runtime_checkable

from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import Field
from pydantic import JsonValue
from pydantic import field_validator

from psych_runtime.core.errors import PsychError
from psych_runtime.core.messages import Message
from psych_runtime.core.messages import ToolDefinition
from psych_runtime.core.metering import Cost
from psych_runtime.core.metering import Usage
from psych_runtime.core.spec.models import ToolChoice
from psych_runtime.core.spec.models import tool_name_as_choice

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class ModelRequest(BaseModel):
    """A single streamed request, provider-neutral.

    Attributes:
        model: which model answers; taken from the Spec, never re-routed.
        messages: everything sent, the system prompt leading.
        tools: the definitions offered for this turn; they stay fixed while the turn
            lasts so a provider's cached prompt prefix keeps matching.
        max_output_tokens: cap on generated tokens.
        temperature: sampling temperature, when the Spec sets one.
        stop: stop sequences.
        top_p: nucleus sampling bound, when the Spec sets one.
        reasoning_effort: for models that reason before answering.
        tool_choice: whether the model must, may or may not call one of ``tools``, or
            which one it must call; None leaves the provider's default. A client
            sends it only alongside tools, since providers refuse it without them.
        cache_breakpoints: indices into ``messages`` after which the provider may
            cache the prompt (the Anthropic client marks them; providers that cache
            on their own ignore them). Indices rather than flags on the messages, so
            one conversation can be sent to providers that cache differently.
        idle_timeout_seconds: give up when no chunk arrives for this long; 0 disables.
        extra: provider-specific request fields, passed through untouched.
    """

    model_config = _FROZEN

    model: Annotated[str, Field(min_length=1)]
    messages: tuple[Message, ...]
    tools: tuple[ToolDefinition, ...] = ()
    max_output_tokens: int | None = None
    temperature: float | None = None
    stop: tuple[str, ...] = ()
    top_p: float | None = None
    reasoning_effort: Literal["low", "medium", "high"] | None = None
    tool_choice: ToolChoice | None = None
    cache_breakpoints: tuple[Annotated[int, Field(ge=0)], ...] = ()
    idle_timeout_seconds: Annotated[float, Field(ge=0)] = 300.0
    extra: dict[str, JsonValue] = Field(default_factory=dict)

    @field_validator("tool_choice", mode="before")
    @classmethod
    def _tool_name_as_choice(cls, value: object) -> object:
        return tool_name_as_choice(value)


class TextDelta(BaseModel):
    """A piece of the assistant's visible text."""

    model_config = _FROZEN
    kind: Literal["text"] = "text"
    text: str


class ReasoningDelta(BaseModel):
    """A piece of the model's reasoning, when the provider streams it."""

    model_config = _FROZEN
    kind: Literal["reasoning"] = "reasoning"
    text: str


class ToolCallDelta(BaseModel):
    """A fragment of one tool call; fragments with the same index concatenate."""

    model_config = _FROZEN
    kind: Literal["tool_call"] = "tool_call"
    index: Annotated[int, Field(ge=0)]
    id: str | None = None
    name: str | None = None
    arguments: str = ""


class StreamDone(BaseModel):
    """The final event of a successful stream.

    Attributes:
        finish_reason: why the model stopped (``stop``, ``tool_calls``, ``length``...).
        usage: what the provider reported, or None when it reported nothing.
        cost: a cost the provider reported itself, if any.
        model: the model that actually answered, when the provider says.
    """

    model_config = _FROZEN
    kind: Literal["done"] = "done"
    finish_reason: Annotated[str, Field(min_length=1)] = "stop"
    usage: Usage | None = None
    cost: Cost | None = None
    model: str | None = None


StreamEvent = TextDelta | ReasoningDelta | ToolCallDelta | StreamDone


class ModelError(PsychError):
    """A model call failed.

    Attributes:
        status_code: the HTTP status, when there was one.
        retry_after: seconds the provider asked us to wait, when it said.
    """

    transient: bool = False

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = None,
        retry_after: float | None = None,
        kind: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.retry_after = retry_after
        self._kind = kind

    @property
    def kind(self) -> str:
        """A short stable classifier recorded in the log.

        An explicit ``kind`` given at construction wins, so an adapter can name a
        failure (``connection_error``, ``timeout``) without a subclass per cause.
        """
        if self._kind:
            return self._kind
        if self.status_code is not None:
            return f"http_{self.status_code}"
        return type(self).__name__


class TransientModelError(ModelError):
    """A failure that may succeed on retry: overload, rate limit, dropped stream."""

    transient = True


class StreamIncomplete(TransientModelError):
    """The stream ended without its final event."""

    @property
    def kind(self) -> str:
        """Always ``stream_incomplete``."""
        return "stream_incomplete"


class MalformedChunk(StreamIncomplete):
    """A chunk of the stream could not be decoded.

    Counted as a broken stream rather than a refusal: a garbled chunk is almost always
    a proxy or connection fault, and the same request usually succeeds when sent again.
    """

    @property
    def kind(self) -> str:
        """Always ``malformed_chunk``."""
        return "malformed_chunk"


class ModelEgressDenied(ModelError):
    """The egress policy refused the model endpoint, so no request was sent.

    The agent loop only records ``ModelError``; this wrapper carries the policy's
    refusal (kept as ``__cause__``) into the log as a permanent failure, because
    asking again cannot change the policy's answer.
    """

    @property
    def kind(self) -> str:
        """Always ``egress_denied``."""
        return "egress_denied"


class StreamIdleTimeout(TransientModelError):
    """No chunk arrived within the idle timeout."""

    @property
    def kind(self) -> str:
        """Always ``idle_timeout``."""
        return "idle_timeout"


class ContextOverflow(ModelError):
    """The provider refused the prompt as too long for the model's window."""

    @property
    def kind(self) -> str:
        """Always ``context_overflow``."""
        return "context_overflow"


@runtime_checkable
class ModelClient(Protocol):
    """Anything that can stream a model's answer to a request."""

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Send the request and yield its events, ending with ``StreamDone``."""
        ...

    async def known_models(self) -> frozenset[str]:
        """Model ids this client can serve; used by validation at publish."""
        ...


__all__ = [
    "ContextOverflow",
    "MalformedChunk",
    "ModelClient",
    "ModelEgressDenied",
    "ModelError",
    "ModelRequest",
    "ReasoningDelta",
    "StreamDone",
    "StreamEvent",
    "StreamIdleTimeout",
    "StreamIncomplete",
    "TextDelta",
    "ToolCallDelta",
    "TransientModelError",
]
