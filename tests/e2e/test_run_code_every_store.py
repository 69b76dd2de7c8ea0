"""``run_code`` on every store: a real sandboxed program calling host tools back.

Each program runs in a fresh process of a ``psych-sandbox`` backend; its binding calls
go through the Worker's normal tool path and land in the Run's log under the program.
"""

import asyncio
from collections.abc import Awaitable
from collections.abc import Callable

import pytest

import psych_runtime
from psych_runtime import RunId
from psych_runtime import Store
from psych_runtime.adapters import BlobKey
from psych_runtime.adapters import BlobStore
from psych_runtime.adapters import InMemoryBlobStore
from psych_runtime.adapters import Sandbox
from psych_runtime.records import Record
from psych_runtime.spec import CodeExecution
from psych_runtime.spec import Isolation
from psych_runtime.spec import OutputPolicy
from psych_runtime.spec import OutputPreservation
from psych_runtime.testing import FakeModel
from psych_sandbox import NamespaceSandbox
from psych_sandbox import SubprocessSandbox

from .conftest import EVERY

ACME = psych_runtime.Scope(tenant="acme")
UrlFor = Callable[[str], Awaitable[str]]

PROGRAM = """
orders = ["A1", "B2"]
result = {order: tools.lookup(order_id=order) for order in orders}
print("looked up", len(orders))
"""


async def lookup(order_id: str) -> str:
    """Say where an order is."""
    return f"{order_id} is at the depot"


async def _run(
    url: str,
    spec: psych_runtime.AgentSpec,
    sandbox: Sandbox,
    model: FakeModel,
    blob: BlobStore | None = None,
) -> list[Record]:
    store = await psych_runtime.open_store(url)
    registry = psych_runtime.ToolRegistry()
    registry.register(lookup)
    runtime = psych_runtime.Runtime(
        store, model, registry, sandboxes={"default": sandbox}, blob=blob
    )
    worker = psych_runtime.Worker(
        store, runtime, lease_seconds=5.0, heartbeat_seconds=1.0, poll_interval=0.05
    )
    task = asyncio.create_task(worker.run())
    try:
        version = await psych_runtime.publish(store, spec, scope=ACME)
        run = await psych_runtime.dispatch(store, version, "Where are my orders?", scope=ACME)
        return await _settled(store, run.run_id)
    finally:
        worker.request_stop()
        await asyncio.gather(task, return_exceptions=True)
        await store.close()


async def _settled(store: Store, run_id: RunId) -> list[Record]:
    async with asyncio.timeout(60):
        while True:
            log = await store.read(run_id)
            if log and log[-1].type == "run_settled":
                return log
            await asyncio.sleep(0.02)


def _check(log: list[Record]) -> None:
    assert log[-1].state is psych_runtime.TerminalState.COMPLETED
    starts = [r for r in log if r.type == "tool_call_started"]
    finishes = {r.call_id: r for r in log if r.type == "tool_call_finished"}
    program, *bound, failing = starts
    assert program.tool == "run_code" and failing.tool == "run_code"
    assert [b.tool for b in bound] == ["lookup", "lookup"]
    assert all(b.parent_call_id == program.call_id for b in bound)
    done = finishes[program.call_id].result
    assert done["value"] == {"A1": "A1 is at the depot", "B2": "B2 is at the depot"}
    assert done["stdout"].strip() == "looked up 2" and done["binding_calls"] == 2
    raised = finishes[failing.call_id].failure
    assert raised.kind == "program_error" and "ZeroDivisionError" in raised.traceback


def _spec(isolation: Isolation) -> psych_runtime.AgentSpec:
    return psych_runtime.AgentSpec(
        name="analyst",
        model="fake-standard",
        tools=("lookup",),
        code_execution=CodeExecution(isolation=isolation, bindings=("lookup",)),
    )


def _model() -> FakeModel:
    return (
        FakeModel()
        .turn(tool_calls=[("run_code", {"code": PROGRAM})])
        .turn(tool_calls=[("run_code", {"code": "1 / 0"})])
        .turn(text="A1 and B2 are at the depot.")
    )


@pytest.mark.parametrize("kind", EVERY)
async def test_a_subprocess_program_calls_host_tools(kind: str, store_url_for: UrlFor) -> None:
    sandbox = await SubprocessSandbox.open()
    try:
        log = await _run(await store_url_for(kind), _spec(Isolation.ISOLATED), sandbox, _model())
    finally:
        await sandbox.close()
    _check(log)


