"""Raw storage: what an adapter really keeps, for checking deletion below the port.

A port call can only say what a store *answers*. Whether a deleted fact or Run is gone
from the backend, or only hidden from the answers, shows only in what the backend
holds. Every store, blob store and memory store therefore offers ``raw_storage()``: the
bytes its backend keeps for this instance (a database file with its write-ahead log
and free pages, every row version of its tables, every item, every object), with the
adapter's own reversible encodings (compression) undone so a search for a text finds
it. ``psych-contract`` searches these bytes after ``erase`` and after deleting Runs.

It is a testing and auditing aid, not a fast path: an implementation may read the
whole backend.
"""

import json
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol
from typing import runtime_checkable


@dataclass(frozen=True, slots=True)
class RawItem:
    """One piece of what a backend holds.

    Attributes:
        where: a short name for the piece, for the message of a failed search (a file
            name, ``table psych_memories page 3``, an item's key, an object's name).
        data: its bytes, as stored, with the adapter's own compression undone.
    """

    where: str
    data: bytes


@runtime_checkable
class RawStorage(Protocol):
    """A store (of any port) that can show the bytes its backend keeps.

    Every store shipped with Psych implements it, and the contract suites require it:
    a deletion checked only through the port passes when the data is merely hidden.
    """

    async def raw_storage(self) -> list[RawItem]:
        """Everything the backend holds for this instance, as bytes (read only).

        Includes what the port never returns: free pages and write-ahead logs of a
        database file, row versions a database keeps until it cleans them up, items
        and objects of every kind the adapter writes. Scoped to what this instance
        owns (its file, its schema or table prefix, its table, its bucket prefix).
        """
        ...


def encodings(text: str) -> tuple[bytes, ...]:
    """The byte spellings of ``text`` a store may have written: UTF-8 and JSON-escaped."""
    plain = text.encode("utf-8", "surrogatepass")
    escaped = json.dumps(text)[1:-1].encode("ascii")
    both = {plain, escaped, json.dumps(text, ensure_ascii=False)[1:-1].encode("utf-8")}
    return tuple(sorted(both))


def mentions(items: Iterable[RawItem], texts: Sequence[str]) -> list[str]:
    """Where any of ``texts`` appears in ``items``: ``"<where>: <text>"`` per find."""
    found: list[str] = []
    spelled = [(text, encodings(text)) for text in texts]
    for item in items:
        for text, forms in spelled:
            if any(form in item.data for form in forms):
                found.append(f"{item.where}: {text!r}")
    return found


__all__ = ["RawItem", "RawStorage", "encodings", "mentions"]
