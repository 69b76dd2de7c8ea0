"""The item layout: exact instants, order-preserving index keys, lossless headers."""

from datetime import UTC
from datetime import datetime
from datetime import timedelta
from datetime import timezone

from hypothesis import given
from hypothesis import strategies as st

from psych_contract import _data as data
from psych_runtime import RunId
from psych_runtime import Scope
from psych_runtime.adapters import RunHeader
from psych_runtime.adapters import RunState
from psych_runtime.records import WorkerId
from psych_store_dynamo import _rows as it

AWARE = st.datetimes(
    min_value=datetime(1, 1, 2),
    max_value=datetime(9999, 12, 30),
    timezones=st.just(UTC),
)


@given(AWARE)
def test_instants_round_trip_to_the_microsecond(when: datetime) -> None:
    assert it.instant(it.micros(when)) == when


def test_an_instant_in_another_zone_comes_back_as_the_same_moment_in_utc() -> None:
    when = datetime(2030, 5, 6, 7, 8, 9, 123456, tzinfo=timezone(timedelta(hours=5)))
    back = it.instant(it.micros(when))
    assert back == when
    assert back.tzinfo is UTC


@given(AWARE, AWARE)
def test_sortable_keys_sort_like_the_instants(first: datetime, second: datetime) -> None:
    assert (it.sortable(first) < it.sortable(second)) == (first < second)
    assert len(it.sortable(first)) == len(it.sortable(second)) == 18


def test_no_time_sorts_before_every_instant() -> None:
    assert it.sortable(None) < it.sortable(
        datetime(1, 1, 1, tzinfo=UTC) + timedelta(microseconds=1)
    )


def test_before_is_an_exclusive_bound_just_past_the_instant() -> None:
    when = data.at(10)
    run_key = f"{it.sortable(when)}|zzzz-run"
    assert run_key < it.before(when)
    assert f"{it.sortable(when + timedelta(microseconds=1))}|a" > it.before(when)


def test_idempotency_items_of_different_tenants_never_share_a_key() -> None:
    # A naive "k#tenant#key" would map both pairs to "k#a#b#c".
    first = it.idempotency_key("a#b", "c")
    second = it.idempotency_key("a", "b#c")
    assert first != second


def test_a_full_header_round_trips_through_its_item() -> None:
    header = RunHeader(
        run_id=RunId("run-1"),
        scope=Scope(tenant="t", principal="p", labels={"k": "v"}),
        version_hash=data.VERSION_HASH,
        state=RunState.RUNNING,
        created_at=data.at(1),
        deadline_at=data.at(3600.5),
        lease_holder=WorkerId("w"),
        lease_expires_at=data.at(31),
        idempotency_key="key",
        attempt_count=3,
        runnable_at=data.at(2),
        parent_run_id=RunId("parent"),
        delegation_depth=2,
        continues_run_id=RunId("before"),
    )
    item = it.header_item(header, 7)
    assert it.header_of(item) == header
    assert it.number(item, it.HEAD_SEQ) == 7


def test_a_minimal_header_stores_no_empty_attributes() -> None:
    header = data.header()
    item = it.header_item(header, 1)
    for absent in (it.LEASE_HOLDER, it.LEASE_EXPIRES_AT, it.RUNNABLE_AT, it.PARENT_RUN_ID):
        assert absent not in item
    assert it.header_of(item) == header


def test_index_entries_follow_the_state() -> None:
    created, parked = data.at(5), data.at(50)
    assert it.claim_entry(RunState.RUNNABLE, "r", created, None, None) == (
        it.READY,
        f"{it.sortable(created)}|r",
    )
    assert it.claim_entry(RunState.RUNNABLE, "r", created, parked, None) == (
        it.PARKED,
        f"{it.sortable(parked)}|{it.sortable(created)}|r",
    )
    assert it.claim_entry(RunState.RUNNING, "r", None, None, parked) == (
        it.LEASED,
        f"{it.sortable(parked)}|r",
    )
    for state in (RunState.SUSPENDED, RunState.NESTED, RunState.SETTLED):
        assert it.claim_entry(state, "r", created, None, None) is None
    assert it.open_entry(RunState.SETTLED, "r", parked) is None
    assert it.open_entry(RunState.NESTED, "r", parked) == (it.OPEN, f"{it.sortable(parked)}|r")


def test_record_item_size_never_underestimates() -> None:
    body = b'{"type":"abort_requested","reason":"\xc3\xa9"}'
    item = it.record_item("run-\u00e9", 123456789, body)
    exact = sum(len(name) for name in item) + len(it.run_pk("run-\u00e9").encode()) + len(body)
    assert it.record_item_size("run-\u00e9", body) >= exact + len("123456789")
    assert it.item_size(item) >= exact


def test_wire_items_keep_only_string_and_number_attributes() -> None:
    raw = {"a": {"S": "x"}, "b": {"N": "1"}, "c": {"BOOL": True}, "d": "junk", 5: {"S": "y"}}
    assert it.wire_item(raw) == {"a": {"S": "x"}, "b": {"N": "1"}}
    assert it.wire_item(None) is None
    assert it.names_in("#state = :s AND #head_seq < :n", None) == {
        "#state": "state",
        "#head_seq": "head_seq",
    }
