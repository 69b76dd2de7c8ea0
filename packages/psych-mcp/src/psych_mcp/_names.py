"""How a server's tool is named to the model, and whether the Spec and the tenant admit it.

A tool reaches the model as ``<server>__<tool>``, so two servers offering ``search``
stay apart and neither can shadow a static tool or a built-in. Providers only take
function names of a limited shape; a remote name that does not fit once qualified is
left out rather than mangled into something the server would not recognise.

Two planes decide whether a tool is offered and callable: the server's ``allow``
patterns in the Spec, over the server's own tool name, and the tenant's ``permitted``
patterns, over the qualified name. Both use the core's pattern rule (an exact name,
or a prefix ending in ``*``); the core keeps that rule internal, so it is restated in
``matches`` and a test holds the two together.
"""

import re
from collections.abc import Collection

from psych_runtime.spec import McpServer

OWNER_SEPARATOR = "__"
"""Joins a server's name to the names of its tools (``crm__find_contact``)."""

FUNCTION_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]{0,63}$")
"""What providers accept as a function name: at most 64 characters, no dots."""


def qualified(server: str, tool: str) -> str:
    """The name the model sees for ``tool`` of ``server``."""
    return f"{server}{OWNER_SEPARATOR}{tool}"


def offerable(name: str) -> bool:
    """Whether a qualified name can be handed to a provider as a function name."""
    return FUNCTION_NAME.fullmatch(name) is not None


def matches(name: str, pattern: str) -> bool:
    """Whether ``pattern`` covers ``name``: equal, or a prefix when it ends in ``*``."""
    if pattern.endswith("*"):
        return name.startswith(pattern[:-1])
    return name == pattern


def admitted(server: McpServer, remote_name: str, permitted: Collection[str] | None) -> bool:
    """Whether the Spec grants ``remote_name`` of ``server`` and the tenant permits it.

    Args:
        server: the server as the Spec names it, with its ``allow`` patterns (none
            grants every tool the server offers).
        remote_name: the tool's name at the server.
        permitted: the tenant's patterns over qualified names; None permits all.
    """
    if server.allow and not any(matches(remote_name, pattern) for pattern in server.allow):
        return False
    if permitted is None:
        return True
    name = qualified(server.name, remote_name)
    return any(matches(name, pattern) for pattern in permitted)


__all__ = ["FUNCTION_NAME", "OWNER_SEPARATOR", "admitted", "matches", "offerable", "qualified"]
