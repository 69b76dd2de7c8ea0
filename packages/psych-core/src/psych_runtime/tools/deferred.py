"""Deferred disclosure: a large remote catalogue behind three small built-ins.

Describing every tool of a big MCP server costs tokens on every turn. When the tools
of the servers that allow it would take more than the Runtime's catalogue budget, they
are not described one by one; the model gets ``list_tools`` (names and one-line
descriptions, filtered), ``get_tool_info`` (one tool's full description and schema)
and ``call_tool`` (call one by name). A server decides with ``McpServer.preload``:
True always describes its tools, False always defers them, None defers them when the
budget is exceeded.

``call_tool`` is judged as the tool it calls: approval rules see the target's name,
annotations and arguments, and a target that is not among this turn's deferred tools
(unknown, excluded, or on a server the tenant may not use) is refused before anything
runs.
"""

import json
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Final

from pydantic import JsonValue

from psych_runtime.core.messages import ToolDefinition
from psych_runtime.core.records import JsonObject
from psych_runtime.core.spec import AgentSpec
from psych_runtime.tools.errors import ToolArgumentsInvalid
from psych_runtime.tools.sources import SourceTool

LIST_TOOLS: Final = "list_tools"
GET_TOOL_INFO: Final = "get_tool_info"
CALL_TOOL: Final = "call_tool"
DEFERRED_BUILT_INS: Final = frozenset({LIST_TOOLS, GET_TOOL_INFO, CALL_TOOL})

DEFAULT_CATALOGUE_BUDGET_CHARS = 20_000
"""Characters of remote tool descriptions above which deferrable tools are deferred."""

_LISTED_PER_CALL = 50
_SUMMARY_CHARS = 160

LIST_TOOLS_DEFINITION = ToolDefinition(
    name=LIST_TOOLS,
    description=(
        "List tools you can use through call_tool that are not described here, with a "
        "one-line summary each. Filter by words in the name or description."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "Words to look for (optional)."},
            "server": {"type": "string", "description": "Only this server's tools."},
        },
        "additionalProperties": False,
    },
    annotations=frozenset({"read-only", "idempotent"}),
)

GET_TOOL_INFO_DEFINITION = ToolDefinition(
    name=GET_TOOL_INFO,
    description="Read one listed tool's full description and the arguments it takes.",
    input_schema={
        "type": "object",
        "properties": {"name": {"type": "string", "description": "The tool's name."}},
        "required": ["name"],
        "additionalProperties": False,
    },
    annotations=frozenset({"read-only", "idempotent"}),
)

CALL_TOOL_DEFINITION = ToolDefinition(
    name=CALL_TOOL,
    description=("Call one listed tool by name. Read its arguments with get_tool_info first."),
    input_schema={
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "The tool's name."},
            "arguments": {"type": "object", "description": "Its arguments."},
        },
        "required": ["name"],
        "additionalProperties": False,
    },
)


def defer(
    spec: AgentSpec, tools: Sequence[SourceTool], budget_chars: int
) -> tuple[tuple[SourceTool, ...], tuple[SourceTool, ...]]:
    """Split a turn's remote tools into those described and those deferred.

    Returns:
        ``(described, deferred)``, each in the order given.
    """
    preload = {server.name: server.preload for server in spec.mcp_servers}
    always = [tool for tool in tools if preload.get(tool.owner) is True]
    never = [tool for tool in tools if preload.get(tool.owner) is False]
    undecided = [tool for tool in tools if preload.get(tool.owner) is None]
    size = sum(_size(tool.definition) for tool in (*always, *undecided))
    deferred_names = {tool.name for tool in never}
    if size > budget_chars:
        deferred_names.update(tool.name for tool in undecided)
    described = tuple(tool for tool in tools if tool.name not in deferred_names)
    deferred = tuple(tool for tool in tools if tool.name in deferred_names)
    return described, deferred


def _size(definition: ToolDefinition) -> int:
    return (
        len(definition.name)
        + len(definition.description)
        + len(json.dumps(definition.input_schema, separators=(",", ":")))
    )


def list_tools(deferred: Mapping[str, SourceTool], arguments: JsonObject) -> JsonValue:
    """``list_tools``: the deferred tools matching the filters, summarised.

    Raises:
        ToolArgumentsInvalid: a filter is not a string, or an unknown argument.
    """
    query, server = arguments.get("query", ""), arguments.get("server")
    if set(arguments) - {"query", "server"} or not isinstance(query, str):
        raise ToolArgumentsInvalid(LIST_TOOLS, ["query and server: strings, both optional"])
    if server is not None and not isinstance(server, str):
        raise ToolArgumentsInvalid(LIST_TOOLS, ["server: a server's name"])
    words = query.lower().split()
    found = [
        tool
        for tool in deferred.values()
        if (server is None or tool.owner == server)
        and all(w in f"{tool.name} {tool.definition.description}".lower() for w in words)
    ]
    listed: list[JsonValue] = [
        {"name": tool.name, "summary": _summary(tool.definition.description)}
        for tool in found[:_LISTED_PER_CALL]
    ]
    return {"tools": listed, "more": max(0, len(found) - _LISTED_PER_CALL)}


def _summary(description: str) -> str:
    first = description.strip().splitlines()[0] if description.strip() else ""
    return first if len(first) <= _SUMMARY_CHARS else first[: _SUMMARY_CHARS - 1] + "…"


def tool_info(deferred: Mapping[str, SourceTool], arguments: JsonObject) -> JsonValue:
    """``get_tool_info``: one deferred tool's full description.

    Raises:
        ToolArgumentsInvalid: no deferred tool has that name.
    """
    tool = deferred.get(_target_name(GET_TOOL_INFO, arguments, {"name"}))
    if tool is None:
        raise ToolArgumentsInvalid(GET_TOOL_INFO, ["name: a tool list_tools returned"])
    return {
        "name": tool.name,
        "description": tool.definition.description,
        "input_schema": tool.definition.input_schema,
        "annotations": list[JsonValue](sorted(tool.definition.annotations)),
    }


def call_target(
    deferred: Mapping[str, SourceTool], arguments: JsonObject
) -> tuple[SourceTool, JsonObject]:
    """The deferred tool a ``call_tool`` names, and the arguments it passes on.

    Raises:
        ToolArgumentsInvalid: the target is not among this turn's deferred tools (it
            fails closed), or ``arguments`` is not an object.
    """
    name = _target_name(CALL_TOOL, arguments, {"name", "arguments"})
    tool = deferred.get(name)
    if tool is None:
        raise ToolArgumentsInvalid(
            CALL_TOOL, [f"name: {name!r} is not a tool you can call; use list_tools"]
        )
    passed = arguments.get("arguments", {})
    if not isinstance(passed, dict):
        raise ToolArgumentsInvalid(CALL_TOOL, ["arguments: an object"])
    return tool, passed


def _target_name(tool: str, arguments: JsonObject, allowed: set[str]) -> str:
    name = arguments.get("name")
    if not isinstance(name, str) or not name or set(arguments) - allowed:
        raise ToolArgumentsInvalid(tool, [f"pass name (a tool's name) and only {sorted(allowed)}"])
    return name


__all__ = [
    "CALL_TOOL",
    "CALL_TOOL_DEFINITION",
    "DEFAULT_CATALOGUE_BUDGET_CHARS",
    "DEFERRED_BUILT_INS",
    "GET_TOOL_INFO",
    "GET_TOOL_INFO_DEFINITION",
    "LIST_TOOLS",
    "LIST_TOOLS_DEFINITION",
    "call_target",
    "defer",
    "list_tools",
    "tool_info",
]
