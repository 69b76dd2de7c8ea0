"""Approvals, questions and expiry on every store, with decisions made in another process."""

import asyncio
import contextlib
import subprocess
from collections.abc import Awaitable
from collections.abc import Callable
from pathlib import Path

import pytest

import psych_runtime
from psych_runtime.records import Resumed
from psych_runtime.records import Suspended
from psych_runtime.records import ToolCallFinished
from psych_runtime.spec import SuspensionPolicy
from psych_runtime.testing import FakeModel
from tests.support.processes import kill
from tests.support.processes import wait_for
from tests.support.worker_process import spawn_worker

from .conftest import DURABLE
from .conftest import EVERY

ACME = psych_runtime.Scope(tenant="acme")
OTHER = psych_runtime.Scope(tenant="other")
UrlFor = Callable[[str], Awaitable[str]]


def _charge_spec(**suspension: float) -> psych_runtime.AgentSpec:
    return psych_runtime.AgentSpec(
        name="pay",
        model="fake-standard",
        tools=("charge",),
        suspension=SuspensionPolicy(**suspension),
    )


def _spawn(url: str, markers: Path, *, hang: bool = False) -> subprocess.Popen[str]:
    # A lease long enough that a slow backend under load never loses it mid-scenario.
    return spawn_worker(
        url,
        markers,
        "work",
        3.0,
        env={"PSYCH_E2E_APPROVE": "1", "PSYCH_E2E_HANG": "1" if hang else "0"},
        keep_stdin=True,
        capture_stderr=True,
    )


def _calls(markers: Path) -> int:
    return len(list(markers.glob("call.*")))


@pytest.mark.parametrize("kind", DURABLE)
@pytest.mark.parametrize("kill_during_call", [False, True], ids=["before-call", "during-call"])
async def test_an_approval_from_another_process_runs_the_call_exactly_once(
    kind: str, kill_during_call: bool, store_url_for: UrlFor, tmp_path: Path
) -> None:
    url = await store_url_for(kind)
    store = await psych_runtime.open_store(url)
    version = await psych_runtime.publish(store, _charge_spec(), scope=ACME)
    run = await psych_runtime.dispatch(store, version, "charge A0", scope=ACME)
    processes: list[subprocess.Popen[str]] = []
    try:
        # A Worker process suspends the Run on the gated call, then dies.
        processes.append(_spawn(url, tmp_path))

        async def waiting() -> bool:
            # Suspended and handed back: the suspension is written before the release,
            # so a loaded machine can show the first a moment before the second.
            status = await psych_runtime.status(store, run.run_id, scope=ACME)
            header = await store.get_run(run.run_id)
            released = header is not None and header.lease_holder is None
            return status.pending_approval is not None and released

        await wait_for(waiting, 30)
        status = await psych_runtime.status(store, run.run_id, scope=ACME)
        assert status.pending_approval is not None
        assert status.pending_approval.tool == "charge"
        assert status.pending_approval.arguments == {"order_id": "A0"}
        kill(processes[0])
        assert _calls(tmp_path) == 0  # nothing ran before the decision
        header = await store.get_run(run.run_id)
        assert header is not None and header.lease_holder is None

        # This process decides; a fresh Worker process carries the Run on.
        with pytest.raises(psych_runtime.AccessDenied):
            await psych_runtime.resume(store, run.run_id, approved=True, scope=OTHER)
        await psych_runtime.resume(store, run.run_id, approved=True, by="alice", scope=ACME)
        processes.append(_spawn(url, tmp_path, hang=kill_during_call))
        if kill_during_call:
            # Killed while the approved call runs: the next Worker must not run it again.
            await wait_for(lambda: _has_calls(tmp_path, 1), 30)
            kill(processes[1])
            processes.append(_spawn(url, tmp_path))

        async def settled() -> bool:
            status = await psych_runtime.status(store, run.run_id, scope=ACME)
            return status.terminal_state is not None

        await wait_for(settled, 30)
        log = await psych_runtime.read_log(store, run.run_id, scope=ACME)
    finally:
        for process in processes:
            kill(process)
        await store.close()
    assert _calls(tmp_path) == 1
    assert [(r.approved, r.resumed_by) for r in log if isinstance(r, Resumed)] == [(True, "alice")]
    finished = [r for r in log if isinstance(r, ToolCallFinished)]
    expected = (
        psych_runtime.ToolOutcome.UNKNOWN if kill_during_call else psych_runtime.ToolOutcome.OK
    )
    assert [f.outcome for f in finished] == [expected]
    assert log[-1].type == "run_settled"


