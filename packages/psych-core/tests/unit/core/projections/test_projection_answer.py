import pytest

from psych_runtime.core.ids import RunId
from psych_runtime.core.projections.answer import AnswerView
from psych_runtime.core.projections.answer import WorkTurn
from psych_runtime.core.projections.answer import project_answer
from psych_runtime.core.records import QueueKind
from psych_runtime.core.records import TerminalState
from psych_runtime.core.records import ToolFailure
from psych_runtime.core.records import ToolOutcome
from psych_runtime.testing.log_builder import LOG_START
from psych_runtime.testing.log_builder import LogBuilder

from .conftest import asking_for


def started() -> LogBuilder:
    return LogBuilder().admitted(input={"message": "where is A1?"}).attempt()


def test_one_turn_run_is_all_answer() -> None:
    log = started().turn().model_started().model_finished(text="A1 has shipped.").settled()
    view = project_answer(log.build())
    assert view.text == "A1 has shipped."
    assert view.work == ()
    assert view.finished
    assert view.summary() == ""
    assert view.tool_call_count == 0
    assert view.run_id == "run_test"


def test_multi_turn_run_splits_answer_from_work() -> None:
    log = (
        asking_for(started(), "c1", text="Let me look.")
        .tool_started("c1", tool="lookup_order", arguments={"id": "A1"})
        .tool_finished("c1", result={"status": "shipped"}, duration_seconds=0.5)
        .turn()
        .model_started()
        .model_finished(tool_calls=("c2",), finish_reason="tool_calls")
        .tool_started("c2", tool="track", arguments={"id": "A1"})
        .tool_finished("c2", outcome=ToolOutcome.ERROR)
        .turn()
        .model_started()
        .model_finished(text="A1 has shipped.")
        .settled()
    )
    view = project_answer(log.build())
    assert view.text == "A1 has shipped."
    assert [turn.turn for turn in view.work] == [1, 2]
    first, second = view.work
    assert first.text == "Let me look."
    assert [call.tool for call in first.tool_calls] == ["lookup_order"]
    call = first.tool_calls[0]
    assert call.arguments == {"id": "A1"}
    assert call.outcome is ToolOutcome.OK
    assert call.result == {"status": "shipped"}
    assert call.duration_seconds == 0.5
    assert call.finished_at is not None
    assert call.finished_at > call.started_at
    assert second.tool_calls[0].outcome is ToolOutcome.ERROR
    assert second.tool_calls[0].failure_message == "the tool failed"
    assert view.tool_call_count == 2
    assert view.summary() == "2 turns, 2 tool calls"


def test_summary_uses_singular_words() -> None:
    view = AnswerView(
        run_id=RunId("r"),
        work=(WorkTurn(turn=1, at=LOG_START),),
    )
    assert view.summary() == "1 turn, 0 tool calls"


def test_unfinished_run_has_work_and_no_answer() -> None:
    log = asking_for(started(), "c1").tool_started("c1", tool="lookup_order")
    view = project_answer(log.build())
    assert view.text == ""
    assert not view.finished
    (turn,) = view.work
    (call,) = turn.tool_calls
    assert call.outcome is None
    assert call.finished_at is None
    assert call.duration_seconds is None
    assert view.summary() == "1 turn, 1 tool call"


def test_turn_with_model_call_in_flight_shows_nothing_yet() -> None:
    view = project_answer(started().turn().model_started().build())
    assert view.work == ()
    assert view.text == ""


def test_failed_model_call_is_a_work_turn_with_its_failure() -> None:
    log = (
        started()
        .turn()
        .model_started()
        .model_failed(
            failure=ToolFailure(kind="http_503", message="provider overloaded"), will_retry=True
        )
        .turn()
        .model_started()
        .model_finished(text="Done.")
        .settled()
    )
    view = project_answer(log.build())
    assert view.text == "Done."
    (failed,) = view.work
    assert failed.turn == 1
    assert failed.failure_message == "provider overloaded"
    assert failed.tool_calls == ()


def test_answer_is_the_last_reply_without_tools() -> None:
    # a follow-up kept the Run going after a first reply
    log = (
        started()
        .turn()
        .model_started()
        .model_finished(text="First reply.")
        .turn()
        .model_started()
        .model_finished(text="Second reply.")
        .settled()
    )
    view = project_answer(log.build())
    assert view.text == "Second reply."
    assert [(turn.turn, turn.text) for turn in view.work] == [(1, "First reply.")]


def test_failed_run_is_not_finished() -> None:
    log = (
        asking_for(started(), "c1")
        .tool_started("c1")
        .tool_finished("c1")
        .settled(TerminalState.FAILED, failure=ToolFailure(kind="budget_exhausted"))
    )
    view = project_answer(log.build())
    assert not view.finished
    assert view.text == ""
    assert view.summary() == "1 turn, 1 tool call"


def test_empty_log_is_refused() -> None:
    with pytest.raises(ValueError, match="admission"):
        project_answer([])


def test_a_later_turn_with_tool_calls_does_not_replace_the_answer() -> None:
    # a follow-up arrived after the reply and the model went back to work
    log = (
        started()
        .enqueued("e1", queue=QueueKind.FOLLOW_UP, payload={"message": "and B2?"})
        .turn()
        .model_started()
        .model_finished(text="A1 has shipped.")
        .consumed("e1")
        .turn()
        .model_started()
        .model_finished(text="Checking B2.", tool_calls=("c1",), finish_reason="tool_calls")
        .tool_started("c1")
    )
    view = project_answer(log.build())
    assert view.text == "A1 has shipped."
    assert [(turn.turn, turn.text) for turn in view.work] == [(2, "Checking B2.")]
