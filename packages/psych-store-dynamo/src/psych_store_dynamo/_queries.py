"""Building update expressions piece by piece.

``release`` and ``set_runnable_at`` change a different set of attributes depending on
their arguments (and the Run's state), so they collect ``SET`` and ``REMOVE`` clauses
and join them here. Every attribute is named by ``#placeholder``; ``_items.names_in``
fills in the names.
"""

from collections.abc import Sequence
from datetime import datetime

from psych_store_dynamo import _rows as it


def set_entry(
    entry: tuple[str, str] | None,
    q_name: str,
    k_name: str,
    sets: list[str],
    removes: list[str],
    values: dict[str, it.Attribute],
) -> None:
    """Add the clauses that file a header under an index ``entry``, or out of the index."""
    if entry is None:
        removes.extend([f"#{q_name}", f"#{k_name}"])
        return
    sets.extend([f"#{q_name} = :{q_name}", f"#{k_name} = :{k_name}"])
    values[f":{q_name}"] = it.s(entry[0])
    values[f":{k_name}"] = it.s(entry[1])


def set_time(
    name: str,
    when: datetime | None,
    sets: list[str],
    removes: list[str],
    values: dict[str, it.Attribute],
) -> None:
    """Add the clause that stores the instant ``when`` as ``name``, or removes it for None."""
    if when is None:
        removes.append(f"#{name}")
        return
    sets.append(f"#{name} = :{name}")
    values[f":{name}"] = it.time_value(when)


def update_expression(sets: Sequence[str], removes: Sequence[str]) -> str:
    """``SET a = :a, ... REMOVE b, ...``, leaving out an empty part."""
    parts = []
    if sets:
        parts.append("SET " + ", ".join(sets))
    if removes:
        parts.append("REMOVE " + ", ".join(removes))
    return " ".join(parts)


__all__ = ["set_entry", "set_time", "update_expression"]
