"""Approvals end to end: a gated call suspends the Run, a person decides, the Run goes on."""

import asyncio
import contextlib
from collections.abc import AsyncIterator
from datetime import UTC
from datetime import datetime
from typing import Any

import pytest

import psych_runtime
from psych_runtime.records import Resumed
from psych_runtime.records import Suspended
from psych_runtime.records import ToolCallFinished
from psych_runtime.records import ToolCallStarted
from psych_runtime.spec import SuspensionPolicy
from psych_runtime.testing import FakeModel

from .conftest import ACME
from .conftest import session_on

OTHER = psych_runtime.Scope(tenant="other")
DESTRUCTIVE = psych_runtime.ApprovalRules(selectors=("@destructive",))


class Ledger:
    """Counts every real execution of the tools, so exactly-once is checked, not assumed."""

    def __init__(self) -> None:
        self.refunds: list[str] = []
        self.lookups: list[str] = []

    def registry(self) -> psych_runtime.ToolRegistry:
        registry = psych_runtime.ToolRegistry()

        async def refund(order_id: str) -> dict[str, str]:
            """Refund an order in full."""
            self.refunds.append(order_id)
            return {"refunded": order_id}

        async def lookup(order_id: str) -> dict[str, str]:
            """Look an order up."""
            self.lookups.append(order_id)
            return {"order_id": order_id, "state": "paid"}

        registry.register(refund, annotations=["destructive"])
        registry.register(lookup, annotations=["read-only"])
        return registry


def _spec(**suspension: float) -> psych_runtime.AgentSpec:
    return psych_runtime.AgentSpec(
        name="support",
        instructions="Help with orders.",
        model="gpt-4o-mini",
        tools=("refund", "lookup"),
        suspension=SuspensionPolicy(**suspension),
    )


async def _suspended(s: psych_runtime.Session, run_id: psych_runtime.RunId) -> None:
    await s.wait(run_id, timeout=10)
    status = await s.status(run_id)
    assert status.lifecycle == "waiting", status


@pytest.fixture
def ledger() -> Ledger:
    return Ledger()


@contextlib.asynccontextmanager
async def _refund_waiting(
    ledger: Ledger, store: psych_runtime.Store, spec: psych_runtime.AgentSpec
) -> AsyncIterator[tuple[psych_runtime.Session, psych_runtime.RunId]]:
    """A session whose one Run of ``spec`` asked to refund A-1 and waits for a person."""
    model = FakeModel().turn(tool_calls=[("refund", {"order_id": "A-1"})]).turn(text="Done.")
    async with _session(model, ledger, store) as s:
        run = await s.dispatch(spec, "Refund A-1")
        await _suspended(s, run.run_id)
        yield s, run.run_id


def _session(
    model: FakeModel,
    ledger: Ledger,
    store: psych_runtime.Store,
    *,
    rules: psych_runtime.ApprovalRules = DESTRUCTIVE,
    policy: psych_runtime.Policy | None = None,
) -> contextlib.AbstractAsyncContextManager[psych_runtime.Session]:
    return session_on(store, model, ledger.registry(), approvals=rules, policy=policy)


async def test_a_destructive_call_waits_for_approval_and_then_runs_once(
    ledger: Ledger, store: psych_runtime.Store
) -> None:
    model = (
        FakeModel().turn(tool_calls=[("refund", {"order_id": "A-1"})]).turn(text="Refunded A-1.")
    )
    async with _session(model, ledger, store) as s:
        run = await s.dispatch(_spec(), "Refund A-1 please")
        await _suspended(s, run.run_id)
        status = await s.status(run.run_id)
        assert status.pending_approval is not None
        assert status.pending_approval.tool == "refund"
        assert status.pending_approval.arguments == {"order_id": "A-1"}
        assert ledger.refunds == []  # nothing ran before the decision

        # Another process (here: another session on the same store) decides.
        async with _session(FakeModel(), Ledger(), store) as other:
            await other.resume(run.run_id, approved=True, by="alice@acme")
        await s.wait(run.run_id, timeout=10)
        answer = await s.answer(run.run_id)
        assert answer.text == "Refunded A-1."
        assert ledger.refunds == ["A-1"]
        log = await s.read_log(run.run_id)
    resumed = [r for r in log if isinstance(r, Resumed)]
    assert [(r.approved, r.resumed_by) for r in resumed] == [(True, "alice@acme")]
    finished = [r for r in log if isinstance(r, ToolCallFinished)]
    assert [f.outcome for f in finished] == [psych_runtime.ToolOutcome.OK]


