"""An interrupt stops what a Worker in another process is doing, on every durable store.

The Worker runs in its own process, so the only way the interrupt can reach it is
through the store: these cases fail if the Attempt waits for its call to end before it
looks at its log. The tool hangs for ever and the model's answer would take a minute
to stream, so without the interrupt neither Run would settle within the timeout.
"""

import asyncio
import subprocess
from collections.abc import Awaitable
from collections.abc import Callable
from pathlib import Path

import pytest

import psych_runtime
from tests.support.worker_process import spawn_worker

from .conftest import DURABLE

ACME = psych_runtime.Scope(tenant="acme")
UrlFor = Callable[[str], Awaitable[str]]

# Nobody is killed here, so the lease can be long: on a loaded machine a short one may
# lapse under a live Worker, and the Run would then be reclaimed instead of interrupted.
LEASE = 10.0


def _spec() -> psych_runtime.AgentSpec:
    return psych_runtime.AgentSpec(
        name="pay",
        model=psych_runtime.ModelRef(model="fake-standard"),
        tools=(psych_runtime.CodeTool(name="charge"),),
    )


async def _until_logged(store: psych_runtime.Store, run_id: psych_runtime.RunId, kind: str) -> None:
    async with asyncio.timeout(30):
        while not any(r.type == kind for r in await store.read(run_id)):
            await asyncio.sleep(0.01)


async def _settled(
    store: psych_runtime.Store, run_id: psych_runtime.RunId, timeout: float
) -> list[psych_runtime.records.Record]:
    async with asyncio.timeout(timeout):
        while True:
            log = await store.read(run_id)
            if log[-1].type == "run_settled":
                return log
            await asyncio.sleep(0.02)


def _stop(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        process.kill()
    process.communicate()


@pytest.mark.parametrize("kind", DURABLE)
async def test_an_interrupt_cancels_a_hanging_tool_in_another_process(
    kind: str, store_url_for: UrlFor, tmp_path: Path
) -> None:
    url = await store_url_for(kind)
    store = await psych_runtime.open_store(url)
    worker = spawn_worker(url, tmp_path, "work", LEASE, env={"PSYCH_E2E_HANG": "1"})
    try:
        version = await psych_runtime.publish(store, _spec(), scope=ACME)
        run = await psych_runtime.dispatch(store, version, "charge A0", scope=ACME)
        await _until_logged(store, run.run_id, "tool_call_started")
        assert await psych_runtime.interrupt(store, run.run_id, reason="stop", scope=ACME)
        log = await _settled(store, run.run_id, timeout=15)
    finally:
        _stop(worker)
        await store.close()
    kinds = [r.type for r in log]
    assert kinds.index("abort_requested") < kinds.index("tool_call_finished")
    finished = next(r for r in log if r.type == "tool_call_finished")
    assert finished.outcome is psych_runtime.ToolOutcome.ABORTED
    assert finished.failure is not None and finished.failure.kind == "interrupted"
    assert log[-1].state is psych_runtime.TerminalState.ABORTED
    assert kinds.count("model_call_started") == 1  # nothing ran after the interrupt


@pytest.mark.parametrize("kind", DURABLE)
async def test_an_interrupt_cancels_a_streaming_model_call_in_another_process(
    kind: str, store_url_for: UrlFor, tmp_path: Path
) -> None:
    url = await store_url_for(kind)
    store = await psych_runtime.open_store(url)
    env = {"PSYCH_E2E_TURNS": "0", "PSYCH_E2E_SLOW_ANSWER": "1"}
    worker = spawn_worker(url, tmp_path, "work", LEASE, env=env)
    try:
        version = await psych_runtime.publish(store, _spec(), scope=ACME)
        run = await psych_runtime.dispatch(store, version, "say something", scope=ACME)
        await _until_logged(store, run.run_id, "model_call_started")
        assert await psych_runtime.interrupt(store, run.run_id, scope=ACME)
        log = await _settled(store, run.run_id, timeout=15)
        answer = await psych_runtime.answer(store, run.run_id, scope=ACME)
    finally:
        _stop(worker)
        await store.close()
    kinds = [r.type for r in log]
    assert "model_call_finished" not in kinds
    failed = next(r for r in log if r.type == "model_call_failed")
    assert failed.failure.kind == "interrupted" and not failed.will_retry
    assert log[-1].state is psych_runtime.TerminalState.ABORTED
    assert not answer.finished
