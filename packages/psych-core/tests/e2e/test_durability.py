"""Crash recovery, deadlines, reconnecting streams and racing Workers, end to end."""

import asyncio

import psych_runtime
from psych_runtime import AgentSpec
from psych_runtime import CodeTool
from psych_runtime import InMemoryStore
from psych_runtime import ModelRef
from psych_runtime import TerminalState
from psych_runtime import ToolContext
from psych_runtime import ToolOutcome
from psych_runtime import dispatch
from psych_runtime import publish
from psych_runtime.core.messages import AssistantMessage
from psych_runtime.core.messages import ToolResultMessage
from psych_runtime.testing import FakeModel
from psych_runtime.testing import settled_log

from .conftest import ACME
from .conftest import crash_once
from .conftest import dispatched
from .conftest import recording_tool
from .conftest import registry_of
from .conftest import run_once
from .conftest import running_worker
from .conftest import types


def _spec(*tools: CodeTool) -> AgentSpec:
    return AgentSpec(name="ops", model=ModelRef(model="fake-standard"), tools=tools)


async def test_a_killed_worker_is_reclaimed_and_its_dangling_call_closed_unknown() -> None:
    started = asyncio.Event()
    executions = 0

    async def charge(order_id: str) -> str:
        """Charge a card."""
        nonlocal executions
        executions += 1
        started.set()
        await asyncio.Event().wait()  # hangs until the worker dies
        return "charged"

    store = InMemoryStore()
    model = (
        FakeModel()
        .turn(tool_calls=[("charge", {"order_id": "A1"})])
        .turn(text="I could not confirm the charge.")
    )
    version = await publish(store, _spec(CodeTool(name="charge")), scope=ACME)
    registry = registry_of(charge)
    async with running_worker(store, model, registry) as first:
        run = await dispatch(store, version, "charge A1", scope=ACME)
        await started.wait()
        await first.kill()
    header = await store.get_run(run.run_id)
    assert header is not None and header.lease_holder == first.worker_id  # never released
    async with running_worker(store, model, registry) as second:
        log = await settled_log(store, run.run_id)
    assert executions == 1  # a non-idempotent call is never run twice
    attempts = [r for r in log if r.type == "attempt_started"]
    assert [(a.attempt_number, a.reclaimed_expired_lease) for a in attempts] == [
        (1, False),
        (2, True),
    ]
    assert attempts[1].worker_id == second.worker_id
    closed = [r for r in log if r.type == "tool_call_finished"]
    assert len(closed) == 1
    assert closed[0].outcome is ToolOutcome.UNKNOWN
    assert closed[0].failure is not None and closed[0].failure.kind == "orphaned"
    assert closed[0].attempt_id == attempts[1].attempt_id
    assert log[-1].state is TerminalState.COMPLETED
    # The model was told the outcome is in doubt.
    told = [m for m in model.requests[1].messages if m.role == "tool"]
    assert "may or may not" in told[0].content


async def test_an_idempotent_tool_is_re_executed_once_with_the_same_key() -> None:
    started = asyncio.Event()
    keys: list[tuple[str, str]] = []

    async def refund(order_id: str, ctx: ToolContext) -> str:
        """Refund an order."""
        keys.append((ctx.idempotency_key, ctx.attempt_id))
        if len(keys) == 1:
            started.set()
            await asyncio.Event().wait()
        return f"refunded {order_id}"

    store = InMemoryStore()
    model = FakeModel().turn(tool_calls=[("refund", {"order_id": "A1"})]).turn(text="Refunded.")
    version = await publish(store, _spec(CodeTool(name="refund")), scope=ACME)
    registry = registry_of(refund, idempotent=("refund",))
    async with running_worker(store, model, registry) as first:
        run = await dispatch(store, version, "refund A1", scope=ACME)
        await started.wait()
        await first.kill()
    async with running_worker(store, model, registry):
        log = await settled_log(store, run.run_id)
    assert len(keys) == 2
    assert keys[0][0] == keys[1][0]  # same idempotency key across the reclaim
    assert keys[0][1] != keys[1][1]  # executed by two different Attempts
    started_calls = [r for r in log if r.type == "tool_call_started"]
    finished = [r for r in log if r.type == "tool_call_finished"]
    assert len(started_calls) == 1 and started_calls[0].safe_to_retry
    assert len(finished) == 1 and finished[0].outcome is ToolOutcome.OK
    assert finished[0].call_id == started_calls[0].call_id
    assert finished[0].result == "refunded A1"
    assert log[-1].state is TerminalState.COMPLETED