async def test_a_denied_call_never_runs_and_the_model_is_told_why(
    ledger: Ledger, store: psych_runtime.Store
) -> None:
    model = (
        FakeModel()
        .turn(tool_calls=[("refund", {"order_id": "A-1"})])
        .turn(text="I could not refund it.")
    )
    async with _session(model, ledger, store) as s:
        run = await s.dispatch(_spec(), "Refund A-1")
        await _suspended(s, run.run_id)
        await s.resume(run.run_id, approved=False, by="bob", payload={"reason": "over limit"})
        await s.wait(run.run_id, timeout=10)
        assert (await s.answer(run.run_id)).text == "I could not refund it."
        log = await s.read_log(run.run_id)
    assert ledger.refunds == []
    finished = next(r for r in log if isinstance(r, ToolCallFinished))
    assert finished.outcome is psych_runtime.ToolOutcome.ERROR
    assert finished.failure is not None and finished.failure.kind == "denied"
    assert "over limit" in finished.failure.message
    # The model's second request carried the denial as the tool's result.
    assert "over limit" in str(model.requests[1].messages[-1])


async def test_ungated_tools_run_without_stopping(
    ledger: Ledger, store: psych_runtime.Store
) -> None:
    model = FakeModel().turn(tool_calls=[("lookup", {"order_id": "A-1"})]).turn(text="Paid.")
    async with _session(model, ledger, store) as s:
        answer = await s.ask(_spec(), "Is A-1 paid?", timeout=10)
        log = await s.read_log(answer.run_id)
    assert answer.text == "Paid." and ledger.lookups == ["A-1"]
    assert not any(isinstance(r, Suspended) for r in log)


async def test_three_gated_calls_in_one_turn_are_three_suspensions(
    ledger: Ledger, store: psych_runtime.Store
) -> None:
    three = [("refund", {"order_id": f"A-{n}"}) for n in (1, 2, 3)]
    model = (
        FakeModel()
        .turn(tool_calls=three)  # the first waits; the other two are closed unexecuted
        .turn(tool_calls=three[1:])  # the model asks again for the two not run
        .turn(tool_calls=three[2:])
        .turn(text="All three refunded.")
    )
    async with _session(model, ledger, store) as s:
        run = await s.dispatch(_spec(), "Refund A-1, A-2 and A-3")
        for _ in range(3):
            await _suspended(s, run.run_id)
            await s.resume(run.run_id, approved=True, by="alice")
        await s.wait(run.run_id, timeout=10)
        assert (await s.answer(run.run_id)).text == "All three refunded."
        log = await s.read_log(run.run_id)
    assert ledger.refunds == ["A-1", "A-2", "A-3"]
    suspensions = [r for r in log if isinstance(r, Suspended)]
    assert len(suspensions) == 3
    not_run = [
        r
        for r in log
        if isinstance(r, ToolCallFinished) and r.failure and r.failure.kind == "not_executed"
    ]
    assert len(not_run) == 3  # two after the first suspension, one after the second


class _Judge:
    def __init__(self, decision: psych_runtime.Decision | None) -> None:
        self.decision = decision
        self.seen: list[tuple[str, str, dict[str, object]]] = []

    async def allow_tool(
        self, scope: psych_runtime.Scope, tool: str, arguments: dict[str, object]
    ) -> psych_runtime.Decision:
        self.seen.append((scope.tenant, tool, arguments))
        if self.decision is None:
            raise RuntimeError("policy service down")
        return self.decision


@pytest.mark.parametrize(
    ("decision", "kind_fragment"),
    [
        (psych_runtime.Decision.deny("refunds are closed today"), "refunds are closed today"),
        (None, "approval policy failed"),
    ],
)
async def test_a_policy_denial_or_failure_refuses_the_call(
    ledger: Ledger,
    store: psych_runtime.Store,
    decision: psych_runtime.Decision | None,
    kind_fragment: str,
) -> None:
    policy = _Judge(decision)
    model = FakeModel().turn(tool_calls=[("refund", {"order_id": "A-1"})]).turn(text="No.")
    async with _session(model, ledger, store, policy=policy) as s:
        answer = await s.ask(_spec(), "Refund A-1", timeout=10)
        log = await s.read_log(answer.run_id)
    assert ledger.refunds == []
    assert policy.seen == [("acme", "refund", {"order_id": "A-1"})]
    finished = next(r for r in log if isinstance(r, ToolCallFinished))
    assert finished.failure is not None and finished.failure.kind == "access_denied"
    assert kind_fragment in finished.failure.message


