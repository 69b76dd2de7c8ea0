"""``call_checks.py``: every call is recorded started, then refused as data or let through."""

from collections.abc import Mapping

from pydantic import JsonValue

from psych_runtime.core.ids import ToolCallId
from psych_runtime.core.records import ToolOutcome
from psych_runtime.core.reducer import READ_TOOL_OUTPUT
from psych_runtime.core.spec import CodeTool
from psych_runtime.core.spec import Limits
from psych_runtime.runtime.agent.call_checks import UNISSUED_HANDLE_ARGUMENT
from psych_runtime.runtime.agent.call_checks import Refused
from psych_runtime.runtime.agent.call_checks import check_call
from psych_runtime.runtime.agent.call_checks import close_unexecuted
from psych_runtime.runtime.model_call import AssembledCall
from psych_runtime.testing import LogBuilder

from .conftest import Attempt
from .conftest import Orders
from .conftest import agent
from .conftest import calls
from .conftest import open_attempt
from .conftest import started
from .conftest import tool_turn

OFFERED = frozenset({"lookup", "refund"})
SPEC = agent(tools=("lookup", CodeTool(name="refund", interruptible=False)))


async def _turn(log: LogBuilder | None = None, **limits: int) -> Attempt:
    log = log if log is not None else started()
    tool_turn(log)
    spec = SPEC.model_copy(update={"limits": Limits(**limits)}) if limits else SPEC
    return await open_attempt(log, spec=spec, registry=Orders().registry)


async def _check(
    attempt: Attempt,
    *wanted: tuple[str, Mapping[str, object] | str],
    offered: frozenset[str] = OFFERED,
) -> dict[str, JsonValue] | Refused:
    assembled, ids = calls(*wanted)
    return await check_call(attempt.ctx, attempt.state.turn, assembled, ids, 0, offered)


async def test_a_sound_call_is_recorded_started_and_its_arguments_handed_on() -> None:
    attempt = await _turn()
    assert await _check(attempt, ("refund", {"order_id": "A1"})) == {"order_id": "A1"}
    assert attempt.types() == ["tool_call_started"]
    start = attempt.start("c1")
    assert (start.tool, start.arguments, start.turn) == ("refund", {"order_id": "A1"}, 1)
    assert start.interruptible is False and start.safe_to_retry is False
    assert tuple(attempt.new()) == attempt.journal.pending_records  # staged, not written


async def test_the_start_says_whether_the_call_may_be_run_again_after_a_crash() -> None:
    attempt = await _turn()
    await _check(attempt, ("lookup", {"order_id": "A1"}))
    assert attempt.start("c1").safe_to_retry is True  # lookup is registered idempotent


async def test_arguments_that_are_not_a_json_object_are_refused_as_malformed() -> None:
    for raw in ('{"order_id": ', "[1, 2]"):
        attempt = await _turn()
        assert await _check(attempt, ("lookup", raw)) is Refused.CALL
        assert attempt.start("c1").arguments == {}
        failure = attempt.failure("c1")
        assert failure.kind == "malformed_arguments", raw


async def test_arguments_the_stream_did_not_keep_are_refused_with_the_reason() -> None:
    attempt = await _turn()
    dropped = AssembledCall("c1", "lookup", "", refusal="the arguments were too long")
    checked = await check_call(attempt.ctx, 1, [dropped], [ToolCallId("c1")], 0, OFFERED)
    assert checked is Refused.CALL
    failure = attempt.failure("c1")
    assert (failure.kind, failure.message) == ("malformed_arguments", "the arguments were too long")


async def test_a_tool_this_turn_did_not_offer_is_refused_naming_those_it_did() -> None:
    attempt = await _turn()
    assert await _check(attempt, ("shred", {})) is Refused.CALL
    failure = attempt.failure("c1")
    assert failure.kind == "unknown_tool"
    assert failure.message == (
        "there is no tool named 'shred' this turn. Available tools: lookup, refund."
    )


async def test_a_call_without_a_name_is_recorded_as_unnamed_and_refused() -> None:
    attempt = await _turn()
    assert await _check(attempt, ("", {}), offered=frozenset()) is Refused.CALL
    assert attempt.start("c1").tool == "unnamed"
    assert "Available tools: none." in attempt.failure("c1").message