async def test_crash_injection_helper_recovers_at_the_chosen_record() -> None:
    lookup, calls = recording_tool("lookup", "shipped")
    model = FakeModel().turn(tool_calls=[("lookup", {"order_id": "A1"})]).turn(text="Shipped.")
    recovery = await crash_once(
        _spec(CodeTool(name="lookup")),
        model,
        lookup,
        message="where is A1?",
        crash_before="tool_call_finished",
    )
    # The tool ran, but its result was never written: recovery must close it as unknown.
    assert calls == ["A1"]
    assert types(recovery.crashed_log)[-1] == "tool_call_started"
    assert "tool_call_finished" not in types(recovery.crashed_log)
    recovered = recovery.recovered_records
    assert recovered[0].type == "attempt_started" and recovered[0].reclaimed_expired_lease
    assert recovered[1].type == "tool_call_finished"
    assert recovered[1].outcome is ToolOutcome.UNKNOWN
    assert recovery.final_log[-1].state is TerminalState.COMPLETED


async def test_a_crash_before_the_second_of_two_calls_leaves_a_well_formed_request() -> None:
    charged: list[int] = []

    async def charge(amount: int) -> str:
        """Charge a card."""
        charged.append(amount)
        return "charged"

    async def email(to: str) -> str:
        """Send an email."""
        return "sent"

    model = (
        FakeModel()
        .turn(tool_calls=[("charge", {"amount": 5}), ("email", {"to": "bob"})])
        .turn(text="Charged; I will email Bob next time.")
    )
    recovery = await crash_once(
        _spec(CodeTool(name="charge"), CodeTool(name="email")),
        model,
        charge,
        email,
        message="charge 5 and email bob",
        crash_before="tool_call_finished",
    )
    [asked] = [r for r in recovery.crashed_log if r.type == "model_call_finished"]
    started = [r.call_id for r in recovery.crashed_log if r.type == "tool_call_started"]
    assert len(asked.tool_calls) == 2 and started == [asked.tool_calls[0]]
    assert recovery.final_log[-1].state is TerminalState.COMPLETED
    # The request after recovery pairs every call it shows with that call's result;
    # the call the crash left unstarted is not shown at all.
    request = model.requests[-1]
    shown = [c for m in request.messages if isinstance(m, AssistantMessage) for c in m.tool_calls]
    results = [m.tool_call_id for m in request.messages if isinstance(m, ToolResultMessage)]
    assert [(c.id, c.name) for c in shown] == [(asked.tool_calls[0], "charge")]
    assert results == [asked.tool_calls[0]]
    assert charged == [5]


async def test_a_reconnecting_stream_misses_no_record_across_an_interrupt() -> None:
    gate = asyncio.Event()

    async def slow(order_id: str) -> str:
        """Slow lookup."""
        await gate.wait()
        return "ok"

    model = FakeModel().turn(tool_calls=[("slow", {"order_id": "A1"})]).turn(text="never")
    async with dispatched(_spec(CodeTool(name="slow")), model, slow) as (store, run_id):
        seen: list[int] = []
        async for record in psych_runtime.stream(store, run_id, scope=ACME):
            seen.append(record.seq)
            if record.type == "tool_call_started":
                break  # the client disconnects mid-run
        cursor = seen[-1]
        await psych_runtime.interrupt(store, run_id, reason="stop", scope=ACME)
        gate.set()
        async for record in psych_runtime.stream(store, run_id, after=cursor, scope=ACME):
            seen.append(record.seq)
        log = await settled_log(store, run_id)
    assert seen == [r.seq for r in log]
    assert "abort_requested" in types(log)
    assert log[-1].state is TerminalState.ABORTED