async def test_a_policy_can_ask_even_when_no_rule_does(
    ledger: Ledger, store: psych_runtime.Store
) -> None:
    policy = _Judge(psych_runtime.Decision.ask("lookups of VIP orders need a person"))
    model = FakeModel().turn(tool_calls=[("lookup", {"order_id": "V-9"})]).turn(text="Paid.")
    async with _session(model, ledger, store, policy=policy) as s:
        run = await s.dispatch(_spec(), "Is V-9 paid?")
        await _suspended(s, run.run_id)
        status = await s.status(run.run_id)
        assert status.pending_approval is not None
        await s.resume(run.run_id, approved=True)
        await s.wait(run.run_id, timeout=10)
    assert ledger.lookups == ["V-9"]


async def test_never_wins_over_always_and_selectors(
    ledger: Ledger, store: psych_runtime.Store
) -> None:
    rules = psych_runtime.ApprovalRules(
        selectors=("@destructive",), always=frozenset({"refund"}), never=frozenset({"refund"})
    )
    model = FakeModel().turn(tool_calls=[("refund", {"order_id": "A-1"})]).turn(text="Done.")
    async with _session(model, ledger, store, rules=rules) as s:
        await s.ask(_spec(), "Refund A-1", timeout=10)
    assert ledger.refunds == ["A-1"]


async def test_resume_refusals(ledger: Ledger, store: psych_runtime.Store) -> None:
    async with _refund_waiting(ledger, store, _spec()) as (s, run_id):
        with pytest.raises(psych_runtime.AccessDenied):
            await psych_runtime.resume(store, run_id, approved=True, scope=OTHER)
        with pytest.raises(psych_runtime.InvalidResume):
            await s.resume(run_id)  # an approval needs a decision
        with pytest.raises(psych_runtime.RunNotFound):
            await s.resume(psych_runtime.RunId("run_missing"), approved=True)
        await s.resume(run_id, approved=True)
        with pytest.raises(psych_runtime.RunNotSuspended):
            await s.resume(run_id, approved=True)  # already decided
        await s.wait(run_id, timeout=10)
        with pytest.raises(psych_runtime.RunNotSuspended):
            await s.resume(run_id, approved=True)
    assert ledger.refunds == ["A-1"]


async def test_a_resume_after_expiry_abandons_the_run_and_runs_nothing(
    ledger: Ledger, store: psych_runtime.Store
) -> None:
    # Long enough that the Worker's own expiry claim does not race the late resume.
    spec = _spec(approval_expires_seconds=1.5)
    async with _refund_waiting(ledger, store, spec) as (s, run_id):
        await s.worker.stop()  # nobody claims the Run at its expiry
        await asyncio.sleep(1.6)
        with pytest.raises(psych_runtime.SuspensionExpired):
            await s.resume(run_id, approved=True, by="late")
        status = await s.status(run_id)
    assert status.terminal_state is psych_runtime.TerminalState.ABANDONED
    assert status.failure_kind == "suspension_expired"
    assert ledger.refunds == []


async def test_an_expired_suspension_nobody_resumes_is_abandoned_by_a_worker(
    ledger: Ledger, store: psych_runtime.Store
) -> None:
    spec = _spec(approval_expires_seconds=1.5)
    async with _refund_waiting(ledger, store, spec) as (s, run_id):
        # The suspension is in the log a moment before the Worker lets go of the Run.
        for _ in range(100):
            header = await store.get_run(run_id)
            if header is None or header.lease_holder is None:
                break
            await asyncio.sleep(0.01)
        assert header is not None and header.lease_holder is None  # nobody holds it
        assert header.runnable_at is not None  # parked until the expiry
        for _ in range(200):
            if (await s.status(run_id)).terminal_state is not None:
                break
            await asyncio.sleep(0.05)
        status = await s.status(run_id)
        log = await s.read_log(run_id)
    assert status.terminal_state is psych_runtime.TerminalState.ABANDONED
    assert ledger.refunds == []
    # The open call was closed, not left dangling in a settled Run.
    started = {r.call_id for r in log if isinstance(r, ToolCallStarted)}
    closed = {r.call_id for r in log if isinstance(r, ToolCallFinished)}
    assert started == closed


