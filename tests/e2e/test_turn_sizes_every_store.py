"""No turn size fails a Run or leaves a side effect unrecorded, on any store.

A model may answer with far more tool calls than one atomic write of a store can hold
(DynamoDB takes at most 100 items a transaction): the calls past the turn's limit are
refused in one go, and the rest run one by one. Every call that ran must have its
finish in the log, and the Run must settle as it would on any other store.
"""

from collections.abc import Awaitable
from collections.abc import Callable

import pytest

import psych_runtime
from psych_runtime.testing import FakeModel

from .conftest import EVERY

ACME = psych_runtime.Scope(tenant="acme")
UrlFor = Callable[[str], Awaitable[str]]


@pytest.mark.parametrize("kind", EVERY)
@pytest.mark.parametrize(("calls", "per_turn"), [(120, 16), (70, 256)])
async def test_a_turn_with_many_calls_completes_with_every_call_recorded(
    kind: str, calls: int, per_turn: int, store_url_for: UrlFor
) -> None:
    ran: list[str] = []

    async def mark(n: str) -> str:
        """Mark one item."""
        ran.append(n)
        return n

    spec = psych_runtime.AgentSpec(
        name="marker",
        model=psych_runtime.ModelRef(model="m"),
        tools=(psych_runtime.CodeTool(name="mark"),),
        limits=psych_runtime.Limits(max_tool_calls_per_turn=per_turn, max_steps=1000),
    )
    model = (
        FakeModel()
        .turn(tool_calls=[("mark", {"n": str(i)}) for i in range(calls)])
        .turn(text="all marked")
    )
    store = await psych_runtime.open_store(await store_url_for(kind))
    try:
        async with psych_runtime.session(model, store=store, tools=[mark], scope=ACME) as s:
            answer = await s.ask(spec, "mark them", timeout=120)
            log = await s.read_log(answer.run_id)
    finally:
        await store.close()
    assert log[-1].type == "run_settled"
    assert log[-1].state is psych_runtime.TerminalState.COMPLETED, log[-1]
    started = {r.call_id for r in log if r.type == "tool_call_started"}
    finished = [r for r in log if r.type == "tool_call_finished"]
    assert {r.call_id for r in finished} == started and len(started) == calls
    ok = [r for r in finished if r.outcome is psych_runtime.ToolOutcome.OK]
    assert sorted(r.result for r in ok) == sorted(ran)
    assert len(ran) == min(calls, per_turn)
