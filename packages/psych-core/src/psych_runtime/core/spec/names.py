"""Name patterns, reserved names and text normalisation shared by every Spec model.

Names end up in model-facing tool lists, in derived ids and in the Version hash, so
their shape is fixed here once rather than repeated field by field. Free text is
normalised only in its line endings: a Spec written on Windows and the same Spec
written elsewhere must hash alike, but anything beyond that (trailing spaces, tabs)
is the author's choice and stays significant.
"""

import re
from typing import Annotated

from pydantic import BeforeValidator
from pydantic import Field
from pydantic import StringConstraints

NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_.\-]{0,127}$"
"""Skills, servers, peers, steps, subagents and Spec names: at most 128 characters."""

TOOL_NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_\-]{0,63}$"
"""Static tool names: providers cap function names at 64 characters and refuse dots."""

Name = Annotated[str, StringConstraints(pattern=NAME_PATTERN)]
ToolName = Annotated[str, StringConstraints(pattern=TOOL_NAME_PATTERN)]

OWNER_SEPARATOR = "__"
"""Joins an MCP server or A2A peer name to the tools it offers (``github__create_issue``)."""

RESERVED_TOOL_NAMES: frozenset[str] = frozenset(
    {
        "load_skill",
        "read_tool_output",
        "remember",
        "forget",
        "ask_question",
        "update_tasks",
        "show_component",
        "delegate",
        "spawn_subagent",
        "check_subagent",
        "message_subagent",
        "run_code",
        "list_tools",
        "get_tool_info",
        "call_tool",
    }
)
"""Names the runtime offers itself; a static tool taking one would shadow a built-in."""

BINDABLE_BUILTINS: frozenset[str] = frozenset(
    {
        "load_skill",
        "read_tool_output",
        "remember",
        "forget",
        "list_tools",
        "get_tool_info",
        "call_tool",
    }
)
"""Built-ins a program run by ``run_code`` may call back into.

The others either park the Run (questions, delegation) or would let a program start
another program, neither of which can happen in the middle of one execution.
"""


def normalise_newlines(text: str) -> str:
    """Turn CRLF and lone CR into LF, leaving every other character alone."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _normalise_if_text(value: object) -> object:
    return normalise_newlines(value) if isinstance(value, str) else value


Text = Annotated[str, BeforeValidator(_normalise_if_text)]
"""Free text whose line endings are normalised before its length is checked."""

Description = Annotated[Text, Field(max_length=4096)]

_URL = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*)://(?P<authority>[^/?#]*)(?P<rest>.*)$")


def check_http_url(url: str, *, placeholders_in_path: bool = False) -> str:
    """Refuse a URL that is not plain http(s) to a fixed host.

    The host has to be fixed in the Spec because egress policy and credential pools
    are decided by it; a host filled in from model arguments would let the model choose
    where a credential is sent. User info in the authority is refused for a related
    reason: a secret belongs in a named credential, not in hashed Spec text.

    Args:
        url: the URL to check.
        placeholders_in_path: whether ``{name}`` placeholders may appear after the host.

    Returns:
        The URL, unchanged.

    Raises:
        ValueError: when the URL breaks one of the rules above.
    """
    if any(ch.isspace() for ch in url):
        raise ValueError("a URL may not contain whitespace")
    match = _URL.match(url)
    if match is None:
        raise ValueError(f"{url!r} is not an absolute URL")
    if match["scheme"].lower() not in {"http", "https"}:
        raise ValueError(f"URL scheme must be http or https, not {match['scheme']!r}")
    authority = match["authority"]
    if not authority:
        raise ValueError(f"{url!r} names no host")
    if "{" in authority or "}" in authority:
        raise ValueError("placeholders may not appear in a URL's host; the host must be fixed")
    if "@" in authority:
        raise ValueError("a URL may not carry user info; name a credential instead")
    if not placeholders_in_path and ("{" in match["rest"] or "}" in match["rest"]):
        raise ValueError("this URL may not contain placeholders")
    return url


__all__ = [
    "BINDABLE_BUILTINS",
    "NAME_PATTERN",
    "OWNER_SEPARATOR",
    "RESERVED_TOOL_NAMES",
    "TOOL_NAME_PATTERN",
    "Description",
    "Name",
    "Text",
    "ToolName",
    "check_http_url",
    "normalise_newlines",
]
