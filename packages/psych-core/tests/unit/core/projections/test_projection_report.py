from datetime import datetime
from datetime import timedelta
from decimal import Decimal

import pytest

from psych_runtime.core.corruption import CorruptionReason
from psych_runtime.core.corruption import CorruptLog
from psych_runtime.core.metering import Cost
from psych_runtime.core.metering import CostSource
from psych_runtime.core.metering import Usage
from psych_runtime.core.projections.report import build_report
from psych_runtime.core.records import ModelTimings
from psych_runtime.core.records import SuspendReason
from psych_runtime.core.records import TerminalState
from psych_runtime.core.records import ToolFailure
from psych_runtime.core.records import ToolOutcome
from psych_runtime.testing.log_builder import LOG_START
from psych_runtime.testing.log_builder import LogBuilder

from .conftest import asking_for


def at(seconds: float) -> datetime:
    return LOG_START + timedelta(seconds=seconds)


def running() -> LogBuilder:
    return LogBuilder().admitted().attempt()


# --- pairing ---------------------------------------------------------------------------


def test_tool_calls_pair_by_id_and_a_dangling_call_has_no_outcome() -> None:
    log = (
        asking_for(running(), "c1", "c2")
        .tool_started("c1", tool="lookup", arguments={"id": 1}, safe_to_retry=True)
        .tool_started("c2", tool="charge", interruptible=False)
        .tool_finished("c1", result={"ok": True}, duration_seconds=0.25)
    )
    report = build_report(log.build())
    c1, c2 = report.tool_calls
    assert (c1.call_id, c1.tool, c1.outcome, c1.result) == (
        "c1",
        "lookup",
        ToolOutcome.OK,
        {"ok": True},
    )
    assert c1.duration_seconds == 0.25
    assert c1.arguments == {"id": 1}
    assert c1.safe_to_retry
    assert c1.finished_at is not None
    assert (c2.call_id, c2.outcome, c2.duration_seconds, c2.finished_at) == ("c2", None, None, None)
    assert not c2.interruptible
    assert report.totals.tool_calls == 1


def test_failed_and_retried_model_call_and_a_dangling_one() -> None:
    log = (
        running()
        .turn()
        .model_started(system_prompt="be brief", tool_names=("lookup",))
        .model_failed(failure=ToolFailure(kind="http_503", transient=True), will_retry=True)
        .turn()
        .model_started(system_prompt="be brief, v2")
        .attempt(reclaimed=True)  # the Worker died mid-call
        .turn()
        .model_started(system_prompt="")
        .model_finished(text="done", usage=Usage(input=7, output=3))
        .settled()
    )
    report = build_report(log.build())
    failed, dangling, answered = report.model_calls
    assert failed.turn == 1
    assert failed.failure is not None
    assert failed.failure.kind == "http_503"
    assert failed.will_retry
    assert failed.usage is None
    assert failed.finished_at is not None
    assert failed.tool_names == ("lookup",)
    assert not failed.dangling
    assert dangling.turn == 2
    assert dangling.dangling
    assert dangling.finished_at is None
    assert answered.turn == 3
    assert answered.usage == Usage(input=7, output=3)
    assert answered.text == "done"
    assert answered.finish_reason == "stop"
    assert not answered.dangling
    assert report.totals.model_calls == 1
    assert report.totals.failed_model_calls == 1
    # the last non-empty prompt sent, even though a later call sent none
    assert report.system_prompt == "be brief, v2"


def test_model_call_carries_its_turns_step() -> None:
    log = running().step_started("s1", kind="agent").turn(step_id="s1").model_started()
    (call,) = build_report(log.build()).model_calls
    assert call.step_id == "s1"


def test_steps_have_one_row_per_attempt() -> None:
    failure = ToolFailure(kind="timeout", message="slow")
    log = (
        running()
        .step_started("s1", name="fetch", input={"url": "u"})
        .step_completed("s1", failure=failure, will_retry=True, retry_at=at(60))
        .step_started("s1", name="fetch", attempt_number=2, input={"url": "u"})
        .step_completed("s1", output={"body": "b"}, child_run_id="run_child")
        .step_started("s2", name="never_finished")
    )
    first, second, third = build_report(log.build()).steps
    assert (first.attempt_number, first.failure, first.will_retry) == (1, failure, True)
    assert (second.attempt_number, second.output, second.will_retry) == (2, {"body": "b"}, False)
    assert second.child_run_id == "run_child"
    assert second.completed
    assert second.completed_at is not None
    assert (third.step_id, third.completed, third.completed_at) == ("s2", False, None)


