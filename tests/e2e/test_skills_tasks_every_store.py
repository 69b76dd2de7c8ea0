"""Skills, task lists, components and builders on every store, through the public API.

One agent, built three ways (the fluent builder, Python, a dict), must be one Version
on every backend; a Run of it loads a skill on demand (twice, flagged), keeps a task
list and shows a component, and every read gives them back from the stored log.
"""

import asyncio
from collections.abc import Awaitable
from collections.abc import Callable

import pytest

import psych_runtime
from psych_runtime.records import Component
from psych_runtime.records import Task
from psych_runtime.spec import Skill
from psych_runtime.testing import FakeModel
from psych_runtime.testing import ToolCallScript

from .conftest import EVERY

ACME = psych_runtime.Scope(tenant="acme")
UrlFor = Callable[[str], Awaitable[str]]
REFUNDS = ("refunds", "How to decide a refund.", "Refund within 30 days; see [[skill:tone]].")
TONE = ("tone", "How replies should sound.", "Warm and brief.")
PLAN = [
    {"title": "Check the order", "status": "completed"},
    {"title": "Refund", "status": "pending"},
]
CARD = {"kind": "card", "title": "Refund", "data": {"amount": "12.00"}}


def _built() -> psych_runtime.AgentSpec:
    return (
        psych_runtime.AgentBuilder("support", model="gpt-4o-mini")
        .instructions("Help with refunds; see [[skill:refunds]].")
        .skill(*REFUNDS)
        .skill(*TONE)
        .tasks()
        .components()
        .build()
    )


def _python() -> psych_runtime.AgentSpec:
    return psych_runtime.AgentSpec(
        name="support",
        model="gpt-4o-mini",
        instructions="Help with refunds; see [[skill:refunds]].",
        skills=(
            Skill(name="tone", description=TONE[1], body=TONE[2]),
            Skill(name="refunds", description=REFUNDS[1], body=REFUNDS[2]),
        ),
        tasks_enabled=True,
        components_enabled=True,
    )


def _call(tool: str, call_id: str, **arguments: object) -> ToolCallScript:
    return ToolCallScript(name=tool, arguments=arguments, call_id=call_id)


@pytest.mark.parametrize("kind", EVERY)
async def test_one_agent_three_ways_loads_skills_and_keeps_tasks_and_components(
    kind: str, store_url_for: UrlFor
) -> None:
    store = await psych_runtime.open_store(await store_url_for(kind))
    try:
        built, python = _built(), _python()
        as_dict = python.model_dump(mode="json")
        published = [
            await psych_runtime.publish(store, spec, scope=ACME) for spec in (built, python)
        ]
        from_dict = await psych_runtime.publish(store, psych_runtime.validate(as_dict), scope=ACME)
        assert {v.hash for v in (*published, from_dict)} == {published[0].hash}
        stored = await store.get_version(published[0].hash, tenant="acme")
        assert stored is not None and stored.spec == built

        model = (
            FakeModel()
            .turn(tool_calls=[_call("load_skill", "first", name="refunds")])
            .turn(tool_calls=[_call("load_skill", "again", name="refunds")])
            .turn(tool_calls=[_call("update_tasks", "plan", tasks=PLAN)])
            .turn(tool_calls=[_call("show_component", "card", **CARD)])
            .turn(text="Refund on its way.")
        )
        runtime = psych_runtime.Runtime(store, model, psych_runtime.ToolRegistry())
        worker = psych_runtime.Worker(
            store, runtime, lease_seconds=3.0, heartbeat_seconds=0.5, poll_interval=0.05
        )
        task = asyncio.create_task(worker.run())
        try:
            run = await psych_runtime.dispatch(store, published[0], "Refund A-1?", scope=ACME)
            async with asyncio.timeout(30):
                while not (
                    await psych_runtime.status(store, run.run_id, scope=ACME)
                ).terminal_state:
                    await asyncio.sleep(0.02)
        finally:
            worker.request_stop()
            await asyncio.gather(task, return_exceptions=True)

        log = await store.read(run.run_id)
        results = {r.call_id: r.result for r in log if r.type == "tool_call_finished"}
        assert results["first"]["instructions"] == REFUNDS[2]
        assert results["first"]["linked_skills"] == ["tone"]
        assert results["again"]["already_loaded"] is True
        # Only names and descriptions are in the prompt; a body arrives through the tool.
        prompt = model.requests[0].messages[0].content
        assert "refunds: How to decide a refund." in prompt and REFUNDS[2] not in prompt
        status = await psych_runtime.status(store, run.run_id, scope=ACME)
        report = await psych_runtime.report(store, run.run_id, scope=ACME)
        assert status.tasks == tuple(Task.model_validate(t) for t in PLAN) == report.tasks
        assert status.components == (Component.model_validate(CARD),) == report.components
        assert status.terminal_state is psych_runtime.TerminalState.COMPLETED
    finally:
        await store.close()
