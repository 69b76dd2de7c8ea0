"""Task lists and UI components end to end: recorded in the log, shown by the reads."""

from typing import Any

import psych_runtime
from psych_runtime import AgentSpec
from psych_runtime import InMemoryStore
from psych_runtime import ModelRef
from psych_runtime import TerminalState
from psych_runtime import ToolOutcome
from psych_runtime.records import Component
from psych_runtime.records import Task
from psych_runtime.testing import FakeModel

from .conftest import Settled
from .conftest import crash_once
from .conftest import finish_of
from .conftest import run_once
from .conftest import tool_call


def _spec(**fields: Any) -> AgentSpec:
    return AgentSpec(
        name="planner",
        model=ModelRef(model="fake-standard"),
        **({"tasks_enabled": True, "components_enabled": True} | fields),
    )


async def _run(spec: AgentSpec, model: FakeModel) -> Settled:
    return await run_once(spec, model, message="plan the move")


PLAN = [
    {"title": "Pack", "status": "completed"},
    {"title": "Book van", "status": "in_progress", "note": "Friday"},
]
CARD = {"kind": "card", "title": "Van", "data": {"url": "https://vans.example.com/42"}}


async def test_tasks_and_components_are_logged_and_read_back() -> None:
    model = (
        FakeModel()
        .turn(tool_calls=[tool_call("update_tasks", "plan", tasks=PLAN)])
        .turn(tool_calls=[tool_call("show_component", "card", **CARD)])
        .turn(tool_calls=[tool_call("update_tasks", "replan", tasks=PLAN[:1])])
        .turn(text="Moving is planned.")
    )
    store, run_id, log = await _run(_spec(), model)

    assert log[-1].type == "run_settled" and log[-1].state is TerminalState.COMPLETED
    offered = {t.name for t in model.requests[0].tools}
    assert {"update_tasks", "show_component"} <= offered
    assert [r.type for r in log].count("task_list_updated") == 2
    assert finish_of(log, "plan").result == {"tasks": 2}
    assert finish_of(log, "card").result == {"shown": "card"}
    status = await psych_runtime.status(store, run_id)
    assert status.tasks == (Task(title="Pack", status="completed"),)
    assert status.components == (Component.model_validate(CARD),)
    report = await psych_runtime.report(store, run_id)
    assert report.tasks == status.tasks and report.components == status.components


async def test_unsafe_links_and_bad_tasks_are_refused_and_nothing_is_recorded() -> None:
    unsafe = {"kind": "card", "data": {"items": [{"href": " JavaScript:alert(1)"}]}}
    model = (
        FakeModel()
        .turn(tool_calls=[tool_call("show_component", "evil", **unsafe)])
        .turn(
            tool_calls=[
                tool_call("show_component", "inline", kind="card", title="data:text/html,x")
            ]
        )
        .turn(
            tool_calls=[tool_call("update_tasks", "bad", tasks=[{"title": "", "status": "done"}])]
        )
        .turn(text="ok")
    )
    _, _, log = await _run(_spec(), model)

    for call_id in ("evil", "inline", "bad"):
        finished = finish_of(log, call_id)
        assert finished.outcome is ToolOutcome.ERROR
        assert finished.failure.kind == "invalid_arguments"
    assert "data.items[0].href" in finish_of(log, "evil").failure.message
    assert "tasks[0]" in finish_of(log, "bad").failure.message
    assert not any(r.type in ("component_shown", "task_list_updated") for r in log)


async def test_the_tools_are_offered_only_when_the_spec_enables_them() -> None:
    model = FakeModel().turn(text="hi")
    await _run(_spec(tasks_enabled=False, components_enabled=False), model)
    assert not {"update_tasks", "show_component"} & {t.name for t in model.requests[0].tools}


async def test_a_task_update_left_in_doubt_by_a_crash_is_run_again_once() -> None:
    model = (
        FakeModel().turn(tool_calls=[tool_call("update_tasks", "plan", tasks=PLAN)]).turn(text="ok")
    )
    store = InMemoryStore()
    recovery = await crash_once(
        _spec(), model, message="hi", store=store, crash_before="tool_call_finished"
    )
    assert finish_of(recovery.final_log, "plan").outcome is ToolOutcome.OK
    assert [r.type for r in recovery.final_log].count("task_list_updated") == 1
    assert len((await psych_runtime.status(store, recovery.run_id)).tasks) == 2
