"""session(), the store-backed reads, and messages sent to running Runs."""

import asyncio
from decimal import Decimal

import pytest

import psych_runtime
from psych_runtime import InMemoryStore
from psych_runtime import TerminalState
from psych_runtime.records import Cost
from psych_runtime.records import CostSource
from psych_runtime.records import QueueKind
from psych_runtime.records import Usage
from psych_runtime.testing import CrashingStore
from psych_runtime.testing import FakeModel
from psych_runtime.testing import settled_log

from .conftest import ACME
from .conftest import dispatched
from .conftest import price
from .conftest import registry_of
from .conftest import running_worker
from .conftest import types


async def lookup_order(order_id: str) -> dict[str, str]:
    """Fetch one order's delivery state."""
    return {"id": order_id, "state": "delivered"}


SPEC = psych_runtime.AgentSpec(
    name="helpdesk",
    instructions="Answer order questions.",
    model=psych_runtime.ModelRef(model="gpt-4.1"),
    tools=(psych_runtime.CodeTool(name="lookup_order"),),
)
CHAT = psych_runtime.AgentSpec(name="chat", model=psych_runtime.ModelRef(model="gpt-4o"))


async def test_session_ask_returns_the_answer_and_reports_usage_and_cost() -> None:
    prices = psych_runtime.models.StaticPriceTable(
        {"gpt-4.1": price("2.50", "10.00", "1.25", "3.75")}
    )
    model = (
        FakeModel()
        .turn(
            tool_calls=[("lookup_order", {"order_id": "A1"})],
            usage=Usage(input=1000, output=50, cache_write=2000),
        )
        .turn(text="A1 has shipped.", usage=Usage(input=200, output=20, cache_read=2000))
    )
    async with psych_runtime.session(
        model, tools=[lookup_order], runtime=psych_runtime.RuntimeSettings(prices=prices)
    ) as s:
        reply = await s.ask(SPEC, "status of A1 please")
        report = await psych_runtime.report(s.store, reply.run_id, scope=s.scope)
    assert reply.text == "A1 has shipped." and reply.finished
    assert report.terminal_state is TerminalState.COMPLETED
    assert report.totals.usage == Usage(input=1200, output=70, cache_read=2000, cache_write=2000)
    # By hand, per million tokens: 1200*2.50 + 70*10 + 2000*1.25 + 2000*3.75 = 13700.
    assert report.totals.cost is not None
    assert report.totals.cost.amount == Decimal("0.0137")
    assert report.totals.cost.input_amount == Decimal("0.003")
    assert report.totals.cost_is_incomplete is False
    assert report.totals.model_calls == 2 and report.totals.tool_calls == 1
    latency = report.totals.latency
    parts = (
        latency.model_seconds
        + latency.tool_seconds
        + latency.compaction_seconds
        + latency.queue_seconds
        + latency.suspended_seconds
        + latency.unaccounted_seconds
    )
    assert parts == pytest.approx(latency.wall_clock_seconds)


async def test_an_unpriced_model_records_no_cost_and_a_provider_cost_wins() -> None:
    model = (
        FakeModel()
        .turn(text="one", usage=Usage(input=10, output=5))
        .turn(
            text="two",
            usage=Usage(input=10, output=5),
            cost=Cost(amount=Decimal("0.5"), currency="USD"),
        )
    )
    async with psych_runtime.session(model) as s:
        first = await s.ask(CHAT, "a")
        second = await s.ask(CHAT, "b")
        unpriced = await psych_runtime.report(s.store, first.run_id)
        provided = await psych_runtime.report(s.store, second.run_id)
    assert unpriced.model_calls[0].cost is None
    assert unpriced.totals.cost is None and unpriced.totals.unpriced_model_calls == 1
    assert provided.totals.cost is not None
    assert provided.totals.cost.amount == Decimal("0.5")
    assert provided.totals.cost.source is CostSource.PROVIDER


async def test_a_failed_run_is_reported_not_raised() -> None:
    model = FakeModel().raises_permanent(400, message="bad request")
    async with psych_runtime.session(model, tools=[lookup_order]) as s:
        failed = await s.ask(SPEC, "hello")
        status = await psych_runtime.status(s.store, failed.run_id, scope=s.scope)
    assert failed.finished is False and failed.text == ""
    assert status.lifecycle == "failed" and status.failure_kind == "http_400"


