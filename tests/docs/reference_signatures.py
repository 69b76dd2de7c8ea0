"""Reading the signatures of the product description's API reference.

``data/reference_signatures.txt`` holds the signature lines of the reference page, one
per name, each after the kind the page gives it (class, model, enum, value). This
module parses them into names, parameters, kinds and defaults, for the test that holds
the library to them.
"""

import ast
import re
from dataclasses import dataclass
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "reference_signatures.txt"

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


def _split(text: str) -> list[str]:
    """Split on commas outside brackets and quotes."""
    parts: list[str] = []
    depth = 0
    quote: str | None = None
    current = ""
    for char in text:
        if quote:
            current += char
            if char == quote:
                quote = None
            continue
        if char in "'\"":
            quote = char
        elif char in "([{<":
            depth += 1
        elif char in ")]}>":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
            continue
        current += char
    if current.strip():
        parts.append(current.strip())
    return parts


def _default(text: str) -> object:
    if text == "<factory>":
        return FACTORY
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        if text == "frozenset()":
            return frozenset()
        return UNPARSED


def parse(line: str) -> Signature:
    kind, text = line.split("\t", 1)
    match = re.match(r"(?:class|def) (\w+)\((.*)\)(?: -> .*)?$", text)
    assert match is not None, line
    name, inside = match.groups()
    parameters: list[Parameter] = []
    keyword_only = False
    variadic = False
    for part in _split(inside):
        if part == "*":
            keyword_only = True
            continue
        if part.startswith("*"):
            variadic = True
            continue
        head, _, default = part.partition(" = ")
        pname = head.split(":", 1)[0].strip()
        parameters.append(
            Parameter(
                name=pname,
                keyword_only=keyword_only,
                has_default=bool(default),
                default=_default(default) if default else None,
            )
        )
    return Signature(kind=kind, name=name, parameters=tuple(parameters), variadic=variadic)


def reference() -> list[Signature]:
    """Every signature on the reference page, in page order."""
    return [parse(line) for line in DATA.read_text().splitlines() if line.strip()]
