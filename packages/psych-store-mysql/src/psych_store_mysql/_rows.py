"""Convert between Python values and the column values MySQL stores and returns.

The driver hands back ``bytes`` for ``VARBINARY`` columns and naive ``datetime`` for
``DATETIME(6)``; the store wants ``str`` and timezone-aware UTC. Doing the conversion
in one place keeps the store free of isinstance checks and makes a damaged row fail
with a clear message instead of a confusing validation error.
"""

from datetime import UTC
from datetime import datetime

import psych_runtime
from psych_runtime.adapters.store import HEADER_COLUMNS as _CORE_COLUMNS
from psych_store_mysql._connection import Row

MAX_ID_BYTES = 512
"""Longest run id or worker id, in UTF-8 bytes, the ``VARBINARY(512)`` columns hold."""

HEADER_COLUMNS = tuple("scope_json" if name == "scope" else name for name in _CORE_COLUMNS)
"""The header's columns (the core's list; the scope column is ``scope_json`` here)."""

HEADER_SELECT = ", ".join(HEADER_COLUMNS)


def to_db_time(value: datetime) -> datetime:
    """A naive UTC datetime for a ``DATETIME(6)`` column.

    Raises:
        ValueError: ``value`` is naive; a store cannot guess which zone it meant.
    """
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"datetimes given to the MySQL store must be timezone-aware: {value!r}")
    return value.astimezone(UTC).replace(tzinfo=None)


def to_db_time_or_none(value: datetime | None) -> datetime | None:
    """``to_db_time`` that lets None through."""
    return None if value is None else to_db_time(value)


def checked_id(value: str, what: str) -> str:
    """Refuse an identifier longer than its column rather than let MySQL reject it.

    Raises:
        ValueError: the id's UTF-8 form is longer than ``MAX_ID_BYTES``.
    """
    if len(value.encode()) > MAX_ID_BYTES:
        raise ValueError(f"{what} is longer than {MAX_ID_BYTES} UTF-8 bytes: {value[:40]!r}...")
    return value


def _checked_or_none(value: str | None, what: str) -> str | None:
    return None if value is None else checked_id(value, what)


def header_from_row(row: Row) -> psych_runtime.adapters.RunHeader:
    """Rebuild a RunHeader from the columns listed in ``HEADER_COLUMNS``."""
    return psych_runtime.adapters.header_from_row(
        row, instant=_instant, text=_text_as_is, source="psych-store-mysql"
    )


def header_values(header: psych_runtime.adapters.RunHeader, head_seq: int) -> tuple[object, ...]:
    """Column values for inserting ``header``: ``HEADER_COLUMNS`` then ``head_seq``."""
    checked_id(header.run_id, "run id")
    if header.lease_holder is not None:
        checked_id(header.lease_holder, "worker id")
    _checked_or_none(header.parent_run_id, "parent_run_id")
    _checked_or_none(header.continues_run_id, "continues_run_id")
    return (*psych_runtime.adapters.header_row(header, instant=to_db_time), head_seq)


def _instant(value: object) -> object:
    """A naive ``DATETIME(6)`` value as aware UTC; anything else is left for the check."""
    return value.replace(tzinfo=UTC) if isinstance(value, datetime) else value


def _text_as_is(value: object) -> object:
    """``VARBINARY`` columns arrive as bytes; anything else is left for the check."""
    return bytes(value).decode() if isinstance(value, bytes | bytearray) else value


def text(value: object) -> str:
    """A string column value, whether the driver returned ``bytes`` or ``str``."""
    return _text(value)


def integer(value: object) -> int:
    """An integer column value."""
    return _int(value)


def _text(value: object) -> str:
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode()
    if isinstance(value, str):
        return value
    raise psych_runtime.StoreError(f"expected a string column, the database returned {value!r}")


def _int(value: object) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise psych_runtime.StoreError(f"expected an integer column, the database returned {value!r}")


def _time(value: object) -> datetime:
    if isinstance(value, datetime):
        return value.replace(tzinfo=UTC)
    raise psych_runtime.StoreError(f"expected a DATETIME column, the database returned {value!r}")


def instant_or_none(value: object) -> datetime | None:
    """An aware UTC datetime from a nullable ``DATETIME(6)`` column."""
    return None if value is None else _time(value)


def memory_from_row(
    row: Row, key: psych_runtime.adapters.MemoryKey
) -> psych_runtime.adapters.Memory:
    """Rebuild a fact of ``key`` from its ``id, content, created_at`` columns."""
    memory_id, content, created_at = row
    return psych_runtime.adapters.Memory(
        id=_text(memory_id), key=key, content=_text(content), created_at=_time(created_at)
    )


__all__ = [
    "HEADER_COLUMNS",
    "HEADER_SELECT",
    "MAX_ID_BYTES",
    "checked_id",
    "header_from_row",
    "header_values",
    "instant_or_none",
    "integer",
    "memory_from_row",
    "text",
    "to_db_time",
    "to_db_time_or_none",
]
