"""Code tools: registering Python functions and calling them for a model.

Example:
    >>> import asyncio
    >>> from psych_runtime.core.scope import Scope
    >>> from psych_runtime.tools import ToolContext, ToolRegistry
    >>> registry = ToolRegistry()
    >>> @registry.tool
    ... async def lookup_order(order_id: str) -> dict[str, str]:
    ...     '''Look up an order by its id.'''
    ...     return {"order_id": order_id, "status": "shipped"}
    >>> context = ToolContext.for_call(
    ...     run_id="run_1", call_id="call_1", scope=Scope(tenant="acme"), attempt_id="att_1"
    ... )
    >>> asyncio.run(registry.invoke("lookup_order", {"order_id": "A1"}, context))
    {'order_id': 'A1', 'status': 'shipped'}
"""

from psych_runtime.tools.context import ToolContext
from psych_runtime.tools.context import idempotency_key_for
from psych_runtime.tools.errors import ToolArgumentsInvalid
from psych_runtime.tools.errors import ToolResultInvalid
from psych_runtime.tools.errors import ToolSchemaError
from psych_runtime.tools.errors import UnknownTool
from psych_runtime.tools.names import RESERVED_TOOL_NAMES
from psych_runtime.tools.names import TOOL_NAME_PATTERN
from psych_runtime.tools.registry import RegisteredTool
from psych_runtime.tools.registry import ToolRegistry

__all__ = [
    "RESERVED_TOOL_NAMES",
    "TOOL_NAME_PATTERN",
    "RegisteredTool",
    "ToolArgumentsInvalid",
    "ToolContext",
    "ToolRegistry",
    "ToolResultInvalid",
    "ToolSchemaError",
    "UnknownTool",
    "idempotency_key_for",
]
