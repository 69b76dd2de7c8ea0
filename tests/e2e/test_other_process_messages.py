"""A message sent through another store instance reaches a running Run on every store.

Stores whose notifier hears only their own commits (SQLite, MySQL, DynamoDB) must not
let a Worker conclude "nothing new" from silence: a steer written by an API process
through its own store instance has to reach the next model request.
"""

import asyncio

import pytest

import psych_runtime
from psych_runtime.testing import FakeModel

from .conftest import DURABLE

ACME = psych_runtime.Scope(tenant="acme")


@pytest.mark.parametrize("kind", DURABLE)
async def test_a_steer_from_another_store_instance_reaches_the_next_turn(
    kind: str, store_url_for: object
) -> None:
    url = await store_url_for(kind)  # type: ignore[operator]
    worker_store = await psych_runtime.open_store(url)
    api_store = await psych_runtime.open_store(url)

    async def lookup(q: str) -> str:
        """Look something up, slowly."""
        await asyncio.sleep(0.5)
        return q

    spec = psych_runtime.AgentSpec(
        name="ops",
        model=psych_runtime.ModelRef(model="m"),
        tools=(psych_runtime.CodeTool(name="lookup"),),
    )
    model = FakeModel().turn(tool_calls=[("lookup", {"q": "a"})]).turn(text="final")
    try:
        async with psych_runtime.session(
            model, store=worker_store, tools=[lookup], scope=ACME
        ) as s:
            run = await s.dispatch(spec, "hi")
            async with asyncio.timeout(30):
                while not any(
                    r.type == "tool_call_started" for r in await api_store.read(run.run_id)
                ):
                    await asyncio.sleep(0.01)
            await psych_runtime.send(api_store, run.run_id, "answer in French", scope=ACME)
            await s.wait(run.run_id, timeout=60)
            state = await psych_runtime.state(worker_store, run.run_id)
    finally:
        await api_store.close()
        await worker_store.close()
    assert state.terminal_state is psych_runtime.TerminalState.COMPLETED
    assert state.pending_steer == []
    second = [m.content for m in model.requests[1].messages if m.role == "user"]
    assert second[-1] == "answer in French"
