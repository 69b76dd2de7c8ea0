"""``model_turn.py``: opening a turn, calling the model, recording what it answered."""

from typing import Any

from psych_runtime.core.messages import SystemMessage
from psych_runtime.core.messages import ToolResultMessage
from psych_runtime.core.messages import UserMessage
from psych_runtime.core.records import ModelCallFailed
from psych_runtime.core.records import ModelCallFinished
from psych_runtime.core.records import ModelCallStarted
from psych_runtime.core.records import QueueConsumed
from psych_runtime.core.records import QueueKind
from psych_runtime.core.records import TerminalState
from psych_runtime.core.records import ToolOutcome
from psych_runtime.core.spec import ModelRef
from psych_runtime.model.pricing import StaticPriceTable
from psych_runtime.runtime.agent.context import Next
from psych_runtime.runtime.agent.model_turn import Answer
from psych_runtime.runtime.agent.model_turn import answered
from psych_runtime.runtime.agent.model_turn import model_turn
from psych_runtime.testing import FakeModel
from psych_runtime.testing import LogBuilder
from psych_runtime.testing import ToolCallScript

from .conftest import EURO_PRICE
from .conftest import ONE_DOLLAR
from .conftest import Attempt
from .conftest import Orders
from .conftest import agent
from .conftest import open_attempt
from .conftest import started
from .conftest import tool_turn

SPEC = agent(instructions="You help with orders.", tools=("lookup", "refund"))


async def _turn(log: LogBuilder | None = None, **kw: Any) -> Attempt:
    """An Attempt on ``log`` for the orders agent, unless told otherwise."""
    kw.setdefault("spec", SPEC)
    kw.setdefault("registry", Orders().registry)
    return await open_attempt(log if log is not None else started(), **kw)


async def _answer(attempt: Attempt) -> Answer:
    answer = await model_turn(attempt.ctx)
    assert isinstance(answer, Answer), answer
    return answer


async def test_the_turn_and_the_request_are_durable_before_the_model_answers() -> None:
    model = FakeModel().turn(
        text="Looking.", tool_calls=[("lookup", {"order_id": "A1"})], usage={"input": 12}
    )
    attempt = await _turn(model=model)
    answer = await _answer(attempt)
    assert attempt.types() == ["turn_started", "model_call_started", "model_call_finished"]
    # The opening is written; the answer rides along with whatever follows it.
    assert [r.type for r in await attempt.durable()] == ["turn_started", "model_call_started"]
    (opened,) = attempt.new(ModelCallStarted)
    assert opened.tool_names == ("lookup", "refund") and opened.model == "m"
    assert opened.system_prompt.startswith("You help with orders.")
    request = model.last_request
    assert isinstance(request.messages[0], SystemMessage)
    assert [tool.name for tool in request.tools] == ["lookup", "refund"]
    (finished,) = attempt.new(ModelCallFinished)
    assert finished.tool_calls == tuple(answer.call_ids) and finished.usage.input == 12
    assert finished.usage_reported and finished.text == "Looking."
    assert (answer.turn, answer.text) == (1, "Looking.")
    assert answer.offered == frozenset({"lookup", "refund"})
    assert [call.name for call in answer.calls] == ["lookup"]


async def test_a_provider_that_reports_no_usage_is_recorded_as_such() -> None:
    attempt = await _turn(model=FakeModel().turn(text="Done."))
    await _answer(attempt)
    (finished,) = attempt.new(ModelCallFinished)
    assert not finished.usage_reported and finished.usage.input == 0
    assert attempt.state.unreported_usage_calls == 1


async def test_a_steer_is_consumed_when_the_turn_opens_and_shown_to_the_model() -> None:
    log = started().enqueued("s1", payload={"message": "Also check B2."})
    model = FakeModel().turn(text="Done.")
    attempt = await _turn(log, model=model)
    await _answer(attempt)
    (consumed,) = attempt.new(QueueConsumed)
    assert consumed.entry_id == "s1"
    assert attempt.types()[:2] == ["turn_started", "queue_consumed"]
    assert any(
        isinstance(m, UserMessage) and "Also check B2." in str(m.content)
        for m in model.last_request.messages
    )


async def test_a_follow_up_waits_until_the_model_answered_without_tools() -> None:
    working = tool_turn(started(), "c1").tool_started("c1", tool="lookup").tool_finished("c1")
    working.enqueued("f1", queue=QueueKind.FOLLOW_UP, payload={"message": "And B2?"})
    attempt = await _turn(working, model=FakeModel().turn(text="Done."))
    await _answer(attempt)
    assert attempt.new(QueueConsumed) == []

    finished = started().turn().model_started().model_finished(text="All done.")
    finished.enqueued("f1", queue=QueueKind.FOLLOW_UP, payload={"message": "And B2?"})
    attempt = await _turn(finished, model=FakeModel().turn(text="B2 too."))
    await _answer(attempt)
    assert [r.entry_id for r in attempt.new(QueueConsumed)] == ["f1"]


