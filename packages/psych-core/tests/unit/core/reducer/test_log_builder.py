"""LogBuilder fills the envelope, stamps turns and attempts, and never validates the log."""

import textwrap
from datetime import UTC
from datetime import datetime
from datetime import timedelta

import pytest

import psych_runtime.testing
from psych_runtime.core.corruption import CorruptLog
from psych_runtime.core.metering import Usage
from psych_runtime.core.records import AbortRequested
from psych_runtime.core.records import QueueKind
from psych_runtime.core.records import RunAdmitted
from psych_runtime.core.records import SuspendReason
from psych_runtime.core.records import ToolCallFinished
from psych_runtime.core.records import ToolOutcome
from psych_runtime.core.records import TurnStarted
from psych_runtime.core.reducer import reduce
from psych_runtime.core.scope import Scope
from psych_runtime.testing import LogBuilder

START = datetime(2026, 1, 1, tzinfo=UTC)


def test_envelope_is_filled_gaplessly() -> None:
    log = LogBuilder().admitted().attempt().turn().model_started().model_finished()
    records = log.build()
    assert [r.seq for r in records] == [1, 2, 3, 4, 5]
    assert [r.at for r in records] == [START + timedelta(seconds=n) for n in range(5)]
    assert {r.run_id for r in records} == {"run_test"}
    assert {r.scope for r in records} == {Scope(tenant="acme")}
    assert [r.attempt_id for r in records] == [None, "att_1", "att_1", "att_1", "att_1"]
    assert log.records == records
    assert log.build() is not log.records


def test_constructor_settings_are_used() -> None:
    scope = Scope(tenant="globex", principal="p")
    log = LogBuilder(run_id="run_9", scope=scope, version_hash="sha256:abc").admitted()
    (record,) = log.build()
    assert isinstance(record, RunAdmitted)
    assert (record.run_id, record.scope, record.version_hash) == ("run_9", scope, "sha256:abc")
    assert record.deadline_at == START + timedelta(hours=1)


def test_attempts_are_numbered_and_stamp_later_records() -> None:
    log = LogBuilder().admitted().attempt().attempt(reclaimed=True).abort()
    records = log.build()
    second = records[2]
    assert second.type == "attempt_started"
    assert (second.worker_id, second.attempt_number, second.reclaimed_expired_lease) == (
        "wrk_2",
        2,
        True,
    )
    assert records[3].attempt_id == "att_2"


def test_turn_bearing_helpers_stamp_the_current_turn_and_never_zero() -> None:
    log = LogBuilder().admitted().attempt().tool_started("c0").turn().turn().model_started()
    records = log.build()
    assert records[2].turn == 1  # before any turn() call
    assert [r.turn for r in records if isinstance(r, TurnStarted)] == [1, 2]
    assert records[-1].turn == 2


def test_helper_defaults() -> None:
    log = (
        LogBuilder()
        .model_finished()
        .model_failed()
        .tool_finished("c1", ToolOutcome.ERROR)
        .tool_finished("c2")
        .suspended()
        .enqueued("e1")
        .compacted(1, 2)
    )
    finished, failed, error, ok, suspended, enqueued, compacted = log.build()
    assert (finished.model, finished.usage, finished.finish_reason, finished.cost) == (
        "gpt-4o",
        Usage(input=10, output=5),
        "stop",
        None,
    )
    assert failed.failure.kind == "http_500"
    assert isinstance(error, ToolCallFinished)
    assert error.failure is not None
    assert error.failure.kind == "tool_error"
    assert ok.failure is None
    assert suspended.reason is SuspendReason.APPROVAL
    assert suspended.expires_at == suspended.at + timedelta(days=1)
    assert enqueued.queue is QueueKind.STEER
    assert (compacted.reason, compacted.replaced_from_seq, compacted.replaced_to_seq) == (
        "threshold",
        1,
        2,
    )


def test_advance_moves_the_clock() -> None:
    log = LogBuilder().admitted().advance(100).abort()
    assert log.build()[1].at == START + timedelta(seconds=101)
    assert log.now == START + timedelta(seconds=102)


@pytest.mark.parametrize(
    "override",
    [{"seq": 9}, {"run_id": "run_other"}, {"scope": Scope(tenant="other")}, {"attempt_id": None}],
)
def test_any_envelope_field_can_be_overridden_to_build_broken_logs(
    override: dict[str, object],
) -> None:
    log = LogBuilder().admitted().attempt().turn(**override)
    record = log.build()[-1]
    for name, value in override.items():
        assert getattr(record, name) == value
    if "attempt_id" not in override:
        with pytest.raises(CorruptLog):
            reduce(log.build())


def test_raw_and_append_write_any_record_unchecked() -> None:
    log = (
        LogBuilder()
        .raw(AbortRequested, reason="first")
        .append(type="run_admitted", version_hash="v", deadline_at=START)
        .append(type="run_admitted", version_hash="v", deadline_at=START)
    )
    first, second, third = log.build()
    assert isinstance(first, AbortRequested)
    assert first.reason == "first"
    assert (second.seq, third.seq) == (2, 3)
    with pytest.raises(CorruptLog):
        reduce(log.build())


def test_tasks_and_components() -> None:
    log = LogBuilder().tasks("a", "b").component(kind="chart")
    tasks, component = log.build()
    assert [t.title for t in tasks.tasks] == ["a", "b"]
    assert component.component.kind == "chart"


def test_the_package_docstring_example_runs() -> None:
    doc = psych_runtime.testing.__doc__
    assert doc is not None
    example = textwrap.dedent(doc.split("::", 1)[1])
    exec(compile(example, "psych_runtime.testing docstring", "exec"), {})