def test_report_carries_ending_content_and_identity() -> None:
    failure = ToolFailure(kind="budget_exhausted", message="out of turns")
    log = (
        LogBuilder()
        .admitted(continues_run_id="run_prev")
        .attempt()
        .tasks("one")
        .component(kind="chart")
        .settled(TerminalState.FORCE_SETTLED, failure=failure, orphaned_attempt_id="att_1")
    )
    records = log.build()
    report = build_report(records, spec_name="support-agent")
    assert report.spec_name == "support-agent"
    assert report.terminal_state is TerminalState.FORCE_SETTLED
    assert report.failure == failure
    assert report.orphaned_attempt_id == "att_1"
    assert report.admitted_at == records[0].at
    assert report.settled_at == records[-1].at
    assert report.continues_run_id == "run_prev"
    assert [t.title for t in report.tasks] == ["one"]
    assert [c.kind for c in report.components] == ["chart"]
    assert report.version_hash == "sha256:test"


# --- totals ----------------------------------------------------------------------------


def priced(amount: str, **parts: str) -> Cost:
    return Cost.model_validate(
        {"amount": Decimal(amount), "model": "gpt-4o"}
        | {name: Decimal(value) for name, value in parts.items()}
    )


def test_hand_computed_totals_with_an_unpriced_call() -> None:
    # Price table used to work these out by hand, per million tokens:
    # input 2.50, output 10.00, cache read 1.25, cache write 3.125.
    # Call 1: 1000 in, 200 out, 4000 cache write
    #   = 0.0025 + 0.002 + 0.0125 = 0.017
    # Call 2: 300 in, 150 out, 4000 cache read
    #   = 0.00075 + 0.0015 + 0.005 = 0.00725
    # Call 3: a model with no known price: cost None.
    call_1 = priced(
        "0.017",
        input_amount="0.0025",
        output_amount="0.002",
        cache_read_amount="0",
        cache_write_amount="0.0125",
    )
    call_2 = priced(
        "0.00725",
        input_amount="0.00075",
        output_amount="0.0015",
        cache_read_amount="0.005",
        cache_write_amount="0",
    )
    log = (
        running()
        .turn()
        .model_started()
        .model_finished(usage=Usage(input=1000, output=200, cache_write=4000), cost=call_1)
        .turn()
        .model_started()
        .model_finished(usage=Usage(input=300, output=150, cache_read=4000), cost=call_2)
        .turn()
        .model_started(model="mystery-model")
        .model_finished(
            model="mystery-model",
            usage=Usage(input=500, output=50, cache_read=4000, cache_write=100),
            cost=None,
        )
        .settled()
    )
    totals = build_report(log.build()).totals
    assert totals.usage == Usage(input=1800, output=400, cache_read=8000, cache_write=4100)
    assert totals.cost is not None
    assert totals.cost.amount == Decimal("0.02425")
    assert totals.cost.input_amount == Decimal("0.00325")
    assert totals.cost.output_amount == Decimal("0.0035")
    assert totals.cost.cache_read_amount == Decimal("0.005")
    assert totals.cost.cache_write_amount == Decimal("0.0125")
    assert totals.cost.currency == "USD"
    assert totals.unpriced_model_calls == 1
    assert totals.cost_is_incomplete
    assert totals.usage_source == "provider"
    assert totals.model_calls == 3
    assert totals.provider_reported_costs == 0


def test_cost_is_none_when_nothing_was_priced() -> None:
    log = running().turn().model_started().model_finished(cost=None)
    totals = build_report(log.build()).totals
    assert totals.cost is None
    assert totals.unpriced_model_calls == 1
    assert totals.cost_is_incomplete


def test_usage_source_partial_and_unknown() -> None:
    one_reported = (
        running()
        .turn()
        .model_started()
        .model_finished()
        .turn()
        .model_started()
        .model_finished(usage=Usage(), usage_reported=False)
    )
    assert build_report(one_reported.build()).totals.usage_source == "partial"
    none_reported = running().turn().model_started().model_finished(usage_reported=False)
    totals = build_report(none_reported.build()).totals
    assert totals.usage_source == "unknown"
    assert totals.unreported_usage_calls == 1


