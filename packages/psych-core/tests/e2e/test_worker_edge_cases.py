"""Edge cases of the Worker and the Journal under failure, cancellation and races.

Each test is a scenario a reviewer reproduced against an earlier version of the
runtime; each asserts on what the store holds afterwards (header and log), since that
is what another Worker or a reader will see.
"""

import asyncio
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import psych_runtime
from psych_runtime import InMemoryStore
from psych_runtime import Runtime
from psych_runtime import TerminalState
from psych_runtime import ToolOutcome
from psych_runtime import Worker
from psych_runtime.adapters import RunState
from psych_runtime.records import Cost
from psych_runtime.records import QueueKind
from psych_runtime.records import Usage
from psych_runtime.runtime.clock import utcnow
from psych_runtime.testing import FakeModel
from psych_runtime.testing import settled_log

from .conftest import ACME
from .conftest import registry_of

CHAT = psych_runtime.AgentSpec(name="chat", model=psych_runtime.ModelRef(model="m"))


def _spec(*tools: psych_runtime.CodeTool) -> psych_runtime.AgentSpec:
    return psych_runtime.AgentSpec(name="ops", model=psych_runtime.ModelRef(model="m"), tools=tools)


async def _worked_until_settled(
    store: psych_runtime.Store,
    run_id: psych_runtime.RunId,
    model: FakeModel,
    *tools: Callable[..., Any],
    **settings: Any,
) -> list[psych_runtime.records.Record]:
    """A Worker with ``tools`` and ``settings`` works until the Run settles, then stops.

    Returns the Run's log; what the Worker raised, raises here.
    """
    worker = Worker(store, Runtime(store, model, registry_of(*tools)), **settings)
    task = asyncio.create_task(worker.run())
    log = await settled_log(store, run_id)
    worker.request_stop()
    await task
    return log


async def test_a_settlement_that_was_never_written_does_not_release_the_run_settled() -> None:
    class Flaky(InMemoryStore):
        fails = 2

        async def append(self, run_id, expected_seq, records, *, fence=None):  # type: ignore[no-untyped-def]
            if self.fails and any(r.type == "run_settled" for r in records):
                self.fails -= 1
                raise RuntimeError("database is locked")
            await super().append(run_id, expected_seq, records, fence=fence)

    store = Flaky()
    model = FakeModel().turn(text="done").turn(text="done again")
    async with psych_runtime.session(model, store=store) as s:
        run = await s.dispatch(CHAT, "hi")
        # The first settlement and the failure record both fail to land. The Run must
        # not be parked as settled on the strength of records that were never
        # written: it is released runnable, claimed again, and finished properly.
        log = await settled_log(store, run.run_id, timeout=5)
        header = await store.get_run(run.run_id)
    assert log[-1].state is TerminalState.COMPLETED
    assert [r.attempt_number for r in log if r.type == "attempt_started"] == [1, 2]
    assert header is not None and header.state is RunState.SETTLED


async def test_a_failed_attempt_is_settled_and_released_at_once() -> None:
    class Boom:
        async def known_models(self) -> frozenset[str]:
            return frozenset()

        def stream(self, request):  # type: ignore[no-untyped-def]
            async def events():  # type: ignore[no-untyped-def]
                raise RuntimeError("client bug")
                yield

            return events()

    store = InMemoryStore()
    async with psych_runtime.session(Boom(), store=store) as s:
        run = await s.dispatch(CHAT, "hi")
        await s.wait(run.run_id, timeout=5)
        await asyncio.sleep(0.05)
        header = await store.get_run(run.run_id)
        status = await psych_runtime.status(store, run.run_id)
    assert status.failure_kind == "attempt_failed"
    assert header is not None and header.state is RunState.SETTLED
    assert header.lease_holder is None