async def test_session_publish_refuses_an_unregistered_tool() -> None:
    async with psych_runtime.session(FakeModel()) as s:
        with pytest.raises(psych_runtime.SpecValidationError, match="lookup_order"):
            await s.publish(SPEC)


async def test_stream_text_yields_only_the_assistants_words() -> None:
    model = (
        FakeModel()
        .turn(text="Let me look.", tool_calls=[("lookup_order", {"order_id": "A1"})])
        .turn(text="It has shipped.")
    )
    async with psych_runtime.session(model, tools=[lookup_order]) as s:
        dispatched = await s.dispatch(SPEC, "where is A1?")
        words = [t async for t in psych_runtime.stream_text(s.store, dispatched.run_id)]
    assert words == ["Let me look.", "It has shipped."]

    async with psych_runtime.session(FakeModel().raises_permanent(403)) as s:
        dispatched = await s.dispatch(CHAT, "hi")
        with pytest.raises(psych_runtime.RunFailed):
            async for _ in psych_runtime.stream_text(s.store, dispatched.run_id):
                pass


async def test_a_continuation_carries_the_thread_and_stays_in_its_tenant() -> None:
    model = FakeModel().turn(text="Hello!").turn(text="Your order A1 has shipped.")
    async with psych_runtime.session(model, scope=ACME) as s:
        first = await s.ask(CHAT, "hi")
        second = await s.ask(CHAT, "and my order?", continues=first.run_id)
        thread = await psych_runtime.thread(s.store, second.run_id, scope=ACME)
        with pytest.raises(psych_runtime.AccessDenied):
            await psych_runtime.dispatch(
                s.store,
                await psych_runtime.publish(s.store, CHAT, shared=True),
                "x",
                scope=psych_runtime.Scope(tenant="globex"),
                continues=first.run_id,
            )
    assert thread.run_ids == (first.run_id, second.run_id)
    assert [(m.role, m.content) for m in thread.messages] == [
        ("user", "hi"),
        ("assistant", "Hello!"),
        ("user", "and my order?"),
        ("assistant", "Your order A1 has shipped."),
    ]


async def test_a_steer_reaches_the_next_turn_and_a_follow_up_keeps_the_run_going() -> None:
    gate = asyncio.Event()

    async def slow(order_id: str) -> str:
        """Slow."""
        await gate.wait()
        return "ok"

    model = (
        FakeModel()
        .turn(tool_calls=[("slow", {"order_id": "A1"})])
        .turn(text="First answer.")
        .turn(text="Answer to the follow-up.")
    )
    spec = psych_runtime.AgentSpec(
        name="support",
        model=psych_runtime.ModelRef(model="gpt-4.1"),
        tools=(psych_runtime.CodeTool(name="slow"),),
    )
    async with dispatched(spec, model, slow, message="start") as (store, run_id):
        await asyncio.sleep(0.05)
        await psych_runtime.send(store, run_id, "also check B2", scope=ACME)
        await psych_runtime.send(
            store, run_id, "one more thing", queue=QueueKind.FOLLOW_UP, scope=ACME
        )
        gate.set()
        log = await settled_log(store, run_id)
    assert log[-1].state is TerminalState.COMPLETED
    assert log[-1].output == {"text": "Answer to the follow-up."}
    second_request = [m.content for m in model.requests[1].messages if m.role == "user"]
    assert second_request[-1] == "also check B2"
    third_request = [m.content for m in model.requests[2].messages if m.role == "user"]
    assert third_request[-1] == "one more thing"
    assert types(log).count("queue_consumed") == 2
    with pytest.raises(psych_runtime.RunAlreadySettled):
        await psych_runtime.send(store, run_id, "too late", scope=ACME)


async def test_a_run_that_keeps_killing_workers_is_failed_after_max_attempts() -> None:
    store = InMemoryStore()
    version = await psych_runtime.publish(store, CHAT, scope=ACME)
    crashing = CrashingStore(store, before="turn_started")
    async with running_worker(crashing, FakeModel(), registry_of()) as first:
        run = await psych_runtime.dispatch(store, version, "hi", scope=ACME)
        await crashing.crashed.wait()
        await first.kill()
    async with running_worker(store, FakeModel(), registry_of(), max_attempts=1):
        log = await settled_log(store, run.run_id)
    assert log[-1].state is TerminalState.FAILED
    assert log[-1].failure is not None and log[-1].failure.kind == "attempts_exhausted"