def test_provider_reported_costs_are_counted() -> None:
    provider = Cost(amount=Decimal("0.01"), source=CostSource.PROVIDER)
    log = running().turn().model_started().model_finished(cost=provider)
    assert build_report(log.build()).totals.provider_reported_costs == 1


def test_two_currencies_are_refused() -> None:
    log = (
        running()
        .turn()
        .model_started()
        .model_finished(cost=Cost(amount=Decimal("1")))
        .turn()
        .model_started()
        .model_finished(cost=Cost(amount=Decimal("1"), currency="EUR"))
    )
    with pytest.raises(CorruptLog) as caught:
        build_report(log.build())
    assert caught.value.reason is CorruptionReason.INCONSISTENT_COST


def test_a_corrupt_log_is_not_reported() -> None:
    log = running().tool_finished("never_started")
    with pytest.raises(CorruptLog) as caught:
        build_report(log.build())
    assert caught.value.reason is CorruptionReason.TOOL_CALL_MISMATCH


# --- compactions -----------------------------------------------------------------------


def test_compactions_are_reported_and_metered_into_the_totals() -> None:
    log = (
        running()
        .turn()
        .model_started()
        .model_finished(usage=Usage(input=100, output=10), cost=priced("0.5"))
    )
    log.compacted(
        3,
        len(log.records),
        summary="short version",
        model="gpt-4o-mini",
        usage=Usage(input=900, output=40),
        usage_reported=True,
        cost=priced("0.125"),
        timings=ModelTimings(stream_duration_seconds=1.5),
    )
    report = build_report(log.build())
    (compaction,) = report.compactions
    assert compaction.seq == len(log.records)
    assert (compaction.replaced_from_seq, compaction.replaced_to_seq) == (3, 5)
    assert compaction.summary == "short version"
    assert compaction.model == "gpt-4o-mini"
    assert compaction.usage == Usage(input=900, output=40)
    assert compaction.cost == priced("0.125")
    totals = report.totals
    assert totals.compaction_calls == 1
    assert totals.usage == Usage(input=1000, output=50)
    assert totals.cost is not None
    assert totals.cost.amount == Decimal("0.625")
    assert totals.latency.compaction_seconds == 1.5


def test_an_unpriced_summarising_call_makes_the_cost_incomplete() -> None:
    log = running().turn().model_started().model_finished(cost=priced("0.5"))
    log.compacted(3, 5, model="gpt-4o-mini", usage_reported=True, cost=None)
    totals = build_report(log.build()).totals
    assert totals.cost is not None
    assert totals.cost.amount == Decimal("0.5")
    assert totals.unpriced_model_calls == 1
    assert totals.cost_is_incomplete


# --- latency ---------------------------------------------------------------------------


def test_latency_parts_add_up_to_the_wall_clock() -> None:
    log = LogBuilder()
    log.admitted(at=at(0))
    log.attempt(at=at(5))  # queued for 5 s
    log.turn(at=at(6)).model_started(at=at(6))
    log.model_finished(
        at=at(9),
        tool_calls=("c1", "prog"),
        finish_reason="tool_calls",
        timings=ModelTimings(queue_wait_seconds=0.5, stream_duration_seconds=2.0),
    )  # model 2.5
    log.tool_started("c1", at=at(9)).tool_finished("c1", at=at(11), duration_seconds=1.75)
    log.tool_started("prog", tool="run_code", at=at(11))
    log.tool_started("inner", parent_call_id="prog", at=at(11.5))
    # the program's own binding call runs inside the program's duration
    log.tool_finished("inner", at=at(12), duration_seconds=0.5)
    log.tool_finished("prog", at=at(13), duration_seconds=2.0)  # tools 3.75
    log.turn(at=at(13)).model_started(at=at(13))
    log.model_failed(at=at(16), will_retry=True)  # model +3 from its timestamps
    log.compacted(
        3, 8, at=at(17), timings=ModelTimings(queue_wait_seconds=0.25, stream_duration_seconds=1.0)
    )  # compaction 1.25
    log.suspended(SuspendReason.EXTERNAL, at=at(20))
    log.resumed(at=at(50))  # suspended 30
    log.attempt(at=at(52)).turn(at=at(52)).model_started(at=at(52))
    log.model_finished(at=at(54), timings=ModelTimings(stream_duration_seconds=1.5))  # model +1.5
    log.suspended(SuspendReason.QUESTION, at=at(60), question="still there?")
    log.settled(TerminalState.ABANDONED, at=at(100))  # ended parked: suspended +40

    latency = build_report(log.build()).totals.latency
    assert latency.wall_clock_seconds == 100.0
    assert latency.queue_seconds == 5.0
    assert latency.model_seconds == 2.5 + 3.0 + 1.5
    assert latency.tool_seconds == 1.75 + 2.0
    assert latency.compaction_seconds == 1.25
    assert latency.suspended_seconds == 30.0 + 40.0
    assert latency.unaccounted_seconds == 100.0 - (7.0 + 3.75 + 1.25 + 5.0 + 70.0)
    assert latency.accounted_seconds + latency.unaccounted_seconds == latency.wall_clock_seconds


