"""A process pays its start-up heap's first full garbage collection while a Worker idles."""

import asyncio
import gc
from typing import Any

import pytest

import psych_runtime
from psych_runtime.runtime import worker as worker_module
from psych_runtime.runtime.runtime import Runtime
from psych_runtime.runtime.worker import Worker
from psych_runtime.store.memory import InMemoryStore
from psych_runtime.testing import FakeModel
from psych_runtime.tools.registry import ToolRegistry


async def test_the_first_idle_moment_runs_one_full_collection_and_later_ones_do_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # As in a fresh process: no Worker has idled yet.
    monkeypatch.setattr(worker_module, "_collected_once", False)
    full: list[int] = []

    def seen(phase: str, info: dict[str, Any]) -> None:
        if phase == "start" and info["generation"] == 2:
            full.append(1)

    store = InMemoryStore()
    model = FakeModel().turn(text="one").turn(text="two")
    worker = Worker(store, Runtime(store, model, ToolRegistry()), poll_interval=0.01)
    gc.callbacks.append(seen)
    task = asyncio.create_task(worker.run())
    try:
        for _ in range(200):
            if full:
                break
            await asyncio.sleep(0.005)
        assert full, "no full collection while the Worker sat idle"
        collected_at_start = len(full)
        version = await psych_runtime.publish(store, psych_runtime.AgentSpec(name="a", model="m"))
        for text in ("first", "second"):
            run = await psych_runtime.dispatch(
                store, version, text, scope=psych_runtime.Scope(tenant="default")
            )
            async with asyncio.timeout(5):
                while (await psych_runtime.status(store, run.run_id)).terminal_state is None:
                    await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)  # idle again, several polls
        # Idle again after work: no further forced collection (a spontaneous one is
        # possible but not from a handful of Runs).
        assert len(full) == collected_at_start
        # Another Worker of the same process does not collect again either.
        second = Worker(store, Runtime(store, model, ToolRegistry()), poll_interval=0.01)
        other = asyncio.create_task(second.run())
        await asyncio.sleep(0.05)
        second.request_stop()
        await other
        assert len(full) == collected_at_start
    finally:
        gc.callbacks.remove(seen)
        worker.request_stop()
        await task
