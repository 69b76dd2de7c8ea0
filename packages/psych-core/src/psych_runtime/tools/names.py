"""Which names a registered tool may take.

Providers cap function names at 64 characters from a small alphabet, and the runtime
keeps a handful of names for its own built-in tools; checking both at registration turns
a provider-side 400 or a silently shadowed built-in into an error at boot. Both rules
are the Spec's own (``psych_runtime.core.spec.names``), so a tool registered in code
and a tool declared in a Spec are held to the same one.
"""

import re
from typing import Final

from psych_runtime.core.spec.names import RESERVED_TOOL_NAMES
from psych_runtime.core.spec.names import TOOL_NAME_PATTERN as _SPEC_TOOL_NAME_PATTERN

TOOL_NAME_PATTERN: Final = re.compile(_SPEC_TOOL_NAME_PATTERN)
"""The Spec's rule for static tool names, compiled: registered tools obey the same one."""


def tool_name_problem(name: str) -> str | None:
    """Explain why ``name`` cannot name a registered tool, or return None if it can."""
    if TOOL_NAME_PATTERN.fullmatch(name) is None:
        return (
            f"the name {name!r} is not a valid tool name: start with a letter or '_' and "
            "use at most 64 characters from letters, digits, '_' and '-' "
            "(pass name=... to choose another)"
        )
    if name in RESERVED_TOOL_NAMES:
        return (
            f"the name {name!r} belongs to a built-in tool of the runtime; "
            "pass name=... to register it under another name"
        )
    return None


__all__ = ["RESERVED_TOOL_NAMES", "TOOL_NAME_PATTERN", "tool_name_problem"]