def test_a_run_never_picked_up_spent_its_time_queued() -> None:
    log = LogBuilder().admitted(at=at(0)).abort(at=at(10)).settled(TerminalState.ABORTED, at=at(12))
    latency = build_report(log.build()).totals.latency
    assert latency.wall_clock_seconds == 12.0
    assert latency.queue_seconds == 12.0
    assert latency.unaccounted_seconds == 0.0


def test_unaccounted_time_is_not_clamped() -> None:
    log = LogBuilder().admitted(at=at(0)).attempt(at=at(1)).turn(at=at(1))
    log.model_started(at=at(1))
    # the provider's timings claim more time than the log's clock saw
    log.model_finished(at=at(2), timings=ModelTimings(stream_duration_seconds=4.0))
    latency = build_report(log.build()).totals.latency
    assert latency.wall_clock_seconds == 2.0
    assert latency.unaccounted_seconds == -3.0


# --- failure streaks -------------------------------------------------------------------


def test_failure_streak_trips_once_per_crossing() -> None:
    log = running().turn()
    n = 0

    def call(tool: str, outcome: ToolOutcome) -> None:
        nonlocal n
        n += 1
        log.tool_started(f"c{n}", tool=tool).tool_finished(f"c{n}", outcome=outcome)

    call("search", ToolOutcome.ERROR)  # c1: 1
    call("search", ToolOutcome.ABORTED)  # c2: aborted changes nothing
    call("other", ToolOutcome.ERROR)  # c3: another tool's streak
    call("search", ToolOutcome.UNKNOWN)  # c4: 2
    call("search", ToolOutcome.ERROR)  # c5: 3 -> trip
    call("search", ToolOutcome.ERROR)  # c6: 4, no second trip
    call("search", ToolOutcome.OK)  # c7: reset
    call("search", ToolOutcome.ERROR)  # c8: 1
    call("search", ToolOutcome.ERROR)  # c9: 2
    call("search", ToolOutcome.ERROR)  # c10: 3 -> trip again
    call("other", ToolOutcome.ERROR)  # c11: other at 2, below threshold

    trips = build_report(log.build(), failure_streak_threshold=3).failure_streak_trips
    assert [(t.tool, t.call_id, t.streak, t.threshold) for t in trips] == [
        ("search", "c5", 3, 3),
        ("search", "c10", 3, 3),
    ]
    assert trips[0].at < trips[1].at
    # a lower threshold from the Version changes where the trips happen
    low = build_report(log.build(), failure_streak_threshold=2).failure_streak_trips
    assert [(t.tool, t.call_id) for t in low] == [
        ("search", "c4"),
        ("search", "c9"),
        ("other", "c11"),
    ]


def test_failure_streak_threshold_must_be_positive() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        build_report(running().build(), failure_streak_threshold=0)


# --- suspensions -----------------------------------------------------------------------


