"""What each record does to the folded state."""

import hashlib
import json
from dataclasses import fields
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from decimal import Decimal

import pytest

from psych_runtime.core.corruption import CorruptionReason
from psych_runtime.core.corruption import CorruptLog
from psych_runtime.core.digest import call_digest
from psych_runtime.core.digest import json_digest
from psych_runtime.core.metering import Cost
from psych_runtime.core.metering import CostSource
from psych_runtime.core.metering import Usage
from psych_runtime.core.records import AskedQuestion
from psych_runtime.core.records import Component
from psych_runtime.core.records import QueueKind
from psych_runtime.core.records import ResultAttachment
from psych_runtime.core.records import SuspendReason
from psych_runtime.core.records import Task
from psych_runtime.core.records import TerminalState
from psych_runtime.core.records import ToolFailure
from psych_runtime.core.records import ToolOutcome
from psych_runtime.core.reducer import fold_into
from psych_runtime.core.reducer import reduce
from psych_runtime.core.state import Lifecycle
from psych_runtime.core.state import RunStateView
from psych_runtime.core.state import StepResume
from psych_runtime.testing import LogBuilder

from .shared import PINNED
from .shared import base
from .shared import in_turn

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


# --- failure streaks ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("endings", "streaks"),
    [
        pytest.param(
            [
                ("refund", ToolOutcome.ERROR),
                ("refund", ToolOutcome.UNKNOWN),
                ("lookup", ToolOutcome.ERROR),
            ],
            {"refund": 2, "lookup": 1},
            id="errors-and-unknowns-count-per-tool",
        ),
        pytest.param(
            [("refund", ToolOutcome.ERROR), ("refund", ToolOutcome.ABORTED)],
            {"refund": 1},
            id="an-aborted-call-neither-breaks-nor-extends-a-streak",
        ),
        pytest.param(
            [
                ("refund", ToolOutcome.ERROR),
                ("lookup", ToolOutcome.ERROR),
                ("refund", ToolOutcome.OK),
            ],
            {"lookup": 1},
            id="a-success-clears-only-its-own-tools-streak",
        ),
    ],
)
def test_failure_streaks_per_tool(
    endings: list[tuple[str, ToolOutcome]], streaks: dict[str, int]
) -> None:
    log = in_turn()
    for number, (tool, outcome) in enumerate(endings, start=1):
        log.tool_started(f"c{number}", tool=tool).tool_finished(f"c{number}", outcome)
    assert reduce(log.build()).failure_streaks == streaks


def test_failure_streak_survives_reclaim_and_suspension() -> None:
    log = (
        in_turn()
        .tool_started("c1")
        .tool_finished("c1", ToolOutcome.ERROR)
        .tool_started("c2")
        .attempt(reclaimed=True)
        .tool_finished("c2", ToolOutcome.UNKNOWN)
        .turn()
        .tool_started("c3")
        .suspended(SuspendReason.APPROVAL, pending_call_id="c3")
        .resumed(approved=False)
        .attempt()
        .tool_finished("c3", ToolOutcome.ERROR, failure=ToolFailure(kind="denied"))
    )
    assert reduce(log.build()).failure_streaks == {"refund": 3}


# --- repeat tally -------------------------------------------------------------------------


def expected_digest(value: object) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def repeated(log: LogBuilder, call_id: str, arguments: dict[str, object], **finish: object) -> None:
    log.tool_started(call_id, tool="lookup", arguments=arguments).tool_finished(call_id, **finish)  # type: ignore[arg-type]


def test_repeat_tally_counts_identical_answers_to_identical_calls() -> None:
    log = in_turn()
    repeated(log, "c1", {"order": "A", "full": True}, result={"status": "shipped"})
    repeated(log, "c2", {"full": True, "order": "A"}, result={"status": "shipped"})
    repeated(log, "c3", {"order": "A", "full": True}, result={"status": "shipped"})
    tallies = reduce(log.build()).repeat_counts
    assert len(tallies) == 1
    (tally,) = tallies.values()
    assert tally.count == 3
    (key,) = tallies
    assert len(key) == 16
    assert int(key, 16) >= 0
    assert len(tally.result_digest) == 16


