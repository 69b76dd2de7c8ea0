"""Convert between Python values and the column values MySQL stores and returns.

The driver hands back ``bytes`` for ``VARBINARY`` columns and naive ``datetime`` for
``DATETIME(6)``; the store wants ``str`` and timezone-aware UTC. Doing the conversion
in one place keeps the store free of isinstance checks and makes a damaged row fail
with a clear message instead of a confusing validation error.
"""

from datetime import UTC, datetime

import psych_runtime
from psych_store_mysql._driver import Row

MAX_ID_BYTES = 512
"""Longest run id or worker id, in UTF-8 bytes, the ``VARBINARY(512)`` columns hold."""

HEADER_COLUMNS = (
    "run_id",
    "scope_json",
    "version_hash",
    "state",
    "created_at",
    "deadline_at",
    "lease_holder",
    "lease_expires_at",
    "idempotency_key",
    "attempt_count",
    "runnable_at",
    "parent_run_id",
    "delegation_depth",
    "continues_run_id",
)
"""The columns ``header_from_row`` reads, in this order."""

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
    (
        run_id,
        scope_json,
        version_hash,
        state,
        created_at,
        deadline_at,
        lease_holder,
        lease_expires_at,
        idempotency_key,
        attempt_count,
        runnable_at,
        parent_run_id,
        delegation_depth,
        continues_run_id,
    ) = row
    parent = _text_or_none(parent_run_id)
    continues = _text_or_none(continues_run_id)
    holder = _text_or_none(lease_holder)
    return psych_runtime.adapters.RunHeader(
        run_id=psych_runtime.RunId(_text(run_id)),
        scope=psych_runtime.Scope.model_validate_json(_text(scope_json)),
        version_hash=psych_runtime.VersionHash(_text(version_hash)),
        state=psych_runtime.adapters.RunState(_text(state)),
        created_at=_time(created_at),
        deadline_at=_time(deadline_at),
        lease_holder=None if holder is None else psych_runtime.records.WorkerId(holder),
        lease_expires_at=_time_or_none(lease_expires_at),
        idempotency_key=_text_or_none(idempotency_key),
        attempt_count=_int(attempt_count),
        runnable_at=_time_or_none(runnable_at),
        parent_run_id=None if parent is None else psych_runtime.RunId(parent),
        delegation_depth=_int(delegation_depth),
        continues_run_id=None if continues is None else psych_runtime.RunId(continues),
    )


def header_values(header: psych_runtime.adapters.RunHeader, head_seq: int) -> tuple[object, ...]:
    """Column values for inserting ``header``: ``HEADER_COLUMNS`` then ``tenant, head_seq``."""
    return (
        checked_id(header.run_id, "run id"),
        header.scope.model_dump_json(exclude_defaults=True),
        header.version_hash,
        header.state.value,
        to_db_time(header.created_at),
        to_db_time(header.deadline_at),
        None if header.lease_holder is None else checked_id(header.lease_holder, "worker id"),
        to_db_time_or_none(header.lease_expires_at),
        header.idempotency_key,
        header.attempt_count,
        to_db_time_or_none(header.runnable_at),
        _checked_or_none(header.parent_run_id, "parent_run_id"),
        header.delegation_depth,
        _checked_or_none(header.continues_run_id, "continues_run_id"),
        header.scope.tenant,
        head_seq,
    )


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


def _text_or_none(value: object) -> str | None:
    return None if value is None else _text(value)


def _int(value: object) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise psych_runtime.StoreError(f"expected an integer column, the database returned {value!r}")


def _time(value: object) -> datetime:
    if isinstance(value, datetime):
        return value.replace(tzinfo=UTC)
    raise psych_runtime.StoreError(f"expected a DATETIME column, the database returned {value!r}")


def _time_or_none(value: object) -> datetime | None:
    return None if value is None else _time(value)


def instant_or_none(value: object) -> datetime | None:
    """An aware UTC datetime from a nullable ``DATETIME(6)`` column."""
    return _time_or_none(value)


__all__ = [
    "HEADER_COLUMNS",
    "HEADER_SELECT",
    "MAX_ID_BYTES",
    "checked_id",
    "header_from_row",
    "header_values",
    "instant_or_none",
    "integer",
    "text",
    "to_db_time",
    "to_db_time_or_none",
]
