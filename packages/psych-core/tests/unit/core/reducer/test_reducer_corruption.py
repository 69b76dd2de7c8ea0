"""Every way a log can contradict itself raises CorruptLog with the right reason.

Each case builds a log whose LAST record is the offending one; the shared checks prove
the prefix folds cleanly (so the last record really is the cause), that the error
names that record's seq, and that a refused record leaves the state untouched.
"""

from collections.abc import Callable
from decimal import Decimal

import pytest

from psych_runtime.core.corruption import CorruptionReason
from psych_runtime.core.corruption import CorruptLog
from psych_runtime.core.ids import RunId
from psych_runtime.core.metering import Cost
from psych_runtime.core.records import AttemptStarted
from psych_runtime.core.records import QueueKind
from psych_runtime.core.records import ResultAttachment
from psych_runtime.core.records import SuspendReason
from psych_runtime.core.records import TerminalState
from psych_runtime.core.records import ToolFailure
from psych_runtime.core.records import ToolOutcome
from psych_runtime.core.reducer import fold_into
from psych_runtime.core.reducer import reduce
from psych_runtime.core.scope import Scope
from psych_runtime.testing import LogBuilder

from .shared import PINNED
from .shared import base
from .shared import in_turn

R = CorruptionReason
Build = Callable[[], LogBuilder]
RETRYABLE = ToolFailure(kind="timeout", message="slow", transient=True)


def usd(amount: str) -> Cost:
    return Cost(amount=Decimal(amount), currency="USD")


def eur(amount: str) -> Cost:
    return Cost(amount=Decimal(amount), currency="EUR")


def ran_code(*, readable: bool) -> LogBuilder:
    """A turn in which ``run_code`` finished, leaving its stdout as attachment ``h-out``."""
    stdout = ResultAttachment(
        name="stdout", handle="h-out", data=b"x", size_bytes=1, observed_bytes=1, readable=readable
    )
    return in_turn().tool_started("c0", tool="run_code").tool_finished("c0", attachments=(stdout,))


def read_stdout(log: LogBuilder) -> LogBuilder:
    """``log`` with a ``read_tool_output`` call asking for the attachment ``h-out``."""
    return log.tool_started("c1", tool="read_tool_output", arguments={"handle": "h-out"})


def expect_corrupt(builder: LogBuilder, reason: CorruptionReason) -> CorruptLog:
    records = builder.build()
    if len(records) > 1:
        reduce(records[:-1])  # the prefix is fine: the last record is the culprit
    with pytest.raises(CorruptLog) as info:
        reduce(records)
    assert info.value.reason is reason
    assert info.value.seq == records[-1].seq
    assert info.value.run_id == "run_test"
    return info.value