async def test_an_abort_that_landed_with_the_opening_stops_before_the_model_is_called() -> None:
    model = FakeModel().turn(text="never")
    attempt = await _turn(started().abort(), model=model)
    assert await model_turn(attempt.ctx) is Next.STOP
    assert attempt.settlement().state is TerminalState.ABORTED
    assert model.requests == ()
    # The request was recorded as started, so the log closes it: a settled Run never
    # leaves a model call open.
    (failed,) = attempt.new(ModelCallFailed)
    assert failed.failure.kind == "interrupted" and failed.turn == 1
    assert not failed.will_retry and not attempt.state.model_call_open


async def test_a_failed_call_is_handed_to_failover() -> None:
    attempt = await _turn(model=FakeModel().raises_permanent(400))
    assert await model_turn(attempt.ctx) is Next.STOP
    (failed,) = attempt.new(ModelCallFailed)
    assert failed.failure.kind == "http_400" and failed.turn == 1
    assert attempt.settlement().state is TerminalState.FAILED


async def test_a_failover_turn_calls_the_next_model() -> None:
    spec = SPEC.model_copy(update={"model": ModelRef(model="m", fallbacks=("backup",))})
    model = FakeModel().raises_transient(503).turn(text="Done.")
    attempt = await _turn(spec=spec, model=model)
    assert await model_turn(attempt.ctx) is Next.CONTINUE
    await _answer(attempt)
    assert [request.model for request in model.requests] == ["m", "backup"]


async def test_call_ids_a_provider_reuses_are_replaced_with_fresh_ones() -> None:
    log = tool_turn(started(), "call_1").tool_started("call_1", tool="lookup")
    log.tool_finished("call_1")
    script = ToolCallScript("lookup", arguments={"order_id": "A1"}, call_id="call_1")
    other = ToolCallScript("lookup", arguments={"order_id": "B2"}, call_id="call_1")
    attempt = await _turn(log, model=FakeModel().turn(tool_calls=[script, other]))
    answer = await _answer(attempt)
    assert len(set(answer.call_ids)) == 2 and "call_1" not in answer.call_ids


async def test_a_forced_tool_choice_gives_way_once_the_model_has_called_a_tool() -> None:
    spec = SPEC.model_copy(update={"model": ModelRef(model="m", tool_choice="required")})
    model = FakeModel().turn(text="Done.")
    attempt = await _turn(spec=spec, model=model)
    await _answer(attempt)
    assert model.last_request.tool_choice == "required"

    log = tool_turn(started(), "c1").tool_started("c1", tool="lookup").tool_finished("c1")
    model = FakeModel().turn(text="Done.")
    attempt = await _turn(log, spec=spec, model=model)
    await _answer(attempt)
    assert isinstance(model.last_request.messages[-1], ToolResultMessage)
    assert model.last_request.tool_choice == "auto"


async def test_a_tool_withheld_for_failing_is_not_offered_and_the_prompt_says_so() -> None:
    log = tool_turn(started(), "f1", "f2", "f3")
    for call_id in ("f1", "f2", "f3"):
        log.tool_started(call_id, tool="refund").tool_finished(call_id, ToolOutcome.ERROR)
    model = FakeModel().turn(text="Done.")
    attempt = await _turn(log, model=model)
    answer = await _answer(attempt)
    assert answer.offered == frozenset({"lookup"})
    (opened,) = attempt.new(ModelCallStarted)
    assert "refund" in opened.system_prompt.split("You help with orders.", 1)[1]


async def test_a_cost_in_a_second_currency_fails_the_run_after_recording_the_call() -> None:
    log = started().turn().model_started(model="m").model_finished(model="m", cost=ONE_DOLLAR)
    model = FakeModel().turn(text="Done.", usage={"input": 10})
    attempt = await _turn(log, model=model, prices=StaticPriceTable({"m": EURO_PRICE}))
    assert await model_turn(attempt.ctx) is Next.STOP
    (finished,) = attempt.new(ModelCallFinished)
    assert finished.cost is None
    assert attempt.settlement().failure is not None


# --- answered ------------------------------------------------------------------------


async def test_a_final_answer_settles_the_run_completed_with_its_text() -> None:
    attempt = await _turn(started().turn().model_started().model_finished(text="A1 shipped."))
    assert await answered(attempt.ctx, "A1 shipped.") is Next.STOP
    settled = attempt.settlement()
    assert (settled.state, settled.output) == (TerminalState.COMPLETED, {"text": "A1 shipped."})


async def test_a_follow_up_waiting_for_the_answer_is_taken_instead_of_settling() -> None:
    log = started().turn().model_started().model_finished(text="A1 shipped.")
    log.enqueued("f1", queue=QueueKind.FOLLOW_UP, payload={"message": "And B2?"})
    log.enqueued("f2", queue=QueueKind.FOLLOW_UP, payload={"message": "And C3?"})
    attempt = await _turn(log)
    assert await answered(attempt.ctx, "A1 shipped.") is Next.CONTINUE
    assert [r.entry_id for r in attempt.new(QueueConsumed)] == ["f1", "f2"]
    assert not attempt.state.settled