def test_repeat_tally_digest_is_a_truncated_sha256_of_canonical_json() -> None:
    log = in_turn()
    repeated(log, "c1", {"order": "A"}, result={"b": 1, "a": 2})
    (tally,) = reduce(log.build()).repeat_counts.values()
    # the answer digest covers the result in canonical form: same text in any key order
    other = in_turn()
    repeated(other, "c1", {"order": "A"}, result={"a": 2, "b": 1})
    assert reduce(other.build()).repeat_counts == reduce(log.build()).repeat_counts
    assert all(ch in "0123456789abcdef" for ch in tally.result_digest)


def test_a_different_answer_restarts_the_tally() -> None:
    log = in_turn()
    repeated(log, "c1", {"order": "A"}, result={"status": "pending"})
    repeated(log, "c2", {"order": "A"}, result={"status": "pending"})
    repeated(log, "c3", {"order": "A"}, result={"status": "shipped"})
    (tally,) = reduce(log.build()).repeat_counts.values()
    assert tally.count == 1


def test_different_arguments_are_tallied_apart_and_failures_do_not_count() -> None:
    log = in_turn()
    repeated(log, "c1", {"order": "A"}, result=1)
    repeated(log, "c2", {"order": "B"}, result=1)
    repeated(log, "c3", {"order": "A"}, outcome=ToolOutcome.ERROR)
    repeated(log, "c4", {"order": "A"}, result=1)
    counts = sorted(t.count for t in reduce(log.build()).repeat_counts.values())
    assert counts == [1, 2]


def test_offloaded_results_are_compared_by_blob_key() -> None:
    log = in_turn()
    blob = {"result_blob_key": "blob/1", "result_content_type": "application/json"}
    repeated(log, "c1", {"q": 1}, **blob)
    repeated(log, "c2", {"q": 1}, **blob)
    (tally,) = reduce(log.build()).repeat_counts.values()
    assert tally.count == 2
    repeated(log, "c3", {"q": 1}, result_blob_key="blob/2", result_content_type="text/plain")
    (tally,) = reduce(log.build()).repeat_counts.values()
    assert tally.count == 1


def test_repeat_tally_is_independent_of_the_call_ids() -> None:
    one = in_turn()
    repeated(one, "x1", {"q": 1}, result="same")
    two = in_turn()
    repeated(two, "y9", {"q": 1}, result="same")
    assert reduce(one.build()).repeat_counts == reduce(two.build()).repeat_counts
    different_tool = in_turn().tool_started("x1", tool="other", arguments={"q": 1})
    different_tool.tool_finished("x1", result="same")
    assert reduce(different_tool.build()).repeat_counts != reduce(one.build()).repeat_counts


def test_the_runtime_can_look_up_a_call_it_is_about_to_make() -> None:
    log = in_turn()
    repeated(log, "c1", {"order": "A"}, result="same")
    assert call_digest("lookup", {"order": "A"}) in reduce(log.build()).repeat_counts
    assert call_digest("lookup", {"order": "B"}) not in reduce(log.build()).repeat_counts


@pytest.mark.parametrize(
    "value", [{"b": [1, 2], "a": {"y": None, "x": "é"}}, "text", 3, None, {"when": T0}]
)
def test_json_digest_is_a_truncated_sha256_of_sorted_compact_json(value: object) -> None:
    assert json_digest(value) == expected_digest(value)


# --- suspension ---------------------------------------------------------------------------


def test_suspended_seconds_sum_each_pair_and_extend_the_deadline() -> None:
    log = (
        LogBuilder()
        .admitted(at=at(0), deadline_at=at(3600))
        .attempt(at=at(1))
        .suspended(SuspendReason.EXTERNAL, at=at(10))
        .resumed(at=at(70))
        .attempt(at=at(71))
        .suspended(SuspendReason.TIMER, at=at(100))
        .resumed(at=at(100.5))
    )
    state = reduce(log.build())
    assert state.suspended_seconds == pytest.approx(60.5)
    assert state.effective_deadline_at == at(3660.5)
    assert state.deadline_at == at(3600)


def test_a_resume_stamped_before_its_suspension_adds_nothing() -> None:
    log = (
        LogBuilder()
        .admitted(at=at(0), deadline_at=at(3600))
        .suspended(SuspendReason.EXTERNAL, at=at(50))
        .resumed(at=at(20))
    )
    state = reduce(log.build())
    assert state.suspended_seconds == 0.0
    assert state.effective_deadline_at == at(3600)