CASES: dict[CorruptionReason, dict[str, Build]] = {
    R.NON_CONSECUTIVE_SEQ: {
        "gap": lambda: base().turn(seq=5),
        "repeat": lambda: base().turn(seq=2),
        "rewind-to-start": lambda: base().turn(seq=1),
    },
    R.UNKNOWN_OPERATION: {
        "a-other-run": lambda: base().turn(run_id="run_other"),
        "b-other-tenant": lambda: base().turn(scope=Scope(tenant="globex")),
        "c-attempt-as-first-record": lambda: LogBuilder().attempt(),
        "c-attempt-before-admission": lambda: LogBuilder().abort().attempt(),
        "d-model-call-without-turn": lambda: base().model_started(),
        "d-model-call-after-turn-closed": lambda: (
            in_turn().model_started().model_finished().model_started()
        ),
        "e-model-started-wrong-turn": lambda: in_turn().model_started(turn=2),
        "e-model-finished-wrong-turn": lambda: in_turn().model_started().model_finished(turn=3),
        "e-model-failed-wrong-turn": lambda: in_turn().model_started().model_failed(turn=3),
        "e-tool-wrong-turn": lambda: in_turn().tool_started("c1", turn=2),
        "e-tool-before-any-turn": lambda: base().tool_started("c1", turn=2),
        "f-finished-without-call": lambda: in_turn().model_finished(),
        "f-failed-without-call": lambda: in_turn().model_failed(),
        "f-finished-twice": lambda: in_turn().model_started().model_finished().model_finished(),
        "g-message-unknown-child": lambda: base().messaged_child("run_child"),
        "g-finish-unknown-child": lambda: base().child_finished("run_child"),
        "h-resume-not-suspended": lambda: base().resumed(),
        "h-resume-twice": lambda: base().suspended(SuspendReason.QUESTION).resumed().resumed(),
    },
    R.RECORD_AFTER_FINISH: {
        "turn": lambda: base().settled().turn(),
        "external-abort": lambda: base().settled().abort(),
        "next-run": lambda: base().settled().enqueued("e1", QueueKind.NEXT_RUN),
        "attempt": lambda: base().settled().attempt(),
        "second-run-settled": lambda: base().settled().settled(TerminalState.FAILED),
    },
    R.MULTIPLE_OPEN_OPERATIONS: {
        "second-admission": lambda: base().admitted(),
        "turn-while-turn-open": lambda: base().turn().turn(),
        "model-call-while-open": lambda: in_turn().model_started().model_started(turn=1),
        "child-run-id-reused": lambda: (
            base().spawned("run_c1").child_finished("run_c1").spawned("run_c1", name="b")
        ),
        "name-of-live-child-reused": lambda: base().spawned("run_c1").spawned("run_c2"),
        "child-finished-twice": lambda: (
            base().spawned("run_c1").child_finished("run_c1").child_finished("run_c1")
        ),
        "suspended-while-suspended": lambda: (
            base().suspended(SuspendReason.QUESTION).suspended(SuspendReason.EXTERNAL)
        ),
    },
    R.NON_CONSECUTIVE_ATTEMPT: {
        "attempt-skipped": lambda: base().attempt(attempt_number=3),
        "attempt-repeated": lambda: base().raw(AttemptStarted, worker_id="wrk_x", attempt_number=1),
        "turn-skipped": lambda: base().turn(turn=2),
        "turn-repeated": lambda: in_turn().model_started().model_finished().turn(turn=1),
        "first-step-not-1": lambda: base().step_started("s1", attempt_number=2),
        "step-retry-skips": lambda: (
            base()
            .step_started("s1")
            .step_completed("s1", failure=RETRYABLE, will_retry=True)
            .step_started("s1", attempt_number=3)
        ),
        "step-restart-same-number": lambda: base().step_started("s1").step_started("s1"),
    },
    R.QUEUE_AFTER_ABORT: {
        "steer": lambda: base().abort().enqueued("e1", QueueKind.STEER),
        "follow-up": lambda: base().abort().enqueued("e1", QueueKind.FOLLOW_UP),
        "after-two-aborts": lambda: base().abort().abort().enqueued("e1", QueueKind.STEER),
    },
    R.INVALID_QUEUE_CANCELLATION: {
        "never-enqueued": lambda: base().cancelled("e1"),
        "twice": lambda: base().enqueued("e1").cancelled("e1").cancelled("e1"),
        "consumed": lambda: base().enqueued("e1").consumed("e1").cancelled("e1"),
    },
    R.INCONSISTENT_STEP: {
        "restart-after-final-completion": lambda: (
            base().step_started("s1").step_completed("s1").step_started("s1", attempt_number=2)
        ),
        "completed-never-started": lambda: base().step_completed("s1"),
        "completed-twice": lambda: (
            base().step_started("s1").step_completed("s1").step_completed("s1")
        ),
        "retrying-attempt-completed-again": lambda: (
            base()
            .step_started("s1")
            .step_completed("s1", failure=RETRYABLE, will_retry=True)
            .step_completed("s1")
        ),
    },
    R.TOOL_CALL_MISMATCH: {
        "finish-never-started": lambda: in_turn().tool_finished("c1"),
        "finish-twice": lambda: (
            in_turn().tool_started("c1").tool_finished("c1").tool_finished("c1")
        ),
        "approval-for-unknown-call": lambda: in_turn().suspended(
            SuspendReason.APPROVAL, pending_call_id="c1"
        ),
        "approval-for-settled-call": lambda: (
            in_turn()
            .tool_started("c1")
            .tool_finished("c1")
            .suspended(SuspendReason.APPROVAL, pending_call_id="c1")
        ),
    },
    R.DUPLICATE_TOOL_INVOCATION: {
        "while-open": lambda: in_turn().tool_started("c1").tool_started("c1"),
        "after-settled": lambda: (
            in_turn().tool_started("c1").tool_finished("c1").tool_started("c1")
        ),
        "after-reclaim": lambda: (
            in_turn()
            .tool_started("c1")
            .tool_finished("c1", ToolOutcome.UNKNOWN)
            .attempt()
            .tool_started("c1")
        ),
    },
    R.PROVISIONED_ENTRY_MISMATCH: {
        "enqueue-reused": lambda: base().enqueued("e1").enqueued("e1"),
        "enqueue-reused-after-consumed": lambda: (
            base().enqueued("e1").consumed("e1").enqueued("e1", QueueKind.NEXT_RUN)
        ),
        "consume-never-enqueued": lambda: base().consumed("e1"),
        "cancelled": lambda: base().enqueued("e1").cancelled("e1").consumed("e1"),
        "twice": lambda: base().enqueued("e1").consumed("e1").consumed("e1"),
    },
    R.INVALID_DEFERRED_HANDLE: {
        "never-issued": lambda: in_turn().tool_started(
            "c1", tool="read_tool_output", arguments={"handle": "h1"}
        ),
        "unreadable-attachment": lambda: read_stdout(ran_code(readable=False)),
        "program-read-does-not-register": lambda: (
            in_turn()
            .tool_started(
                "c0", tool="read_tool_output", arguments={"handle": "h1"}, parent_call_id="p"
            )
            .tool_finished("c0")
            .tool_started("c1", tool="read_tool_output", arguments={"handle": "h1"})
        ),
    },
    R.INVALID_COMPACTION_REASON: {
        "inverted-range": lambda: in_turn().compacted(3, 2),
        "ends-at-own-seq": lambda: in_turn().compacted(1, 4),
        "ends-in-the-future": lambda: in_turn().compacted(1, 9),
    },
    R.INCONSISTENT_COST: {
        "model-calls": lambda: (
            in_turn()
            .model_started()
            .model_finished(cost=usd("0.01"))
            .turn()
            .model_started()
            .model_finished(cost=eur("0.01"))
        ),
        "compaction": lambda: (
            in_turn()
            .model_started()
            .model_finished(cost=usd("0.01"))
            .compacted(1, 4, model="gpt-4o-mini", cost=eur("0.001"))
        ),
        "after-unpriced-call": lambda: (
            in_turn()
            .model_started()
            .model_finished(cost=eur("0.01"))
            .turn()
            .model_started()
            .model_finished(cost=None)
            .turn()
            .model_started()
            .model_finished(cost=usd("0.01"))
        ),
    },
}


