"""Turning a Python function's signature into a tool's argument model and JSON schema.

Everything here runs once, at registration: the pydantic model that validates a call's
arguments, the JSON schema the model is shown, and the adapter that turns the return
value into JSON are all built up front so a call only pays for validation itself.
"""

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from types import NoneType
from types import UnionType
from typing import Annotated
from typing import Union
from typing import cast
from typing import get_args
from typing import get_origin

from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import Field
from pydantic import JsonValue
from pydantic import PydanticUserError
from pydantic import TypeAdapter
from pydantic import create_model
from pydantic.errors import PydanticSchemaGenerationError
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from psych_runtime.tools.context import ToolContext
from psych_runtime.tools.docstrings import parse_docstring
from psych_runtime.tools.errors import ToolSchemaError

_ARGUMENTS_CONFIG = ConfigDict(extra="forbid")

# Containers of sub-schemas whose *values* are schemas (their keys are names).
_SCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")
# Keywords whose value is one schema or a list of schemas.
_SCHEMA_SLOTS = (
    "items",
    "prefixItems",
    "additionalProperties",
    "anyOf",
    "oneOf",
    "allOf",
    "not",
    "contains",
    "if",
    "then",
    "else",
    "propertyNames",
)


@dataclass(frozen=True, slots=True)
class Parameter:
    """How one function parameter is filled when the tool is called.

    Attributes:
        name: the parameter's name in the function (and in the schema).
        field: the attribute of the validated arguments model holding its value, or
            None for the ``ToolContext`` parameter.
        positional_only: pass it by position rather than by keyword.
    """

    name: str
    field: str | None
    positional_only: bool


@dataclass(frozen=True, slots=True)
class ToolSignature:
    """Everything a call needs, prepared at registration.

    Attributes:
        description: the model-facing description.
        input_schema: the compact JSON schema of the arguments object.
        arguments_model: validates the arguments a model sends.
        parameters: the function's parameters in declaration order.
        returns: serializes the return value to JSON data, or None for ``-> None``.
        is_async: whether calling the function yields a coroutine.
    """

    description: str
    input_schema: dict[str, JsonValue]
    arguments_model: type[BaseModel]
    parameters: tuple[Parameter, ...]
    returns: TypeAdapter[object] | None
    is_async: bool


def is_async_callable(fn: Callable[..., object]) -> bool:
    """Tell whether calling ``fn`` produces a coroutine, for functions and callable objects."""
    if inspect.iscoroutinefunction(fn):
        return True
    return inspect.iscoroutinefunction(type(fn).__call__)


def strip_titles(node: JsonValue) -> JsonValue:
    """Drop the ``title`` keyword from every schema in a JSON schema.

    Pydantic titles repeat the property names; removing them shortens every request
    that offers the tool. Only the keyword is removed: a property that happens to be
    called ``title`` is kept, because the walk treats ``properties`` as a name-to-schema
    map rather than as a schema.
    """
    if isinstance(node, list):
        return [strip_titles(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, JsonValue] = {}
    for key, value in node.items():
        if key == "title" and isinstance(value, str):
            continue
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: strip_titles(schema) for name, schema in value.items()}
        elif key in _SCHEMA_SLOTS:
            out[key] = strip_titles(value)
        else:
            out[key] = value
    return out


def _is_context(annotation: object) -> bool:
    """Accept ``ToolContext`` and ``ToolContext | None`` as a request for the context."""
    if annotation is ToolContext:
        return True
    if get_origin(annotation) in (Union, UnionType):
        return set(get_args(annotation)) == {ToolContext, NoneType}
    return False


def _has_own_description(annotation: object) -> bool:
    if get_origin(annotation) is not Annotated:
        return False
    return any(
        isinstance(meta, FieldInfo) and meta.description for meta in get_args(annotation)[1:]
    )


