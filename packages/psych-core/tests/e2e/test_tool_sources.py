"""The ToolSource seam end to end, with an in-process source standing in for MCP servers.

A source is asked what it offers at the start of every turn; these tests change its
answer between turns, take servers down, narrow by tenant, gate by annotations and
crash around its calls, and check what the Run and the model see.
"""

import asyncio
from collections.abc import Collection
from contextlib import AbstractAsyncContextManager
from typing import Any

import pytest

from psych_contract.tool_sources import ALLOWED
from psych_contract.tool_sources import OnlyFind
from psych_contract.tool_sources import check_only_find_was_offered_and_ran
from psych_contract.tool_sources import model_calling_every_crm_tool
from psych_runtime import AgentSpec
from psych_runtime import ApprovalRules
from psych_runtime import InMemoryStore
from psych_runtime import SpecValidationError
from psych_runtime import TerminalState
from psych_runtime import ToolContext
from psych_runtime import ValidationContext
from psych_runtime import publish
from psych_runtime import resume
from psych_runtime import status
from psych_runtime.adapters import AUTOLOAD_ENV
from psych_runtime.adapters import reset_plugin_manager
from psych_runtime.core.narrowing import matches
from psych_runtime.models import ToolDefinition
from psych_runtime.records import Record
from psych_runtime.spec import McpServer
from psych_runtime.testing import FakeModel
from psych_runtime.testing import settled_log
from psych_runtime.tools.sources import SourceCallFailed
from psych_runtime.tools.sources import SourceTool
from psych_runtime.tools.sources import SourceTools
from psych_runtime.tools.sources import ToolSourceUnavailable

from .conftest import ACME
from .conftest import Dispatched
from .conftest import crash_once
from .conftest import dispatched
from .conftest import tool_finishes

MCP = ValidationContext(capabilities=("mcp_servers",))


class ServerRoom:
    """Pretend MCP servers: a catalogue per server, some of them down, every call kept."""

    def __init__(self, catalogue: dict[str, dict[str, tuple[str, ...]]]) -> None:
        self.catalogue = catalogue
        self.down: set[str] = set()
        self.calls: list[tuple[str, str, str, dict[str, Any]]] = []
        self.resolved = 0

    def serves(self, spec: AgentSpec) -> bool:
        return bool(spec.mcp_servers)

    async def resolve(
        self, spec: AgentSpec, scope: Any, *, permitted: Collection[str] | None
    ) -> SourceTools:
        self.resolved += 1
        tools: list[SourceTool] = []
        advisories: list[str] = []
        for server in spec.mcp_servers:
            if server.name in self.down:
                if not server.optional:
                    raise ToolSourceUnavailable(server.name, f"MCP server {server.name} is down")
                advisories.append(f"The MCP server {server.name} is unavailable this turn.")
                continue
            for name, annotations in self.catalogue.get(server.name, {}).items():
                qualified = f"{server.name}__{name}"
                if server.allow and not any(matches(name, p) for p in server.allow):
                    continue
                if permitted is not None and not any(matches(qualified, p) for p in permitted):
                    continue
                definition = ToolDefinition(
                    name=qualified,
                    description=f"{name} at {server.name}",
                    input_schema={"type": "object"},
                    annotations=frozenset(annotations),
                )
                tools.append(
                    SourceTool(
                        definition,
                        server.name,
                        name,
                        safe_to_retry="idempotent" in annotations,
                    )
                )
        return SourceTools(tuple(tools), tuple(advisories))

    async def call(
        self,
        spec: AgentSpec,
        tool: SourceTool,
        arguments: dict[str, Any],
        context: ToolContext,
        *,
        permitted: Collection[str] | None,
    ) -> Any:
        self.calls.append((context.scope.tenant, tool.owner, tool.remote_name, arguments))
        if tool.remote_name == "broken":
            raise SourceCallFailed("tool_error", "the server said no", transient=True)
        return {"server": tool.owner, "tool": tool.remote_name}


def _spec(*servers: McpServer) -> AgentSpec:
    return AgentSpec(name="ops", model="fake-standard", mcp_servers=servers)