def test_the_enum_has_exactly_the_fourteen_reasons() -> None:
    assert {reason.value for reason in CorruptionReason} == set(PINNED["CorruptionReason"])
    assert set(CASES) == set(CorruptionReason)


@pytest.mark.parametrize(
    ("reason", "build"),
    [
        pytest.param(reason, build, id=f"{reason.value}-{name}")
        for reason, cases in CASES.items()
        for name, build in cases.items()
    ],
)
def test_each_case_is_refused_for_its_reason(reason: CorruptionReason, build: Build) -> None:
    expect_corrupt(build(), reason)


def test_non_consecutive_seq_for_a_log_not_starting_at_one() -> None:
    records = LogBuilder().admitted(seq=2).build()
    with pytest.raises(CorruptLog) as info:
        reduce(records)
    assert info.value.reason is R.NON_CONSECUTIVE_SEQ
    assert info.value.seq == 2


def test_non_consecutive_seq_in_a_continued_fold() -> None:
    records = base().turn().model_started().build()
    prior = reduce(records[:2])
    with pytest.raises(CorruptLog) as info:
        reduce(records[3:], prior=prior)  # seq 3 is missing
    assert info.value.reason is R.NON_CONSECUTIVE_SEQ
    assert info.value.seq == 4


def test_unknown_operation_when_the_fold_is_for_another_run() -> None:
    records = base().build()
    with pytest.raises(CorruptLog) as info:
        reduce(records, run_id="run_other")
    assert info.value.reason is R.UNKNOWN_OPERATION
    assert info.value.seq == 1
    assert info.value.run_id == "run_other"