async def test_a_follow_up_sent_while_the_final_answer_streams_is_answered() -> None:
    model = (
        FakeModel()
        .turn(text="one two three four five", chunk_delay_seconds=0.05)
        .turn(text="answer to the follow-up")
    )
    store = InMemoryStore()
    async with psych_runtime.session(model, store=store) as s:
        run = await s.dispatch(CHAT, "hi")
        await asyncio.sleep(0.1)
        await psych_runtime.send(store, run.run_id, "and also X?", queue=QueueKind.FOLLOW_UP)
        await s.wait(run.run_id, timeout=5)
        state = await psych_runtime.state(store, run.run_id)
    assert state.terminal_state is TerminalState.COMPLETED
    assert state.output == {"text": "answer to the follow-up"}
    assert state.pending_follow_up == []
    assert [m.content for m in model.requests[1].messages if m.role == "user"][-1] == "and also X?"


async def test_shutdown_during_an_uninterruptible_call_starts_no_further_call() -> None:
    executed: list[str] = []

    async def refund(order: str) -> str:
        """Refund an order."""
        await asyncio.sleep(0.3)
        raise RuntimeError("payment gateway said no")

    async def email(to: str) -> str:
        """Send an email."""
        executed.append(to)
        return "sent"

    store = InMemoryStore()
    spec = _spec(
        psych_runtime.CodeTool(name="refund", interruptible=False),
        psych_runtime.CodeTool(name="email"),
    )
    model = FakeModel().turn(tool_calls=[("refund", {"order": "A1"}), ("email", {"to": "bob"})])
    worker = Worker(
        store,
        Runtime(store, model, registry_of(refund, email)),
        poll_interval=0.05,
        grace_seconds=5,
    )
    version = await psych_runtime.publish(store, spec, scope=ACME)
    run = await psych_runtime.dispatch(store, version, "hi", scope=ACME)
    task = asyncio.create_task(worker.run())
    await asyncio.sleep(0.1)
    await worker.stop()
    await task
    log = await store.read(run.run_id)
    finished = [r for r in log if r.type == "tool_call_finished"]
    assert executed == []
    assert [(r.outcome, r.failure.kind if r.failure else None) for r in finished] == [
        (ToolOutcome.ERROR, "RuntimeError")
    ]
    header = await store.get_run(run.run_id)
    assert header is not None and header.state is RunState.RUNNABLE


async def test_stop_waits_and_a_hung_uninterruptible_call_does_not_block_it_for_ever() -> None:
    async def slow(q: str) -> str:
        """Never comes back."""
        await asyncio.sleep(100)
        return "late"

    store = InMemoryStore()
    spec = _spec(psych_runtime.CodeTool(name="slow", interruptible=False))
    model = FakeModel().turn(tool_calls=[("slow", {"q": "a"})])
    worker = Worker(
        store, Runtime(store, model, registry_of(slow)), poll_interval=0.05, grace_seconds=0.2
    )
    version = await psych_runtime.publish(store, spec, scope=ACME)
    run = await psych_runtime.dispatch(store, version, "hi", scope=ACME)
    task = asyncio.create_task(worker.run())
    await asyncio.sleep(0.1)
    async with asyncio.timeout(5):
        await worker.stop()
    assert task.done() and not worker.active
    # Abandoned like a crash: no release, the lease will hand the Run to someone else.
    header = await store.get_run(run.run_id)
    assert header is not None and header.state is RunState.RUNNING