def test_an_open_suspension_does_not_extend_the_deadline_yet() -> None:
    log = LogBuilder().admitted(deadline_at=at(100)).suspended(SuspendReason.EXTERNAL)
    assert reduce(log.advance(500).build()).effective_deadline_at == at(100)


def test_suspension_fields_are_recorded_and_pending_call_resolved() -> None:
    question = AskedQuestion(question="Refund the full amount?")
    log = (
        in_turn()
        .tool_started("c1", arguments={"amount": 40})
        .suspended(
            SuspendReason.APPROVAL,
            pending_call_id="c1",
            question="Refund 40?",
            questions=(question,),
            expires_at=at(999),
            payload_schema={"type": "object"},
        )
    )
    state = reduce(log.build())
    assert state.suspended
    assert state.lifecycle is Lifecycle.WAITING
    assert not state.is_runnable
    assert state.suspend_reason is SuspendReason.APPROVAL
    assert state.suspend_expires_at == at(999)
    assert state.suspended_at == log.records[-1].at
    assert state.suspend_question == "Refund 40?"
    assert state.suspend_questions == (question,)
    assert state.suspend_payload_schema == {"type": "object"}
    assert state.pending_call is not None
    assert state.pending_call.arguments == {"amount": 40}
    assert not state.turn_open


def test_resume_clears_the_suspension_and_records_the_decision() -> None:
    log = (
        in_turn()
        .tool_started("c1")
        .suspended(SuspendReason.APPROVAL, pending_call_id="c1", question="ok?")
        .resumed(approved=True, payload={"note": "go ahead"}, resumed_by="alice")
    )
    state = reduce(log.build())
    assert not state.suspended
    assert state.is_runnable
    assert state.resumed_since_attempt
    assert state.approval_decisions == {"c1": True}
    assert state.resume_payloads == {"c1": {"note": "go ahead"}}
    cleared = RunStateView(run_id=state.run_id, scope=state.scope)
    for name in (
        "suspend_reason",
        "suspend_expires_at",
        "suspended_at",
        "pending_approval_call_id",
        "suspend_question",
        "suspend_questions",
        "suspended_step_id",
        "suspended_step_name",
        "suspend_event",
        "suspend_wake_at",
        "suspend_payload_schema",
    ):
        assert getattr(state, name) == getattr(cleared, name), name
    assert state.pending_call is None
    assert reduce(log.attempt().build()).resumed_since_attempt is False


def test_a_question_answer_is_kept_without_an_approval_decision() -> None:
    log = (
        in_turn()
        .tool_started("c1", tool="ask_user")
        .suspended(SuspendReason.QUESTION, pending_call_id="c1")
        .resumed(payload={"answer": "blue"})
    )
    state = reduce(log.build())
    assert state.resume_payloads == {"c1": {"answer": "blue"}}
    assert state.approval_decisions == {}


def test_step_suspensions_collect_their_answers_in_order() -> None:
    log = (
        base()
        .step_started("s1", kind="wait")
        .suspended(SuspendReason.EXTERNAL, step_id="s1", step_name="wait", event="paid")
    )
    waiting = reduce(log.build())
    assert (waiting.suspended_step_id, waiting.suspended_step_name, waiting.suspend_event) == (
        "s1",
        "wait",
        "paid",
    )
    log.resumed(payload={"n": 1}).suspended(SuspendReason.APPROVAL, step_id="s1")
    log.resumed(approved=False)
    state = reduce(log.build())
    assert state.step_resumes == {
        "s1": [
            StepResume(reason=SuspendReason.EXTERNAL, payload={"n": 1}, approved=None, seq=5),
            StepResume(reason=SuspendReason.APPROVAL, payload={}, approved=False, seq=7),
        ]
    }


@pytest.mark.parametrize(
    ("payload", "expected"),
    [({"step_mode": True}, True), ({"step_mode": "yes"}, False), ({}, False)],
)
def test_a_breakpoint_resume_can_switch_step_mode(
    payload: dict[str, object], expected: bool
) -> None:
    log = base().suspended(SuspendReason.BREAKPOINT, step_id="s1").resumed(payload=payload)
    assert reduce(log.build()).step_mode is expected


