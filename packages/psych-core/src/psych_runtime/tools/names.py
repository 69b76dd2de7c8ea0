"""Which names a registered tool may take.

Providers cap function names at 64 characters from a small alphabet, and the runtime
keeps a handful of names for its own built-in tools; checking both at registration turns
a provider-side 400 or a silently shadowed built-in into an error at boot.
"""

import re
from typing import Final

TOOL_NAME_PATTERN: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,63}")
"""Leading letter or underscore, then up to 63 letters, digits, ``_`` or ``-``."""

RESERVED_TOOL_NAMES: Final = frozenset(
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
"""Names the runtime gives its own tools; a registered tool may not take them."""


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
