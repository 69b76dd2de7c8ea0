"""A Run header as one flat row of columns, shared by the SQL store adapters.

Every relational store keeps the header in one table row. The column names, their
order and the checks on the way back are the same for all of them; what differs is how
a database holds an instant (microseconds, a naive UTC ``DATETIME``, a ``timestamptz``)
or text (``bytes`` from a ``VARBINARY`` column). Those two conversions are passed in.
"""

from collections.abc import Callable
from collections.abc import Sequence
from datetime import datetime

from psych_runtime.core.scope import Scope
from psych_runtime.store.errors import StoreError
from psych_runtime.store.port import RunHeader
from psych_runtime.store.port import RunState

HEADER_COLUMNS: tuple[str, ...] = (
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
"""A header's columns in the order ``header_row`` writes and ``header_from_row`` reads.

``tenant`` repeats the scope's tenant in a column of its own, the one stores filter and
index on; ``scope`` is the whole scope as compact JSON.
"""

_TEXT = frozenset(
    {
        "run_id",
        "tenant",
        "scope",
        "version_hash",
        "state",
        "lease_holder",
        "idempotency_key",
        "parent_run_id",
        "continues_run_id",
    }
)
_INSTANTS = frozenset({"created_at", "deadline_at", "lease_expires_at", "runnable_at"})
_INTEGERS = frozenset({"attempt_count", "delegation_depth"})
_REQUIRED = frozenset(
    {"run_id", "tenant", "version_hash", "state", "created_at", "deadline_at"} | _INTEGERS
)


def _same(value: object) -> object:
    return value


def scope_column(scope: Scope, *, compact: bool = False) -> str | None:
    """The scope as compact JSON; None for a tenant-only scope when ``compact``."""
    if compact and scope.principal is None and not scope.labels:
        return None
    return scope.model_dump_json(exclude_defaults=True)


def header_row(
    header: RunHeader,
    *,
    instant: Callable[[datetime], object] = _same,
    compact_scope: bool = False,
) -> tuple[object, ...]:
    """``header`` as column values in ``HEADER_COLUMNS`` order.

    Args:
        header: the header to store.
        instant: how this database holds an aware datetime.
        compact_scope: store NULL in ``scope`` when the tenant alone describes it.
    """

    def when(value: datetime | None) -> object:
        return None if value is None else instant(value)

    return (
        header.run_id,
        header.scope.tenant,
        scope_column(header.scope, compact=compact_scope),
        header.version_hash,
        header.state.value,
        instant(header.created_at),
        instant(header.deadline_at),
        header.lease_holder,
        when(header.lease_expires_at),
        header.idempotency_key,
        header.attempt_count,
        when(header.runnable_at),
        header.parent_run_id,
        header.delegation_depth,
        header.continues_run_id,
    )


def header_from_row(
    row: Sequence[object],
    *,
    instant: Callable[[object], object] = _same,
    text: Callable[[object], object] = _same,
    source: str = "the store",
) -> RunHeader:
    """Rebuild a header from values in ``HEADER_COLUMNS`` order.

    Args:
        row: the selected values.
        instant: turns a stored instant back into an aware datetime.
        text: turns a stored text value into ``str`` (for drivers returning bytes).
        source: names the store in errors.

    Raises:
        StoreError: a column holds a value of the wrong type or a malformed value,
            which means something other than this store wrote the row.
    """
    if len(row) != len(HEADER_COLUMNS):
        raise StoreError(
            f"{source}: a Run header row has {len(row)} columns, expected {len(HEADER_COLUMNS)}"
        )
    values: dict[str, object] = {}
    for name, raw in zip(HEADER_COLUMNS, row, strict=True):
        value = raw
        if value is not None:
            if name in _TEXT:
                value = text(value)
                expected: type = str
            elif name in _INSTANTS:
                value = instant(value)
                expected = datetime
            else:
                expected = int
            if not isinstance(value, expected) or isinstance(value, bool):
                raise _malformed(source, name, f"holds a {type(raw).__name__}")
        elif name in _REQUIRED:
            raise _malformed(source, name, "is NULL")
        values[name] = value
    tenant = values.pop("tenant")
    scope_text = values.pop("scope")
    try:
        values["scope"] = (
            Scope(tenant=str(tenant))
            if scope_text is None
            else Scope.model_validate_json(str(scope_text))
        )
        values["state"] = RunState(str(values["state"]))
        return RunHeader.model_validate(values)
    except ValueError as exc:
        raise StoreError(f"{source}: a stored Run header is malformed: {exc}") from None


def _malformed(source: str, column: str, what: str) -> StoreError:
    return StoreError(
        f"{source}: column {column} of a Run header {what}; the row was written by "
        "something other than this store"
    )


__all__ = ["HEADER_COLUMNS", "header_from_row", "header_row", "scope_column"]