def test_only_breakpoint_resumes_switch_step_mode() -> None:
    log = base().suspended(SuspendReason.EXTERNAL).resumed(payload={"step_mode": True})
    assert reduce(log.build()).step_mode is False
    log = LogBuilder().admitted(step_mode=True).suspended(SuspendReason.BREAKPOINT)
    assert reduce(log.resumed(payload={"step_mode": False}).build()).step_mode is False


# --- turns, attempts, model calls ---------------------------------------------------------


def test_a_new_attempt_closes_a_turn_left_open_by_a_crash() -> None:
    log = in_turn().model_started()
    state = reduce(log.build())
    assert state.turn_open
    assert state.model_call_open
    state = reduce(log.attempt(reclaimed=True).build())
    assert not state.turn_open
    assert not state.model_call_open
    assert state.attempt_count == 2
    assert state.current_attempt == "att_2"
    # the next turn is numbered on from the crashed one
    assert reduce(log.turn().build()).turn == 2


def test_settling_closes_the_turn() -> None:
    state = reduce(in_turn().model_started().settled(TerminalState.FAILED).build())
    assert not state.turn_open
    assert not state.model_call_open


def test_tool_calls_and_handles() -> None:
    attachment = ResultAttachment(
        name="stdout", handle="h-out", data=b"hi", size_bytes=2, observed_bytes=2
    )
    hidden = ResultAttachment(name="stderr", handle="h-err", data=b"", readable=False)
    log = (
        in_turn()
        .tool_started("c1", tool="run_code", arguments={"code": "1"}, interruptible=False)
        .tool_finished(
            "c1",
            result={"v": 1},
            result_handle="h-res",
            preview="{'v': 1}",
            duration_seconds=1.5,
            attachments=(attachment, hidden),
        )
        .tool_started("c2", safe_to_retry=True, step_id="s1")
    )
    state = reduce(log.build())
    assert state.result_handles == {"h-res": "c1", "h-out": "c1"}
    (result,) = state.tool_results
    assert (result.call_id, result.tool, result.outcome, result.result) == (
        "c1",
        "run_code",
        ToolOutcome.OK,
        {"v": 1},
    )
    assert (result.duration_seconds, result.preview, result.turn) == (1.5, "{'v': 1}", 1)
    assert result.attachments == (attachment, hidden)
    assert state.has_dangling_tool_calls
    (open_call,) = state.open_tool_calls.values()
    assert (open_call.call_id, open_call.safe_to_retry, open_call.step_id) == ("c2", True, "s1")
    assert open_call.started_at == log.records[-1].at


def test_program_issued_calls_are_accounted_per_program() -> None:
    log = (
        in_turn()
        .tool_started("p1", tool="run_code")
        .tool_started("b1", tool="lookup", parent_call_id="p1")
        .tool_finished("b1", result="x", result_bytes=100)
        .tool_started("b2", tool="lookup", parent_call_id="p1")
        .tool_finished("b2", result="y", result_bytes=50)
        .tool_finished("p1", result=None)
        .model_started()
        .model_finished()
        .turn()
        .tool_started("p2", tool="run_code")
        .tool_started("b3", tool="lookup", parent_call_id="p2")
    )
    state = reduce(log.build())
    assert state.program_call_ids == {"p1", "p2"}
    assert state.program_binding_call_ids == {"b1", "b2", "b3"}
    assert state.program_tool_calls == 3
    assert state.program_preserved_bytes == {"p1": 150}


# --- steps --------------------------------------------------------------------------------


def test_step_attempts_are_all_kept_and_the_latest_is_current() -> None:
    failure = ToolFailure(kind="timeout", transient=True)
    log = (
        base()
        .step_started("s1", name="fetch", input={"q": 1}, path=("steps", 0))
        .step_completed("s1", failure=failure, will_retry=True, retry_at=at(99))
        .step_started("s1", name="fetch", attempt_number=2)
        .step_completed("s1", output={"rows": 3})
    )
    state = reduce(log.build())
    assert [(s.attempt_number, s.completed, s.will_retry) for s in state.step_starts] == [
        (1, True, True),
        (2, True, False),
    ]
    assert state.step_starts[0].retry_at == at(99)
    assert state.step_starts[0].input == {"q": 1}
    current = state.steps["s1"]
    assert current is state.step_starts[1]
    assert current.settled
    assert current.output == {"rows": 3}
    assert (current.started_seq, current.completed_seq) == (5, 6)
    assert not state.step_starts[0].settled


