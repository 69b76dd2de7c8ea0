"""Tools that misbehave, and calls the runtime refuses: each is one call's failure.

A tool raising ``SystemExit`` or ``KeyboardInterrupt`` fails its own call and nothing
more: the Worker and every other Run it holds carry on. Calls the runtime refused to
run (over the per-turn cap, unknown names, refused repeats) are not the tool's
failures and never trip its failure streak; real failures and malformed arguments do.
"""

import asyncio
import sys
from collections.abc import Callable
from typing import Any

from psych_runtime import AgentSpec
from psych_runtime import InMemoryStore
from psych_runtime import Scope
from psych_runtime import TerminalState
from psych_runtime import ToolOutcome
from psych_runtime import dispatch
from psych_runtime import publish
from psych_runtime.records import Record
from psych_runtime.testing import FakeModel
from psych_runtime.testing import ToolCallScript
from psych_runtime.testing import settled_log

from .conftest import code_spec
from .conftest import registry_of
from .conftest import run_once
from .conftest import running_worker
from .conftest import tool_finishes

# Published and dispatched in the tenant a program that names none acts for.
TENANT = Scope(tenant="default")


def _spec(*tools: str, **limits: int) -> AgentSpec:
    return code_spec(*tools, name="misbehaving", **limits)


class _Both:
    """Holds each tool until both Runs are inside one, so one Worker holds the two."""

    def __init__(self) -> None:
        self.entered = 0
        self.ready = asyncio.Event()

    async def arrive(self) -> None:
        self.entered += 1
        if self.entered >= 2:
            self.ready.set()
        await asyncio.wait_for(self.ready.wait(), 10)


async def test_tools_raising_systemexit_or_keyboardinterrupt_fail_only_their_calls() -> None:
    both = _Both()

    async def leave(code: int) -> str:
        """Exit the process (it must not)."""
        await both.arrive()
        sys.exit(code)

    async def interrupt(reason: str) -> str:
        """Interrupt the process (it must not)."""
        await both.arrive()
        raise KeyboardInterrupt(reason)

    def leave_from_a_thread(code: int) -> str:
        """Exit from the worker thread a synchronous tool runs in."""
        raise SystemExit(code)

    async def fine() -> str:
        """Work."""
        return "fine"

    model = FakeModel()
    store = InMemoryStore()
    registry = registry_of(leave, interrupt, leave_from_a_thread, fine)
    version = await publish(store, _spec("leave", "interrupt", "leave_from_a_thread", "fine"))
    async with running_worker(store, model, registry, concurrency=2) as worker:
        # Both Runs take their first turn before either tool returns, so the two
        # scripts interleave: each Run's first call, then each Run's answer.
        model.turn(tool_calls=[("leave", {"code": 3})])
        model.turn(tool_calls=[("interrupt", {"reason": "stop"})])
        model.turn(tool_calls=[("leave_from_a_thread", {"code": 4})])
        model.turn(text="It could not finish.")
        model.turn(text="Finished anyway.")
        first = await dispatch(store, version, "leave", scope=TENANT)
        second = await dispatch(store, version, "interrupt", scope=TENANT)
        logs = [
            await settled_log(store, first.run_id),
            await settled_log(store, second.run_id),
        ]
        # The same Worker is still running, and still takes new work.
        assert not worker._killed
        model.turn(tool_calls=[("fine", {})]).turn(text="Still here.")
        third = await dispatch(store, version, "again", scope=TENANT)
        later = await settled_log(store, third.run_id)
    assert [log[-1].state for log in logs] == [TerminalState.COMPLETED] * 2
    finished = [record for log in logs for record in tool_finishes(log)]
    assert all(record.outcome is ToolOutcome.ERROR for record in finished)
    failures = [record.failure for record in finished if record.failure is not None]
    assert sorted(failure.kind for failure in failures) == [
        "KeyboardInterrupt", "SystemExit", "SystemExit",
    ]  # fmt: skip
    tracebacks = [failure.traceback or "" for failure in failures]
    assert any("sys.exit(code)" in text for text in tracebacks)
    assert any("raise SystemExit(code)" in text for text in tracebacks)
    assert [f.message for f in failures if f.kind == "KeyboardInterrupt"] == ["stop"]
    assert later[-1].state is TerminalState.COMPLETED
    assert later[-1].output == {"text": "Still here."}


