"""An approved call runs at most once; a call left in doubt by a dead Worker says so.

The Attempt that acts on an approval writes its start immediately before running the
call. Killed before that write lands, the approval still waits for the next Attempt,
which runs the call. Killed after it lands (the call may have started), the call is
in doubt: it is closed ``unknown``/``orphaned`` and never run again blindly, unless its
tool is registered idempotent, which is run again with the same idempotency key.
The kills are placed exactly, around that one write, so each case is deterministic.
"""

import asyncio
from collections.abc import Sequence

import pytest

import psych_runtime
from psych_runtime import AgentSpec
from psych_runtime import InMemoryStore
from psych_runtime import ModelRef
from psych_runtime import ToolOutcome
from psych_runtime.records import Record
from psych_runtime.runtime.attempt import AttemptKilled
from psych_runtime.testing import FAST_WORKER
from psych_runtime.testing import FakeModel
from psych_runtime.testing.forwarding import ForwardingStore

from .conftest import ACME

APPROVALS = psych_runtime.ApprovalRules(selectors=("@destructive",))


class _DiesAroundTheApprovedStart(ForwardingStore):
    """Kills the Attempt that acts on the approval, before or after its start lands."""

    def __init__(self, inner: psych_runtime.Store, *, after_landing: bool) -> None:
        super().__init__(inner)
        self.after_landing = after_landing
        self.died = asyncio.Event()

    async def before_append(self, run_id: psych_runtime.RunId, records: Sequence[Record]) -> None:
        if not self.after_landing:
            self._die_if_acting(records)

    async def after_append(self, run_id: psych_runtime.RunId, records: Sequence[Record]) -> None:
        if self.after_landing:
            self._die_if_acting(records)

    def _die_if_acting(self, records: Sequence[Record]) -> None:
        acting = any(r.type == "attempt_started" and r.attempt_number == 2 for r in records)
        if acting and not self.died.is_set():
            self.died.set()
            raise AttemptKilled("the Worker died around the approved call's start")

    async def close(self) -> None:
        """The inner store belongs to the test."""


def _registry(
    charges: list[str], keys: list[str], *, idempotent: bool
) -> psych_runtime.ToolRegistry:
    async def charge(order_id: str, context: psych_runtime.ToolContext) -> str:
        """Charge an order (destructive)."""
        charges.append(order_id)
        keys.append(context.idempotency_key)
        return "charged"

    registry = psych_runtime.ToolRegistry()
    registry.register(charge, annotations=("destructive",), idempotent=idempotent)
    return registry


async def _run_worker_until(
    store: psych_runtime.Store,
    registry: psych_runtime.ToolRegistry,
    done: asyncio.Event,
    *,
    first: bool = False,
) -> None:
    """A Worker (with a model that asks for the charge first, else answers) until ``done``."""
    model = FakeModel()
    if first:
        model.turn(tool_calls=[("charge", {"order_id": "A1"})])
    model.turn(text="ok")
    runtime = psych_runtime.Runtime(store, model, registry, approvals=APPROVALS)
    worker = psych_runtime.Worker(store, runtime, **FAST_WORKER)  # type: ignore[arg-type]
    task = asyncio.create_task(worker.run())
    try:
        async with asyncio.timeout(10):
            await done.wait()
    finally:
        await worker.kill()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


@pytest.mark.parametrize(
    ("after_landing", "idempotent", "runs", "outcome"),
    [
        (False, False, 1, ToolOutcome.OK),  # the approval still waits: run by the next
        (True, False, 0, ToolOutcome.UNKNOWN),  # in doubt: reported, never run blindly
        (True, True, 1, ToolOutcome.OK),  # idempotent: run again under the same key
    ],
)
async def test_an_approved_call_runs_at_most_once_and_a_doubt_is_reported(
    after_landing: bool, idempotent: bool, runs: int, outcome: ToolOutcome
) -> None:
    store = InMemoryStore()
    charges: list[str] = []
    keys: list[str] = []
    registry = _registry(charges, keys, idempotent=idempotent)
    spec = AgentSpec(name="pay", model=ModelRef(model="fake-standard"), tools=("charge",))
    version = await psych_runtime.publish(store, spec, scope=ACME)
    run = await psych_runtime.dispatch(store, version, "charge A1", scope=ACME)

    # A first Worker suspends the Run on the gated call.
    suspended = asyncio.Event()

    async def watch() -> None:
        while (await psych_runtime.status(store, run.run_id, scope=ACME)).pending_approval is None:
            await asyncio.sleep(0.01)
        header = await store.get_run(run.run_id)
        while header is not None and header.lease_holder is not None:
            await asyncio.sleep(0.01)
            header = await store.get_run(run.run_id)
        suspended.set()

    watcher = asyncio.create_task(watch())
    await _run_worker_until(store, registry, suspended, first=True)
    await watcher
    await psych_runtime.resume(store, run.run_id, approved=True, by="ops", scope=ACME)

    # The Worker acting on the approval dies around the write that starts its Attempt.
    dying = _DiesAroundTheApprovedStart(store, after_landing=after_landing)
    await _run_worker_until(dying, registry, dying.died)
    assert charges == []

    # A third Worker recovers the Run once the dead one's lease expires.
    settled = asyncio.Event()

    async def until_settled() -> None:
        while (await psych_runtime.status(store, run.run_id, scope=ACME)).terminal_state is None:
            await asyncio.sleep(0.02)
        settled.set()

    waiter = asyncio.create_task(until_settled())
    await _run_worker_until(store, registry, settled)
    await waiter
    log = await psych_runtime.read_log(store, run.run_id, scope=ACME)
    finished = [r for r in log if r.type == "tool_call_finished"]
    assert len(charges) == runs
    assert [f.outcome for f in finished] == [outcome]
    if outcome is ToolOutcome.UNKNOWN:
        assert finished[0].failure is not None and finished[0].failure.kind == "orphaned"
    assert len(set(keys)) <= 1  # a re-run uses the same idempotency key