def test_suspensions_pair_with_their_resumes() -> None:
    schema = {"type": "object"}
    log = (
        asking_for(running(), "c1")
        .tool_started("c1", tool="delete_account")
        .suspended(SuspendReason.APPROVAL, pending_call_id="c1", question="Delete?")
        .resumed(approved=True, resumed_by="alice", payload={"note": "fine"})
        .attempt()
        .suspended(SuspendReason.EXTERNAL, step_id="s1", event="signed", payload_schema=schema)
    )
    first, second = build_report(log.build()).suspensions
    assert first.reason is SuspendReason.APPROVAL
    assert (first.pending_call_id, first.question) == ("c1", "Delete?")
    assert (first.approved, first.resumed_by, first.payload) == (True, "alice", {"note": "fine"})
    assert first.resumed_at is not None
    assert first.resumed_at > first.suspended_at
    assert second.reason is SuspendReason.EXTERNAL
    assert (second.step_id, second.event, second.payload_schema) == ("s1", "signed", schema)
    assert (second.resumed_at, second.approved, second.payload) == (None, None, None)


# --- subagents -------------------------------------------------------------------------


def test_subagents_and_subtree_totals() -> None:
    log = (
        running()
        .turn()
        .model_started()
        .model_finished(
            usage=Usage(input=100, output=20),
            cost=priced("0.25"),
            tool_calls=("sp1", "sp2"),
            finish_reason="tool_calls",
        )
        .spawned(
            "run_r",
            name="researcher",
            call_id="sp1",
            purpose="find sources",
            task="look up X",
            tools=("search",),
            model="gpt-4o-mini",
            delegation_depth=1,
        )
        .spawned("run_w", name="writer", call_id="sp2")
        .messaged_child("run_r", name="researcher")
        .messaged_child("run_r", name="researcher")
        .child_finished(
            "run_r",
            name="researcher",
            output={"text": "3 sources"},
            usage=Usage(input=40, output=8, cache_read=100),
            cost=priced("0.125"),
            unpriced_model_calls=1,
            unreported_usage_calls=2,
        )
    )
    report = build_report(log.build())
    researcher, writer = report.subagents
    assert researcher.name == "researcher"
    assert researcher.call_id == "sp1"
    assert (researcher.purpose, researcher.task, researcher.tools) == (
        "find sources",
        "look up X",
        ("search",),
    )
    assert researcher.delegation_depth == 1
    assert researcher.messages_sent == 2
    assert researcher.terminal_state is TerminalState.COMPLETED
    assert researcher.output == {"text": "3 sources"}
    assert researcher.finished_at is not None
    assert researcher.cost == priced("0.125")
    assert researcher.report is None
    assert (writer.terminal_state, writer.finished_at, writer.messages_sent) == (None, None, 0)

    subtree = report.subtree
    assert subtree.runs == 2  # this Run plus the one child that finished
    assert not subtree.complete  # the writer is still running
    assert subtree.cost_is_incomplete
    assert subtree.usage == Usage(input=140, output=28, cache_read=100)
    assert subtree.cost is not None
    assert subtree.cost.amount == Decimal("0.375")
    assert subtree.unpriced_model_calls == 1
    assert subtree.unreported_usage_calls == 2
    # the Run's own totals leave the children out
    assert report.totals.usage == Usage(input=100, output=20)
    assert report.totals.cost is not None
    assert report.totals.cost.amount == Decimal("0.25")
    assert not report.totals.cost_is_incomplete


def test_subtree_is_complete_once_every_child_finished() -> None:
    log = running().spawned("run_c").child_finished("run_c", cost=priced("1"))
    subtree = build_report(log.build()).subtree
    assert subtree.complete
    assert subtree.runs == 2
    assert not subtree.cost_is_incomplete
    assert subtree.cost is not None
    assert subtree.cost.amount == Decimal("1")


def test_subtree_refuses_a_child_priced_in_another_currency() -> None:
    log = (
        running()
        .turn()
        .model_started()
        .model_finished(cost=priced("1"))
        .spawned("run_c")
        .child_finished("run_c", cost=Cost(amount=Decimal("1"), currency="EUR"))
    )
    records = log.build()
    with pytest.raises(CorruptLog) as caught:
        build_report(records)
    assert caught.value.reason is CorruptionReason.INCONSISTENT_COST
    assert caught.value.seq == records[-1].seq


def test_report_round_trips_through_json() -> None:
    log = (
        running()
        .turn()
        .model_started(system_prompt="sp")
        .model_finished(cost=priced("0.1"), tool_calls=("c1",), finish_reason="tool_calls")
        .tool_started("c1")
        .tool_finished("c1", result=[1, 2])
        .step_started("s1")
        .spawned("run_c")
        .settled()
    )
    report = build_report(log.build())
    assert type(report).model_validate_json(report.model_dump_json()) == report
