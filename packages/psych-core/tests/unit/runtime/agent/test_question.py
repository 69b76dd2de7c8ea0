"""``question.py``: putting the model's questions to a person, and closing them later."""

from psych_runtime.core.ids import ToolCallId
from psych_runtime.core.records import Suspended
from psych_runtime.core.records import SuspendReason
from psych_runtime.core.records import ToolOutcome
from psych_runtime.core.spec import SuspensionPolicy
from psych_runtime.runtime.agent.context import Next
from psych_runtime.runtime.agent.question import UNANSWERED_MESSAGE
from psych_runtime.runtime.agent.question import WAITING_MESSAGE
from psych_runtime.runtime.agent.question import ask
from psych_runtime.runtime.agent.question import close_answered
from psych_runtime.testing import LogBuilder
from psych_runtime.tools.ask_question import ASK_QUESTION
from psych_runtime.tools.ask_question import NO_ANSWER

from .conftest import Attempt
from .conftest import agent
from .conftest import asked
from .conftest import calls
from .conftest import open_attempt
from .conftest import started
from .conftest import tool_turn

ASKING = agent(suspension=SuspensionPolicy(may_ask_questions=True))


async def _asking() -> tuple[Attempt, LogBuilder]:
    log = tool_turn(started(), "c1", "c2", "c3").tool_started("c1", tool=ASK_QUESTION)
    return await open_attempt(log, spec=ASKING), log


async def test_a_question_suspends_the_run_with_it_and_closes_the_calls_after_it() -> None:
    attempt, _ = await _asking()
    wanted, ids = calls(
        (ASK_QUESTION, asked("Which order?")),
        ("lookup", {"order_id": "A1"}),
        ("refund", '{"order_id": "A1"'),
    )
    assert await ask(attempt.ctx, 1, wanted, ids, 0, asked("Which order?")) is Next.STOP
    assert attempt.types() == [
        "tool_call_started",
        "tool_call_finished",
        "tool_call_started",
        "tool_call_finished",
        "suspended",
    ]
    for later in ("c2", "c3"):
        failure = attempt.failure(later)
        assert (failure.kind, failure.message) == ("not_executed", WAITING_MESSAGE)
    assert attempt.start("c2").arguments == {"order_id": "A1"}
    assert attempt.start("c3").arguments == {}  # what could not be parsed is not kept
    (suspended,) = attempt.new(Suspended)
    assert suspended.reason is SuspendReason.QUESTION and suspended.pending_call_id == "c1"
    assert [q.question for q in suspended.questions] == ["Which order?"]
    assert suspended.question == "Order: Which order?"
    # Written before the Attempt stops, so status() shows the questions at once.
    assert [r.type for r in await attempt.durable()] == attempt.types()
    assert "c1" in attempt.state.open_tool_calls


async def test_a_malformed_question_is_refused_and_the_turn_goes_on() -> None:
    attempt, _ = await _asking()
    wanted, ids = calls((ASK_QUESTION, {"questions": []}), ("lookup", {"order_id": "A1"}))
    assert await ask(attempt.ctx, 1, wanted, ids, 0, {"questions": []}) is None
    failure = attempt.failure("c1")
    assert failure.kind == "invalid_arguments" and "one to four questions" in failure.message
    assert attempt.types() == ["tool_call_finished"]  # c2 is left for the tool phase
    assert not attempt.state.suspended


async def test_an_answer_from_the_log_becomes_the_calls_result() -> None:
    _, log = await _asking()
    log.suspended(SuspendReason.QUESTION, pending_call_id="c1")
    log.resumed(payload={"answer": "A1"}).attempt()
    attempt = await open_attempt(log, spec=ASKING)
    await close_answered(attempt.ctx, ToolCallId("c1"))
    finished = attempt.finish("c1")
    assert (finished.outcome, finished.result) == (ToolOutcome.OK, {"answer": "A1"})


async def test_a_resume_without_an_answer_tells_the_model_to_use_its_judgement() -> None:
    _, log = await _asking()
    log.suspended(SuspendReason.QUESTION, pending_call_id="c1").resumed().attempt()
    attempt = await open_attempt(log, spec=ASKING)
    await close_answered(attempt.ctx, ToolCallId("c1"))
    assert attempt.finish("c1").result == NO_ANSWER


async def test_a_question_the_run_moved_on_from_is_closed_unanswered() -> None:
    _, log = await _asking()
    log.suspended(SuspendReason.QUESTION, pending_call_id="c1").abort().attempt()
    attempt = await open_attempt(log, spec=ASKING)
    await close_answered(attempt.ctx, ToolCallId("c1"))
    failure = attempt.failure("c1")
    assert (failure.kind, failure.message) == ("not_executed", UNANSWERED_MESSAGE)
