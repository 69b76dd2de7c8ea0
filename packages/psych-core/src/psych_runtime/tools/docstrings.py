"""Reading a tool's description out of its docstring.

The docstring is what the model reads to decide whether to call a tool, so it doubles
as the tool's description. A Google-style ``Args:`` section is lifted out of that text
and its entries become per-parameter descriptions in the input schema, where models
look for them, instead of being repeated in the prose.
"""

import re
from dataclasses import dataclass
from dataclasses import field

_ARGS_HEADER = re.compile(
    r"(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments|Other Parameters):"
)
_ENTRY = re.compile(r"\*{0,2}(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*(\([^)]*\))?\s*:\s*(?P<text>.*)")


@dataclass(frozen=True, slots=True)
class ParsedDocstring:
    """A docstring split into the tool description and parameter descriptions.

    Attributes:
        description: the whole docstring minus its ``Args:`` sections.
        parameters: parameter name to its description.
    """

    description: str
    parameters: dict[str, str] = field(default_factory=dict)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def parse_docstring(doc: str) -> ParsedDocstring:
    """Split a cleaned docstring (as ``inspect.getdoc`` returns it) into its parts.

    Args:
        doc: the docstring with its common indentation already removed.

    Returns:
        The description with the argument sections removed, and the argument entries.
    """
    lines = doc.splitlines()
    kept: list[str] = []
    parameters: dict[str, str] = {}
    position = 0
    while position < len(lines):
        line = lines[position]
        if _ARGS_HEADER.fullmatch(line.strip()) is None:
            kept.append(line)
            position += 1
            continue
        position = _read_args_section(lines, position, parameters)
    return ParsedDocstring(description=_tidy(kept), parameters=parameters)


def _read_args_section(lines: list[str], header: int, parameters: dict[str, str]) -> int:
    """Collect one argument section's entries; return the index of the first line after it."""
    header_indent = _indent(lines[header])
    entry_indent: int | None = None
    current: str | None = None
    position = header + 1
    while position < len(lines):
        line = lines[position]
        if not line.strip():
            position += 1
            continue
        indent = _indent(line)
        if indent <= header_indent:
            break
        if entry_indent is None:
            entry_indent = indent
        match = _ENTRY.fullmatch(line.strip()) if indent <= entry_indent else None
        if match is not None:
            current = match["name"]
            parameters[current] = match["text"].strip()
        elif current is not None:
            parameters[current] = f"{parameters[current]} {line.strip()}".strip()
        position += 1
    return position


def _tidy(lines: list[str]) -> str:
    """Join lines, squeezing the blank runs left where a section was cut out."""
    result: list[str] = []
    for line in lines:
        if not line.strip() and result and not result[-1].strip():
            continue
        result.append(line.rstrip())
    return "\n".join(result).strip()


__all__ = ["ParsedDocstring", "parse_docstring"]