async def lookup(order_id: str) -> dict[str, str]:
    """Look up an order."""
    return {"order_id": order_id, "state": "packed"}


async def broken(order_id: str) -> str:
    """Always fails."""
    raise RuntimeError(f"backend down for {order_id}")


async def _run(spec: AgentSpec, model: FakeModel, *tools: Callable[..., Any]) -> list[Record]:
    return (await run_once(spec, model, *tools, scope=TENANT, timeout=30)).log


async def test_three_hundred_calls_in_one_turn_then_an_answer_completes() -> None:
    calls = [("lookup", {"order_id": f"O{i}"}) for i in range(300)]
    model = FakeModel().turn(tool_calls=calls).turn(text="Looked up the first sixteen.")
    log = await _run(_spec("lookup"), model, lookup)
    assert log[-1].type == "run_settled" and log[-1].state is TerminalState.COMPLETED
    finished = tool_finishes(log)
    assert len(finished) == 300
    assert [r.outcome for r in finished[:16]] == [ToolOutcome.OK] * 16
    assert {r.failure.kind for r in finished[16:] if r.failure} == {"not_executed"}
    assert len(model.requests) == 2


async def test_refused_calls_do_not_trip_the_streak_but_real_failures_do() -> None:
    # Two calls per turn at most; a streak of three fails the Run. Every turn mixes
    # one real call with calls the runtime refuses: over the cap, an unknown name, and
    # a refused repeat. Only the real failures count, so the Run fails exactly when
    # `broken` has failed three times in a row, not before.
    spec = _spec(
        "broken",
        "lookup",
        max_tool_calls_per_turn=2,
        failure_streak_threshold=3,
        failure_streak_hard_stop=3,
        repeat_call_threshold=2,
    )
    model = FakeModel()
    model.turn(tool_calls=[("lookup", {"order_id": "A"}), ("lookup", {"order_id": "A"})])
    for turn in range(2):
        model.turn(
            tool_calls=[
                ("lookup", {"order_id": "A"}),  # a refused repeat
                ("broken", {"order_id": f"B{turn}"}),  # a real failure
                ("broken", {"order_id": "over the cap"}),
                ("broken", {"order_id": "over the cap too"}),
            ]
        )
        model.turn(tool_calls=[("no_such_tool", {}), ("no_such_tool", {})])
    model.turn(tool_calls=[("broken", {"order_id": "B2"})])
    model.turn(text="The order system is down.")
    log = await _run(spec, model, broken, lookup)
    kinds = [r.failure.kind if r.failure else None for r in tool_finishes(log)]
    assert kinds.count("RuntimeError") == 3
    assert {"repeated_call", "not_executed", "unknown_tool"} <= set(kinds)
    assert log[-1].type == "run_settled" and log[-1].state is TerminalState.FAILED
    assert log[-1].failure is not None and log[-1].failure.kind == "failure_streak"
    assert "broken failed 3 times" in log[-1].failure.message
    # The answer was never asked for: the third real failure ended the Run.
    assert model.remaining == 1


async def test_malformed_arguments_still_count_against_the_tool() -> None:
    spec = _spec("lookup", failure_streak_threshold=2, failure_streak_hard_stop=2)
    model = (
        FakeModel()
        .turn(tool_calls=[ToolCallScript("lookup", raw_arguments='{"order_id": ')])
        .turn(tool_calls=[ToolCallScript("lookup", raw_arguments="[1]")])
        .turn(text="unreachable")
    )
    log = await _run(spec, model, lookup)
    assert log[-1].type == "run_settled" and log[-1].state is TerminalState.FAILED
    assert log[-1].failure is not None and log[-1].failure.kind == "failure_streak"
