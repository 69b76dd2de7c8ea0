"""Subagents on every store: delegation, background children, the report tree, a crash.

Each Run goes through real Workers and the store adapter's real backend; every agent
has its own model id and scripted model (``ModelsByName``), so parents and children can
interleave on several Workers without consuming each other's script.
"""

import asyncio
import subprocess
from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

import psych_runtime
from psych_runtime import RunId
from psych_runtime import Store
from psych_runtime.adapters import RunState
from psych_runtime.records import Record
from psych_runtime.records import SuspendReason
from psych_runtime.records import Usage
from psych_runtime.spec import SpawnEnvelope
from psych_runtime.spec import SubagentRef
from psych_runtime.testing import FakeModel
from psych_runtime.testing import ModelsByName
from tests.support.processes import kill
from tests.support.processes import wait_for
from tests.support.worker_process import spawn_worker

from .conftest import DURABLE
from .conftest import EVERY

ACME = psych_runtime.Scope(tenant="acme")
UrlFor = Callable[[str], Awaitable[str]]
FAST = {"lease_seconds": 3.0, "heartbeat_seconds": 0.5, "poll_interval": 0.05}
USAGE = Usage(input=100, output=20)


def lookup(order_id: str) -> str:
    """Look an order up."""
    return f"order {order_id} has shipped"


def refund(order_id: str) -> str:
    """Refund an order."""
    return f"order {order_id} refunded"


class Gate:
    """A tool that waits until the test opens the gate, so a child stays busy."""

    def __init__(self) -> None:
        self.opened = asyncio.Event()
        self.entered = asyncio.Event()

    async def slow_search(self, topic: str) -> str:
        """Search slowly."""
        self.entered.set()
        await self.opened.wait()
        return f"three sources on {topic}"


@asynccontextmanager
async def _workers(
    store: Store,
    model: ModelsByName,
    registry: psych_runtime.ToolRegistry,
    count: int = 2,
    **kw: Any,
) -> AsyncIterator[list[psych_runtime.Worker]]:
    runtime = psych_runtime.Runtime(store, model, registry, retry_base_seconds=0.01, **kw)
    workers = [psych_runtime.Worker(store, runtime, **FAST) for _ in range(count)]
    tasks = [asyncio.create_task(worker.run()) for worker in workers]
    try:
        yield workers
    finally:
        for worker in workers:
            worker.request_stop()
        await asyncio.gather(*tasks, return_exceptions=True)


def _registry(*tools: Callable[..., Any]) -> psych_runtime.ToolRegistry:
    registry = psych_runtime.ToolRegistry()
    for tool in tools:
        registry.register(tool)
    return registry


async def _settled(store: Store, run_id: RunId, timeout: float = 30.0) -> list[Record]:
    async def done() -> bool:
        log = await store.read(run_id)
        return bool(log) and log[-1].type == "run_settled"

    await wait_for(done, timeout)
    return await store.read(run_id)


def _types(log: list[Record]) -> list[str]:
    return [record.type for record in log]


# --- a roster delegation, blocking --------------------------------------------------------


