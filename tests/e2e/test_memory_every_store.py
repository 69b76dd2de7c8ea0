"""Durable memory on every store: remembered in one Run, recalled in a later one, erased.

The facts live in the same database as the Runs (the adapter's MemoryStore, opened from
the store's own URL), and the Worker of each Run is a fresh Runtime, as after a restart.
"""

import asyncio
from collections.abc import Awaitable
from collections.abc import Callable

import pytest

import psych_runtime
from psych_runtime import MemoryKey
from psych_runtime import MemoryStore
from psych_runtime import RunId
from psych_runtime import Store
from psych_runtime.records import Record
from psych_runtime.testing import FakeModel

from .conftest import EVERY

ACME = psych_runtime.Scope(tenant="acme")
UrlFor = Callable[[str], Awaitable[str]]
SPEC = psych_runtime.AgentSpec(name="concierge", model="fake-standard")


async def _run(
    store: Store,
    memory: MemoryStore,
    model: FakeModel,
    message: str,
    *,
    end_user_id: str | None,
) -> list[Record]:
    version = await psych_runtime.publish(store, SPEC, scope=ACME)
    runtime = psych_runtime.Runtime(store, model, psych_runtime.ToolRegistry(), memory=memory)
    worker = psych_runtime.Worker(
        store, runtime, lease_seconds=3.0, heartbeat_seconds=0.5, poll_interval=0.05
    )
    task = asyncio.create_task(worker.run())
    try:
        run = await psych_runtime.dispatch(
            store, version, message, scope=ACME, end_user_id=end_user_id
        )
        return await _settled(store, run.run_id)
    finally:
        worker.request_stop()
        await asyncio.gather(task, return_exceptions=True)


async def _settled(store: Store, run_id: RunId) -> list[Record]:
    async with asyncio.timeout(30):
        while True:
            log = await store.read(run_id)
            if log and log[-1].type == "run_settled":
                return log
            await asyncio.sleep(0.02)


def _prompt(model: FakeModel) -> str:
    return model.requests[-1].messages[0].content  # type: ignore[return-value]


@pytest.mark.parametrize("kind", EVERY)
async def test_a_fact_remembered_in_one_run_is_recalled_in_the_next_and_erased(
    kind: str, store_url_for: UrlFor
) -> None:
    url = await store_url_for(kind)
    store = await psych_runtime.open_store(url)
    memory = await psych_runtime.open_memory_store(url, migrate=True)
    try:
        first = (
            FakeModel()
            .turn(tool_calls=[("remember", {"fact": "Prefers the window seat."})])
            .turn(text="Noted.")
        )
        log = await _run(store, memory, first, "I like window seats.", end_user_id="alice")
        [call] = [r for r in log if r.type == "tool_call_finished"]
        assert call.outcome.value == "ok" and call.result["remembered"].startswith("mem_")
        assert "remember" in first.requests[0].tools[0].name + first.requests[0].tools[1].name

        # A later Run, another Worker: the fact is in the prompt.
        second = FakeModel().turn(text="Window seat again?")
        await _run(store, memory, second, "Book my flight.", end_user_id="alice")
        assert "Prefers the window seat." in _prompt(second)

        # Another person of the same tenant sees none of it.
        other = FakeModel().turn(text="Hello.")
        await _run(store, memory, other, "Book my flight.", end_user_id="bob")
        assert "window seat" not in _prompt(other)

        # Forgotten by the model, then re-learnt, then erased for good per person.
        fact_id = call.result["remembered"]
        third = FakeModel().turn(tool_calls=[("forget", {"id": fact_id})]).turn(text="Done.")
        log = await _run(store, memory, third, "I changed my mind.", end_user_id="alice")
        assert [r.result for r in log if r.type == "tool_call_finished"] == [{"forgotten": True}]
        alice = MemoryKey(tenant="acme", end_user_id="alice")
        assert await memory.recall(alice) == ()
        await memory.remember(alice, "Travels with a dog.")
        assert await memory.erase(alice) == 1
        fourth = FakeModel().turn(text="Hello again.")
        await _run(store, memory, fourth, "Hi.", end_user_id="alice")
        assert "You remember nothing about this user yet." in _prompt(fourth)
    finally:
        await memory.close()
        await store.close()


@pytest.mark.parametrize("kind", EVERY)
async def test_memory_without_an_end_user_fails_the_run_plainly(
    kind: str, store_url_for: UrlFor
) -> None:
    url = await store_url_for(kind)
    store = await psych_runtime.open_store(url)
    memory = await psych_runtime.open_memory_store(url, migrate=True)
    try:
        model = FakeModel()
        log = await _run(store, memory, model, "Hi.", end_user_id=None)
        settled = log[-1]
        assert settled.state is psych_runtime.TerminalState.FAILED
        assert settled.failure is not None and settled.failure.kind == "end_user_required"
        assert "end_user_id" in settled.failure.message
        assert model.requests == ()  # refused before any model call
    finally:
        await memory.close()
        await store.close()
