"""Checking workflow data against the JSON Schemas a workflow declares.

A workflow's ``input_schema``, a step's ``output_schema`` and a wait step's
``payload_schema`` are checked with the same structural checker HTTP tool arguments
are: types (one or several), ``enum``, ``required``, ``properties``,
``additionalProperties: false`` and ``items``, recursively. Formats, patterns, bounds
and combinators are not checked.
"""

from collections.abc import Mapping

from pydantic import JsonValue

from psych_runtime.core.records import JsonObject
from psych_runtime.tools.http.request import argument_problems


def schema_problems(value: JsonObject, schema: Mapping[str, JsonValue] | None) -> list[str]:
    """One ``field: reason`` line per way ``value`` breaks ``schema``; empty when it fits."""
    if not schema:
        return []
    return argument_problems(value, schema)


__all__ = ["schema_problems"]
