"""The table of built-in tools: every one reserved, ordered, and one entry is all it takes.

The catalog, the executor, the approval gate and crash recovery read what each entry
says of itself; the last test adds a built-in as one entry and sees a Run offer it,
run it, and judge and recover it as the entry says.
"""

import time

import pytest

import psych_runtime
from psych_runtime.core.ids import ToolCallId
from psych_runtime.core.messages import ToolDefinition
from psych_runtime.core.records import JsonObject
from psych_runtime.core.records import ToolOutcome
from psych_runtime.core.spec import Skill
from psych_runtime.core.spec.names import RESERVED_TOOL_NAMES
from psych_runtime.runtime.agent import built_ins
from psych_runtime.runtime.agent.built_in import BuiltIn
from psych_runtime.runtime.agent.built_in import TurnView
from psych_runtime.runtime.agent.catalog import ToolCatalog
from psych_runtime.runtime.agent.context import AttemptContext
from psych_runtime.runtime.agent.finish import Executed
from psych_runtime.runtime.agent.remote import refresh_remote
from psych_runtime.spec import McpServer
from psych_runtime.testing import FakeModel
from psych_runtime.tools.approval import ToolClass

from ....e2e.test_tool_sources import ServerRoom
from .conftest import Attempt
from .conftest import agent
from .conftest import open_attempt
from .conftest import started
from .conftest import tool_turn


def test_every_built_in_name_is_reserved_and_every_reserved_name_is_a_built_in() -> None:
    assert set(built_ins.BUILT_INS) == RESERVED_TOOL_NAMES


def test_run_code_comes_last_so_a_program_may_call_every_tool_before_it() -> None:
    assert list(built_ins.BUILT_INS)[-1] == "run_code"


def test_the_catalog_answers_from_the_table() -> None:
    spec = psych_runtime.AgentSpec(name="a", model="m")
    catalog = ToolCatalog(spec, psych_runtime.ToolRegistry(), built_ins=built_ins.BUILT_INS)
    assert catalog.tool_class("check_subagent") is ToolClass.READ_ONLY
    assert catalog.tool_class("remember") is ToolClass.WRITE
    assert catalog.safe_to_retry("forget") and not catalog.safe_to_retry("remember")
    assert not catalog.safe_to_retry("message_subagent")
    assert catalog.built_in("read_tool_output") and not catalog.built_in("run_code")


ECHO = ToolDefinition(
    name="echo_back",
    description="Say the text back.",
    input_schema={"type": "object", "properties": {"text": {"type": "string"}}},
)


async def _echo(ctx: AttemptContext, call_id: str, name: str, arguments: JsonObject) -> Executed:
    return Executed(ToolOutcome.OK, {"echo": arguments.get("text")}, None, 0.0)


async def test_a_new_built_in_is_one_table_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    def offer(view: TurnView) -> ToolDefinition | None:
        return ECHO

    entry = BuiltIn("echo_back", lambda catalog: True, offer, _echo, tool_class=ToolClass.WRITE)
    table = {**built_ins.BUILT_INS, "echo_back": entry}
    monkeypatch.setattr(built_ins, "BUILT_INS", table)
    monkeypatch.setattr("psych_runtime.runtime.agent.loop.BUILT_INS", table)
    monkeypatch.setattr("psych_runtime.runtime.agent.execute.BUILT_INS", table)
    model = FakeModel().turn(tool_calls=[("echo_back", {"text": "hi"})]).turn(text="done")
    spec = psych_runtime.AgentSpec(name="a", model="m")
    async with psych_runtime.session(
        model,
        runtime=psych_runtime.RuntimeSettings(approval_selectors=("@write",)),
    ) as s:
        run = await s.dispatch(spec, "echo")
        started = time.monotonic()
        while (await s.status(run.run_id)).pending_approval is None:
            assert time.monotonic() - started < 5
            await s.wait(run.run_id, timeout=5)
        # Judged as the entry says (a write), and run as it says once approved.
        await s.resume(run.run_id, approved=True)
        await s.wait(run.run_id, timeout=5)
        log = await s.read_log(run.run_id)
    assert "echo_back" in {d.name for d in model.requests[0].tools}
    finished = next(r for r in log if r.type == "tool_call_finished")
    assert finished.outcome is ToolOutcome.OK and finished.result == {"echo": "hi"}


