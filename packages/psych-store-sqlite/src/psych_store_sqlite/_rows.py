"""Converting Run headers and instants to and from SQLite column values.

Instants are kept as whole microseconds since the Unix epoch in INTEGER columns. That
is exact at the microsecond precision Python's datetime has, eight bytes at most, sorts
correctly in an index, and needs no time-zone parsing on the way back: every value is
UTC by construction.

The scope column holds JSON only when the scope carries more than its tenant (a
principal or labels); otherwise it is NULL and the tenant column alone rebuilds it.
"""

from datetime import UTC, datetime, timedelta

from psych_runtime import RunId, Scope, StoreError, VersionHash
from psych_runtime.adapters import RunHeader, RunState
from psych_runtime.records import WorkerId

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)

HEADER_COLUMNS = (
    "run_id",
    "tenant",
    "scope",
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
"""The header's columns in the order ``header_values`` and ``header_from_row`` use."""

SELECT_HEADER = ", ".join(HEADER_COLUMNS)
"""The column list to select (or return) when a whole header is wanted."""

type SqlValue = str | int | bytes | None
"""What this store ever binds as a statement parameter."""


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


def scope_json(header: RunHeader) -> str | None:
    """The scope column: None when the tenant alone describes the scope."""
    scope = header.scope
    if scope.principal is None and not scope.labels:
        return None
    return scope.model_dump_json(exclude_defaults=True)


def header_values(header: RunHeader) -> tuple[SqlValue, ...]:
    """A header as statement parameters, in ``HEADER_COLUMNS`` order."""
    return (
        header.run_id,
        header.scope.tenant,
        scope_json(header),
        header.version_hash,
        header.state.value,
        to_micros(header.created_at),
        to_micros(header.deadline_at),
        header.lease_holder,
        optional_micros(header.lease_expires_at),
        header.idempotency_key,
        header.attempt_count,
        optional_micros(header.runnable_at),
        header.parent_run_id,
        header.delegation_depth,
        header.continues_run_id,
    )


def header_from_row(row: tuple[object, ...]) -> RunHeader:
    """Rebuild a header from a row selected with ``SELECT_HEADER``.

    Raises:
        StoreError: a column holds a value of the wrong type, which means the file was
            written by something other than this store.
    """
    tenant = _text(row, 1)
    scope_text = _optional_text(row, 2)
    scope = Scope(tenant=tenant) if scope_text is None else Scope.model_validate_json(scope_text)
    return RunHeader(
        run_id=RunId(_text(row, 0)),
        scope=scope,
        version_hash=VersionHash(_text(row, 3)),
        state=RunState(_text(row, 4)),
        created_at=from_micros(_integer(row, 5)),
        deadline_at=from_micros(_integer(row, 6)),
        lease_holder=_optional_worker(row, 7),
        lease_expires_at=_optional_instant(row, 8),
        idempotency_key=_optional_text(row, 9),
        attempt_count=_integer(row, 10),
        runnable_at=_optional_instant(row, 11),
        parent_run_id=_optional_run(row, 12),
        delegation_depth=_integer(row, 13),
        continues_run_id=_optional_run(row, 14),
    )


def _text(row: tuple[object, ...], index: int) -> str:
    value = row[index]
    if not isinstance(value, str):
        raise _bad_column(index, value)
    return value


def _optional_text(row: tuple[object, ...], index: int) -> str | None:
    value = row[index]
    if value is not None and not isinstance(value, str):
        raise _bad_column(index, value)
    return value


def _integer(row: tuple[object, ...], index: int) -> int:
    value = row[index]
    if not isinstance(value, int):
        raise _bad_column(index, value)
    return value


def _optional_instant(row: tuple[object, ...], index: int) -> datetime | None:
    value = row[index]
    if value is None:
        return None
    if not isinstance(value, int):
        raise _bad_column(index, value)
    return from_micros(value)


def _optional_worker(row: tuple[object, ...], index: int) -> WorkerId | None:
    value = _optional_text(row, index)
    return None if value is None else WorkerId(value)


def _optional_run(row: tuple[object, ...], index: int) -> RunId | None:
    value = _optional_text(row, index)
    return None if value is None else RunId(value)


def _bad_column(index: int, value: object) -> StoreError:
    return StoreError(
        f"psych_runs.{HEADER_COLUMNS[index]} holds a {type(value).__name__}; the database "
        "was changed by something other than psych-store-sqlite"
    )


__all__ = [
    "HEADER_COLUMNS",
    "SELECT_HEADER",
    "SqlValue",
    "from_micros",
    "header_from_row",
    "header_values",
    "optional_micros",
    "scope_json",
    "to_micros",
]
