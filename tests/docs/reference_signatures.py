"""Reading the signatures of the product description's API reference.

``data/reference_signatures.json`` holds what the test needs of each signature on the
reference page: the name, the kind the page gives it (class, model, enum, value), and its
parameters in order with their defaults (no annotations). This module turns it into
``Signature`` values for the test that holds the library to them.
"""

import ast
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data" / "reference_signatures.json"

FACTORY = object()
"""A default the reference shows as ``<factory>``: some default exists."""

UNPARSED = object()
"""A default that is not a Python literal (``Timeout(...)``): compared as present."""


@dataclass(frozen=True)
class Parameter:
    name: str
    keyword_only: bool
    has_default: bool
    default: object


@dataclass(frozen=True)
class Signature:
    kind: str
    name: str
    parameters: tuple[Parameter, ...]
    variadic: bool


def _default(text: str) -> object:
    if text == "<factory>":
        return FACTORY
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        if text == "frozenset()":
            return frozenset()
        return UNPARSED


def parse(entry: dict[str, Any]) -> Signature:
    """One entry of the data file: a name, its kind and its parameters in order.

    A parameter is its name alone, or ``[name, default]`` with the default as the page
    writes it; ``"*"`` starts the keyword-only ones and ``"*name"`` is a variadic one.
    """
    parameters: list[Parameter] = []
    keyword_only = False
    variadic = False
    for item in entry["parameters"]:
        if item == "*":
            keyword_only = True
            continue
        if isinstance(item, str) and item.startswith("*"):
            variadic = True
            continue
        name, default = (item, None) if isinstance(item, str) else item
        parameters.append(
            Parameter(
                name=name,
                keyword_only=keyword_only,
                has_default=default is not None,
                default=_default(default) if default is not None else None,
            )
        )
    return Signature(
        kind=entry["kind"], name=entry["name"], parameters=tuple(parameters), variadic=variadic
    )


def reference() -> list[Signature]:
    """Every signature on the reference page, in page order."""
    return [parse(entry) for entry in json.loads(DATA.read_text())]
