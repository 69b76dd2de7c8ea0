"""The agent loop end to end: FakeModel, real Workers, the in-memory store."""

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest

import psych_runtime
from psych_runtime import AgentSpec
from psych_runtime import CodeTool
from psych_runtime import InMemoryStore
from psych_runtime import Limits
from psych_runtime import ModelRef
from psych_runtime import TerminalState
from psych_runtime import ToolOutcome
from psych_runtime import answer
from psych_runtime import publish
from psych_runtime import status
from psych_runtime.testing import FakeModel
from psych_runtime.testing import ToolCallScript
from psych_runtime.testing import settled_log

from .conftest import ACME
from .conftest import Settled
from .conftest import code_spec
from .conftest import dispatched
from .conftest import recording_tool
from .conftest import run_once
from .conftest import types


async def lookup(order_id: str) -> dict[str, str]:
    """Look up an order."""
    return {"order_id": order_id, "status": "shipped"}


async def broken(order_id: str) -> str:
    """Always fails."""
    raise RuntimeError(f"backend down for {order_id}")


def _spec(*tools: str, **limits: int) -> AgentSpec:
    return code_spec(*tools, instructions="Help the customer.", **limits)


async def _run(spec: AgentSpec, model: FakeModel, *tools: Callable[..., Any]) -> Settled:
    return await run_once(spec, model, *tools, message="hi")


async def test_multi_turn_run_with_tools_settles_with_the_final_answer() -> None:
    model = (
        FakeModel()
        .turn(text="Let me check.", tool_calls=[("lookup", {"order_id": "A1"})])
        .turn(tool_calls=[("lookup", {"order_id": "B2"})])
        .turn(text="A1 and B2 have shipped.")
    )
    store, run_id, log = await _run(_spec("lookup"), model, lookup)
    assert types(log) == [
        "run_admitted", "attempt_started",
        "turn_started", "model_call_started", "model_call_finished",
        "tool_call_started", "tool_call_finished",
        "turn_started", "model_call_started", "model_call_finished",
        "tool_call_started", "tool_call_finished",
        "turn_started", "model_call_started", "model_call_finished",
        "run_settled",
    ]  # fmt: skip
    assert [r.seq for r in log] == list(range(1, len(log) + 1))
    settled = log[-1]
    assert settled.type == "run_settled"
    assert settled.state is TerminalState.COMPLETED
    assert settled.output == {"text": "A1 and B2 have shipped."}
    results = [r for r in log if r.type == "tool_call_finished"]
    assert [r.result for r in results] == [
        {"order_id": "A1", "status": "shipped"},
        {"order_id": "B2", "status": "shipped"},
    ]
    # The model saw the first tool's result in its second request.
    second = model.requests[1]
    tool_messages = [m for m in second.messages if m.role == "tool"]
    assert json.loads(tool_messages[0].content) == {"order_id": "A1", "status": "shipped"}
    view = await answer(store, run_id)
    assert view.finished and view.text == "A1 and B2 have shipped."
    assert view.tool_call_count == 2