def test_workflow_state_merges_only_successful_set_state_steps() -> None:
    log = (
        base()
        .step_started("a", kind="set_state")
        .step_completed("a", output={"x": 1, "y": 1})
        .step_started("b", kind="set_state")
        .step_completed("b", output={"y": 2})
        .step_started("c", kind="set_state")
        .step_completed("c", skipped=True)
        .step_started("d", kind="set_state")
        .step_completed("d", failure=ToolFailure(kind="bad"))
        .step_started("e", kind="tool")
        .step_completed("e", output={"z": 9})
    )
    assert reduce(log.build()).workflow_state_updates == {"x": 1, "y": 2}


# --- queues -------------------------------------------------------------------------------


def test_pending_queues_track_what_is_still_undelivered() -> None:
    log = (
        base()
        .enqueued("e1", QueueKind.STEER, payload={"message": "one"})
        .enqueued("e2", QueueKind.FOLLOW_UP, payload={"message": "two"})
        .enqueued("e3", QueueKind.NEXT_RUN, payload={"message": "three"})
        .enqueued("e4", QueueKind.STEER, payload={"message": "four"})
        .enqueued("e5", QueueKind.STEER, payload={"message": "five"})
        .consumed("e1")
        .cancelled("e4")
    )
    state = reduce(log.build())
    assert [(e.entry_id, e.payload, e.enqueued_seq) for e in state.pending_steer] == [
        ("e5", {"message": "five"}, 7)
    ]
    assert [e.entry_id for e in state.pending_follow_up] == ["e2"]
    assert [(e.entry_id, e.queue) for e in state.pending_next_run] == [("e3", QueueKind.NEXT_RUN)]
    assert state.consumed_entry_ids == {"e1"}
    assert state.cancelled_entry_ids == {"e4"}


def test_abort_remembers_the_first_abort() -> None:
    state = reduce(base().abort().turn().abort(reason="again").build())
    assert state.abort_seq == 3
    assert state.aborted


# --- content ------------------------------------------------------------------------------


def test_task_list_is_replaced_and_components_accumulate() -> None:
    card = Component(kind="card", title="Order")
    log = (
        base()
        .tasks("look up order", "refund")
        .component(card)
        .tasks(Task(title="refund", status="completed"))
        .component(kind="metric")
    )
    state = reduce(log.build())
    assert state.tasks == (Task(title="refund", status="completed"),)
    assert [c.kind for c in state.components] == ["card", "metric"]
    assert state.components[0] == card


# --- children -----------------------------------------------------------------------------


def test_children_are_tracked_from_spawn_to_finish() -> None:
    usage = Usage(input=100, output=20)
    cost = Cost(amount=Decimal("0.5"))
    log = (
        base()
        .spawned("run_c1", name="researcher", call_id="call_a", tools=("search",), model="m1")
        .spawned("run_c2", name="writer", background=False, delegation_depth=1)
        .messaged_child("run_c1")
        .messaged_child("run_c1")
        .child_finished(
            "run_c1",
            output={"found": 2},
            usage=usage,
            cost=cost,
            unreported_usage_calls=1,
            unpriced_model_calls=2,
        )
    )
    state = reduce(log.build())
    first = state.children["run_c1"]
    assert not first.alive
    assert (first.name, first.call_id, first.tools, first.model) == (
        "researcher",
        "call_a",
        ("search",),
        "m1",
    )
    assert (first.messages_sent, first.terminal_state, first.output) == (
        2,
        TerminalState.COMPLETED,
        {"found": 2},
    )
    assert (first.usage, first.cost, first.unreported_usage_calls, first.unpriced_model_calls) == (
        usage,
        cost,
        1,
        2,
    )
    assert (first.spawned_seq, first.finished_seq) == (3, 7)
    assert [c.run_id for c in state.live_children] == ["run_c2"]
    assert (state.children["run_c2"].depth, state.children["run_c2"].background) == (1, False)
    # a child's spending is its own, not folded into this Run's totals
    assert state.usage == Usage()
    assert state.cost is None


