"""How a remote tool is named to the model, and whether the Spec and the tenant admit it.

A tool reaches the model as ``<owner>__<remote name>``, so two servers offering
``search`` stay apart and neither can shadow a static tool or a built-in. A remote
name that does not make a function name a provider accepts is left out rather than
rewritten into something the server would not recognise.

Admission is the core's one narrowing function (``psych_runtime.core.narrowing``)
applied to two kinds of name: the Spec's ``allow`` patterns cover the owner's own
tool names, and the tenant's planes cover qualified names.
"""

import re
from collections.abc import Collection
from typing import Final
from typing import Protocol

from psych_runtime.core.narrowing import narrow
from psych_runtime.core.spec.names import OWNER_SEPARATOR
from psych_runtime.core.spec.names import TOOL_NAME_PATTERN

FUNCTION_NAME: Final = re.compile(TOOL_NAME_PATTERN)
"""What providers accept as a function name: at most 64 characters, no dots."""


class Endpoint(Protocol):
    """What every remote endpoint a Spec names has: an MCP server, an A2A peer."""

    @property
    def name(self) -> str:
        """The Spec-local name; it prefixes every tool the endpoint offers."""
        ...

    @property
    def allow(self) -> tuple[str, ...]:
        """The patterns over the endpoint's own tool names the Spec grants; empty grants all."""
        ...

    @property
    def optional(self) -> bool:
        """Whether a Run may go on when the endpoint cannot be reached."""
        ...

    @property
    def credential(self) -> str | None:
        """The name of the secret sent with each request, if any."""
        ...


def qualified(owner: str, remote_name: str) -> str:
    """The name the model sees for ``remote_name`` of ``owner``."""
    return f"{owner}{OWNER_SEPARATOR}{remote_name}"


def offerable(name: str) -> bool:
    """Whether a qualified name can be handed to a provider as a function name."""
    return FUNCTION_NAME.fullmatch(name) is not None


def admitted(endpoint: Endpoint, remote_name: str, *planes: Collection[str] | None) -> bool:
    """Whether the Spec grants ``remote_name`` of ``endpoint`` and every plane permits it.

    Args:
        endpoint: as the Spec names it, with its ``allow`` patterns.
        remote_name: the tool's name at the endpoint.
        planes: patterns over qualified names (the tenant's plane as the runtime
            hands it, the source's own tenant policy); None permits all.
    """
    if not narrow([remote_name], granted=endpoint.allow or None):
        return False
    name = qualified(endpoint.name, remote_name)
    return all(narrow([name], granted=None, permitted=plane) for plane in planes)


__all__ = ["FUNCTION_NAME", "OWNER_SEPARATOR", "Endpoint", "admitted", "offerable", "qualified"]
