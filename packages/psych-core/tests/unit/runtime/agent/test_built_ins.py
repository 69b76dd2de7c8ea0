"""The table of built-in tools: every one reserved, ordered, and one entry is all it takes.

The catalog, the executor, the approval gate and crash recovery read what each entry
says of itself; the last test adds a built-in as one entry and sees a Run offer it,
run it, and judge and recover it as the entry says.
"""

import time

import pytest

import psych_runtime
from psych_runtime.core.messages import ToolDefinition
from psych_runtime.core.records import JsonObject, ToolOutcome
from psych_runtime.core.spec.names import RESERVED_TOOL_NAMES
from psych_runtime.runtime.agent import built_ins
from psych_runtime.runtime.agent.built_in import BuiltIn, TurnView
from psych_runtime.runtime.agent.catalog import ToolCatalog
from psych_runtime.runtime.agent.context import AttemptContext
from psych_runtime.runtime.agent.finish import Executed
from psych_runtime.testing import FakeModel
from psych_runtime.tools.approval import ToolClass


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