# --- metering -----------------------------------------------------------------------------


def priced(amount: str, source: CostSource = CostSource.COMPUTED) -> Cost:
    return Cost(amount=Decimal(amount), source=source)


def test_metering_sums_and_counts_every_kind_of_call() -> None:
    log = (
        in_turn()
        .model_started()
        .model_finished(usage=Usage(input=100, output=10), cost=priced("0.010"))
        .turn()
        .model_started()
        .model_finished(usage=Usage(input=50, output=5, cache_read=200), cost=None)
        .turn()
        .model_started()
        .model_failed(will_retry=True)
        .turn()
        .model_started()
        .model_finished(
            usage=Usage(), usage_reported=False, cost=priced("0.020", CostSource.PROVIDER)
        )
        .turn()
        .model_started()
        .model_failed(will_retry=False)
        .compacted(
            1,
            5,
            model="gpt-4o-mini",
            usage=Usage(input=30, output=3),
            usage_reported=True,
            cost=priced("0.001"),
        )
        .compacted(1, 6, summary="trimmed")
    )
    state = reduce(log.build())
    assert state.usage == Usage(input=180, output=18, cache_read=200)
    assert state.cost is not None
    assert state.cost.amount == Decimal("0.031")
    assert state.cost.source is CostSource.MIXED
    assert state.model_calls == 3
    assert state.failed_model_calls == 2
    assert state.transient_retries_used == 1
    assert state.unreported_usage_calls == 1
    assert state.unpriced_model_calls == 1
    assert state.provider_reported_costs == 1
    assert state.compaction_calls == 2
    assert state.compaction_boundary_seq == 6
    assert state.compaction_summaries == ["Summary of the earlier conversation.", "trimmed"]
    # the call with unreported usage says nothing about the prompt size
    assert state.last_prompt_tokens == 250


def test_last_prompt_tokens_counts_cached_input_too() -> None:
    usage = Usage(input=10, output=99, cache_read=20, cache_write=30)
    log = in_turn().model_started().model_finished(usage=usage)
    assert reduce(log.build()).last_prompt_tokens == 60


def test_cost_is_unknown_when_nothing_was_priced() -> None:
    log = in_turn().model_started().model_finished(cost=None)
    state = reduce(log.build())
    assert state.cost is None
    assert state.unpriced_model_calls == 1
    assert state.usage == Usage(input=10, output=5)


# --- lifecycle ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("log", "expected"),
    [
        pytest.param(LogBuilder().admitted(), Lifecycle.QUEUED, id="queued"),
        pytest.param(base(), Lifecycle.RUNNING, id="running"),
        pytest.param(base().suspended(SuspendReason.QUESTION), Lifecycle.WAITING, id="waiting"),
        pytest.param(
            base().suspended(SuspendReason.QUESTION).resumed(), Lifecycle.RUNNING, id="resumed"
        ),
        pytest.param(
            LogBuilder().admitted().suspended(SuspendReason.TIMER),
            Lifecycle.WAITING,
            id="waiting-beats-queued",
        ),
        pytest.param(base().abort(), Lifecycle.STOPPING, id="stopping"),
        pytest.param(
            base().suspended(SuspendReason.QUESTION).abort(),
            Lifecycle.STOPPING,
            id="stopping-beats-waiting",
        ),
        pytest.param(
            LogBuilder().admitted().abort(), Lifecycle.STOPPING, id="stopping-beats-queued"
        ),
        pytest.param(base().settled(), Lifecycle.DONE, id="done"),
        pytest.param(base().abort().settled(), Lifecycle.DONE, id="done-beats-stopping"),
        pytest.param(base().settled(TerminalState.FAILED), Lifecycle.FAILED, id="failed"),
        pytest.param(
            base().abort().settled(TerminalState.ABORTED), Lifecycle.STOPPED, id="aborted"
        ),
        pytest.param(
            base().suspended(SuspendReason.APPROVAL).settled(TerminalState.ABANDONED),
            Lifecycle.STOPPED,
            id="abandoned",
        ),
        pytest.param(
            base().settled(TerminalState.FORCE_SETTLED), Lifecycle.STOPPED, id="force-settled"
        ),
    ],
)
def test_lifecycle(log: LogBuilder, expected: Lifecycle) -> None:
    assert reduce(log.build()).lifecycle is expected


