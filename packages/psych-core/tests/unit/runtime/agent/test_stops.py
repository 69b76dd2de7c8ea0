"""``stops.stop_reason``: the checks before every turn, each read from the log and limits."""

from psych_runtime.core.records import TerminalState
from psych_runtime.core.records import ToolFailure
from psych_runtime.core.records import ToolOutcome
from psych_runtime.core.spec import Limits
from psych_runtime.runtime.abort import AbortReason
from psych_runtime.runtime.abort import AbortSignal
from psych_runtime.runtime.agent.context import Next
from psych_runtime.runtime.agent.stops import stop_reason
from psych_runtime.testing import LogBuilder

from .conftest import agent
from .conftest import open_attempt
from .conftest import started
from .conftest import tool_turn


def _finished_calls(log: LogBuilder, count: int, kind: str | None, tool: str = "lookup") -> None:
    """``count`` calls of ``tool`` in one turn, failed with ``kind`` (ok when None)."""
    ids = [f"c{n}" for n in range(count)]
    tool_turn(log, *ids)
    for call_id in ids:
        log.tool_started(call_id, tool=tool)
        if kind is None:
            log.tool_finished(call_id)
        else:
            failure = ToolFailure(kind=kind, message="no")
            log.tool_finished(call_id, ToolOutcome.ERROR, failure=failure)


async def test_a_run_with_nothing_in_its_way_takes_its_turn() -> None:
    attempt = await open_attempt(tool_turn(started(), "c1").tool_started("c1").tool_finished("c1"))
    assert stop_reason(attempt.ctx) is None
    assert attempt.new() == []


async def test_the_workers_deadline_settles_the_run_aborted_with_the_deadline_failure() -> None:
    abort = AbortSignal()
    abort.fire(AbortReason.DEADLINE)
    attempt = await open_attempt(abort=abort)
    assert stop_reason(attempt.ctx) is Next.STOP
    settled = attempt.settlement()
    assert settled.state is TerminalState.ABORTED
    assert settled.failure is not None and settled.failure.kind == "deadline"


async def test_an_interrupt_signal_stops_without_writing_since_its_record_is_not_read_yet() -> None:
    # The interrupt's abort_requested is not in this Attempt's view yet: the Worker
    # settles the Run once the Attempt has unwound, so the loop writes nothing.
    for reason in (AbortReason.INTERRUPT, AbortReason.SHUTDOWN, AbortReason.LEASE_LOST):
        abort = AbortSignal()
        abort.fire(reason)
        attempt = await open_attempt(abort=abort)
        assert stop_reason(attempt.ctx) is Next.STOP
        assert attempt.new() == [], reason


async def test_an_abort_in_the_log_settles_the_run_aborted_without_a_failure() -> None:
    attempt = await open_attempt(started().abort("enough"))
    assert stop_reason(attempt.ctx) is Next.STOP
    settled = attempt.settlement()
    assert settled.state is TerminalState.ABORTED and settled.failure is None


async def test_an_abort_in_the_log_wins_over_the_signal_that_carried_it() -> None:
    abort = AbortSignal()
    abort.fire(AbortReason.DEADLINE)
    attempt = await open_attempt(started().abort("enough"), abort=abort)
    assert stop_reason(attempt.ctx) is Next.STOP
    assert attempt.settlement().failure is None


async def test_a_suspended_run_stops_and_writes_nothing() -> None:
    attempt = await open_attempt(started().suspended())
    assert stop_reason(attempt.ctx) is Next.STOP
    assert attempt.new() == []


async def test_a_failure_streak_at_the_hard_stop_fails_the_run_and_one_below_does_not() -> None:
    limits = Limits(failure_streak_threshold=2, failure_streak_hard_stop=3)
    below = started()
    _finished_calls(below, 2, "tool_error")
    attempt = await open_attempt(below, spec=agent(limits=limits))
    assert stop_reason(attempt.ctx) is None

    at = started()
    _finished_calls(at, 3, "tool_error")
    attempt = await open_attempt(at, spec=agent(limits=limits))
    assert stop_reason(attempt.ctx) is Next.STOP
    settled = attempt.settlement()
    assert settled.state is TerminalState.FAILED
    assert settled.failure is not None and settled.failure.kind == "failure_streak"
    assert "lookup failed 3 times" in settled.failure.message


async def test_max_turns_fails_the_run_once_reached() -> None:
    log = started()
    for _ in range(2):
        log.turn().model_started().model_finished()
    attempt = await open_attempt(log, spec=agent(limits=Limits(max_turns=3)))
    assert stop_reason(attempt.ctx) is None
    attempt = await open_attempt(log, spec=agent(limits=Limits(max_turns=2)))
    assert stop_reason(attempt.ctx) is Next.STOP
    failure = attempt.settlement().failure
    assert failure is not None and failure.kind == "budget_exhausted"
    assert failure.message == "reached max_turns=2"


async def test_max_steps_counts_calls_that_ran_and_not_calls_the_runtime_refused() -> None:
    limits = Limits(max_steps=3, failure_streak_threshold=50, failure_streak_hard_stop=50)
    refused = started()
    _finished_calls(refused, 5, "unknown_tool")
    attempt = await open_attempt(refused, spec=agent(limits=limits))
    assert stop_reason(attempt.ctx) is None

    ran = started()
    _finished_calls(ran, 3, None)
    attempt = await open_attempt(ran, spec=agent(limits=limits))
    assert stop_reason(attempt.ctx) is Next.STOP
    failure = attempt.settlement().failure
    assert failure is not None and failure.message == "reached max_steps=3"


async def test_a_failed_call_is_a_step_like_a_successful_one() -> None:
    limits = Limits(max_steps=2, failure_streak_threshold=50, failure_streak_hard_stop=50)
    log = started()
    _finished_calls(log, 2, "tool_error")
    attempt = await open_attempt(log, spec=agent(limits=limits))
    assert stop_reason(attempt.ctx) is Next.STOP