async def test_a_call_that_finished_before_the_deadline_keeps_its_real_outcome() -> None:
    effects: list[str] = []

    class SlowCommit(InMemoryStore):
        async def append(self, run_id, expected_seq, records, *, fence=None):  # type: ignore[no-untyped-def]
            if any(r.type == "tool_call_finished" for r in records):
                await asyncio.sleep(0.5)  # the deadline fires while this write is in flight
            await super().append(run_id, expected_seq, records, fence=fence)

    async def pay(order: str) -> str:
        """Pay an order."""
        await asyncio.sleep(0.5)
        effects.append(order)
        return "paid"

    store = SlowCommit()
    spec = _spec(psych_runtime.CodeTool(name="pay"))
    model = FakeModel().turn(tool_calls=[("pay", {"order": "A1"}), ("pay", {"order": "B2"})])
    version = await psych_runtime.publish(store, spec, scope=ACME)
    run = await psych_runtime.dispatch(store, version, "go", scope=ACME, deadline_seconds=0.75)
    log = await _worked_until_settled(
        store, run.run_id, model, pay, poll_interval=0.02, supervisor_interval=0.02, grace_seconds=5
    )
    finished = {r.call_id: r for r in log if r.type == "tool_call_finished"}
    started = {r.call_id: r.arguments["order"] for r in log if r.type == "tool_call_started"}
    by_order = {started[call_id]: record.outcome for call_id, record in finished.items()}
    # A1 was paid: its record must say so, whatever the deadline interrupted after it.
    assert effects[0] == "A1"
    assert by_order["A1"] is ToolOutcome.OK
    assert log[-1].state is TerminalState.ABORTED


async def test_a_run_claimed_after_its_deadline_is_aborted_without_running() -> None:
    effects: list[str] = []

    async def pay(order: str) -> str:
        """Pay."""
        effects.append(order)
        return "paid"

    store = InMemoryStore()
    version = await psych_runtime.publish(
        store, _spec(psych_runtime.CodeTool(name="pay")), scope=ACME
    )
    run = await psych_runtime.dispatch(store, version, "pay A1", scope=ACME, deadline_seconds=0.05)
    await asyncio.sleep(0.1)  # overdue before any Worker exists
    model = FakeModel().turn(tool_calls=[("pay", {"order": "A1"})])
    # A slow supervisor: only the check made at claim time can catch this in time.
    log = await _worked_until_settled(
        store, run.run_id, model, pay, poll_interval=0.05, supervisor_interval=30
    )
    assert effects == [] and model.requests == ()
    assert log[-1].state is TerminalState.ABORTED
    assert log[-1].failure is not None and log[-1].failure.kind == "deadline"


async def test_a_cost_in_a_second_currency_fails_the_run_and_keeps_its_usage() -> None:
    async def lookup(q: str) -> str:
        """Look up."""
        return q

    prices = psych_runtime.models.StaticPriceTable(
        {
            "m": psych_runtime.models.ModelPrice(
                input=Decimal(1),
                output=Decimal(1),
                cache_read=Decimal(0),
                cache_write=Decimal(0),
                currency="EUR",
            )
        }
    )
    model = (
        FakeModel()
        .turn(tool_calls=[("lookup", {"q": "a"})], usage=Usage(input=10, output=1))
        .turn(
            text="done",
            usage=Usage(input=10, output=1),
            cost=Cost(amount=Decimal("0.01"), currency="USD"),
        )
    )
    store = InMemoryStore()
    spec = _spec(psych_runtime.CodeTool(name="lookup"))
    async with psych_runtime.session(
        model,
        store=store,
        tools=[lookup],
        runtime=psych_runtime.RuntimeSettings(prices=prices),
    ) as s:
        reply = await s.ask(spec, "hi", timeout=5)
        report = await psych_runtime.report(store, reply.run_id)
    # Neither summed nor silently dropped: the Run stops, saying why, and the second
    # call's usage is still counted.
    assert not reply.finished
    assert report.terminal_state is TerminalState.FAILED
    status = await psych_runtime.status(store, reply.run_id)
    assert status.failure_kind == "inconsistent_cost"
    assert "USD" in (status.failure_message or "") and "EUR" in (status.failure_message or "")
    assert [c.cost.currency if c.cost else None for c in report.model_calls] == ["EUR", None]
    assert report.totals.usage.input == 20
    assert report.totals.cost_is_incomplete is True