@pytest.mark.parametrize("kind", EVERY)
async def test_a_roster_child_answers_its_parent_through_its_own_run(
    kind: str, store_url_for: UrlFor
) -> None:
    store = await psych_runtime.open_store(await store_url_for(kind))
    clerk = psych_runtime.AgentSpec(name="clerk", model="clerk-m", tools=("lookup", "refund"))
    lead = psych_runtime.AgentSpec(
        name="lead",
        model="lead-m",
        tools=("lookup",),
        subagents=(SubagentRef(name="clerk", description="Looks orders up for you.", spec=clerk),),
    )
    lead_model = (
        FakeModel()
        .turn(
            tool_calls=[("delegate", {"agent": "clerk", "task": "Where is order A1?"})], usage=USAGE
        )
        .turn(text="A1 has shipped.", usage=USAGE)
    )
    clerk_model = (
        FakeModel()
        .turn(tool_calls=[("refund", {"order_id": "A1"})], usage=USAGE)
        .turn(tool_calls=[("lookup", {"order_id": "A1"})], usage=USAGE)
        .turn(text="Shipped.", usage=USAGE)
    )
    model = ModelsByName({"lead-m": lead_model, "clerk-m": clerk_model})
    try:
        version = await psych_runtime.publish(store, lead, scope=ACME)
        async with _workers(store, model, _registry(lookup, refund)):
            run = await psych_runtime.dispatch(store, version, "Where is A1?", scope=ACME)
            log = await _settled(store, run.run_id)
        assert log[-1].state is psych_runtime.TerminalState.COMPLETED
        [spawned] = [r for r in log if r.type == "subagent_spawned"]
        [finished] = [r for r in log if r.type == "subagent_finished"]
        [delegated] = [
            r for r in log if r.type == "tool_call_finished" and r.call_id == spawned.call_id
        ]
        assert spawned.background is False and spawned.delegation_depth == 1
        # Narrowed: the parent holds no refund tool, so neither does its child.
        assert spawned.tools == ("lookup",)
        assert delegated.result == {
            "run_id": spawned.child_run_id,
            "state": "completed",
            "text": "Shipped.",
        }
        child = await store.get_run(spawned.child_run_id)
        assert child is not None and child.parent_run_id == run.run_id
        assert child.delegation_depth == 1 and child.state is RunState.SETTLED
        child_log = await store.read(spawned.child_run_id)
        refused = [r for r in child_log if r.type == "tool_call_finished" and r.failure]
        assert refused[0].failure.kind == "unknown_tool"
        # Rolled up: three child calls and two parent calls, two Runs.
        assert finished.usage == Usage(input=300, output=60) and finished.runs == 1
        report = await psych_runtime.report(store, run.run_id, child_depth=1, scope=ACME)
        assert report.subtree.runs == 2 and report.subtree.usage == Usage(input=500, output=100)
        assert report.subtree.cost is None and report.subtree.cost_is_incomplete
        [sub] = report.subagents
        assert sub.report is not None and sub.report.totals.model_calls == 3
        assert report.subtree.run_seconds >= report.totals.latency.wall_clock_seconds
    finally:
        await store.close()


# --- composed children in the background --------------------------------------------------

FINDER = {
    "name": "finder",
    "purpose": "Find sources about tide tables for the report.",
    "task": "Search for sources about tide tables and list the three best ones, one line each.",
    "deliverable": "Three sources, one line each.",
    "tools": ["slow_search", "lookup"],
    "model": "finder-m",
}


def _lead(**envelope: Any) -> psych_runtime.AgentSpec:
    return psych_runtime.AgentSpec(
        name="lead",
        model="lead-m",
        tools=("slow_search",),
        spawn=SpawnEnvelope(models=("finder-m",), **envelope),
    )