def test_principal_and_labels_may_differ_within_a_tenant() -> None:
    other_person = Scope(tenant="acme", principal="bob", labels={"team": "ops"})
    state = reduce(base().abort(scope=other_person).build())
    assert state.aborted
    assert state.scope == Scope(tenant="acme")


def test_second_settlement_does_not_overwrite_the_first() -> None:
    records = base().settled(output={"answer": 1}).settled(TerminalState.FAILED).build()
    with pytest.raises(CorruptLog) as info:
        reduce(records)
    assert info.value.reason is R.RECORD_AFTER_FINISH
    assert info.value.seq == 4
    state = reduce(records[:3])
    assert state.terminal_state is TerminalState.COMPLETED
    assert state.output == {"answer": 1}


def test_a_finished_childs_name_may_be_reused() -> None:
    state = reduce(base().spawned("run_c1").child_finished("run_c1").spawned("run_c2").build())
    assert [child.run_id for child in state.live_children] == ["run_c2"]


def test_next_run_entries_are_allowed_after_abort() -> None:
    state = reduce(base().enqueued("e0").abort().enqueued("e1", QueueKind.NEXT_RUN).build())
    assert [entry.entry_id for entry in state.pending_next_run] == ["e1"]
    assert [entry.entry_id for entry in state.pending_steer] == ["e0"]


def test_only_approval_suspensions_must_name_an_open_call() -> None:
    state = reduce(in_turn().suspended(SuspendReason.QUESTION, pending_call_id="c9").build())
    assert state.suspended
    assert state.pending_call is None
    assert reduce(in_turn().suspended(SuspendReason.APPROVAL).build()).suspended


@pytest.mark.parametrize(
    "log",
    [
        pytest.param(
            in_turn()
            .tool_started("c0", tool="lookup")
            .tool_finished("c0", result=None, result_handle="h1")
            .tool_started("c1", tool="read_tool_output", arguments={"handle": "h1"}),
            id="issued-result-handle",
        ),
        pytest.param(read_stdout(ran_code(readable=True)), id="readable-attachment"),
        pytest.param(
            in_turn().tool_started(
                "c1", tool="read_tool_output", arguments={"handle": "h9"}, parent_call_id="c0"
            ),
            id="program-issued-read",
        ),
        pytest.param(
            in_turn().tool_started("c1", tool="read_tool_output", arguments={"handle": 7}),
            id="non-string-handle",
        ),
    ],
)
def test_deferred_handles_that_are_accepted(log: LogBuilder) -> None:
    assert "c1" in reduce(log.build()).open_tool_calls


def test_compaction_may_end_right_before_itself() -> None:
    state = reduce(in_turn().compacted(1, 3).build())
    assert state.compaction_boundary_seq == 3


def test_one_foreign_currency_throughout_is_fine() -> None:
    log = (
        in_turn()
        .model_started()
        .model_finished(cost=eur("0.01"))
        .compacted(1, 4, model="m", cost=eur("0.02"))
    )
    cost = reduce(log.build()).cost
    assert cost is not None
    assert (cost.amount, cost.currency) == (Decimal("0.03"), "EUR")


ALL_CASES = [
    pytest.param(build, id=name)
    for cases in CASES.values()
    for name, build in cases.items()
    if len(build().records) > 1
]


@pytest.mark.parametrize("build", ALL_CASES)
def test_a_refused_record_leaves_the_state_untouched(build: Build) -> None:
    records = build().build()
    state = reduce(records[:-1])
    before = state.copy()
    with pytest.raises(CorruptLog):
        fold_into(state, records[-1])
    assert state == before


def test_corrupt_log_reads_well() -> None:
    error = CorruptLog(R.TOOL_CALL_MISMATCH, RunId("run_x"), 7, "call c1 was never started")
    text = str(error)
    for part in ("run_x", "7", "tool_call_mismatch", "call c1 was never started"):
        assert part in text
    assert (error.reason, error.run_id, error.seq) == (R.TOOL_CALL_MISMATCH, "run_x", 7)
