"""The loosely typed values of a provider's JSON, read and written alike by every wire format."""

from collections.abc import Mapping

from pydantic import JsonValue

from psych_runtime.core.messages import ToolDefinition
from psych_runtime.model.port import ModelRequest


def count_of(value: object) -> int:
    """A token count or index as a whole number of at least 0; 0 for anything else.

    Providers and the proxies in front of them send null, floats, strings and booleans
    where a count belongs; none of that may fail a stream or go negative.
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    return max(int(value), 0)


def mapping_of(value: object) -> Mapping[str, object]:
    """``value`` when it is a JSON object, else an empty one, so lookups need no checks."""
    return value if isinstance(value, Mapping) else {}


def text_of(value: object) -> str:
    """``value`` when it is a string, else an empty one: a missing name or piece of text."""
    return value if isinstance(value, str) else ""


def tool_fields(tool: ToolDefinition, schema_key: str) -> dict[str, JsonValue]:
    """A tool's name, its description when it has one, and its JSON Schema at ``schema_key``.

    A tool without a schema still needs one; "an object with no properties" is what
    providers expect for a tool that takes no arguments.
    """
    out: dict[str, JsonValue] = {"name": tool.name}
    if tool.description:
        out["description"] = tool.description
    out[schema_key] = (
        dict(tool.input_schema) if tool.input_schema else {"type": "object", "properties": {}}
    )
    return out


def sampling_fields(request: ModelRequest) -> dict[str, JsonValue]:
    """The sampling settings the request sets, ``temperature`` then ``top_p``.

    One left unset is not sent, so the provider's own default applies.
    """
    fields: dict[str, JsonValue] = {}
    if request.temperature is not None:
        fields["temperature"] = request.temperature
    if request.top_p is not None:
        fields["top_p"] = request.top_p
    return fields


__all__ = ["count_of", "mapping_of", "sampling_fields", "text_of", "tool_fields"]