async def test_time_suspended_extends_the_deadline_the_worker_enforces(
    ledger: Ledger, store: psych_runtime.Store
) -> None:
    model = FakeModel().turn(tool_calls=[("refund", {"order_id": "A-1"})]).turn(text="Done.")
    async with _session(model, ledger, store) as s:
        version = await s.publish(_spec())
        run = await psych_runtime.dispatch(
            store, version, "Refund A-1", scope=ACME, deadline_seconds=1.0
        )
        await _suspended(s, run.run_id)
        await asyncio.sleep(1.2)  # longer than the whole deadline, spent waiting
        await s.resume(run.run_id, approved=True)
        await s.wait(run.run_id, timeout=10)
        answer = await s.answer(run.run_id)
    assert answer.text == "Done."
    assert ledger.refunds == ["A-1"]


def _worker(store: psych_runtime.Store, model: FakeModel, ledger: Ledger) -> psych_runtime.Worker:
    runtime = psych_runtime.Runtime(store, model, ledger.registry(), approvals=DESTRUCTIVE)
    return psych_runtime.Worker(
        store,
        runtime,
        lease_seconds=0.3,
        heartbeat_seconds=0.1,
        poll_interval=0.05,
        supervisor_interval=0.3,
    )


async def _run_until(
    worker: psych_runtime.Worker, done: "asyncio.Event | asyncio.Future[None]"
) -> None:
    task = asyncio.create_task(worker.run())
    try:
        async with asyncio.timeout(10):
            await done.wait() if isinstance(done, asyncio.Event) else await done
    finally:
        await worker.kill()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


@pytest.mark.parametrize(
    ("crash_before", "refunds", "outcome"),
    [
        # Killed after resuming, before the approved call could start: the next
        # Worker runs it, once.
        ("attempt_started", ["A-1"], psych_runtime.ToolOutcome.OK),
        # Killed while the approved call ran (its finish never written): it ran once,
        # and the next Worker reports it in doubt instead of running it again.
        ("tool_call_finished", ["A-1"], psych_runtime.ToolOutcome.UNKNOWN),
    ],
)
async def test_an_approved_call_survives_a_killed_worker_without_running_twice(
    ledger: Ledger,
    store: psych_runtime.Store,
    crash_before: str,
    refunds: list[str],
    outcome: psych_runtime.ToolOutcome,
) -> None:
    from psych_runtime.testing import CrashingStore

    model = FakeModel().turn(tool_calls=[("refund", {"order_id": "A-1"})]).turn(text="Done.")
    spec = _spec()
    version = await psych_runtime.publish(store, spec, scope=ACME)
    run = await psych_runtime.dispatch(store, version, "Refund A-1", scope=ACME)
    first = _worker(store, model, ledger)
    suspended = asyncio.get_running_loop().create_future()

    async def watch() -> None:
        while (await psych_runtime.status(store, run.run_id)).pending_approval is None:
            await asyncio.sleep(0.02)
        suspended.set_result(None)

    watcher = asyncio.create_task(watch())
    await _run_until(first, suspended)
    await watcher
    await psych_runtime.resume(store, run.run_id, approved=True, by="alice", scope=ACME)

    # The Worker that picks the Run up after the approval dies at the chosen record.
    crashing = CrashingStore(store, before=crash_before, occurrence=1)
    await _run_until(_worker(crashing, model, ledger), crashing.crashed)  # type: ignore[arg-type]
    # Another Worker reclaims the Run once the dead one's lease lapses.
    survivor = _worker(store, model, ledger)
    task = asyncio.create_task(survivor.run())
    try:
        async with asyncio.timeout(10):
            while (await psych_runtime.status(store, run.run_id)).terminal_state is None:
                await asyncio.sleep(0.05)
    finally:
        survivor.request_stop()
        await task
    log = await psych_runtime.read_log(store, run.run_id, scope=ACME)
    assert ledger.refunds == refunds
    finished = [r for r in log if isinstance(r, ToolCallFinished)]
    assert [f.outcome for f in finished] == [outcome]


def _asking_spec() -> psych_runtime.AgentSpec:
    return _spec().model_copy(update={"suspension": SuspensionPolicy(may_ask_questions=True)})


QUESTION = {
    "questions": [
        {
            "question": "Refund to the card or as store credit?",
            "header": "Refund method",
            "options": [{"label": "card"}, {"label": "credit", "description": "10% bonus"}],
        }
    ]
}


