"""A new Run's header and its first record are made together and agree.

The store indexes the header; every read folds the log from ``run_admitted``. If the
two disagreed (another deadline, no parent, a lost continuation), a child would be
found under one parent and report another, or a Run would be aborted at one time and
report another deadline.
"""

from datetime import UTC
from datetime import datetime
from datetime import timedelta

import pytest

from psych_runtime.core.ids import RunId
from psych_runtime.core.ids import VersionHash
from psych_runtime.core.reducer import reduce
from psych_runtime.core.scope import Scope
from psych_runtime.core.state import RunStateView
from psych_runtime.runtime.admitted import admission_records
from psych_runtime.store.port import RunState

NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
ACME = Scope(tenant="acme", principal="ops")
VERSION = VersionHash("a" * 64)


def _parent() -> RunStateView:
    parent = RunStateView(run_id=RunId("run_parent"), scope=ACME)
    parent.delegation_depth = 2
    return parent


CASES = {
    "dispatched": {
        "continues": RunId("run_before"),
        "replay_of": RunId("run_replayed"),
        "replay_from": "step_b",
        "breakpoints": ("step_c",),
        "step_mode": True,
    },
    "child": {"parent": _parent(), "runnable_at": NOW + timedelta(seconds=30)},
}


@pytest.mark.parametrize("extra", CASES.values(), ids=CASES.keys())
def test_the_header_and_the_fold_of_the_first_record_say_the_same(extra: dict) -> None:
    header, admitted = admission_records(
        RunId("run_new"),
        ACME,
        VERSION,
        RunState.RUNNABLE,
        NOW,
        NOW + timedelta(hours=1),
        "key-1",
        input={"message": "hello"},
        trace_context={"traceparent": "00-" + "1" * 32 + "-" + "2" * 16 + "-01"},
        **extra,
    )
    fold = reduce([admitted])

    assert admitted.seq == 1 and admitted.at == header.created_at == NOW
    for field in (
        "run_id",
        "scope",
        "version_hash",
        "deadline_at",
        "idempotency_key",
        "parent_run_id",
        "delegation_depth",
        "continues_run_id",
    ):
        assert getattr(header, field) == getattr(fold, field), field
    assert header.state is RunState.RUNNABLE
    assert header.runnable_at == extra.get("runnable_at")
    assert fold.run_input == {"message": "hello"}
    assert fold.trace_context == admitted.trace_context
    assert fold.replays_run_id == extra.get("replay_of")
    assert fold.replay_from_step == extra.get("replay_from")
    assert fold.breakpoints == extra.get("breakpoints", ())
    assert fold.step_mode is extra.get("step_mode", False)


def test_a_child_sits_one_level_below_its_parent() -> None:
    parent = _parent()
    header, admitted = admission_records(
        RunId("run_child"),
        ACME,
        VERSION,
        RunState.NESTED,
        NOW,
        NOW + timedelta(minutes=5),
        "parent:call_1",
        input={"message": "find it"},
        trace_context={},
        parent=parent,
    )

    assert header.parent_run_id == admitted.parent_run_id == parent.run_id
    assert header.delegation_depth == admitted.delegation_depth == 3
    assert header.state is RunState.NESTED


def test_a_dispatched_run_has_no_parent() -> None:
    header, admitted = admission_records(
        RunId("run_top"),
        ACME,
        VERSION,
        RunState.RUNNABLE,
        NOW,
        NOW + timedelta(minutes=5),
        None,
        input={},
        trace_context={},
    )

    assert header.parent_run_id is None and admitted.parent_run_id is None
    assert header.delegation_depth == admitted.delegation_depth == 0