@pytest.mark.parametrize("kind", EVERY)
async def test_a_background_child_is_steered_and_awaited_without_a_lease(
    kind: str, store_url_for: UrlFor
) -> None:
    store = await psych_runtime.open_store(await store_url_for(kind))
    gate = Gate()
    lead_model = (
        FakeModel()
        .turn(tool_calls=[("spawn_subagent", FINDER)], usage=USAGE)
        .turn(
            tool_calls=[
                ("message_subagent", {"name": "finder", "message": "Prefer 2026 sources."})
            ],
            usage=USAGE,
        )
        .turn(text="Waiting for finder.", usage=USAGE)
        .turn(text="Here are the sources finder found.", usage=USAGE)
    )
    finder_model = (
        FakeModel()
        .turn(tool_calls=[("slow_search", {"topic": "tide tables"})], usage=USAGE)
        .turn(text="Three sources, all from 2026.", usage=USAGE)
    )
    model = ModelsByName({"lead-m": lead_model, "finder-m": finder_model})
    try:
        version = await psych_runtime.publish(store, _lead(), scope=ACME)
        async with _workers(store, model, _registry(gate.slow_search, lookup)):
            run = await psych_runtime.dispatch(store, version, "Research tides.", scope=ACME)
            await asyncio.wait_for(gate.entered.wait(), 20)

            async def parked() -> bool:
                status = await psych_runtime.status(store, run.run_id, scope=ACME)
                header = await store.get_run(run.run_id)
                return (
                    status.suspend_reason is SuspendReason.CHILDREN
                    and header is not None
                    and header.lease_holder is None
                )

            await wait_for(parked, 20)
            header = await store.get_run(run.run_id)
            assert header is not None and header.lease_holder is None
            assert header.runnable_at is not None  # parked until its suspension expires
            gate.opened.set()
            log = await _settled(store, run.run_id)
        assert log[-1].state is psych_runtime.TerminalState.COMPLETED
        types = _types(log)
        order = [
            types.index("subagent_spawned"),
            types.index("subagent_messaged"),
            types.index("suspended"),
            types.index("subagent_finished"),
            types.index("resumed"),
        ]
        assert order == sorted(order)
        [spawned] = [r for r in log if r.type == "subagent_spawned"]
        assert spawned.background and spawned.tools == ("slow_search",)  # lookup: not the lead's
        child_log = await store.read(spawned.child_run_id)
        steer = [r for r in child_log if r.type == "queue_enqueued"]
        assert steer and steer[0].payload == {"message": "Prefer 2026 sources."}
        assert "queue_consumed" in _types(child_log)
        # The lead's last turn saw the child's answer.
        assert "Three sources, all from 2026." in str(lead_model.requests[-1].messages[-1])
        report = await psych_runtime.report(store, run.run_id, scope=ACME)
        [sub] = report.subagents
        assert sub.terminal_state is psych_runtime.TerminalState.COMPLETED
        assert sub.messages_sent == 1 and sub.usage == Usage(input=200, output=40)
        assert report.subtree.usage == Usage(input=600, output=120)
        assert report.subtree.runs == 2 and report.subtree.complete
    finally:
        await store.close()


@pytest.mark.parametrize("kind", EVERY)
async def test_interrupting_a_parent_stops_its_children(kind: str, store_url_for: UrlFor) -> None:
    store = await psych_runtime.open_store(await store_url_for(kind))
    gate = Gate()
    lead_model = (
        FakeModel().turn(tool_calls=[("spawn_subagent", FINDER)]).turn(text="Waiting for finder.")
    )
    finder_model = FakeModel().turn(tool_calls=[("slow_search", {"topic": "tides"})])
    model = ModelsByName({"lead-m": lead_model, "finder-m": finder_model})
    try:
        version = await psych_runtime.publish(store, _lead(), scope=ACME)
        async with _workers(store, model, _registry(gate.slow_search, lookup)):
            run = await psych_runtime.dispatch(store, version, "Research tides.", scope=ACME)
            await asyncio.wait_for(gate.entered.wait(), 20)

            async def suspended() -> bool:
                return (
                    await psych_runtime.status(store, run.run_id, scope=ACME)
                ).suspend_reason is not None

            await wait_for(suspended, 20)
            assert await psych_runtime.interrupt(store, run.run_id, reason="enough", scope=ACME)
            log = await _settled(store, run.run_id)
            [spawned] = [r for r in log if r.type == "subagent_spawned"]
            child_log = await store.read(spawned.child_run_id)
            # Passed down by the interrupt itself, with its reason.
            aborts = [r for r in child_log if r.type == "abort_requested"]
            assert [a.reason for a in aborts] == ["enough"]
            gate.opened.set()
            child_log = await _settled(store, spawned.child_run_id)
        assert log[-1].state is psych_runtime.TerminalState.ABORTED
        assert child_log[-1].state is psych_runtime.TerminalState.ABORTED
    finally:
        await store.close()


