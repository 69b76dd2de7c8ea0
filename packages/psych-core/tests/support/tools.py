"""Tool definitions the model client tests offer, the same on every wire format."""

from psych_runtime.core.messages import ToolDefinition

LOOKUP = ToolDefinition(
    name="lookup",
    description="Find an order.",
    input_schema={"type": "object", "properties": {"order_id": {"type": "string"}}},
)
"""An order lookup with one string argument, ``order_id``."""