def _sourced(
    spec: AgentSpec, model: FakeModel, room: ServerRoom, **runtime: Any
) -> AbstractAsyncContextManager[Dispatched]:
    options = {"tool_sources": [room], **runtime}
    return dispatched(spec, model, message="Go.", context=MCP, runtime_options=options)


async def _run(
    spec: AgentSpec, model: FakeModel, room: ServerRoom, **runtime: Any
) -> tuple[InMemoryStore, list[Record]]:
    async with _sourced(spec, model, room, **runtime) as (store, run_id):
        return store, await settled_log(store, run_id)


CRM = McpServer(name="crm", url="https://crm.example.com/mcp")
WIKI = McpServer(name="wiki", url="https://wiki.example.com/mcp", optional=True)


async def test_a_spec_with_mcp_servers_needs_a_plugin_that_runs_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # With plugin discovery off, nothing installed runs MCP servers.
    monkeypatch.setenv(AUTOLOAD_ENV, "1")
    reset_plugin_manager()
    try:
        with pytest.raises(SpecValidationError, match="MCP servers"):
            await publish(InMemoryStore(), _spec(CRM), scope=ACME)
        await publish(InMemoryStore(), _spec(CRM), scope=ACME, context=MCP)
    finally:
        monkeypatch.delenv(AUTOLOAD_ENV)
        reset_plugin_manager()


async def test_tools_are_resolved_every_turn_and_a_new_one_is_usable_next_turn() -> None:
    room = ServerRoom({"crm": {"find": ("read-only",)}})

    model = (
        FakeModel()
        .turn(tool_calls=[("crm__find", {"q": "acme"})])
        .turn(tool_calls=[("crm__create", {"name": "acme"})])
        .turn(text="Created.")
    )
    original = room.resolve

    async def resolve(spec: AgentSpec, scope: Any, *, permitted: Any) -> SourceTools:
        if room.resolved == 1:  # the server gained a tool after the first turn
            room.catalogue["crm"]["create"] = ("write",)
        return await original(spec, scope, permitted=permitted)

    room.resolve = resolve  # type: ignore[method-assign]
    _, log = await _run(_spec(CRM), model, room)
    assert log[-1].state is TerminalState.COMPLETED
    assert [c[2] for c in room.calls] == ["find", "create"]
    offered = [r.tool_names for r in log if r.type == "model_call_started"]
    assert "crm__create" not in offered[0] and "crm__create" in offered[1]


async def test_a_required_server_down_fails_the_run_and_an_optional_one_is_skipped() -> None:
    room = ServerRoom({"crm": {"find": ()}, "wiki": {"page": ()}})
    room.down = {"wiki"}
    model = FakeModel().turn(text="Fine without the wiki.")
    _, log = await _run(_spec(CRM, WIKI), model, room)
    assert log[-1].state is TerminalState.COMPLETED
    assert "The MCP server wiki is unavailable this turn." in model.requests[0].messages[0].content
    assert [t.name for t in model.requests[0].tools] == ["crm__find"]

    room.down = {"crm"}
    _, log = await _run(_spec(CRM, WIKI), FakeModel(), room)
    settled = log[-1]
    assert settled.state is TerminalState.FAILED
    assert settled.failure.kind == "tool_resolution" and settled.failure.transient
    assert "crm is down" in settled.failure.message


async def test_exclusions_and_the_tenant_plane_narrow_what_is_offered_and_callable() -> None:
    room = ServerRoom({"crm": {"find": (), "delete_all": (), "export": ()}})
    spec = _spec(CRM.model_copy(update={"allow": ALLOWED}))
    model = model_calling_every_crm_tool()
    _, log = await _run(spec, model, room, access=OnlyFind())
    check_only_find_was_offered_and_ran(log, model)
    assert [c[2] for c in room.calls] == ["find"]