async def _has_calls(markers: Path, count: int) -> bool:
    return _calls(markers) >= count


class Ledger:
    def __init__(self) -> None:
        self.refunds: list[str] = []

    def registry(self) -> psych_runtime.ToolRegistry:
        registry = psych_runtime.ToolRegistry()

        async def refund(order_id: str) -> str:
            """Refund an order."""
            self.refunds.append(order_id)
            return "refunded"

        registry.register(refund, annotations=["destructive"])
        return registry


def _refund_spec(**policy: object) -> psych_runtime.AgentSpec:
    return psych_runtime.AgentSpec(
        name="refunds",
        model="fake-standard",
        tools=("refund",),
        suspension=SuspensionPolicy(**policy),  # type: ignore[arg-type]
    )


def _session(
    model: FakeModel, ledger: Ledger, url: str | psych_runtime.Store
) -> contextlib.AbstractAsyncContextManager[psych_runtime.Session]:
    return psych_runtime.session(
        model,
        registry=ledger.registry(),
        store=url,
        scope=ACME,
        runtime=psych_runtime.RuntimeSettings(
            approvals=psych_runtime.ApprovalRules(selectors=("@destructive",))
        ),
        worker=psych_runtime.WorkerSettings(poll_interval=0.05),
    )


async def _until(s: psych_runtime.Session, run_id: psych_runtime.RunId, *, settled: bool) -> None:
    async def reached() -> bool:
        status = await s.status(run_id)
        if settled:
            return status.terminal_state is not None
        return status.lifecycle == "waiting"

    await wait_for(reached, 30)


@pytest.mark.parametrize("kind", EVERY)
async def test_deny_three_suspensions_and_refusals(kind: str, store_url_for: UrlFor) -> None:
    url = await store_url_for(kind)
    ledger = Ledger()
    two = [("refund", {"order_id": "A-1"}), ("refund", {"order_id": "A-2"})]
    model = (
        FakeModel()
        .turn(tool_calls=two)  # A-1 waits, A-2 is closed unexecuted
        .turn(tool_calls=two[1:])  # asked again
        .turn(tool_calls=[("refund", {"order_id": "A-3"})])
        .turn(text="Done.")
    )
    async with _session(model, ledger, url) as s:
        run = await s.dispatch(_refund_spec(), "Refund A-1, A-2 and A-3")
        await _until(s, run.run_id, settled=False)
        with pytest.raises(psych_runtime.AccessDenied):
            await psych_runtime.resume(s.store, run.run_id, approved=True, scope=OTHER)
        with pytest.raises(psych_runtime.AccessDenied):
            await psych_runtime.interrupt(s.store, run.run_id, scope=OTHER)
        with pytest.raises(psych_runtime.AccessDenied):
            await psych_runtime.send(s.store, run.run_id, "hi", scope=OTHER)
        await s.resume(run.run_id, approved=True, by="alice")
        await _until(s, run.run_id, settled=False)
        await s.resume(run.run_id, approved=False, by="bob", payload={"reason": "duplicate"})
        await _until(s, run.run_id, settled=False)
        await s.resume(run.run_id, approved=True, by="alice")
        await _until(s, run.run_id, settled=True)
        with pytest.raises(psych_runtime.RunNotSuspended):
            await s.resume(run.run_id, approved=True)
        log = await s.read_log(run.run_id)
    assert ledger.refunds == ["A-1", "A-3"]
    assert len([r for r in log if isinstance(r, Suspended)]) == 3
    kinds = [r.failure.kind for r in log if isinstance(r, ToolCallFinished) and r.failure]
    assert sorted(kinds) == ["denied", "not_executed"]
    assert log[-1].type == "run_settled"