async def test_a_deadline_aborts_a_hung_tool() -> None:
    async def hang(order_id: str) -> str:
        """Never returns."""
        await asyncio.Event().wait()
        return "unreachable"

    model = FakeModel().turn(tool_calls=[("hang", {"order_id": "A1"})])
    store, run_id, log = await run_once(
        _spec(CodeTool(name="hang")), model, hang, deadline_seconds=0.3
    )
    finished = next(r for r in log if r.type == "tool_call_finished")
    assert finished.outcome is ToolOutcome.ABORTED
    assert log[-1].state is TerminalState.ABORTED
    assert log[-1].failure is not None and log[-1].failure.kind == "deadline"
    status = await psych_runtime.status(store, run_id)
    assert status.lifecycle == "stopped"


async def test_the_supervisor_force_settles_an_uninterruptible_hang_after_grace() -> None:
    async def transfer(order_id: str) -> str:
        """An uninterruptible call that hangs."""
        await asyncio.Event().wait()
        return "unreachable"

    model = FakeModel().turn(tool_calls=[("transfer", {"order_id": "A1"})])
    spec = _spec(CodeTool(name="transfer", interruptible=False))
    _, _, log = await run_once(spec, model, transfer, grace_seconds=0.3, deadline_seconds=0.3)
    started = next(r for r in log if r.type == "tool_call_started")
    assert started.interruptible is False
    finished = next(r for r in log if r.type == "tool_call_finished")
    assert finished.outcome is ToolOutcome.UNKNOWN
    settled = log[-1]
    assert settled.state is TerminalState.FORCE_SETTLED
    attempt = next(r for r in log if r.type == "attempt_started")
    assert settled.orphaned_attempt_id == attempt.attempt_id


async def test_an_uninterruptible_call_finishes_before_the_deadline_abort() -> None:
    gate = asyncio.Event()

    async def refund(order_id: str) -> str:
        """A refund that must never be abandoned half way."""
        await asyncio.sleep(0.5)
        gate.set()
        return "refunded"

    model = FakeModel().turn(tool_calls=[("refund", {"order_id": "A1"})])
    spec = _spec(CodeTool(name="refund", interruptible=False))
    _, _, log = await run_once(spec, model, refund, grace_seconds=5.0, deadline_seconds=0.2)
    assert gate.is_set()
    finished = next(r for r in log if r.type == "tool_call_finished")
    assert finished.outcome is ToolOutcome.OK and finished.result == "refunded"
    assert log[-1].state is TerminalState.ABORTED


async def test_two_workers_racing_never_both_hold_a_run() -> None:
    async def lookup(order_id: str) -> str:
        """Look up."""
        await asyncio.sleep(0)
        return "ok"

    store = InMemoryStore()
    runs = 60
    # A shared script would interleave across concurrent Runs, so each Worker gets a
    # model that answers any request the same way.
    version = await publish(store, _spec(CodeTool(name="lookup")), scope=ACME)
    registry = registry_of(lookup)
    ids = [(await dispatch(store, version, f"q{i}", scope=ACME)).run_id for i in range(runs)]
    echo_a, echo_b = _EchoModel(), _EchoModel()
    async with (
        running_worker(store, echo_a, registry, concurrency=4) as a,
        running_worker(store, echo_b, registry, concurrency=4) as b,
    ):
        logs = [await settled_log(store, run_id, timeout=30) for run_id in ids]
    holders = set()
    for log in logs:
        attempts = [r for r in log if r.type == "attempt_started"]
        assert [x.attempt_number for x in attempts] == list(range(1, len(attempts) + 1))
        assert len(attempts) == 1
        holders.add(attempts[0].worker_id)
        assert log[-1].state is TerminalState.COMPLETED
    assert holders <= {a.worker_id, b.worker_id}
    assert echo_a.calls + echo_b.calls == 2 * runs


class _EchoModel:
    """Answers every request: one tool call on the first turn, then a final text."""

    def __init__(self) -> None:
        self.calls = 0

    async def known_models(self) -> frozenset[str]:
        return frozenset()

    def stream(self, request):  # type: ignore[no-untyped-def]
        self.calls += 1
        asked = any(m.role == "tool" for m in request.messages)
        script = FakeModel()
        if asked:
            script.turn(text="done")
        else:
            script.turn(tool_calls=[("lookup", {"order_id": request.messages[-1].content})])
        return script.stream(request)