@pytest.mark.parametrize("kind", ["memory", "postgres"])
async def test_a_contained_program_calls_host_tools(kind: str, store_url_for: UrlFor) -> None:
    sandbox = await NamespaceSandbox.open()
    try:
        assert sandbox.capabilities.isolation is Isolation.CONTAINED
        log = await _run(await store_url_for(kind), _spec(Isolation.CONTAINED), sandbox, _model())
    finally:
        await sandbox.close()
    _check(log)


async def test_a_spec_demanding_containment_is_refused_by_a_subprocess(
    store_url_for: UrlFor,
) -> None:
    sandbox = await SubprocessSandbox.open()
    model = FakeModel().turn(tool_calls=[("run_code", {"code": "1"})]).turn(text="ok")
    try:
        log = await _run(await store_url_for("memory"), _spec(Isolation.CONTAINED), sandbox, model)
    finally:
        await sandbox.close()
    [finished] = [r for r in log if r.type == "tool_call_finished"]
    assert finished.failure.kind == "isolation_unavailable"


LOUD = "import sys\nprint('x' * 20000)\nprint('e' * 9000, file=sys.stderr)\n'done'"


def _loud_spec(preserve: OutputPreservation) -> psych_runtime.AgentSpec:
    output = OutputPolicy(preview_bytes=512, preserve=preserve)
    return psych_runtime.AgentSpec(
        name="printer",
        model="fake-standard",
        code_execution=CodeExecution(output=output),
    )


def _loud_model() -> FakeModel:
    return FakeModel().turn(tool_calls=[("run_code", {"code": LOUD})]).turn(text="printed")


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
async def test_full_output_is_kept_in_the_blob_store(kind: str, store_url_for: UrlFor) -> None:
    sandbox = await SubprocessSandbox.open()
    blob = InMemoryBlobStore()
    try:
        spec = _loud_spec(OutputPreservation.WHEN_AVAILABLE)
        log = await _run(await store_url_for(kind), spec, sandbox, _loud_model(), blob)
    finally:
        await sandbox.close()
    [finished] = [r for r in log if r.type == "tool_call_finished"]
    result = finished.result
    assert result["value"] == "done"
    assert result["stdout"] == "x" * 512 and result["stdout_bytes"] == 20_001
    keys = result["full_output"]
    assert await blob.get(BlobKey.parse(keys["stdout"])) == b"x" * 20_000 + b"\n"
    assert await blob.get(BlobKey.parse(keys["stderr"])) == b"e" * 9_000 + b"\n"
    assert BlobKey.parse(keys["stdout"]).run_id == log[0].run_id


async def test_output_is_not_kept_when_the_policy_says_never(store_url_for: UrlFor) -> None:
    sandbox = await SubprocessSandbox.open()
    blob = InMemoryBlobStore()
    try:
        spec = _loud_spec(OutputPreservation.NEVER)
        log = await _run(await store_url_for("memory"), spec, sandbox, _loud_model(), blob)
    finally:
        await sandbox.close()
    [finished] = [r for r in log if r.type == "tool_call_finished"]
    assert finished.result["value"] == "done"
    assert "full_output" not in finished.result
    assert len(finished.result["stdout"]) == 512


async def test_required_preservation_without_a_blob_store_runs_nothing(
    store_url_for: UrlFor,
) -> None:
    # The witness: the program connects to a listener here (the subprocess backend
    # leaves the network open; its files outside the workspace vanish with it).
    connected: list[bool] = []

    async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connected.append(True)
        writer.close()

    server = await asyncio.start_server(on_connect, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    program = f"import socket\nsocket.create_connection(('127.0.0.1', {port})).close()"
    try:
        model = FakeModel().turn(tool_calls=[("run_code", {"code": program})]).turn(text="ok")
        sandbox = await SubprocessSandbox.open()
        try:
            spec = _loud_spec(OutputPreservation.REQUIRED)
            log = await _run(await store_url_for("memory"), spec, sandbox, model)
        finally:
            await sandbox.close()
        [finished] = [r for r in log if r.type == "tool_call_finished"]
        assert finished.failure.kind == "blob_store_required"
        assert connected == []
        # The same program does run once the policy allows it: the witness is real.
        model = FakeModel().turn(tool_calls=[("run_code", {"code": program})]).turn(text="ok")
        sandbox = await SubprocessSandbox.open()
        try:
            spec = _loud_spec(OutputPreservation.WHEN_AVAILABLE)
            await _run(await store_url_for("memory"), spec, sandbox, model)
        finally:
            await sandbox.close()
        assert connected == [True]
    finally:
        server.close()
        await server.wait_closed()