async def test_a_turn_costs_two_appends_and_a_final_answer_one() -> None:
    class CountingStore(InMemoryStore):
        appends = 0

        async def append(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            CountingStore.appends += 1
            await super().append(*args, **kwargs)

    store = CountingStore()
    k = 4
    model = FakeModel()
    for i in range(k):
        model.turn(tool_calls=[("lookup", {"order_id": f"O{i}"})])
    model.turn(text="done")
    await run_once(_spec("lookup"), model, lookup, store=store)
    assert CountingStore.appends == 2 * k + 2


async def test_tool_failures_and_bad_calls_reach_the_model_as_data() -> None:
    model = (
        FakeModel()
        .turn(
            tool_calls=[
                ("broken", {"order_id": "A1"}),
                ToolCallScript("lookup", raw_arguments='{"order_id": '),
                ("nonexistent", {}),
                ("lookup", {"order_id": 7}),
                ToolCallScript("lookup", raw_arguments="[1, 2]"),
            ]
        )
        .turn(text="Sorry, something went wrong.")
    )
    _, _, log = await _run(_spec("lookup", "broken"), model, lookup, broken)
    finished = [r for r in log if r.type == "tool_call_finished"]
    kinds = [r.failure.kind if r.failure else None for r in finished]
    assert kinds == [
        "RuntimeError",
        "malformed_arguments",
        "unknown_tool",
        "invalid_arguments",
        "malformed_arguments",
    ]
    assert all(r.outcome is ToolOutcome.ERROR for r in finished)
    assert finished[0].failure is not None and finished[0].failure.traceback
    assert log[-1].state is TerminalState.COMPLETED
    shown = [m for m in model.requests[1].messages if m.role == "tool"]
    assert len(shown) == 5
    assert "backend down for A1" in shown[0].content
    assert "Traceback" not in shown[0].content  # host tracebacks stay in the log
    assert "lookup" in shown[2].content and "broken" in shown[2].content


async def test_three_failures_withhold_the_tool_and_six_fail_the_run() -> None:
    model = FakeModel()
    for i in range(3):
        model.turn(tool_calls=[("broken", {"order_id": f"A{i}"})])
    model.turn(text="The order system is down.")
    _, _, log = await _run(_spec("broken", "lookup"), model, broken, lookup)
    assert log[-1].state is TerminalState.COMPLETED
    offered = [r.tool_names for r in log if r.type == "model_call_started"]
    assert offered[:3] == [("broken", "lookup")] * 3
    assert offered[3] == ("lookup",)
    fourth = model.requests[3]
    assert [t.name for t in fourth.tools] == ["lookup"]
    assert "broken" in fourth.messages[0].content and "no longer" in fourth.messages[0].content

    # A model that keeps calling the withheld tool burns the streak to the hard stop.
    stubborn = FakeModel()
    for i in range(6):
        stubborn.turn(tool_calls=[("broken", {"order_id": f"A{i}"})])
    _, _, log = await _run(_spec("broken"), stubborn, broken)
    assert log[-1].state is TerminalState.FAILED
    assert log[-1].failure is not None and log[-1].failure.kind == "failure_streak"
    kinds = [r.failure.kind for r in log if r.type == "tool_call_finished" and r.failure]
    assert kinds == ["RuntimeError"] * 3 + ["withheld_tool"] * 3


async def test_max_tool_calls_per_turn_is_enforced() -> None:
    model = (
        FakeModel()
        .turn(tool_calls=[("lookup", {"order_id": f"O{i}"}) for i in range(4)])
        .turn(text="ok")
    )
    _, _, log = await _run(_spec("lookup", max_tool_calls_per_turn=2), model, lookup)
    finished = [r for r in log if r.type == "tool_call_finished"]
    assert [r.outcome for r in finished] == [ToolOutcome.OK] * 2 + [ToolOutcome.ERROR] * 2
    assert {r.failure.kind for r in finished[2:] if r.failure} == {"not_executed"}


async def test_the_repetition_guard_refuses_the_third_identical_call() -> None:
    count, calls = recording_tool("count", "same answer")
    model = FakeModel()
    for _ in range(3):
        model.turn(tool_calls=[("count", {"order_id": "A1"})])
    model.turn(tool_calls=[("count", {"order_id": "B2"})]).turn(text="ok")
    _, _, log = await _run(_spec("count"), model, count)
    finished = [r for r in log if r.type == "tool_call_finished"]
    assert [r.failure.kind if r.failure else None for r in finished] == [
        None, None, "repeated_call", None,
    ]  # fmt: skip
    assert calls == ["A1", "A1", "B2"]


async def test_transient_failures_are_retried_as_new_turns() -> None:
    model = FakeModel().raises_transient(503).aborts_mid_token("partial ans").turn(text="recovered")
    _, _, log = await _run(_spec(), model)
    failed = [r for r in log if r.type == "model_call_failed"]
    assert [(r.failure.kind, r.will_retry) for r in failed] == [
        ("http_503", True),
        ("stream_incomplete", True),
    ]
    assert log[-1].state is TerminalState.COMPLETED
    assert [r.turn for r in log if r.type == "turn_started"] == [1, 2, 3]


async def test_a_stalled_stream_hits_the_idle_timeout() -> None:
    spec = _spec(stream_idle_seconds=0)
    spec = spec.model_copy(update={"limits": Limits(stream_idle_seconds=0.2)})
    model = FakeModel().stalls().turn(text="after the stall")
    _, _, log = await _run(spec, model)
    failed = [r for r in log if r.type == "model_call_failed"]
    assert [r.failure.kind for r in failed] == ["idle_timeout"]
    assert log[-1].state is TerminalState.COMPLETED


async def test_a_permanent_failure_fails_the_run_without_retrying() -> None:
    model = FakeModel().raises_permanent(401)
    store, run_id, log = await _run(_spec(), model)
    assert log[-1].state is TerminalState.FAILED
    assert log[-1].failure is not None and log[-1].failure.kind == "http_401"
    st = await status(store, run_id)
    assert st.lifecycle == "failed" and st.failure_kind == "http_401"


async def test_the_same_spec_from_a_dict_hashes_and_runs_the_same() -> None:
    built = _spec("lookup")
    from_dict = AgentSpec.model_validate(json.loads(built.model_dump_json()))
    store = InMemoryStore()
    v1 = await publish(store, built, scope=ACME)
    v2 = await publish(store, from_dict, scope=ACME)
    assert v1.hash == v2.hash

    def script() -> FakeModel:
        return FakeModel().turn(tool_calls=[("lookup", {"order_id": "A1"})]).turn(text="ok")

    _, _, log1 = await _run(built, script(), lookup)
    _, _, log2 = await _run(from_dict, script(), lookup)
    assert types(log1) == types(log2)
    assert log1[0].version_hash == log2[0].version_hash == v1.hash


async def test_an_interrupt_cancels_an_interruptible_call_at_once() -> None:
    started = asyncio.Event()
    outcome: list[str] = []

    async def slow(order_id: str) -> str:
        """Wait for a long time."""
        started.set()
        try:
            await asyncio.sleep(20)
        except asyncio.CancelledError:
            outcome.append("cancelled")
            raise
        outcome.append("finished")
        return "finished"

    model = FakeModel().turn(tool_calls=[("slow", {"order_id": "A1"})]).turn(text="never")
    async with dispatched(_spec("slow"), model, slow, grace_seconds=30) as (store, run_id):
        await started.wait()
        assert await psych_runtime.interrupt(store, run_id, reason="user stopped", scope=ACME)
        log = await settled_log(store, run_id, timeout=5)
    assert outcome == ["cancelled"]
    assert log[-1].state is TerminalState.ABORTED
    finished = next(r for r in log if r.type == "tool_call_finished")
    assert finished.outcome is ToolOutcome.ABORTED
    assert finished.failure is not None and finished.failure.kind == "interrupted"
    assert len(model.requests) == 1
    kinds = types(log)
    assert kinds.index("abort_requested") < kinds.index("tool_call_finished")
    assert not await psych_runtime.interrupt(store, run_id, scope=ACME)


async def test_an_interrupt_lets_an_uninterruptible_call_finish_first() -> None:
    started = asyncio.Event()
    release = asyncio.Event()

    async def refund(order_id: str) -> str:
        """Refund an order; never stopped half way."""
        started.set()
        await release.wait()
        return "refunded"

    spec = AgentSpec(
        name="support",
        model=ModelRef(model="fake-standard"),
        tools=(CodeTool(name="refund", interruptible=False),),
    )
    model = FakeModel().turn(tool_calls=[("refund", {"order_id": "A1"})]).turn(text="never")
    async with dispatched(spec, model, refund, grace_seconds=30) as (store, run_id):
        await started.wait()
        assert await psych_runtime.interrupt(store, run_id, scope=ACME)
        await asyncio.sleep(0.2)  # the Run must still be waiting for the refund
        assert (await store.read(run_id))[-1].type == "abort_requested"
        release.set()
        log = await settled_log(store, run_id, timeout=5)
    finished = next(r for r in log if r.type == "tool_call_finished")
    assert finished.outcome is ToolOutcome.OK and finished.result == "refunded"
    assert log[-1].state is TerminalState.ABORTED
    assert len(model.requests) == 1


async def test_an_interrupt_cancels_a_streaming_model_call() -> None:
    model = FakeModel().turn(text=" ".join(["word"] * 40), chunk_delay_seconds=0.5)
    async with dispatched(_spec(), model, grace_seconds=30) as (store, run_id):
        async with asyncio.timeout(5):
            while not any(r.type == "model_call_started" for r in await store.read(run_id)):
                await asyncio.sleep(0.01)
        assert await psych_runtime.interrupt(store, run_id, scope=ACME)
        log = await settled_log(store, run_id, timeout=5)
    kinds = types(log)
    assert "model_call_finished" not in kinds
    failed = next(r for r in log if r.type == "model_call_failed")
    assert failed.failure.kind == "interrupted"
    assert log[-1].state is TerminalState.ABORTED
    status = await psych_runtime.status(store, run_id, scope=ACME)
    assert status.terminal_state is TerminalState.ABORTED


async def test_reads_refuse_another_tenants_run() -> None:
    store, run_id, _ = await _run(_spec(), FakeModel().turn(text="hi"))
    other = psych_runtime.Scope(tenant="globex")
    for read in (
        psych_runtime.status,
        psych_runtime.answer,
        psych_runtime.state,
        psych_runtime.thread,
        psych_runtime.read_log,
        psych_runtime.report,
    ):
        with pytest.raises(psych_runtime.AccessDenied):
            await read(store, run_id, scope=other)
        await read(store, run_id, scope=ACME)
    with pytest.raises(psych_runtime.AccessDenied):
        async for _ in psych_runtime.stream(store, run_id, scope=other):
            pass
    with pytest.raises(psych_runtime.AccessDenied):
        await psych_runtime.interrupt(store, run_id, scope=other)
    with pytest.raises(psych_runtime.RunNotFound):
        await psych_runtime.status(store, psych_runtime.RunId("run_missing"), scope=ACME)
