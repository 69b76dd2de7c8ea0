"""Access narrowing: the one function that decides which tools a turn may use.

Four planes nest inside each other: what a source offers contains what the tenant
permits, which contains what the Spec grants, which contains what is callable right
now (a tool withheld after repeated failures is granted but not callable). Publish-time
validation (``core/validation.py``) and the per-turn catalog
(``runtime/agent/catalog.py``) both call ``narrow``, so what publishing accepts is
exactly what a turn offers. It lives in the pure core so both can reach it.
"""

from collections.abc import Collection
from collections.abc import Iterable


def matches(name: str, pattern: str) -> bool:
    """Whether ``name`` is allowed by ``pattern`` (exact, or a trailing ``*`` prefix)."""
    if pattern.endswith("*"):
        return name.startswith(pattern[:-1])
    return name == pattern


def narrow(
    offered: Iterable[str],
    *,
    granted: Collection[str] | None,
    permitted: Collection[str] | None = None,
    withheld: Collection[str] = (),
) -> tuple[str, ...]:
    """Intersect the planes and return the surviving names, sorted.

    Args:
        offered: names a source (the registry, an MCP server, a peer) offers.
        granted: patterns the Spec grants; None grants everything offered, an empty
            collection grants nothing.
        permitted: patterns the tenant's policy permits; None permits everything.
        withheld: names that are granted but not callable right now.

    Returns:
        The callable names in a stable order, so the prompt a provider caches does not
        change between turns unless access itself changed.
    """
    out = []
    for name in offered:
        if granted is not None and not any(matches(name, p) for p in granted):
            continue
        if permitted is not None and not any(matches(name, p) for p in permitted):
            continue
        if name in withheld:
            continue
        out.append(name)
    return tuple(sorted(set(out)))
