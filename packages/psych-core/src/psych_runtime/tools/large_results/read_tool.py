r"""``read_tool_output``: the built-in tool a model pages through an elided result with.

This module is the pure half: the definition the model is offered, the checking of its
arguments, and cutting one page out of a result's lines. Finding the result behind a
handle (in the log, or in a BlobStore) is the runtime's half.

Paging is by lines rather than characters because lines are what a model can refer to
("show me from line 400"), and a regular expression filter is the cheapest way to find
the part of a large result that matters. Lines are the text split at each ``\n``, so
the lines of successive pages, joined with ``\n``, are the text again exactly.
"""

import json
import re
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Annotated
from typing import Final

from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import Field
from pydantic import JsonValue
from pydantic import ValidationError
from pydantic import field_validator

from psych_runtime.core.messages import ToolDefinition
from psych_runtime.core.reducer import READ_TOOL_OUTPUT
from psych_runtime.tools.errors import ToolArgumentsInvalid

DEFAULT_LIMIT: Final = 200
"""Lines per page when the model does not say."""

MAX_LIMIT: Final = 1_000
"""The most lines one page may hold; a larger ``limit`` is lowered to this."""

MAX_LINE_CHARS: Final = 2_000
"""A longer line is cut to this many characters (and the page marked truncated)."""

MAX_PAGE_CHARS: Final = 10_000
"""The most characters of line text one page carries, so a page is never itself huge."""

READ_TOOL_OUTPUT_DEFINITION: Final = ToolDefinition(
    name=READ_TOOL_OUTPUT,
    description=(
        "Read a tool result that was too large to show you in full, using the handle "
        "given in its place. Returns one page of its lines: `lines` starts at line "
        "`offset` (counting from 0) and holds at most `limit` lines; `total_lines` is "
        "the size of the whole result and `next_offset` is where the next page starts "
        "(null once the end is reached). Structured results are laid out as indented "
        "JSON with sorted keys. Pass `pattern`, a regular expression, to receive only "
        "the lines that match it, with their positions in `line_numbers`. A page holds "
        f"at most {MAX_PAGE_CHARS} characters and a line at most {MAX_LINE_CHARS}; "
        "`truncated` is true when either cap shortened the page."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "handle": {
                "type": "string",
                "description": "The handle shown in place of the result, e.g. res_call_1.",
            },
            "offset": {
                "type": "integer",
                "minimum": 0,
                "default": 0,
                "description": "First line to return, counting from 0.",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_LIMIT,
                "default": DEFAULT_LIMIT,
                "description": "Most lines to return.",
            },
            "pattern": {
                "type": "string",
                "description": "Optional regular expression; only matching lines are returned.",
            },
        },
        "required": ["handle"],
        "additionalProperties": False,
    },
    annotations=frozenset({"read-only"}),
)
"""What the model is offered once the Run has issued at least one handle."""


class ReadRequest(BaseModel):
    """The checked arguments of one ``read_tool_output`` call.

    Attributes:
        handle: the handle of the result to read.
        offset: the first line wanted, from 0.
        limit: how many lines at most (lowered to ``MAX_LIMIT`` if larger).
        pattern: only lines this regular expression finds a match in.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    handle: Annotated[str, Field(min_length=1)]
    offset: Annotated[int, Field(ge=0)] = 0
    limit: Annotated[int, Field(ge=1)] = DEFAULT_LIMIT
    pattern: str | None = None

    @field_validator("limit")
    @classmethod
    def _at_most_the_cap(cls, limit: int) -> int:
        # Lowering rather than refusing: a model that asks for too much still makes
        # progress, and next_offset tells it where to continue.
        return min(limit, MAX_LIMIT)


def parse_read_request(
    arguments: Mapping[str, JsonValue],
) -> tuple[ReadRequest, re.Pattern[str] | None]:
    """Check the model's arguments and compile its pattern.

    Raises:
        ToolArgumentsInvalid: a field is missing, of the wrong type, unknown, or the
            pattern is not a valid regular expression.
    """
    try:
        request = ReadRequest.model_validate(dict(arguments))
    except ValidationError as error:
        problems = [
            f"{'.'.join(str(part) for part in issue['loc']) or 'arguments'}: {issue['msg']}"
            for issue in error.errors()
        ]
        raise ToolArgumentsInvalid(READ_TOOL_OUTPUT, problems) from None
    if request.pattern is None:
        return request, None
    try:
        return request, re.compile(request.pattern)
    except re.error as error:
        raise ToolArgumentsInvalid(
            READ_TOOL_OUTPUT, [f"pattern: not a valid regular expression ({error})"]
        ) from None


def reading_text(value: JsonValue) -> str:
    """The text a result is read as: strings as they are, anything else as tidy JSON.

    Indented JSON with sorted keys puts one field per line, so line numbers and a
    pattern are meaningful for structured results too.
    """
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, default=str)


def split_lines(text: str) -> list[str]:
    r"""The lines of ``text``: split at every ``\n`` and nowhere else.

    ``str.splitlines`` would also split at form feeds, ``\r`` and Unicode separators,
    and joining pages back together would then not give the original text.
    """
    return text.split("\n")


def read_page(
    handle: str,
    lines: Sequence[str],
    request: ReadRequest,
    pattern: re.Pattern[str] | None,
) -> dict[str, JsonValue]:
    """Cut one page out of a result's lines, within the per-line and per-page caps."""
    total = len(lines)
    shown: list[JsonValue] = []
    numbers: list[JsonValue] = []
    budget = MAX_PAGE_CHARS
    truncated = False
    index = request.offset
    while index < total and len(shown) < request.limit:
        line = lines[index]
        if pattern is not None and pattern.search(line) is None:
            index += 1
            continue
        cut = line[:MAX_LINE_CHARS]
        if len(cut) > budget:
            # The page is full; this line opens the next one.
            truncated = True
            break
        truncated = truncated or len(cut) < len(line)
        shown.append(cut)
        numbers.append(index)
        budget -= len(cut)
        index += 1
    page: dict[str, JsonValue] = {
        "handle": handle,
        "total_lines": total,
        "offset": request.offset,
        "lines": shown,
        "next_offset": index if index < total else None,
        "truncated": truncated,
    }
    if pattern is not None:
        page["line_numbers"] = numbers
    return page


__all__ = [
    "DEFAULT_LIMIT",
    "MAX_LIMIT",
    "MAX_LINE_CHARS",
    "MAX_PAGE_CHARS",
    "READ_TOOL_OUTPUT",
    "READ_TOOL_OUTPUT_DEFINITION",
    "ReadRequest",
    "parse_read_request",
    "read_page",
    "reading_text",
    "split_lines",
]