@pytest.mark.parametrize("kind", EVERY)
async def test_depth_fan_out_and_live_children_are_capped(kind: str, store_url_for: UrlFor) -> None:
    store = await psych_runtime.open_store(await store_url_for(kind))
    gate = Gate()
    gate.opened.set()
    twin = dict(FINDER, name="twin")
    third = dict(FINDER, name="third")
    lead_model = (
        FakeModel()
        .turn(
            tool_calls=[
                ("spawn_subagent", FINDER),
                ("spawn_subagent", twin),
                ("spawn_subagent", third),
            ]
        )
        .turn(text="Waiting.")
        .turn(text="Done.")
    )
    finder_model = FakeModel()
    for _ in range(2):
        finder_model.turn(text="Nothing found.")
    model = ModelsByName({"lead-m": lead_model, "finder-m": finder_model})
    try:
        spec = _lead(max_alive=3, max_depth=1).model_copy(
            update={"limits": psych_runtime.Limits(max_fanout_per_turn=2)}
        )
        version = await psych_runtime.publish(store, spec, scope=ACME)
        async with _workers(store, model, _registry(gate.slow_search, lookup)):
            run = await psych_runtime.dispatch(store, version, "Research.", scope=ACME)
            log = await _settled(store, run.run_id)
        finishes = [r for r in log if r.type == "tool_call_finished"]
        assert [f.failure.kind if f.failure else "ok" for f in finishes[:3]] == [
            "ok",
            "ok",
            "fanout_exceeded",
        ]
        assert len([r for r in log if r.type == "subagent_finished"]) == 2
        assert log[-1].state is psych_runtime.TerminalState.COMPLETED
        # A child at the depth limit is offered no spawning of its own.
        [first, *_] = [r for r in log if r.type == "subagent_spawned"]
        child_version = await store.get_version(first.child_version_hash, tenant="acme")
        assert child_version is not None and child_version.spec.spawn is None
    finally:
        await store.close()


# --- kill -9 in the middle of a delegation -----------------------------------------------


@pytest.mark.parametrize("kind", DURABLE)
async def test_a_worker_killed_mid_delegation_loses_no_finish_and_starts_no_second_child(
    kind: str, store_url_for: UrlFor, tmp_path: Path
) -> None:
    url = await store_url_for(kind)
    store = await psych_runtime.open_store(url)
    clerk = psych_runtime.AgentSpec(name="clerk", model="clerk", tools=("charge",))
    lead = psych_runtime.AgentSpec(
        name="lead",
        model="lead",
        tools=("charge",),
        subagents=(SubagentRef(name="clerk", description="Charges orders for you.", spec=clerk),),
    )
    processes: list[subprocess.Popen[str]] = []
    try:
        version = await psych_runtime.publish(store, lead, scope=ACME)
        run = await psych_runtime.dispatch(store, version, "Charge A0.", scope=ACME)
        # The first Worker process hangs inside the child's charge call and is killed there.
        # Its lease is long enough never to lapse while it lives, even on a loaded
        # machine: the child's only second Attempt must be the one the kill causes.
        processes.append(spawn_worker(url, tmp_path, "work", 5.0, env={"PSYCH_E2E_HANG": "1"}))

        async def charging() -> bool:
            return any(tmp_path.glob("started.*"))

        await wait_for(charging, 30)
        kill(processes.pop())
        processes.append(spawn_worker(url, tmp_path, "work", 2.0))
        log = await _settled(store, run.run_id, timeout=60)
    finally:
        for process in processes:
            kill(process)
    try:
        assert log[-1].state is psych_runtime.TerminalState.COMPLETED
        spawned = [r for r in log if r.type == "subagent_spawned"]
        finished = [r for r in log if r.type == "subagent_finished"]
        assert len(spawned) == 1 and len(finished) == 1
        child_id = spawned[0].child_run_id
        assert finished[0].child_run_id == child_id
        # The charge cut off by the kill is in doubt, so it was not run a second time.
        assert len(list(tmp_path.glob("call.*"))) == 1
        child_log = await store.read(child_id)
        outcomes = [r.outcome.value for r in child_log if r.type == "tool_call_finished"]
        assert outcomes == ["unknown"]
        attempts = [r for r in child_log if r.type == "attempt_started"]
        assert len(attempts) == 2
        delegate = [r for r in log if r.type == "tool_call_finished"]
        assert delegate[-1].result["run_id"] == child_id
    finally:
        await store.close()
