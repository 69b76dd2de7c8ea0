"""Whether a JSON-like value can be kept by every store exactly as it was given.

A value that one store keeps and another refuses makes a Run's fate depend on where it
is stored: the in-memory store holds Python objects and would take anything, while the
durable stores write JSON as UTF-8 and read it back through parsers that recurse. This
module names the values that cannot make that round trip, so that every store (and the
agent loop, before a value reaches a store) can refuse the same ones with the same
reason:

* strings holding a lone surrogate (U+D800..U+DFFF), which have no UTF-8 encoding;
* numbers that are not finite (NaN, infinities), which JSON cannot spell and the
  serialiser would silently turn into ``null``;
* nesting deeper than ``MAX_JSON_DEPTH``, which the serialiser and the parsers reach
  only by recursion, and which no sensible tool argument or result needs.

The walk is iterative, so a hostile value cannot turn the check itself into a
``RecursionError``.
"""

import enum
import math
import re
import types
import typing
from collections.abc import Mapping
from datetime import date
from datetime import datetime
from datetime import time
from datetime import timedelta

from pydantic import BaseModel

from psych_runtime.core.errors import UnstorableValue

MAX_JSON_DEPTH = 64
"""The deepest nesting of objects and arrays a stored value may have.

The JSON parser the stores read records back with stops at 200 levels and the
serialiser guards its own recursion; a record wraps a value in a few levels of its own.
Sixty-four leaves ample room below those limits while being far deeper than any real
tool argument, result or message needs.
"""

MAX_RECORD_DEPTH = MAX_JSON_DEPTH + 32
"""The deepest nesting a whole record may have, its own structure included.

A record carries values of up to ``MAX_JSON_DEPTH`` inside a few levels of its own
(a message inside a list inside the record, say), so a store checks records against
this looser bound: every value the agent loop let through still fits, and the result
stays well below the 200 levels the parser reads back.
"""

_SURROGATE = re.compile("[\ud800-\udfff]")

_MAX_REASON_PATH = 120


_Path = tuple["_Path", str | int] | None
"""A path into a value as a linked list from the leaf back to the root (``None``)."""


def _describe(path: _Path) -> str:
    """Render a path into a value as ``$['key'][3]``, shortened if very long."""
    steps: list[str | int] = []
    while path is not None:
        path, step = path
        steps.append(step)
    text = "$" + "".join(f"[{step!r}]" for step in reversed(steps))
    if len(text) > _MAX_REASON_PATH:
        text = text[: _MAX_REASON_PATH - 3] + "..."
    return text


def unstorable(
    value: object, *, max_depth: int = MAX_JSON_DEPTH, strict: bool = False
) -> str | None:
    """Say why a JSON-like value cannot be stored, or ``None`` if every store can keep it.

    Args:
        value: A JSON-like value: dicts (or other mappings) with string keys, lists,
            tuples, strings, numbers, booleans and ``None``, and pydantic models made
            of those (a model counts as one level, as it is written as an object).
            Anything else is passed over (the serialiser decides about it) unless
            ``strict`` is set.
        max_depth: The deepest nesting of containers allowed; a bare scalar has depth 0.
        strict: Also refuse whatever is not plain JSON: a set, bytes, a model or any
            other object, and a mapping key that is not a string. Used for values a
            caller hands in, which must be JSON before anything is built from them.

    Returns:
        A short human-readable reason naming where in the value the problem is, or
        ``None`` when the value is storable.
    """
    if isinstance(value, str):
        return _string_problem(value, None)
    # Each entry is (value, depth of this value, path to it). Paths are linked lists so
    # that pushing a child costs one small tuple however deep the value is.
    stack: list[tuple[object, int, _Path]] = [(value, 0, None)]
    while stack:
        item, depth, path = stack.pop()
        if isinstance(item, str):
            problem = _string_problem(item, path)
            if problem is not None:
                return problem
        elif item is None or isinstance(item, int):
            continue  # the other common leaves, passed over before the rarer checks
        elif isinstance(item, float):
            if not math.isfinite(item):
                return (
                    f"{_describe(path)} is the non-finite number {item!r}, which JSON cannot hold"
                )
        elif isinstance(item, BaseModel) and not strict:
            if depth >= max_depth:
                return f"{_describe(path)} nests deeper than {max_depth} levels"
            fields = item.__dict__
            plan = _PLANS.get(type(item), _UNPLANNED)
            if plan is _UNPLANNED:
                plan = _plan(type(item))
            if plan is None:
                for name, child in fields.items():
                    if child is not None:
                        stack.append((child, depth + 1, (path, name)))
                continue
            for name, is_text in plan:
                child = fields[name]
                if child is None:
                    continue
                if is_text and child.isascii():
                    continue  # the commonest leaf, settled without a push
                stack.append((child, depth + 1, (path, name)))
        elif isinstance(item, Mapping):
            if depth >= max_depth:
                return f"{_describe(path)} nests deeper than {max_depth} levels"
            for key, child in item.items():
                if strict and not isinstance(key, str):
                    return f"{_describe(path)} has the key {key!r}, which is not a string"
                if isinstance(key, str) and _SURROGATE.search(key) is not None:
                    return (
                        f"{_describe(path)} has a key holding a lone surrogate, "
                        "which cannot be encoded as UTF-8"
                    )
                stack.append((child, depth + 1, (path, str(key))))
        elif isinstance(item, list | tuple):
            if depth >= max_depth:
                return f"{_describe(path)} nests deeper than {max_depth} levels"
            for index, child in enumerate(item):
                stack.append((child, depth + 1, (path, index)))
        elif strict:
            return f"{_describe(path)} is {_kind_of(item)}, which is not a JSON value"
    return None


