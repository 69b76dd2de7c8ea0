"""Converting Run headers and instants to and from SQLite column values.

Instants are kept as whole microseconds since the Unix epoch in INTEGER columns. That
is exact at the microsecond precision Python's datetime has, eight bytes at most, sorts
correctly in an index, and needs no time-zone parsing on the way back: every value is
UTC by construction.

The scope column holds JSON only when the scope carries more than its tenant (a
principal or labels); otherwise it is NULL and the tenant column alone rebuilds it.
"""

from datetime import UTC
from datetime import datetime
from datetime import timedelta
from typing import cast

from psych_runtime.adapters.memory import Memory
from psych_runtime.adapters.memory import MemoryKey
from psych_runtime.adapters.store import HEADER_COLUMNS
from psych_runtime.adapters.store import RunHeader
from psych_runtime.adapters.store import header_from_row as decode_header
from psych_runtime.adapters.store import header_row

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)

SELECT_HEADER = ", ".join(HEADER_COLUMNS)
"""The column list to select (or return) when a whole header is wanted."""

type SqlValue = str | int | bytes | None
"""What this store ever binds as a statement parameter."""

MEMORY_COLUMNS = ("tenant", "end_user_id", "id", "content", "created_at")
"""The columns of ``psych_memories`` a new fact fills (``position`` is the rowid)."""


def to_micros(moment: datetime) -> int:
    """Microseconds since the epoch for an aware datetime.

    Raises:
        ValueError: the datetime is naive; without an offset the instant is ambiguous.
    """
    if moment.utcoffset() is None:
        raise ValueError(
            f"naive datetime {moment.isoformat()}: the SQLite store keeps instants in UTC "
            "and needs timezone-aware datetimes"
        )
    return (moment - _EPOCH) // _MICROSECOND


def optional_micros(moment: datetime | None) -> int | None:
    """``to_micros`` for an optional instant."""
    return None if moment is None else to_micros(moment)


def from_micros(value: int) -> datetime:
    """The aware UTC datetime for a stored microsecond count."""
    return _EPOCH + timedelta(microseconds=value)


def header_values(header: RunHeader) -> tuple[SqlValue, ...]:
    """A header as statement parameters, in ``HEADER_COLUMNS`` order."""
    return cast(tuple[SqlValue, ...], header_row(header, instant=to_micros, compact_scope=True))


def header_from_row(row: tuple[object, ...]) -> RunHeader:
    """Rebuild a header from a row selected with ``SELECT_HEADER``.

    Raises:
        StoreError: a column holds a value of the wrong type, which means the file was
            written by something other than this store.
    """
    return decode_header(row, instant=_instant, source="psych-store-sqlite")


def memory_values(fact: Memory) -> tuple[SqlValue, ...]:
    """A fact as statement parameters, in ``MEMORY_COLUMNS`` order."""
    return (
        fact.key.tenant,
        fact.key.end_user_id,
        fact.id,
        fact.content,
        to_micros(fact.created_at),
    )


def memory_from_row(key: MemoryKey, row: tuple[str, str, int]) -> Memory:
    """Rebuild a fact of ``key`` from its ``(id, content, created_at)`` row."""
    fact_id, content, created_at = row
    return Memory(id=fact_id, key=key, content=content, created_at=from_micros(created_at))


def _instant(value: object) -> object:
    """A stored microsecond count as a datetime; anything else is left for the check."""
    if isinstance(value, int) and not isinstance(value, bool):
        return from_micros(value)
    return value


__all__ = [
    "HEADER_COLUMNS",
    "MEMORY_COLUMNS",
    "SELECT_HEADER",
    "SqlValue",
    "from_micros",
    "header_from_row",
    "header_values",
    "memory_from_row",
    "memory_values",
    "optional_micros",
    "to_micros",
]
