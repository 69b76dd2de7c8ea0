"""How a peer's skill is named to the model, and whether the Spec and the tenant admit it.

A skill reaches the model as ``<peer>__<skill id>``. A skill id that does not make a
function name a provider accepts is left out (and named in an advisory) rather than
rewritten into something the peer would not recognise. Two planes narrow the offer:
the peer's ``allow`` list over skill ids (an exact id, or a prefix ending in ``*``;
empty grants every skill), then the tenant's ``permitted`` patterns over qualified
names, by the core's pattern rule.
"""

import re
from collections.abc import Collection

from psych_runtime.spec import A2APeer

OWNER_SEPARATOR = "__"
"""Joins a peer's name to its skill ids (``billing__refund``)."""

FUNCTION_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]{0,63}$")
"""What providers accept as a function name."""


def qualified(peer: str, skill: str) -> str:
    """The name the model sees for ``skill`` of ``peer``."""
    return f"{peer}{OWNER_SEPARATOR}{skill}"


def offerable(name: str) -> bool:
    """Whether a qualified name can be handed to a provider as a function name."""
    return FUNCTION_NAME.fullmatch(name) is not None


def matches(name: str, pattern: str) -> bool:
    """Whether ``pattern`` covers ``name``: equal, or a prefix when it ends in ``*``."""
    if pattern.endswith("*"):
        return name.startswith(pattern[:-1])
    return name == pattern


def admitted(peer: A2APeer, skill: str, permitted: Collection[str] | None) -> bool:
    """Whether the Spec grants ``skill`` of ``peer`` and the tenant's plane permits it."""
    if peer.allow and not any(matches(skill, pattern) for pattern in peer.allow):
        return False
    if permitted is None:
        return True
    name = qualified(peer.name, skill)
    return any(matches(name, pattern) for pattern in permitted)


__all__ = ["FUNCTION_NAME", "OWNER_SEPARATOR", "admitted", "matches", "offerable", "qualified"]