@pytest.mark.parametrize("kind", EVERY)
async def test_expiry_by_a_late_resume_and_by_the_worker_alone(
    kind: str, store_url_for: UrlFor
) -> None:
    url = await store_url_for(kind)
    ledger = Ledger()
    model = FakeModel()
    for _ in range(2):
        model.turn(tool_calls=[("refund", {"order_id": "A-1"})])
    async with _session(model, ledger, url) as s:
        # Nobody resumes: the Worker claims the Run at its expiry and abandons it.
        alone = await s.dispatch(_refund_spec(approval_expires_seconds=2.0), "Refund A-1")
        await _until(s, alone.run_id, settled=False)
        await _until(s, alone.run_id, settled=True)
        assert (await s.status(alone.run_id)).failure_kind == "suspension_expired"
        # A resume after the expiry abandons the Run and runs nothing.
        late = await s.dispatch(_refund_spec(approval_expires_seconds=3.0), "Refund A-1")
        await _until(s, late.run_id, settled=False)
        await s.worker.stop()
        await asyncio.sleep(3.1)
        with pytest.raises(psych_runtime.SuspensionExpired):
            await s.resume(late.run_id, approved=True)
        status = await s.status(late.run_id)
    assert status.terminal_state is psych_runtime.TerminalState.ABANDONED
    assert ledger.refunds == []


@pytest.mark.parametrize("kind", EVERY)
async def test_a_question_round_trip(kind: str, store_url_for: UrlFor) -> None:
    url = await store_url_for(kind)
    question = {"questions": [{"question": "Card or credit?", "options": [{"label": "card"}]}]}
    model = FakeModel().turn(tool_calls=[("ask_question", question)]).turn(text="To your card.")
    async with _session(model, Ledger(), url) as s:
        run = await s.dispatch(_refund_spec(may_ask_questions=True), "Refund A-1")
        await _until(s, run.run_id, settled=False)
        pending = (await s.status(run.run_id)).pending_question
        assert pending is not None and pending.questions[0].question == "Card or credit?"
        await s.resume(run.run_id, payload={"answer": "card"}, by="customer")
        await _until(s, run.run_id, settled=True)
        assert (await s.answer(run.run_id)).text == "To your card."
    assert '"card"' in str(model.requests[1].messages)


@pytest.mark.parametrize("kind", EVERY)
async def test_a_timer_wakes_at_its_time_and_no_worker_claims_it_early(
    kind: str, store_url_for: UrlFor
) -> None:
    from datetime import UTC
    from datetime import datetime
    from datetime import timedelta

    from psych_runtime.adapters import Fence
    from psych_runtime.adapters import RunState
    from psych_runtime.records import AttemptStarted
    from psych_runtime.records import SuspendReason
    from psych_runtime.records import WorkerId

    url = await store_url_for(kind)
    store = await psych_runtime.open_store(url)
    try:
        version = await psych_runtime.publish(store, _refund_spec(), scope=ACME)
        run = await psych_runtime.dispatch(store, version, "wait a moment", scope=ACME)
        # The state a timer suspension leaves: ``suspended`` written, Run parked.
        holder = WorkerId("wrk_sleeper")
        header = await store.claim(holder, datetime.now(UTC), 30)
        assert header is not None and header.run_id == run.run_id
        now = datetime.now(UTC)
        wake = now + timedelta(seconds=1.0)
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
            fence=Fence(holder, header.attempt_count),
        )
        await store.release(run.run_id, holder, RunState.RUNNABLE, runnable_at=wake)
        model = FakeModel().turn(text="Awake.")
        async with _session(model, Ledger(), store) as s:
            await asyncio.sleep(0.5)
            early = await store.get_run(run.run_id)
            assert early is not None and early.attempt_count == 1  # nobody claimed it early
            await _until(s, run.run_id, settled=True)
            log = await s.read_log(run.run_id)
    finally:
        await store.close()
    woken = next(r for r in log if isinstance(r, Resumed))
    assert woken.payload == {"woken_by": "timer"}
    assert wake <= woken.at < wake + timedelta(seconds=2)
    assert log[-1].type == "run_settled"


