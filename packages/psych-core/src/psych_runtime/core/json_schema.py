"""JSON Schema for every schema a Spec declares: one dialect, one validator, one cache.

A Spec declares schemas in four places: an HTTP tool's ``input_schema``, a workflow's
``input_schema``, a step's ``output_schema`` and a wait step's ``payload_schema``.
Each is checked at publish (a schema the validator cannot compile, or that names
another dialect, is refused there) and every value it promises to constrain is checked
against it at run time, by the same validator: ``jsonschema-rs``, for JSON Schema
draft 2020-12, every keyword (bounds, patterns, combinators, ``$ref`` within the
schema). A ``$ref`` to anything outside the schema is refused at publish: resolving it
would fetch a URL, and nothing leaves the process except through the egress seam.

A compiled validator is kept per schema (by its canonical text), so the schemas of a
Version are compiled once, the first time one is used, and not again per call.
``format`` is an annotation, as the dialect specifies: it is not asserted.
"""

import json
from collections import OrderedDict
from collections.abc import Mapping
from typing import TYPE_CHECKING
from typing import Any

from pydantic import JsonValue

if TYPE_CHECKING:
    import jsonschema_rs

DIALECT = "https://json-schema.org/draft/2020-12/schema"
"""The one dialect every schema is read as; a schema naming another is refused."""

_KEPT = 512
"""Compiled validators kept, least recently used dropped first."""

_compiled: "OrderedDict[str, jsonschema_rs.Validator]" = OrderedDict()


class SchemaRefused(ValueError):
    """A schema the validator cannot use (it is not valid 2020-12, or refers outside)."""


def _refuse_retrieval(uri: str) -> Any:
    raise SchemaRefused(f"the schema refers to {uri!r}, outside itself; refs must stay inside")


def _text(schema: Mapping[str, JsonValue]) -> str:
    return json.dumps(schema, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _validator(schema: Mapping[str, JsonValue]) -> "jsonschema_rs.Validator":
    """The compiled validator of ``schema``, built once and then reused.

    Raises:
        SchemaRefused: the schema is not a usable 2020-12 schema.
    """
    key = _text(schema)
    found = _compiled.get(key)
    if found is not None:
        _compiled.move_to_end(key)
        return found
    import jsonschema_rs

    declared = schema.get("$schema")
    if declared is not None and str(declared).rstrip("#") != DIALECT:
        raise SchemaRefused(
            f"the schema declares the dialect {declared!r}; only draft 2020-12 ({DIALECT}) is read"
        )
    try:
        jsonschema_rs.meta.validate(dict(schema))
        validator = jsonschema_rs.Draft202012Validator(dict(schema), retriever=_refuse_retrieval)
    except jsonschema_rs.ValidationError as error:
        where = _where(list(error.instance_path))
        raise SchemaRefused(
            error.message if where == "(value)" else f"at {where}: {error.message}"
        ) from None
    except (jsonschema_rs.ReferencingError, ValueError) as error:
        raise SchemaRefused(str(error).splitlines()[0]) from None
    _compiled[key] = validator
    if len(_compiled) > _KEPT:
        _compiled.popitem(last=False)
    return validator


def schema_problems(schema: Mapping[str, JsonValue] | None) -> list[str]:
    """Why ``schema`` cannot be used, or nothing when it can (checked at publish).

    An empty schema (``{}``) accepts everything and is always usable.
    """
    if not schema:
        return []
    try:
        _validator(schema)
    except SchemaRefused as refused:
        return [str(refused)]
    return []


def value_problems(value: JsonValue, schema: Mapping[str, JsonValue] | None) -> list[str]:
    """Every way ``value`` breaks ``schema``, as ``where: what`` lines (empty when none).

    ``where`` is the path into the value (``address.city``, ``tags[1]``; the whole
    value is ``(value)``); a missing required property and an unexpected one are
    reported at their own name.

    A schema that cannot be used (publish refuses one, so it came from a Version
    stored before that check) refuses every value, with the reason.
    """
    if not schema:
        return []
    try:
        validator = _validator(schema)
    except SchemaRefused as refused:
        return [f"(schema): the declared schema cannot be used: {refused}"]
    from jsonschema_rs import ValidationErrorKind

    problems: list[str] = []
    for error in validator.iter_errors(value):
        path: list[str | int] = list(error.instance_path)
        kind = error.kind
        if isinstance(kind, ValidationErrorKind.Required):
            problems.append(f"{_where([*path, kind.property])}: required but missing")
        elif isinstance(kind, ValidationErrorKind.AdditionalProperties):
            problems.extend(
                f"{_where([*path, name])}: not allowed here" for name in kind.unexpected
            )
        else:
            problems.append(f"{_where(path)}: {error.message}")
    return problems


def _where(path: list[str | int]) -> str:
    text = ""
    for step in path:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else str(step))
    return text or "(value)"


__all__ = ["DIALECT", "SchemaRefused", "schema_problems", "value_problems"]