async def test_a_killed_worker_writes_nothing_more() -> None:
    started = asyncio.Event()

    async def pay(order: str) -> str:
        """Pay."""
        started.set()
        await asyncio.sleep(0.2)
        return "paid"

    store = InMemoryStore()
    spec = _spec(psych_runtime.CodeTool(name="pay", interruptible=False))
    model = FakeModel().turn(tool_calls=[("pay", {"order": "A1"})]).turn(text="done")
    worker = Worker(store, Runtime(store, model, registry_of(pay)), poll_interval=0.05)
    version = await psych_runtime.publish(store, spec, scope=ACME)
    run = await psych_runtime.dispatch(store, version, "pay", scope=ACME)
    task = asyncio.create_task(worker.run())
    await started.wait()
    await worker.kill()
    written = len(await store.read(run.run_id))
    await asyncio.sleep(0.4)
    assert len(await store.read(run.run_id)) == written
    await asyncio.gather(task, return_exceptions=True)
    header = await store.get_run(run.run_id)
    assert header is not None and header.lease_expires_at is not None
    assert header.lease_expires_at > utcnow()


async def test_an_interrupt_cuts_a_long_retry_backoff_short() -> None:
    store = InMemoryStore()
    model = FakeModel().raises_transient(503).turn(text="too late")
    worker = Worker(
        store,
        Runtime(store, model, registry_of(), retry_base_seconds=30.0),
        poll_interval=0.05,
    )
    version = await psych_runtime.publish(store, CHAT, scope=ACME)
    run = await psych_runtime.dispatch(store, version, "hi", scope=ACME)
    task = asyncio.create_task(worker.run())
    async with asyncio.timeout(5):
        while not any(r.type == "model_call_failed" for r in await store.read(run.run_id)):
            await asyncio.sleep(0.01)
    await psych_runtime.interrupt(store, run.run_id, reason="user left", scope=ACME)
    log = await settled_log(store, run.run_id, timeout=5)  # far sooner than the 30 s backoff
    worker.request_stop()
    await task
    assert log[-1].state is TerminalState.ABORTED
    assert len(model.requests) == 1


async def test_renewals_and_the_release_name_the_claim_they_belong_to() -> None:
    # A Worker that lost a Run and claimed it again must not let its older Attempt
    # extend or drop the new lease, so every renew and release carries the attempt
    # count of the claim it was made under (the store refuses any other).
    calls: list[tuple[str, int | None]] = []

    class Recording(InMemoryStore):
        async def renew(self, run_id, worker_id, now, lease_seconds, *, attempt_count=None):  # type: ignore[no-untyped-def]
            calls.append(("renew", attempt_count))
            return await super().renew(
                run_id, worker_id, now, lease_seconds, attempt_count=attempt_count
            )

        async def release(self, run_id, worker_id, state, **options):  # type: ignore[no-untyped-def]
            calls.append(("release", options.get("attempt_count")))
            await super().release(run_id, worker_id, state, **options)

    async def pack(order: str) -> str:
        """Pack an order."""
        await asyncio.sleep(0.5)
        return "packed"

    store = Recording()
    version = await psych_runtime.publish(
        store, _spec(psych_runtime.CodeTool(name="pack")), scope=ACME
    )
    run = await psych_runtime.dispatch(store, version, "pack", scope=ACME)
    # Another Worker claimed it first and vanished, so ours holds the second claim.
    ghost = await store.claim(psych_runtime.records.WorkerId("ghost"), utcnow(), 0.01)
    assert ghost is not None and ghost.attempt_count == 1
    await asyncio.sleep(0.02)
    model = FakeModel().turn(tool_calls=[("pack", {"order": "A1"})]).turn(text="packed")
    log = await _worked_until_settled(
        store, run.run_id, model, pack, lease_seconds=0.6, heartbeat_seconds=0.1, poll_interval=0.05
    )
    assert log[-1].state is TerminalState.COMPLETED  # type: ignore[attr-defined]
    assert ("renew", 2) in calls
    assert ("release", 2) in calls
    assert all(count == 2 for _, count in calls), calls
    header = await store.get_run(run.run_id)
    assert header is not None and header.state is RunState.SETTLED
