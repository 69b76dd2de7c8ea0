"""Task lists and UI components end to end: recorded in the log, shown by the reads."""

from typing import Any

import psych_runtime
from psych_runtime import (
    AgentSpec,
    InMemoryStore,
    ModelRef,
    RunId,
    Runtime,
    TerminalState,
    ToolOutcome,
    Worker,
    dispatch,
    publish,
)
from psych_runtime.records import Component, Record, Task
from psych_runtime.testing import (
    FakeModel,
    ToolCallScript,
    crash_and_recover,
    settled_log,
    worker_in_background,
)

from .conftest import ACME, FAST, registry_of


def _spec(**fields: Any) -> AgentSpec:
    return AgentSpec(
        name="planner",
        model=ModelRef(model="fake-standard"),
        **({"tasks_enabled": True, "components_enabled": True} | fields),
    )


def _call(name: str, call_id: str, **arguments: Any) -> ToolCallScript:
    return ToolCallScript(name=name, arguments=arguments, call_id=call_id)


async def _run(spec: AgentSpec, model: FakeModel) -> tuple[InMemoryStore, RunId, list[Record]]:
    store = InMemoryStore()
    version = await publish(store, spec, scope=ACME)
    async with worker_in_background(Worker(store, Runtime(store, model, registry_of()), **FAST)):
        run = await dispatch(store, version, "plan the move", scope=ACME)
        return store, run.run_id, await settled_log(store, run.run_id)


def _finished(log: list[Record], call_id: str) -> Any:
    return next(r for r in log if r.type == "tool_call_finished" and r.call_id == call_id)


PLAN = [
    {"title": "Pack", "status": "completed"},
    {"title": "Book van", "status": "in_progress", "note": "Friday"},
]
CARD = {"kind": "card", "title": "Van", "data": {"url": "https://vans.example.com/42"}}


async def test_tasks_and_components_are_logged_and_read_back() -> None:
    model = (
        FakeModel()
        .turn(tool_calls=[_call("update_tasks", "plan", tasks=PLAN)])
        .turn(tool_calls=[_call("show_component", "card", **CARD)])
        .turn(tool_calls=[_call("update_tasks", "replan", tasks=PLAN[:1])])
        .turn(text="Moving is planned.")
    )
    store, run_id, log = await _run(_spec(), model)

    assert log[-1].type == "run_settled" and log[-1].state is TerminalState.COMPLETED
    offered = {t.name for t in model.requests[0].tools}
    assert {"update_tasks", "show_component"} <= offered
    assert [r.type for r in log].count("task_list_updated") == 2
    assert _finished(log, "plan").result == {"tasks": 2}
    assert _finished(log, "card").result == {"shown": "card"}
    status = await psych_runtime.status(store, run_id)
    assert status.tasks == (Task(title="Pack", status="completed"),)
    assert status.components == (Component.model_validate(CARD),)
    report = await psych_runtime.report(store, run_id)
    assert report.tasks == status.tasks and report.components == status.components


async def test_unsafe_links_and_bad_tasks_are_refused_and_nothing_is_recorded() -> None:
    unsafe = {"kind": "card", "data": {"items": [{"href": " JavaScript:alert(1)"}]}}
    model = (
        FakeModel()
        .turn(tool_calls=[_call("show_component", "evil", **unsafe)])
        .turn(tool_calls=[_call("show_component", "inline", kind="card", title="data:text/html,x")])
        .turn(tool_calls=[_call("update_tasks", "bad", tasks=[{"title": "", "status": "done"}])])
        .turn(text="ok")
    )
    _, _, log = await _run(_spec(), model)

    for call_id in ("evil", "inline", "bad"):
        finished = _finished(log, call_id)
        assert finished.outcome is ToolOutcome.ERROR
        assert finished.failure.kind == "invalid_arguments"
    assert "data.items[0].href" in _finished(log, "evil").failure.message
    assert "tasks[0]" in _finished(log, "bad").failure.message
    assert not any(r.type in ("component_shown", "task_list_updated") for r in log)


async def test_the_tools_are_offered_only_when_the_spec_enables_them() -> None:
    model = FakeModel().turn(text="hi")
    await _run(_spec(tasks_enabled=False, components_enabled=False), model)
    assert not {"update_tasks", "show_component"} & {t.name for t in model.requests[0].tools}


async def test_a_task_update_left_in_doubt_by_a_crash_is_run_again_once() -> None:
    model = FakeModel().turn(tool_calls=[_call("update_tasks", "plan", tasks=PLAN)]).turn(text="ok")
    store = InMemoryStore()
    version = await publish(store, _spec(), scope=ACME)
    recovery = await crash_and_recover(
        store, model, registry_of(), version, "hi", scope=ACME, crash_before="tool_call_finished"
    )
    assert _finished(recovery.final_log, "plan").outcome is ToolOutcome.OK
    assert [r.type for r in recovery.final_log].count("task_list_updated") == 1
    assert len((await psych_runtime.status(store, recovery.run_id)).tasks) == 2
