from datetime import timedelta

import pytest

from psych_runtime.core.ids import ToolCallId
from psych_runtime.core.projections.status import PendingApproval
from psych_runtime.core.projections.status import RunStatus
from psych_runtime.core.projections.status import project_status
from psych_runtime.core.records import AskedQuestion
from psych_runtime.core.records import Component
from psych_runtime.core.records import QuestionOption
from psych_runtime.core.records import SuspendReason
from psych_runtime.core.records import Task
from psych_runtime.core.records import TerminalState
from psych_runtime.core.records import ToolFailure
from psych_runtime.core.reducer import reduce
from psych_runtime.core.state import Lifecycle
from psych_runtime.testing.log_builder import LOG_START
from psych_runtime.testing.log_builder import LogBuilder

from .conftest import asking_for


def status_of(builder: LogBuilder) -> RunStatus:
    return project_status(reduce(builder.build()))


def running() -> LogBuilder:
    return LogBuilder().admitted().attempt()


# --- lifecycle -------------------------------------------------------------------------


def test_admitted_run_is_queued() -> None:
    status = status_of(LogBuilder().admitted())
    assert status.lifecycle is Lifecycle.QUEUED
    assert status.attempt_count == 0
    assert status.current_attempt is None


def test_run_with_an_attempt_is_running() -> None:
    status = status_of(running().turn())
    assert status.lifecycle is Lifecycle.RUNNING
    assert status.attempt_count == 1
    assert status.current_attempt == "att_1"
    assert status.turn == 1


def test_suspended_run_is_waiting() -> None:
    status = status_of(running().suspended(SuspendReason.EXTERNAL, event="payment"))
    assert status.lifecycle is Lifecycle.WAITING
    assert status.suspend_reason is SuspendReason.EXTERNAL


def test_aborted_unsettled_run_is_stopping() -> None:
    status = status_of(running().abort())
    assert status.lifecycle is Lifecycle.STOPPING


def test_abort_wins_over_suspension() -> None:
    status = status_of(running().suspended(SuspendReason.EXTERNAL).abort())
    assert status.lifecycle is Lifecycle.STOPPING


def test_completed_run_is_done_with_output() -> None:
    status = status_of(running().settled(output={"text": "hi"}))
    assert status.lifecycle is Lifecycle.DONE
    assert status.terminal_state is TerminalState.COMPLETED
    assert status.output == {"text": "hi"}
    assert status.failure_message is None
    assert status.failure_kind is None


def test_failed_run_reports_its_failure() -> None:
    failure = ToolFailure(kind="budget_exhausted", message="turn budget used up")
    status = status_of(running().settled(TerminalState.FAILED, failure=failure))
    assert status.lifecycle is Lifecycle.FAILED
    assert status.failure_kind == "budget_exhausted"
    assert status.failure_message == "turn budget used up"


@pytest.mark.parametrize(
    "state", [TerminalState.ABORTED, TerminalState.ABANDONED, TerminalState.FORCE_SETTLED]
)
def test_other_endings_are_stopped(state: TerminalState) -> None:
    status = status_of(running().settled(state))
    assert status.lifecycle is Lifecycle.STOPPED
    assert status.terminal_state is state


def test_settled_while_suspended_shows_no_pending_work() -> None:
    log = running().suspended(SuspendReason.QUESTION, question="Which one?")
    status = status_of(log.settled(TerminalState.ABANDONED))
    assert status.lifecycle is Lifecycle.STOPPED
    # The reducer keeps the suspension fields; the status must not offer a form
    # for a Run that can no longer be resumed.
    assert status.pending_question is None
    assert status.suspend_reason is None


# --- pending kinds ---------------------------------------------------------------------


def test_pending_approval_names_the_waiting_call() -> None:
    log = (
        asking_for(running(), "call_1")
        .tool_started("call_1", tool="refund", arguments={"order": "A1", "amount": 20})
        .suspended(
            SuspendReason.APPROVAL,
            pending_call_id="call_1",
            question="Refund 20 on A1?",
            expires_at=LOG_START + timedelta(hours=5),
        )
    )
    status = status_of(log)
    assert status.pending_approval == PendingApproval(
        call_id=ToolCallId("call_1"),
        step_id=None,
        tool="refund",
        arguments={"order": "A1", "amount": 20},
        question="Refund 20 on A1?",
        expires_at=LOG_START + timedelta(hours=5),
    )
    assert status.pending_question is None
    assert status.pending_wait is None
    assert status.has_dangling_tool_calls
    assert status.suspend_expires_at == LOG_START + timedelta(hours=5)


def test_pending_approval_of_a_workflow_tool_step() -> None:
    log = (
        running()
        .step_started("s_pay", name="pay_invoice", kind="tool", input={"invoice": "I-9"})
        .suspended(
            SuspendReason.APPROVAL, step_id="s_pay", step_name="pay_invoice", question="Pay?"
        )
    )
    approval = status_of(log).pending_approval
    assert approval is not None
    assert approval.call_id is None
    assert approval.step_id == "s_pay"
    assert approval.tool == "pay_invoice"
    assert approval.arguments == {"invoice": "I-9"}
    assert status_of(log).suspended_step_id == "s_pay"