def build_signature(
    tool: str, fn: Callable[..., object], *, description: str | None
) -> ToolSignature:
    """Inspect ``fn`` and prepare everything needed to offer and call it as ``tool``.

    Args:
        tool: the registered name, used in error messages.
        fn: the function (or callable object) to inspect.
        description: an explicit description; when given, the docstring is optional.

    Raises:
        ToolSchemaError: listing every reason the function cannot be a tool.
    """
    problems: list[str] = []
    try:
        signature = inspect.signature(fn, eval_str=True)
    except (NameError, TypeError, ValueError) as exc:
        raise ToolSchemaError(
            tool, [f"its signature cannot be read ({exc}); check that every hint resolves"]
        ) from exc

    if inspect.isgeneratorfunction(fn) or inspect.isasyncgenfunction(fn):
        problems.append("generators cannot be tools; return the collected values instead")

    doc = inspect.getdoc(fn)
    parsed = parse_docstring(doc) if doc else None
    if description is None and parsed is None:
        problems.append(
            "it has no docstring; write one saying what the tool does, because the model "
            "reads it to decide when to call the tool (or pass description=...)"
        )
    text = description if description is not None else (parsed.description if parsed else "")
    documented = parsed.parameters if parsed else {}

    fields: dict[str, tuple[object, FieldInfo]] = {}
    parameters: list[Parameter] = []
    unhinted: list[str] = []
    context_names: list[str] = []
    for index, param in enumerate(signature.parameters.values()):
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            star = "*" if param.kind is param.VAR_POSITIONAL else "**"
            problems.append(
                f"parameter {star}{param.name} cannot be described to a model; "
                "declare each argument as a named, typed parameter"
            )
            continue
        positional_only = param.kind is param.POSITIONAL_ONLY
        if param.annotation is param.empty:
            unhinted.append(param.name)
            continue
        if _is_context(param.annotation):
            context_names.append(param.name)
            parameters.append(Parameter(param.name, None, positional_only))
            continue
        if isinstance(param.default, FieldInfo):
            problems.append(
                f"parameter {param.name!r} uses a pydantic Field as its default; move it into "
                f"the hint instead: {param.name}: Annotated[T, Field(...)] = <default>"
            )
            continue
        # Fields get neutral names and carry the real name as their alias, so parameter
        # names such as ``json``, ``schema`` or ``_hidden`` cannot collide with pydantic.
        field_name = f"p{index}"
        described = param.name in documented and not _has_own_description(param.annotation)
        default = PydanticUndefined if param.default is param.empty else param.default
        # Passing description=None would erase one given in an Annotated hint.
        info = cast(
            FieldInfo,
            Field(default=default, alias=param.name, description=documented[param.name])
            if described
            else Field(default=default, alias=param.name),
        )
        fields[field_name] = (param.annotation, info)
        parameters.append(Parameter(param.name, field_name, positional_only))

    if unhinted:
        names = ", ".join(unhinted)
        problems.append(
            f"parameter(s) {names} have no type hint; annotate each one (for example "
            f"'{unhinted[0]}: str'), because the argument schema is built from the hints"
        )
    if len(context_names) > 1:
        problems.append(
            f"parameters {', '.join(context_names)} are all ToolContext; ask for it once"
        )
    if signature.return_annotation is signature.empty:
        problems.append(
            "it has no return type hint; annotate it (for example '-> dict[str, str]', "
            "or '-> None'), because the result is converted to JSON according to it"
        )

    if problems:
        raise ToolSchemaError(tool, problems)

    arguments_model, input_schema = _arguments_model(tool, fields)
    return ToolSignature(
        description=text,
        input_schema=input_schema,
        arguments_model=arguments_model,
        parameters=tuple(parameters),
        returns=_return_adapter(tool, signature.return_annotation),
        is_async=is_async_callable(fn),
    )


def _arguments_model(
    tool: str, fields: dict[str, tuple[object, FieldInfo]]
) -> tuple[type[BaseModel], dict[str, JsonValue]]:
    try:
        # mypy matches a **dict against create_model's own keyword parameters as well as
        # the field slots and finds no overload; the call is correct at runtime.
        model: type[BaseModel] = create_model(  # type: ignore[call-overload]
            f"{tool}_arguments", __config__=_ARGUMENTS_CONFIG, **fields
        )
        schema = model.model_json_schema()
    except (PydanticSchemaGenerationError, PydanticUserError, TypeError) as exc:
        raise ToolSchemaError(
            tool,
            [
                f"a parameter's type cannot be expressed as JSON schema ({exc}); use JSON "
                "types, pydantic models, dataclasses or TypedDicts for parameters"
            ],
        ) from exc
    compact = cast(dict[str, JsonValue], strip_titles(schema))
    compact.setdefault("properties", {})
    return model, compact


def _return_adapter(tool: str, annotation: object) -> TypeAdapter[object] | None:
    if annotation is None or annotation is type(None):
        return None
    try:
        return TypeAdapter(cast(type[object], annotation))
    except (PydanticSchemaGenerationError, PydanticUserError, TypeError) as exc:
        raise ToolSchemaError(
            tool,
            [
                f"the return type {annotation!r} cannot be converted to JSON ({exc}); "
                "return JSON types, pydantic models, dataclasses or datetimes"
            ],
        ) from exc


__all__ = ["Parameter", "ToolSignature", "build_signature", "is_async_callable", "strip_titles"]