def test_every_lifecycle_value_is_reachable() -> None:
    assert {v.value for v in Lifecycle} == set(PINNED["Lifecycle"])


def test_admission_fields_are_copied() -> None:
    log = LogBuilder().admitted(
        input={"message": "hi"},
        idempotency_key="k1",
        deadline_at=at(60),
        parent_run_id="run_parent",
        delegation_depth=2,
        replays_run_id="run_old",
        replay_from_step="s3",
        breakpoints=("s1",),
        step_mode=True,
        continues_run_id="run_prev",
    )
    state = reduce(log.build())
    assert state.admitted
    assert (state.version_hash, state.run_input, state.idempotency_key) == (
        "sha256:test",
        {"message": "hi"},
        "k1",
    )
    assert (state.deadline_at, state.parent_run_id, state.delegation_depth) == (
        at(60),
        "run_parent",
        2,
    )
    assert (state.replays_run_id, state.replay_from_step, state.breakpoints, state.step_mode) == (
        "run_old",
        "s3",
        ("s1",),
        True,
    )
    assert state.continues_run_id == "run_prev"
    assert state.head_seq == 1


def test_settlement_fields() -> None:
    failure = ToolFailure(kind="boom", message="it broke")
    state = reduce(base().settled(TerminalState.FAILED, failure=failure).build())
    assert (state.settled, state.terminal_state, state.failure, state.output) == (
        True,
        TerminalState.FAILED,
        failure,
        None,
    )
    assert not state.is_runnable


# --- the entry point ----------------------------------------------------------------------


def test_an_empty_log_without_a_prior_is_a_corrupt_log() -> None:
    # A Run's log starts with run_admitted at seq 1; a log without it is missing seq 1.
    with pytest.raises(CorruptLog) as info:
        reduce([], run_id="run_test")
    assert info.value.reason is CorruptionReason.NON_CONSECUTIVE_SEQ
    assert info.value.run_id == "run_test"
    assert info.value.seq == 1
    assert "empty" in info.value.detail
    with pytest.raises(CorruptLog) as unnamed:
        reduce([])
    assert unnamed.value.run_id == ""


def test_an_empty_tail_returns_an_equal_independent_state() -> None:
    prior = reduce(base().build())
    again = reduce([], prior=prior)
    assert again == prior
    assert again is not prior


def test_a_run_id_contradicting_the_prior_is_refused() -> None:
    prior = reduce(base().build())
    with pytest.raises(ValueError, match="contradicts"):
        reduce([], run_id="run_other", prior=prior)
    assert reduce([], run_id="run_test", prior=prior) == prior


def test_reduce_accepts_any_iterable() -> None:
    records = in_turn().build()
    assert reduce(iter(records)) == reduce(records)


def test_copy_shares_no_mutable_container() -> None:
    log = (
        in_turn()
        .tool_started("c1")
        .suspended(SuspendReason.APPROVAL, pending_call_id="c1", step_id="s1")
        .resumed(approved=True)
        .enqueued("e1")
        .step_started("s1")
        .component(kind="card")
    )
    state = reduce(log.build())
    clone = state.copy()
    assert clone == state
    for spec in fields(RunStateView):
        value = getattr(state, spec.name)
        if isinstance(value, list | dict | set):
            assert getattr(clone, spec.name) is not value, spec.name
    for step_id, answers in state.step_resumes.items():
        assert clone.step_resumes[step_id] is not answers


def test_folding_into_a_copy_leaves_the_original_alone() -> None:
    log = (
        in_turn()
        .tool_started("c1")
        .suspended(SuspendReason.APPROVAL, pending_call_id="c1", step_id="s1")
    )
    head = log.build()
    tail = log.resumed(approved=True).tool_finished("c1").enqueued("e1").build()[len(head) :]
    state = reduce(head)
    snapshot = reduce(head)
    clone = state.copy()
    for record in tail:
        fold_into(clone, record)
    assert state == snapshot
    assert clone != state
    assert clone == reduce(head + tail)