def test_pending_question_carries_structured_questions() -> None:
    questions = (
        AskedQuestion(
            question="Which plan?",
            header="Plan",
            options=(QuestionOption(label="basic"), QuestionOption(label="pro")),
        ),
        AskedQuestion(question="Start when?"),
    )
    log = (
        asking_for(running(), "ask_1")
        .tool_started("ask_1", tool="ask_question")
        .suspended(SuspendReason.QUESTION, pending_call_id="ask_1", questions=questions)
    )
    pending = status_of(log).pending_question
    assert pending is not None
    assert pending.call_id == "ask_1"
    assert pending.questions == questions
    # no one-line rendering was recorded, so the summary is built from the questions
    assert pending.summary == "Which plan? / Start when?"
    assert status_of(log).pending_approval is None


def test_pending_question_prefers_the_recorded_one_line_summary() -> None:
    log = running().suspended(
        SuspendReason.QUESTION,
        step_id="s_ask",
        question="Approve the budget?",
        questions=(AskedQuestion(question="Approve the budget for Q3?"),),
    )
    pending = status_of(log).pending_question
    assert pending is not None
    assert pending.summary == "Approve the budget?"
    assert pending.call_id is None
    assert pending.step_id == "s_ask"


def test_pending_wait_carries_the_declared_payload_schema() -> None:
    schema = {"type": "object", "properties": {"paid": {"type": "boolean"}}}
    log = (
        running()
        .step_started("s_wait", name="await_payment", kind="wait")
        .suspended(
            SuspendReason.EXTERNAL,
            step_id="s_wait",
            step_name="await_payment",
            event="payment.settled",
            payload_schema=schema,
        )
    )
    wait = status_of(log).pending_wait
    assert wait is not None
    assert wait.payload_schema == schema
    assert wait.event == "payment.settled"
    assert wait.reason is SuspendReason.EXTERNAL
    assert wait.step_id == "s_wait"
    assert wait.step_name == "await_payment"


def test_pending_wait_for_a_timer_has_its_wake_time() -> None:
    wake = LOG_START + timedelta(minutes=10)
    log = running().suspended(SuspendReason.TIMER, step_id="s_sleep", wake_at=wake)
    wait = status_of(log).pending_wait
    assert wait is not None
    assert wait.reason is SuspendReason.TIMER
    assert wait.wake_at == wake
    assert wait.step_id == "s_sleep"
    assert wait.event is None
    assert wait.payload_schema == {}


def test_pending_wait_for_a_breakpoint() -> None:
    log = running().suspended(SuspendReason.BREAKPOINT, step_id="s_2", step_name="review")
    wait = status_of(log).pending_wait
    assert wait is not None
    assert wait.reason is SuspendReason.BREAKPOINT
    assert wait.step_name == "review"


def test_waiting_on_children_offers_nothing_to_fill_in() -> None:
    status = status_of(running().suspended(SuspendReason.CHILDREN))
    assert status.lifecycle is Lifecycle.WAITING
    assert status.suspend_reason is SuspendReason.CHILDREN
    assert (status.pending_approval, status.pending_question, status.pending_wait) == (
        None,
        None,
        None,
    )


def test_resume_clears_every_pending_field() -> None:
    log = running().suspended(SuspendReason.EXTERNAL, step_id="s_1", event="go").resumed()
    status = status_of(log)
    assert status.lifecycle is Lifecycle.RUNNING
    assert status.pending_wait is None
    assert status.suspend_reason is None
    assert status.suspended_step_id is None


# --- counts, deadline, content ---------------------------------------------------------


def test_deadline_is_pushed_back_by_time_spent_suspended() -> None:
    log = LogBuilder().admitted()  # deadline: LOG_START + 1 h
    log.attempt().suspended(SuspendReason.EXTERNAL).advance(1800).resumed()
    status = status_of(log)
    # suspended at LOG_START+2s, resumed 1800 s (plus one builder tick) later
    assert status.deadline_at == LOG_START + timedelta(hours=1, seconds=1801)


def test_counts_and_content() -> None:
    log = (
        asking_for(running(), "c1", "c2")
        .tool_started("c1")
        .tool_finished("c1", result="ok")
        .tasks("find the order", "refund it")
        .component(kind="metric")
        .tool_started("c2")
    )
    status = status_of(log)
    assert status.model_calls == 1
    assert status.tool_calls == 1  # only settled calls count
    assert status.has_dangling_tool_calls
    assert status.tasks == (Task(title="find the order"), Task(title="refund it"))
    assert status.components == (Component(kind="metric"),)
    assert status.head_seq == len(log.records)


def test_identity_fields_come_from_admission() -> None:
    log = LogBuilder(run_id="run_b").admitted(continues_run_id="run_a", parent_run_id="run_p")
    status = status_of(log)
    assert status.run_id == "run_b"
    assert status.version_hash == "sha256:test"
    assert status.continues_run_id == "run_a"
    assert status.parent_run_id == "run_p"
    assert status.scope.tenant == "acme"


def test_status_round_trips_through_json() -> None:
    log = (
        asking_for(running(), "c1")
        .tool_started("c1", arguments={"n": 1})
        .suspended(SuspendReason.APPROVAL, pending_call_id="c1", question="ok?")
    )
    status = status_of(log)
    assert RunStatus.model_validate_json(status.model_dump_json()) == status