def _kind_of(item: object) -> str:
    """``a set``, ``a bytes``: the article and the type's name, for a message."""
    name = type(item).__name__
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"


_Plan = tuple[tuple[str, bool], ...]
"""The fields of a model worth looking into, each with whether it can only hold text."""

_PLANS: dict[type, _Plan | None] = {}
"""Plans by model class; ``None`` for a model whose every field must be looked at."""

_UNPLANNED: _Plan = (("", False),)
"""A marker for a class not planned yet (never a real plan: no field is named "")."""

_SAFE_LEAVES = (bool, int, datetime, date, time, timedelta, type(None))
"""Types whose values every store keeps as they are (no text, no non-finite numbers)."""


def _kind(annotation: object) -> str:
    """``"safe"``, ``"text"`` or ``"other"`` for the values a field annotation admits."""
    while isinstance(annotation, typing.NewType):
        annotation = annotation.__supertype__
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _kind(typing.get_args(annotation)[0])
    if origin is typing.Literal:
        values = typing.get_args(annotation)
        plain = all(
            isinstance(v, bool | int | None) or (isinstance(v, str) and v.isascii()) for v in values
        )
        return "safe" if plain else "other"
    if origin is typing.Union or origin is types.UnionType:
        kinds = {_kind(arg) for arg in typing.get_args(annotation) if arg is not type(None)}
        # A text field may also be None (skipped before it is looked at), but not a
        # number: "text" promises the value has ``isascii``.
        return kinds.pop() if len(kinds) == 1 else "other"
    if annotation is str:
        return "text"
    if isinstance(annotation, type):
        if issubclass(annotation, enum.Enum) and all(
            isinstance(member.value, bool | int)
            or (isinstance(member.value, str) and member.value.isascii())
            for member in annotation
        ):
            return "safe"
        if issubclass(annotation, _SAFE_LEAVES) and not issubclass(annotation, float):
            return "safe"
    return "other"


def _plan(model: type[BaseModel]) -> _Plan | None:
    """Which fields of ``model`` can hold an unstorable value, judged once per class.

    Fields typed as numbers other than floats, booleans, dates, enums of plain values
    or literals cannot, so they are never looked at; text fields are checked in place.
    Validation guarantees a field holds what its type says, so this is only done for
    models that refuse undeclared fields.
    """
    plan: _Plan | None = None
    if model.model_config.get("extra") != "allow":
        plan = tuple(
            (name, kind == "text")
            for name, field in model.model_fields.items()
            if (kind := _kind(field.annotation)) != "safe"
        )
    _PLANS[model] = plan
    return plan


def _string_problem(text: str, path: _Path) -> str | None:
    """Name a lone surrogate in one string, if it holds one."""
    if text.isascii():  # constant time in CPython, and true of most strings
        return None
    match = _SURROGATE.search(text)
    if match is None:
        return None
    return (
        f"{_describe(path)} holds a lone surrogate (U+{ord(match.group()):04X}) at "
        f"character {match.start()}, which cannot be encoded as UTF-8"
    )


# NUL has no place in a PostgreSQL text column; a lone surrogate has no UTF-8 encoding.
_UNSTORABLE_KEY_CHARACTER = re.compile("[\x00\ud800-\udfff]")


def key_problem(key: str) -> str | None:
    """Say why a string cannot be a key (a tenant, run id, idempotency key) in every store.

    Keys are written into indexed text columns, which are stricter than the JSON the
    records are kept as: PostgreSQL refuses the NUL character in text, and no store can
    encode a lone surrogate. A key holding either cannot be stored anywhere, so no Run
    can have it.

    Args:
        key: the string to check.

    Returns:
        The reason, or ``None`` when every store can hold the key.
    """
    found = _UNSTORABLE_KEY_CHARACTER.search(key)
    if found is None:
        return None
    character = found.group()
    what = (
        "the NUL character" if character == "\x00" else f"a lone surrogate (U+{ord(character):04X})"
    )
    return f"it holds {what} at character {found.start()}"


def check_storable(value: object, *, what: str = "value", strict: bool = False) -> None:
    """Raise ``UnstorableValue`` if ``value`` cannot be stored by every store.

    Args:
        value: The JSON-like value to check.
        what: What the value is, for the message (for example ``"tool arguments"``).
        strict: Also refuse anything that is not plain JSON (see ``unstorable``).

    Raises:
        UnstorableValue: The value holds a lone surrogate, a non-finite number, or
            nests deeper than ``MAX_JSON_DEPTH`` (or, with ``strict``, something that
            is not JSON).
    """
    problem = unstorable(value, strict=strict)
    if problem is not None:
        raise UnstorableValue(f"{what} cannot be stored: {problem}", reason=problem)


__all__ = ["MAX_JSON_DEPTH", "MAX_RECORD_DEPTH", "check_storable", "key_problem", "unstorable"]