async def test_a_call_failure_is_data_and_annotations_drive_approvals() -> None:
    room = ServerRoom({"crm": {"broken": ("read-only",), "wipe": ("destructive",)}})
    model = (
        FakeModel()
        .turn(tool_calls=[("crm__broken", {})])
        .turn(tool_calls=[("crm__wipe", {"all": True})])
        .turn(text="Wiped.")
    )
    rules = ApprovalRules(selectors=("@destructive",))
    async with _sourced(_spec(CRM), model, room, approvals=rules) as (store, run_id):
        async with asyncio.timeout(10):
            while (await status(store, run_id, scope=ACME)).pending_approval is None:
                await asyncio.sleep(0.02)
        assert [c[2] for c in room.calls] == ["broken"]  # the wipe waits for a person
        await resume(store, run_id, approved=True, by="ops", scope=ACME)
        log = await settled_log(store, run_id)
    failed = tool_finishes(log)[0].failure
    assert failed.kind == "tool_error" and failed.transient
    assert [c[2] for c in room.calls] == ["broken", "wipe"]
    assert log[-1].state is TerminalState.COMPLETED


@pytest.mark.parametrize(("annotations", "sent_again"), [(("idempotent",), True), ((), False)])
async def test_a_remote_call_in_doubt_is_resent_only_when_it_is_idempotent(
    annotations: tuple[str, ...], sent_again: bool
) -> None:
    room = ServerRoom({"crm": {"sync": annotations}})
    model = FakeModel().turn(tool_calls=[("crm__sync", {})]).turn(text="Synced.")
    recovery = await crash_once(
        _spec(CRM),
        model,
        message="Go.",
        context=MCP,
        runtime_options={"tool_sources": [room]},
        crash_before="tool_call_finished",
    )
    [finished] = tool_finishes(recovery.final_log)
    assert len(room.calls) == (2 if sent_again else 1)
    assert finished.outcome.value == ("ok" if sent_again else "unknown")


async def test_a_large_catalogue_is_deferred_behind_three_built_ins() -> None:
    tools = {f"report_{n}": ("read-only",) for n in range(30)}
    room = ServerRoom({"crm": {**tools, "wipe": ("destructive",)}, "wiki": {"page": ()}})
    wiki = WIKI.model_copy(update={"preload": True})
    model = (
        FakeModel()
        .turn(tool_calls=[("list_tools", {"query": "report_1"})])
        .turn(tool_calls=[("get_tool_info", {"name": "crm__report_12"})])
        .turn(tool_calls=[("call_tool", {"name": "crm__report_12", "arguments": {"q": 1}})])
        .turn(tool_calls=[("call_tool", {"name": "crm__nothing"}), ("wiki__page", {})])
        .turn(tool_calls=[("call_tool", {"name": "crm__wipe"})])
        .turn(text="done")
    )
    rules = ApprovalRules(selectors=("@destructive",))
    store, log = await _run_until_suspended(
        _spec(CRM, wiki), model, room, catalogue_budget_chars=200, approvals=rules
    )
    offered = {t.name for t in model.requests[0].tools}
    assert {"list_tools", "get_tool_info", "call_tool", "wiki__page"} <= offered
    assert not any(name.startswith("crm__") for name in offered)
    finishes = tool_finishes(log)
    listed = [t["name"] for t in finishes[0].result["tools"]]
    assert "crm__report_12" in listed and "crm__report_2" not in listed
    assert finishes[1].result["annotations"] == ["read-only"]
    assert finishes[2].outcome.value == "ok"
    assert finishes[3].failure.kind == "unknown_tool"  # fails closed, nothing sent
    # The destructive target is judged by its own annotations: the Run waits.
    assert [c[2] for c in room.calls] == ["report_12", "page"]
    assert room.calls[0][3] == {"q": 1}
    status_now = await status(store, log[0].run_id, scope=ACME)
    assert status_now.pending_approval is not None
    assert status_now.pending_approval.tool == "call_tool"


async def _run_until_suspended(
    spec: AgentSpec, model: FakeModel, room: ServerRoom, **runtime: Any
) -> tuple[InMemoryStore, list[Record]]:
    async with _sourced(spec, model, room, **runtime) as (store, run_id):
        async with asyncio.timeout(10):
            while (await status(store, run_id, scope=ACME)).suspend_reason is None:
                await asyncio.sleep(0.02)
        return store, await store.read(run_id)