async def test_ask_question_round_trip(ledger: Ledger, store: psych_runtime.Store) -> None:
    model = (
        FakeModel()
        .turn(tool_calls=[("ask_question", QUESTION), ("lookup", {"order_id": "A-1"})])
        .turn(text="I will refund to your card.")
    )
    async with _session(model, ledger, store) as s:
        run = await s.dispatch(_asking_spec(), "Refund A-1")
        await _suspended(s, run.run_id)
        status = await s.status(run.run_id)
        assert status.pending_question is not None
        assert status.pending_question.questions[0].header == "Refund method"
        assert [o.label for o in status.pending_question.questions[0].options] == [
            "card",
            "credit",
        ]
        await s.resume(run.run_id, payload={"answer": "card"}, by="customer")
        await s.wait(run.run_id, timeout=10)
        assert (await s.answer(run.run_id)).text == "I will refund to your card."
        log = await s.read_log(run.run_id)
    # The model saw the answer as the question's result, and was asked once only.
    assert '"card"' in str(model.requests[1].messages)
    assert len([r for r in log if isinstance(r, Suspended)]) == 1
    tools = {r.call_id: r.tool for r in log if isinstance(r, ToolCallStarted)}
    outcomes = {tools[r.call_id]: r.outcome for r in log if isinstance(r, ToolCallFinished)}
    assert outcomes == {
        "ask_question": psych_runtime.ToolOutcome.OK,  # answered
        "lookup": psych_runtime.ToolOutcome.ERROR,  # after the question: not run
    }
    assert ledger.lookups == []
    # The question is offered only because the Spec allows it.
    offered = {t.name for t in model.requests[0].tools}
    assert "ask_question" in offered


async def test_a_malformed_question_is_refused_without_suspending(
    ledger: Ledger, store: psych_runtime.Store
) -> None:
    model = (
        FakeModel().turn(tool_calls=[("ask_question", {"questions": []})]).turn(text="Never mind.")
    )
    async with _session(model, ledger, store) as s:
        answer = await s.ask(_asking_spec(), "Refund A-1", timeout=10)
        log = await s.read_log(answer.run_id)
    assert answer.text == "Never mind."
    assert not any(isinstance(r, Suspended) for r in log)
    finished = next(r for r in log if isinstance(r, ToolCallFinished))
    assert finished.failure is not None and finished.failure.kind == "invalid_arguments"


async def test_ask_question_is_not_offered_unless_the_spec_allows_it(
    ledger: Ledger, store: psych_runtime.Store
) -> None:
    model = FakeModel().turn(text="Hello.")
    async with _session(model, ledger, store) as s:
        await s.ask(_spec(), "Hi", timeout=10)
    assert "ask_question" not in {t.name for t in model.requests[0].tools}


async def test_interrupting_a_waiting_run_settles_it_at_once_without_running_the_call(
    ledger: Ledger, store: psych_runtime.Store
) -> None:
    async with _refund_waiting(ledger, store, _spec()) as (s, run_id):
        assert await s.interrupt(run_id, reason="customer left", by="agent-7")
        async with asyncio.timeout(5):  # woken at once, not left parked for a day
            while (status := await s.status(run_id)).terminal_state is None:
                await asyncio.sleep(0.02)
        log = await s.read_log(run_id)
        with pytest.raises(psych_runtime.RunNotSuspended):
            await s.resume(run_id, approved=True)
    assert status.terminal_state is psych_runtime.TerminalState.ABORTED
    finished = next(r for r in log if isinstance(r, ToolCallFinished))
    assert finished.failure is not None and finished.failure.kind == "not_executed"
    assert ledger.refunds == []


class _InterruptedWhileReleasing(psych_runtime.InMemoryStore):
    """Lands an interrupt just after a suspension is logged, before the Run is released.

    In a deployment that is a client reacting to the suspension it streamed while the
    Worker is still on its way to releasing the Run; here it is made certain.
    """

    def __init__(self) -> None:
        super().__init__()
        self.interrupted = False

    async def append(self, run_id: psych_runtime.RunId, *args: Any, **kwargs: Any) -> None:
        await super().append(run_id, *args, **kwargs)
        records = args[1] if len(args) > 1 else kwargs["records"]
        if not self.interrupted and any(isinstance(r, Suspended) for r in records):
            self.interrupted = True
            assert await psych_runtime.interrupt(self, run_id, reason="gone", scope=ACME)


