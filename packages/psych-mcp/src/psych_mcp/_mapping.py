"""Turning MCP's tool descriptions and call results into what the runtime works with.

MCP describes a tool's effects with four optional hints. A hint a server leaves out
takes the value the MCP specification gives it (``readOnlyHint`` false,
``destructiveHint`` true, ``idempotentHint`` false, ``openWorldHint`` true), so a
server that says nothing is treated as one that may destroy things: approval rules
written for ``@destructive`` hold for it too.

A call's result is content blocks (text, images, audio, resources) and, optionally,
structured content. The runtime records results as JSON, so the blocks become one JSON
object: the text blocks joined under ``text``, the structured content under
``structured``, and every other block, in order, under ``content``. Nothing is cut
short here; the core decides what to do with a result too large to show.
"""

from dataclasses import dataclass

import mcp_types as types
from pydantic import JsonValue

from psych_runtime import ToolClass
from psych_runtime.models import ToolDefinition

IDEMPOTENT = "idempotent"


@dataclass(frozen=True, slots=True)
class ToolHints:
    """What a tool's MCP hints say once the missing ones take MCP's defaults.

    Attributes:
        annotations: the runtime's annotations (``read-only``, ``write`` or
            ``destructive``, plus ``idempotent`` when the tool says so).
        safe_to_retry: a call left in doubt may be sent again (the tool is
            idempotent).
    """

    annotations: frozenset[str]
    safe_to_retry: bool


def tool_hints(hints: types.ToolAnnotations | None) -> ToolHints:
    """Classify a tool by its MCP hints, filling the ones it omits with MCP's defaults."""
    read_only = _hint(hints, "read_only_hint", default=False)
    destructive = _hint(hints, "destructive_hint", default=True)
    idempotent = _hint(hints, "idempotent_hint", default=False)
    if read_only:
        annotations = {ToolClass.READ_ONLY.value}
    elif destructive:
        annotations = {ToolClass.DESTRUCTIVE.value}
    else:
        annotations = {ToolClass.WRITE.value}
    if idempotent:
        annotations.add(IDEMPOTENT)
    return ToolHints(frozenset(annotations), safe_to_retry=idempotent)


def _hint(hints: types.ToolAnnotations | None, name: str, *, default: bool) -> bool:
    value = None if hints is None else getattr(hints, name)
    return default if value is None else bool(value)


def tool_definition(name: str, tool: types.Tool, hints: ToolHints) -> ToolDefinition:
    """Describe a server's tool to the model under its qualified ``name``."""
    description = tool.description or tool.title or ""
    schema: dict[str, JsonValue] = dict(tool.input_schema) or {"type": "object"}
    return ToolDefinition(
        name=name,
        description=description,
        input_schema=schema,
        annotations=hints.annotations,
    )


def error_text(result: types.CallToolResult) -> str:
    """What a failed call said, as one string for the model."""
    text = _joined_text(result)
    return text or "the MCP tool reported an error without saying why"


def result_json(result: types.CallToolResult) -> dict[str, JsonValue]:
    """A successful call's result as one JSON object.

    Keys appear only when there is something to put in them: ``text`` (every text
    block, joined by blank lines), ``structured`` (the structured content) and
    ``content`` (the other blocks, in the server's order). A result with none of these
    is ``{"text": ""}``.
    """
    out: dict[str, JsonValue] = {}
    text = _joined_text(result)
    if text:
        out["text"] = text
    if result.structured_content is not None:
        out["structured"] = result.structured_content
    others = [_block(block) for block in result.content if not isinstance(block, types.TextContent)]
    if others:
        out["content"] = others
    return out or {"text": ""}


def _joined_text(result: types.CallToolResult) -> str:
    texts = [block.text for block in result.content if isinstance(block, types.TextContent)]
    return "\n\n".join(texts)


def _block(block: types.ContentBlock) -> JsonValue:
    """One non-text content block as JSON."""
    if isinstance(block, types.ImageContent | types.AudioContent):
        return {"type": block.type, "mime_type": block.mime_type, "data": block.data}
    if isinstance(block, types.EmbeddedResource):
        resource = block.resource
        embedded: dict[str, JsonValue] = {"type": "resource", "uri": resource.uri}
        if resource.mime_type is not None:
            embedded["mime_type"] = resource.mime_type
        if isinstance(resource, types.TextResourceContents):
            embedded["text"] = resource.text
        else:
            embedded["blob"] = resource.blob
        return embedded
    if isinstance(block, types.ResourceLink):
        link: dict[str, JsonValue] = {"type": "resource_link", "uri": block.uri, "name": block.name}
        if block.description is not None:
            link["description"] = block.description
        if block.mime_type is not None:
            link["mime_type"] = block.mime_type
        return link
    # A block type this version does not know: keep what the server sent.
    dumped: JsonValue = block.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dumped


__all__ = [
    "IDEMPOTENT",
    "ToolHints",
    "error_text",
    "result_json",
    "tool_definition",
    "tool_hints",
]