async def test_a_tool_withheld_for_failing_is_refused_as_withheld_not_unknown() -> None:
    log = tool_turn(started(), "f1", "f2")
    for call_id in ("f1", "f2"):
        log.tool_started(call_id, tool="lookup").tool_finished(call_id, ToolOutcome.ERROR)
    attempt = await _turn(log, failure_streak_threshold=2)
    assert await _check(attempt, ("lookup", {}), offered=frozenset({"refund"})) is Refused.CALL
    failure = attempt.failure("c1")
    assert failure.kind == "withheld_tool"
    assert "failed 2 times in a row" in failure.message
    # Calling it anyway is misuse of that tool: the streak goes on.
    assert attempt.state.failure_streaks == {"lookup": 3}


async def test_reading_a_handle_this_run_never_issued_keeps_it_aside_and_refuses() -> None:
    attempt = await _turn()
    wanted = (READ_TOOL_OUTPUT, {"handle": "h_made_up", "offset": 0})
    checked = await _check(attempt, wanted, offered=frozenset({READ_TOOL_OUTPUT}))
    assert checked is Refused.CALL
    assert attempt.start("c1").arguments == {"offset": 0, UNISSUED_HANDLE_ARGUMENT: "h_made_up"}
    failure = attempt.failure("c1")
    assert failure.kind == "unknown_handle" and "h_made_up" in failure.message


async def test_reading_an_issued_handle_is_recorded_as_asked() -> None:
    log = tool_turn(started(), "c0").tool_started("c0")
    log.tool_finished("c0", result="x" * 10, result_handle="h_c0", result_bytes=10)
    attempt = await _turn(log)
    wanted = (READ_TOOL_OUTPUT, {"handle": "h_c0"})
    checked = await _check(attempt, wanted, offered=frozenset({READ_TOOL_OUTPUT}))
    assert checked == {"handle": "h_c0"}
    assert attempt.start("c1").arguments == {"handle": "h_c0"}


def _answered(log: LogBuilder, times: int) -> LogBuilder:
    """``lookup`` of A1 returned the same answer ``times`` times."""
    for n in range(times):
        tool_turn(log, f"r{n}").tool_started(f"r{n}", tool="lookup", arguments={"order_id": "A1"})
        log.tool_finished(f"r{n}", result="A1: shipped")
    return log


async def test_a_call_that_keeps_getting_the_same_answer_is_refused_from_the_threshold() -> None:
    attempt = await _turn(_answered(started(), 1), repeat_call_threshold=3)
    assert await _check(attempt, ("lookup", {"order_id": "A1"})) == {"order_id": "A1"}

    attempt = await _turn(_answered(started(), 2), repeat_call_threshold=3)
    refused = await _check(attempt, ("lookup", {"order_id": "A1"}), ("refund", {"order_id": "A1"}))
    assert refused is Refused.CALL
    failure = attempt.failure("c1")
    assert failure.kind == "repeated_call" and "2 times" in failure.message
    assert attempt.types() == ["tool_call_started", "tool_call_finished"]  # c2 is not touched


async def test_other_arguments_are_not_a_repeat() -> None:
    attempt = await _turn(_answered(started(), 5), repeat_call_threshold=3)
    assert await _check(attempt, ("lookup", {"order_id": "B2"})) == {"order_id": "B2"}


async def test_past_the_hard_stop_for_repeats_the_rest_of_the_turn_is_not_run() -> None:
    attempt = await _turn(_answered(started(), 3), repeat_call_threshold=2, repeat_call_hard_stop=4)
    refused = await _check(attempt, ("lookup", {"order_id": "A1"}), ("refund", {"order_id": "A1"}))
    assert refused is Refused.TURN
    assert attempt.failure("c1").kind == "repeated_call"
    later = attempt.failure("c2")
    assert later.kind == "not_executed" and "kept being repeated" in later.message


async def test_calls_the_turn_will_not_run_are_recorded_started_and_finished() -> None:
    attempt = await _turn()
    assembled, ids = calls(("refund", {"order_id": "A1"}), ("lookup", "not json"))
    await close_unexecuted(attempt.ctx, 1, assembled, ids, "not this turn")
    assert attempt.types() == ["tool_call_started", "tool_call_finished"] * 2
    assert attempt.start("c1").arguments == {"order_id": "A1"}
    assert attempt.start("c1").interruptible is False
    assert attempt.start("c2").arguments == {}
    for call_id in ("c1", "c2"):
        failure = attempt.failure(call_id)
        assert (failure.kind, failure.message) == ("not_executed", "not this turn")
    assert attempt.state.failure_streaks == {}  # refused calls say nothing of a tool