async def test_an_interrupt_racing_the_release_of_a_waiting_run_is_not_parked(
    ledger: Ledger,
) -> None:
    model = FakeModel().turn(tool_calls=[("refund", {"order_id": "A-1"})]).turn(text="Done.")
    store = _InterruptedWhileReleasing()
    async with _session(model, ledger, store) as s:
        run = await s.dispatch(_spec(), "Refund A-1")
        async with asyncio.timeout(5):  # not parked until the approval expires
            while (status := await s.status(run.run_id)).terminal_state is None:
                await asyncio.sleep(0.02)
    await store.close()
    assert store.interrupted
    assert status.terminal_state is psych_runtime.TerminalState.ABORTED
    assert ledger.refunds == []


class _Plan:
    """A consumer's per-tenant tool plan: acme may only look orders up."""

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail

    async def permitted(self, scope: psych_runtime.Scope) -> tuple[str, ...] | None:
        if self.fail:
            raise ConnectionError("plan service down")
        return ("look*",) if scope.tenant == "acme" else None


@pytest.mark.parametrize("fail", [False, True], ids=["plan", "plan-lookup-fails"])
async def test_the_tenant_plane_narrows_what_a_turn_offers_and_what_may_be_called(
    ledger: Ledger, store: psych_runtime.Store, fail: bool
) -> None:
    model = (
        FakeModel()
        .turn(tool_calls=[("refund", {"order_id": "A-1"}), ("lookup", {"order_id": "A-1"})])
        .turn(text="Looked.")
    )
    async with psych_runtime.session(
        model,
        registry=ledger.registry(),
        store=store,
        scope=ACME,
        runtime=psych_runtime.RuntimeSettings(access=_Plan(fail)),
    ) as s:
        answer = await s.ask(_spec(), "Refund A-1", timeout=10)
        log = await s.read_log(answer.run_id)
    offered = {t.name for t in model.requests[0].tools}
    assert offered == (set() if fail else {"lookup"})  # a failed lookup permits nothing
    assert ledger.refunds == []  # never offered, and refused when named anyway
    assert ledger.lookups == ([] if fail else ["A-1"])
    kinds = [r.failure.kind for r in log if isinstance(r, ToolCallFinished) and r.failure]
    assert kinds == (["unknown_tool", "unknown_tool"] if fail else ["unknown_tool"])


async def test_a_timer_suspension_wakes_at_its_time_with_no_worker_waiting(
    ledger: Ledger, store: psych_runtime.InMemoryStore
) -> None:
    from datetime import timedelta

    from psych_runtime.records import AttemptStarted
    from psych_runtime.records import SuspendReason
    from psych_runtime.records import WorkerId

    # A Run that suspended on a timer (as a workflow's sleep step does): its Attempt
    # wrote ``suspended`` and handed the Run back parked until the wake time.
    version = await psych_runtime.publish(store, _spec(), scope=ACME)
    run = await psych_runtime.dispatch(store, version, "wait a moment", scope=ACME)
    holder = WorkerId("wrk_sleeper")
    header = await store.claim(holder, datetime.now(UTC), 30)
    assert header is not None
    now = datetime.now(UTC)
    wake = now + timedelta(seconds=0.6)
    envelope = {"run_id": run.run_id, "scope": ACME, "at": now}
    await store.append(
        run.run_id,
        2,
        [
            AttemptStarted(**envelope, seq=2, worker_id=holder, attempt_number=1),
            Suspended(
                **envelope,
                seq=3,
                reason=SuspendReason.TIMER,
                wake_at=wake,
                expires_at=wake + timedelta(days=7),
            ),
        ],
        fence=psych_runtime.adapters.Fence(holder, header.attempt_count),
    )
    await store.release(
        run.run_id, holder, psych_runtime.adapters.RunState.RUNNABLE, runnable_at=wake
    )
    model = FakeModel().turn(text="Awake.")
    async with _session(model, ledger, store) as s:
        await asyncio.sleep(0.3)
        early = await store.get_run(run.run_id)
        assert early is not None and early.attempt_count == 1  # nobody claimed it early
        async with asyncio.timeout(5):
            while (status := await s.status(run.run_id)).terminal_state is None:
                await asyncio.sleep(0.02)
        log = await s.read_log(run.run_id)
    assert status.terminal_state is psych_runtime.TerminalState.COMPLETED
    woken = next(r for r in log if isinstance(r, Resumed))
    assert woken.payload == {"woken_by": "timer"}
    assert wake <= woken.at < wake + timedelta(seconds=1)
    assert (await psych_runtime.answer(store, run.run_id)).text == "Awake."
