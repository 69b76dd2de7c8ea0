"""``memory.py``: recalling facts when an Attempt starts, and ``remember``/``forget``."""

import logging
from typing import Any

import pytest

from psych_runtime.core.records import JsonObject
from psych_runtime.core.records import ToolOutcome
from psych_runtime.memory.local import InMemoryMemoryStore
from psych_runtime.memory.port import Memory
from psych_runtime.memory.port import MemoryKey
from psych_runtime.runtime.agent.memory import recall
from psych_runtime.runtime.agent.memory import run_memory_tool
from psych_runtime.testing import LogBuilder
from psych_runtime.tools.memory import FORGET
from psych_runtime.tools.memory import REMEMBER

from .conftest import Attempt
from .conftest import open_attempt

SHARED = ("The shop closes at six.",)


class DownMemory(InMemoryMemoryStore):
    """A memory store that cannot be reached."""

    async def recall(self, key: MemoryKey, *, limit: int | None = None) -> tuple[Memory, ...]:
        raise ConnectionError("memory is down")

    async def remember(self, key: MemoryKey, content: str) -> Memory:
        raise ConnectionError("memory is down")


async def _for(end_user: str | None, memory: InMemoryMemoryStore | None, **deps: Any) -> Attempt:
    """A Run whose input names ``end_user`` (or nobody), with ``memory`` configured."""
    log = LogBuilder().admitted(input={"end_user_id": end_user} if end_user else {}).attempt()
    return await open_attempt(log, memory=memory, **deps)


async def test_without_a_memory_store_only_what_every_run_knows_is_recalled() -> None:
    attempt = await _for(None, None, memories=SHARED)
    await recall(attempt.ctx)
    assert (
        attempt.ctx.memory_prompt
        == "What you know in every conversation:\n- The shop closes at six."
    )
    attempt = await _for(None, None)
    await recall(attempt.ctx)
    assert attempt.ctx.memory_prompt == ""


async def test_the_run_end_users_facts_are_recalled_and_nobody_elses() -> None:
    memory = InMemoryMemoryStore()
    mine = await memory.remember(MemoryKey(tenant="acme", end_user_id="ann"), "Prefers email.")
    await memory.remember(MemoryKey(tenant="acme", end_user_id="bob"), "Prefers phone.")
    attempt = await _for("ann", memory, memories=SHARED)
    await recall(attempt.ctx)
    prompt = attempt.ctx.memory_prompt
    assert prompt.startswith("What you know in every conversation:")
    assert f"- {mine.id}: Prefers email." in prompt and "phone" not in prompt


async def test_the_runtimes_end_user_stands_in_when_the_input_names_none() -> None:
    memory = InMemoryMemoryStore()
    await memory.remember(MemoryKey(tenant="acme", end_user_id="ann"), "Prefers email.")
    attempt = await _for(None, memory, end_user_id="ann")
    await recall(attempt.ctx)
    assert "Prefers email." in attempt.ctx.memory_prompt


async def test_recall_keeps_to_the_newest_facts_up_to_the_limit() -> None:
    memory = InMemoryMemoryStore()
    key = MemoryKey(tenant="acme", end_user_id="ann")
    for n in range(5):
        await memory.remember(key, f"fact {n}")
    attempt = await _for("ann", memory, recall_limit=2)
    await recall(attempt.ctx)
    assert attempt.ctx.memory_prompt.count("fact ") == 2
    assert "fact 4" in attempt.ctx.memory_prompt


async def test_a_memory_store_that_is_down_leaves_the_facts_out_and_the_run_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    attempt = await _for("ann", DownMemory(), memories=SHARED)
    with caplog.at_level(logging.WARNING, logger="psych_runtime.runtime.agent.memory"):
        await recall(attempt.ctx)
    assert attempt.ctx.memory_prompt.startswith("What you know in every conversation:")
    assert "remember" not in attempt.ctx.memory_prompt
    assert "could not recall memories" in caplog.text


async def test_memory_without_an_end_user_is_noted_and_nothing_is_recalled() -> None:
    attempt = await _for(None, InMemoryMemoryStore())
    assert attempt.ctx.memory_key is None
    assert attempt.ctx.missing_end_user is not None
    assert "end_user_id" in attempt.ctx.missing_end_user
    await recall(attempt.ctx)
    assert attempt.ctx.memory_prompt == ""


async def test_remember_then_forget_work_on_the_runs_own_end_user() -> None:
    memory = InMemoryMemoryStore()
    attempt = await _for("ann", memory)
    kept = await run_memory_tool(attempt.ctx, REMEMBER, {"fact": "Prefers email."})
    assert kept.outcome is ToolOutcome.OK and isinstance(kept.result, dict)
    fact_id = kept.result["remembered"]
    assert isinstance(fact_id, str)
    (fact,) = await memory.recall(MemoryKey(tenant="acme", end_user_id="ann"))
    assert (fact.id, fact.content) == (fact_id, "Prefers email.")

    gone = await run_memory_tool(attempt.ctx, FORGET, {"id": fact_id})
    assert gone.result == {"forgotten": True}
    again = await run_memory_tool(attempt.ctx, FORGET, {"id": fact_id})
    assert again.result == {"forgotten": False}


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        (REMEMBER, {}),
        (REMEMBER, {"fact": "  "}),
        (REMEMBER, {"fact": "x", "end_user_id": "bob"}),
        (FORGET, {"id": ""}),
        (FORGET, {"id": 7}),
    ],
)
async def test_malformed_arguments_are_refused_as_data(name: str, arguments: JsonObject) -> None:
    attempt = await _for("ann", InMemoryMemoryStore())
    refused = await run_memory_tool(attempt.ctx, name, arguments)
    assert refused.outcome is ToolOutcome.ERROR and refused.failure is not None
    assert refused.failure.kind == "invalid_arguments"


async def test_a_memory_store_outage_fails_that_call_only() -> None:
    attempt = await _for("ann", DownMemory())
    failed = await run_memory_tool(attempt.ctx, REMEMBER, {"fact": "Prefers email."})
    assert failed.outcome is ToolOutcome.ERROR and failed.failure is not None
    assert failed.failure.kind == "memory_unavailable"
    assert failed.failure.message == "ConnectionError: memory is down"
