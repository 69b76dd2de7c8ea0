"""The model port and its messages, stream events and errors, the clients, and prices."""

from psych_runtime.core.messages import AssistantMessage
from psych_runtime.core.messages import Message
from psych_runtime.core.messages import SystemMessage
from psych_runtime.core.messages import ToolCallRequest
from psych_runtime.core.messages import ToolDefinition
from psych_runtime.core.messages import ToolResultMessage
from psych_runtime.core.messages import UserMessage
from psych_runtime.model.anthropic import AnthropicClient
from psych_runtime.model.anthropic_wire import PromptCaching
from psych_runtime.model.openai_compat import OpenAICompatibleClient
from psych_runtime.model.port import ContextOverflow
from psych_runtime.model.port import MalformedChunk
from psych_runtime.model.port import ModelClient
from psych_runtime.model.port import ModelEgressDenied
from psych_runtime.model.port import ModelError
from psych_runtime.model.port import ModelRequest
from psych_runtime.model.port import ReasoningDelta
from psych_runtime.model.port import StreamDone
from psych_runtime.model.port import StreamEvent
from psych_runtime.model.port import StreamIdleTimeout
from psych_runtime.model.port import StreamIncomplete
from psych_runtime.model.port import TextDelta
from psych_runtime.model.port import ToolCallDelta
from psych_runtime.model.port import TransientModelError
from psych_runtime.model.pricing import DEFAULT_PRICE_CATALOGUE_VERSION
from psych_runtime.model.pricing import DEFAULT_PRICES
from psych_runtime.model.pricing import CostPolicy
from psych_runtime.model.pricing import ModelPrice
from psych_runtime.model.pricing import PriceResolver
from psych_runtime.model.pricing import StaticPriceTable
from psych_runtime.model.pricing import compute_cost
from psych_runtime.model.pricing import load_price_table
from psych_runtime.model.pricing import resolve_cost

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