# --- how the simple entries run --------------------------------------------------------


async def _run(attempt: Attempt, name: str, arguments: JsonObject) -> Executed:
    entry = built_ins.BUILT_INS[name]
    assert entry.run is not None
    return await entry.run(attempt.ctx, ToolCallId("c9"), name, arguments)


def _kind(executed: Executed) -> str:
    assert executed.outcome is ToolOutcome.ERROR and executed.failure is not None
    return executed.failure.kind


async def test_read_tool_output_pages_through_a_result_this_run_kept() -> None:
    log = tool_turn(started(), "c1").tool_started("c1", tool="lookup")
    log.tool_finished("c1", result="line one\nline two\nline three", result_handle="h_c1")
    attempt = await open_attempt(log)
    page = await _run(attempt, "read_tool_output", {"handle": "h_c1", "offset": 1, "limit": 1})
    assert page.outcome is ToolOutcome.OK and isinstance(page.result, dict)
    assert "line two" in str(page.result) and "line one" not in str(page.result)
    assert _kind(await _run(attempt, "read_tool_output", {"handle": "h_other"})) == (
        "unknown_handle"
    )
    assert _kind(await _run(attempt, "read_tool_output", {"handle": 3})) == "invalid_arguments"


async def test_load_skill_answers_from_the_spec_and_refuses_an_unknown_skill() -> None:
    skill = Skill(name="refunds", description="How refunds work.", body="Refund within 30 days.")
    attempt = await open_attempt(spec=agent(skills=(skill,)))
    loaded = await _run(attempt, "load_skill", {"name": "refunds"})
    assert loaded.outcome is ToolOutcome.OK and "Refund within 30 days." in str(loaded.result)
    assert _kind(await _run(attempt, "load_skill", {"name": "returns"})) == "invalid_arguments"


async def test_update_tasks_and_show_component_stage_their_record_with_the_call() -> None:
    log = tool_turn(started(), "c9").tool_started("c9", tool="update_tasks")
    attempt = await open_attempt(log, spec=agent(tasks_enabled=True, components_enabled=True))
    tasks = await _run(attempt, "update_tasks", {"tasks": [{"title": "Find A1"}]})
    shown = await _run(attempt, "show_component", {"kind": "card", "title": "A1"})
    assert (tasks.result, shown.result) == ({"tasks": 1}, {"shown": "card"})
    assert attempt.types() == ["task_list_updated", "component_shown"]
    assert _kind(await _run(attempt, "update_tasks", {"tasks": "Find A1"})) == "invalid_arguments"
    assert attempt.types() == ["task_list_updated", "component_shown"]


async def test_list_tools_and_get_tool_info_describe_this_turns_deferred_tools() -> None:
    room = ServerRoom({"files": {"read": ("read-only",), "wipe": ("destructive",)}})
    server = McpServer(name="files", url="https://files.example/mcp", preload=False)
    attempt = await open_attempt(spec=agent(mcp_servers=(server,)), sources=(room,))
    await refresh_remote(attempt.ctx, None)
    listed = await _run(attempt, "list_tools", {"query": "wipe"})
    assert listed.result == {
        "tools": [{"name": "files__wipe", "summary": "wipe at files"}],
        "more": 0,
    }
    info = await _run(attempt, "get_tool_info", {"name": "files__read"})
    assert isinstance(info.result, dict) and info.result["annotations"] == ["read-only"]
    assert _kind(await _run(attempt, "get_tool_info", {"name": "files__gone"})) == (
        "invalid_arguments"
    )
