"""The model port and its messages, stream events and errors, the clients, and prices."""

from psych_runtime.core.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCallRequest,
    ToolDefinition,
    ToolResultMessage,
    UserMessage,
)
from psych_runtime.model.anthropic import (
    AnthropicClient,
)
from psych_runtime.model.anthropic_wire import (
    PromptCaching,
)
from psych_runtime.model.openai_compat import (
    OpenAICompatibleClient,
)
from psych_runtime.model.port import (
    ContextOverflow,
    MalformedChunk,
    ModelClient,
    ModelEgressDenied,
    ModelError,
    ModelRequest,
    ReasoningDelta,
    StreamDone,
    StreamEvent,
    StreamIdleTimeout,
    StreamIncomplete,
    TextDelta,
    ToolCallDelta,
    TransientModelError,
)
from psych_runtime.model.pricing import (
    DEFAULT_PRICE_CATALOGUE_VERSION,
    DEFAULT_PRICES,
    CostPolicy,
    ModelPrice,
    PriceResolver,
    StaticPriceTable,
    compute_cost,
    load_price_table,
    resolve_cost,
)

__all__ = [
    "DEFAULT_PRICES",
    "DEFAULT_PRICE_CATALOGUE_VERSION",
    "AnthropicClient",
    "AssistantMessage",
    "ContextOverflow",
    "CostPolicy",
    "MalformedChunk",
    "Message",
    "ModelClient",
    "ModelEgressDenied",
    "ModelError",
    "ModelPrice",
    "ModelRequest",
    "OpenAICompatibleClient",
    "PriceResolver",
    "PromptCaching",
    "ReasoningDelta",
    "StaticPriceTable",
    "StreamDone",
    "StreamEvent",
    "StreamIdleTimeout",
    "StreamIncomplete",
    "SystemMessage",
    "TextDelta",
    "ToolCallDelta",
    "ToolCallRequest",
    "ToolDefinition",
    "ToolResultMessage",
    "TransientModelError",
    "UserMessage",
    "compute_cost",
    "load_price_table",
    "resolve_cost",
]