@pytest.mark.parametrize("kind", EVERY)
async def test_time_spent_waiting_extends_the_deadline_the_worker_enforces(
    kind: str, store_url_for: UrlFor
) -> None:
    url = await store_url_for(kind)
    ledger = Ledger()
    model = FakeModel().turn(tool_calls=[("refund", {"order_id": "A-1"})]).turn(text="Done.")
    async with _session(model, ledger, url) as s:
        version = await s.publish(_refund_spec())
        run = await psych_runtime.dispatch(
            s.store, version, "Refund A-1", scope=ACME, deadline_seconds=1.5
        )
        await _until(s, run.run_id, settled=False)
        await asyncio.sleep(1.7)  # longer than the whole deadline, spent waiting
        await s.resume(run.run_id, approved=True)
        await _until(s, run.run_id, settled=True)
        status = await s.status(run.run_id)
    assert status.terminal_state is psych_runtime.TerminalState.COMPLETED
    assert ledger.refunds == ["A-1"]


@pytest.mark.parametrize("kind", EVERY)
async def test_next_run_messages_reach_the_continuation(kind: str, store_url_for: UrlFor) -> None:
    url = await store_url_for(kind)
    model = (
        FakeModel()
        .turn(tool_calls=[("refund", {"order_id": "A-1"})])
        .turn(text="Refunded.")
        .turn(text="Noted your note.")
    )
    async with _session(model, Ledger(), url) as s:
        first = await s.dispatch(_refund_spec(), "Refund A-1")
        await _until(s, first.run_id, settled=False)  # waiting for approval
        await s.send(first.run_id, "also email me", queue=psych_runtime.records.QueueKind.NEXT_RUN)
        await s.resume(first.run_id, approved=True)
        await _until(s, first.run_id, settled=True)
        second = await s.ask(_refund_spec(), "thanks", continues=first.run_id, timeout=30)
        thread = await s.thread(second.run_id)
    assert second.text == "Noted your note."
    users = [m.content for m in thread.messages if m.role == "user"]
    assert users == ["Refund A-1", "also email me", "thanks"]
    shown = [getattr(m, "content", "") for m in model.requests[2].messages]
    assert shown.index("also email me") < shown.index("thanks")


@pytest.mark.parametrize("kind", EVERY)
async def test_two_racing_resumes_decide_once_and_the_call_runs_once(
    kind: str, store_url_for: UrlFor
) -> None:
    url = await store_url_for(kind)
    ledger = Ledger()
    model = FakeModel().turn(tool_calls=[("refund", {"order_id": "A-1"})]).turn(text="Done.")
    async with _session(model, ledger, url) as s:
        run = await s.dispatch(_refund_spec(), "Refund A-1")
        await _until(s, run.run_id, settled=False)
        # Two deciders on two connections to the same store (one store for memory).
        other = s.store if kind == "memory" else await psych_runtime.open_store(url)
        try:
            outcomes = await asyncio.gather(
                psych_runtime.resume(s.store, run.run_id, approved=True, by="a", scope=ACME),
                psych_runtime.resume(other, run.run_id, approved=True, by="b", scope=ACME),
                return_exceptions=True,
            )
        finally:
            if other is not s.store:
                await other.close()
        await _until(s, run.run_id, settled=True)
        log = await s.read_log(run.run_id)
    assert sorted(type(o).__name__ for o in outcomes) == ["NoneType", "RunNotSuspended"]
    assert len([r for r in log if isinstance(r, Resumed)]) == 1
    assert ledger.refunds == ["A-1"]
