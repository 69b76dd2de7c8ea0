"""The flat-row form of a Run header that the SQL store adapters share."""

from datetime import UTC
from datetime import datetime
from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from psych_runtime import RunId
from psych_runtime import Scope
from psych_runtime import StoreError
from psych_runtime import VersionHash
from psych_runtime.adapters import HEADER_COLUMNS
from psych_runtime.adapters import RunHeader
from psych_runtime.adapters import RunState
from psych_runtime.adapters import header_from_row
from psych_runtime.adapters import header_row
from psych_runtime.records import WorkerId

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

_instants = st.datetimes(
    min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)
)
_ids = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=12)
_labels = st.dictionaries(
    st.text("abc", min_size=1, max_size=3), st.text("xyz", max_size=3), max_size=2
)


@st.composite
def headers(draw: st.DrawFn) -> RunHeader:
    optional_id = st.none() | _ids
    return RunHeader(
        run_id=RunId(draw(_ids)),
        scope=Scope(
            tenant=draw(_ids),
            principal=draw(st.none() | _ids),
            labels=draw(_labels),
        ),
        version_hash=VersionHash(draw(_ids)),
        state=draw(st.sampled_from(list(RunState))),
        created_at=draw(_instants),
        deadline_at=draw(_instants),
        lease_holder=draw(st.none() | _ids.map(WorkerId)),
        lease_expires_at=draw(st.none() | _instants),
        idempotency_key=draw(optional_id),
        attempt_count=draw(st.integers(0, 10_000)),
        runnable_at=draw(st.none() | _instants),
        parent_run_id=draw(st.none() | _ids.map(RunId)),
        delegation_depth=draw(st.integers(0, 50)),
        continues_run_id=draw(st.none() | _ids.map(RunId)),
    )


def _to_micros(moment: datetime) -> int:
    return (moment - _EPOCH) // timedelta(microseconds=1)


def _from_micros(value: object) -> object:
    return _EPOCH + timedelta(microseconds=value) if isinstance(value, int) else value


@given(headers(), st.booleans())
def test_every_field_survives_the_round_trip(header: RunHeader, compact: bool) -> None:
    row = header_row(header, compact_scope=compact)
    assert len(row) == len(HEADER_COLUMNS)
    assert header_from_row(row) == header


@given(headers())
def test_the_conversions_are_applied_both_ways(header: RunHeader) -> None:
    row = header_row(header, instant=_to_micros, compact_scope=True)
    stored = tuple(value.encode() if isinstance(value, str) else value for value in row)
    back = header_from_row(
        stored,
        instant=_from_micros,
        text=lambda value: value.decode() if isinstance(value, bytes) else value,
    )
    assert back == header


def test_a_compact_scope_is_null_only_when_the_tenant_says_everything() -> None:
    plain = _header(Scope(tenant="t"))
    assert header_row(plain, compact_scope=True)[HEADER_COLUMNS.index("scope")] is None
    assert header_row(plain)[HEADER_COLUMNS.index("scope")] == '{"tenant":"t"}'
    labelled = _header(Scope(tenant="t", labels={"a": "b"}))
    assert header_row(labelled, compact_scope=True)[HEADER_COLUMNS.index("scope")] is not None


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        ("run_id", 7, "column run_id of a Run header holds a int"),
        ("tenant", None, "column tenant of a Run header is NULL"),
        ("created_at", "yesterday", "column created_at of a Run header holds a str"),
        ("attempt_count", True, "column attempt_count of a Run header holds a bool"),
        ("attempt_count", "3", "column attempt_count of a Run header holds a str"),
        ("deadline_at", None, "column deadline_at of a Run header is NULL"),
        ("state", "sleeping", "a stored Run header is malformed"),
        ("scope", "{not json", "a stored Run header is malformed"),
        ("attempt_count", -1, "a stored Run header is malformed"),
    ],
)
def test_a_malformed_row_is_a_store_error_naming_the_column(
    column: str, value: object, message: str
) -> None:
    row = list(header_row(_header(Scope(tenant="t"))))
    row[HEADER_COLUMNS.index(column)] = value
    with pytest.raises(StoreError, match=f"acme store: {message}"):
        header_from_row(row, source="acme store")


def test_a_row_of_the_wrong_width_is_refused() -> None:
    with pytest.raises(StoreError, match="has 3 columns"):
        header_from_row(("a", "b", "c"))


def _header(scope: Scope) -> RunHeader:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    return RunHeader(
        run_id=RunId("r"),
        scope=scope,
        version_hash=VersionHash("v"),
        state=RunState.RUNNABLE,
        created_at=now,
        deadline_at=now,
    )
