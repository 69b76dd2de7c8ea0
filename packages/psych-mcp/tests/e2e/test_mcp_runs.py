"""Agent Runs on real Workers using real MCP servers' tools through ``McpTools``.

The servers are ``McpStubServer``s, plus one written directly with the MCP SDK's own
server API; the model is a ``FakeModel`` that names the qualified tools. Each test
checks what reached the server and what the Run recorded.
"""

import asyncio
from typing import Any

from mcp.server.mcpserver import MCPServer

from psych_contract.tool_sources import ALLOWED
from psych_contract.tool_sources import OnlyFind
from psych_contract.tool_sources import check_only_find_was_offered_and_ran
from psych_contract.tool_sources import model_calling_every_crm_tool
from psych_mcp import McpStubServer
from psych_mcp import McpTools
from psych_runtime import AgentSpec
from psych_runtime import ApprovalRules
from psych_runtime import TerminalState
from psych_runtime import dispatch
from psych_runtime import publish
from psych_runtime import resume
from psych_runtime import status
from psych_runtime.spec import McpServer
from psych_runtime.testing import FakeModel

from ..tenant_secrets import PerTenant
from .conftest import ACME
from .conftest import GLOBEX
from .conftest import LOOPBACK
from .conftest import finishes
from .conftest import run_once
from .conftest import served
from .conftest import settled_log
from .conftest import working


def _spec(*servers: McpServer) -> AgentSpec:
    return AgentSpec(name="ops", model="fake-standard", mcp_servers=servers)


def _offered(model: FakeModel) -> list[list[str]]:
    return [[tool.name for tool in request.tools] for request in model.requests]


async def test_a_call_reaches_the_server_and_its_answer_the_model(stub: McpStubServer) -> None:
    stub.tool(
        "find_contact",
        lambda arguments: {"id": 7, "name": arguments["name"].title()},
        annotations={"readOnlyHint": True},
    )
    model = (
        FakeModel()
        .turn(tool_calls=[("crm__find_contact", {"name": "ada lovelace"})])
        .turn(text="Found Ada.")
    )
    log = await run_once(
        _spec(McpServer(name="crm", url=stub.url)), model, McpTools(egress=LOOPBACK)
    )
    assert log[-1].state is TerminalState.COMPLETED
    assert [(c.tool, c.arguments) for c in stub.calls] == [
        ("find_contact", {"name": "ada lovelace"})
    ]
    [finished] = finishes(log)
    assert finished.outcome.value == "ok"
    assert finished.result == {
        "text": '{"id": 7, "name": "Ada Lovelace"}',
        "structured": {"id": 7, "name": "Ada Lovelace"},
    }
    assert "Ada Lovelace" in model.requests[1].messages[-1].content


async def test_a_tool_added_mid_run_is_usable_on_the_next_turn(stub: McpStubServer) -> None:
    def find(arguments: dict[str, Any]) -> str:
        stub.tool("create", lambda arguments: f"created {arguments['name']}")
        return "not found"

    stub.tool("find", find, annotations={"readOnlyHint": True})
    model = (
        FakeModel()
        .turn(tool_calls=[("crm__find", {"name": "acme"})])
        .turn(tool_calls=[("crm__create", {"name": "acme"})])
        .turn(text="Created.")
    )
    tools = McpTools(egress=LOOPBACK, catalogue_ttl_seconds=0)
    log = await run_once(_spec(McpServer(name="crm", url=stub.url)), model, tools)
    assert log[-1].state is TerminalState.COMPLETED
    assert [c.tool for c in stub.calls] == ["find", "create"]
    offered = _offered(model)
    assert offered[0] == ["crm__find"] and "crm__create" in offered[1]
    assert finishes(log)[1].result == {"text": "created acme"}


async def test_a_required_server_down_fails_the_run() -> None:
    async with McpStubServer() as gone:
        url = gone.url
    log = await run_once(
        _spec(McpServer(name="crm", url=url)), FakeModel(), McpTools(egress=LOOPBACK)
    )
    settled = log[-1]
    assert settled.state is TerminalState.FAILED
    assert settled.failure.kind == "tool_resolution" and settled.failure.transient
    assert "crm" in settled.failure.message and "unreachable" in settled.failure.message


async def test_an_optional_server_down_is_an_advisory_and_the_run_goes_on(
    stub: McpStubServer,
) -> None:
    async with McpStubServer() as gone:
        wiki_url = gone.url
    stub.tool("find", "found")
    spec = _spec(
        McpServer(name="crm", url=stub.url),
        McpServer(name="wiki", url=wiki_url, optional=True),
    )
    model = FakeModel().turn(text="Fine without the wiki.")
    log = await run_once(spec, model, McpTools(egress=LOOPBACK))
    assert log[-1].state is TerminalState.COMPLETED
    assert "The MCP server wiki is unavailable this turn" in model.requests[0].messages[0].content
    assert _offered(model) == [["crm__find"]]


async def test_same_named_tools_on_two_servers_stay_apart() -> None:
    async with McpStubServer() as crm, McpStubServer() as wiki:
        crm.tool("search", "crm result", annotations={"readOnlyHint": True})
        wiki.tool("search", "wiki result", annotations={"readOnlyHint": True})
        spec = _spec(McpServer(name="crm", url=crm.url), McpServer(name="wiki", url=wiki.url))
        model = (
            FakeModel()
            .turn(tool_calls=[("wiki__search", {"q": "w"}), ("crm__search", {"q": "c"})])
            .turn(text="Both searched.")
        )
        log = await run_once(spec, model, McpTools(egress=LOOPBACK))
    assert log[-1].state is TerminalState.COMPLETED
    assert sorted(_offered(model)[0]) == ["crm__search", "wiki__search"]
    assert [c.arguments for c in crm.calls] == [{"q": "c"}]
    assert [c.arguments for c in wiki.calls] == [{"q": "w"}]
    results = sorted(f.result["text"] for f in finishes(log))
    assert results == ["crm result", "wiki result"]


async def test_excluded_tools_are_refused_even_when_the_model_names_them(
    stub: McpStubServer,
) -> None:
    for name in ("find", "export", "delete_all"):
        stub.tool(name, f"{name} done")
    spec = _spec(McpServer(name="crm", url=stub.url, allow=ALLOWED))
    model = model_calling_every_crm_tool()
    log = await run_once(spec, model, McpTools(egress=LOOPBACK), access=OnlyFind())
    check_only_find_was_offered_and_ran(log, model)
    assert [c.tool for c in stub.calls] == ["find"]


async def test_tenants_never_see_each_others_credentials(stub: McpStubServer) -> None:
    stub.tool("whoami", lambda arguments: arguments["run"], annotations={"readOnlyHint": True})
    spec = _spec(McpServer(name="crm", url=stub.url, credential="crm-token"))
    secrets = PerTenant({"acme": "acme-token", "globex": "globex-token"})
    tools = McpTools(egress=LOOPBACK, secrets=secrets)
    model = FakeModel()
    for run in ("acme-1", "globex-1", "acme-2", "globex-2"):
        model.turn(tool_calls=[("crm__whoami", {"run": run})]).turn(text="Done.")
    async with working(model, tools, secrets=secrets) as (store, _):
        for run, scope in (
            ("acme-1", ACME),
            ("globex-1", GLOBEX),
            ("acme-2", ACME),
            ("globex-2", GLOBEX),
        ):
            version = await publish(store, spec, scope=scope)
            dispatched = await dispatch(store, version, "Go.", scope=scope)
            log = await settled_log(store, dispatched.run_id)
            assert log[-1].state is TerminalState.COMPLETED, run
        keys = tools.open_connections
    seen = {call.arguments["run"]: call.authorization for call in stub.calls}
    assert seen == {
        "acme-1": "Bearer acme-token",
        "globex-1": "Bearer globex-token",
        "acme-2": "Bearer acme-token",
        "globex-2": "Bearer globex-token",
    }
    assert sorted(key.tenant for key in keys) == ["acme", "globex"]


async def test_a_destructive_tool_waits_for_approval(stub: McpStubServer) -> None:
    stub.tool("lookup", "looked up", annotations={"readOnlyHint": True})
    stub.tool("wipe", "wiped", annotations={"destructiveHint": True})
    model = (
        FakeModel()
        .turn(tool_calls=[("crm__lookup", {})])
        .turn(tool_calls=[("crm__wipe", {"all": True})])
        .turn(text="Wiped.")
    )
    rules = ApprovalRules(selectors=("@destructive",))
    async with working(model, McpTools(egress=LOOPBACK), approvals=rules) as (store, _):
        version = await publish(store, _spec(McpServer(name="crm", url=stub.url)), scope=ACME)
        run = await dispatch(store, version, "Go.", scope=ACME)
        async with asyncio.timeout(10):
            while (await status(store, run.run_id, scope=ACME)).pending_approval is None:
                await asyncio.sleep(0.02)
        assert [c.tool for c in stub.calls] == ["lookup"]  # the wipe waits for a person
        await resume(store, run.run_id, approved=True, by="ops", scope=ACME)
        log = await settled_log(store, run.run_id)
    assert [c.tool for c in stub.calls] == ["lookup", "wipe"]
    assert log[-1].state is TerminalState.COMPLETED


async def test_a_server_written_with_the_sdks_own_api() -> None:
    weather = MCPServer("weather", log_level="WARNING")

    @weather.tool(description="Today's forecast for a city.")
    def forecast(city: str) -> str:
        return f"Sunny in {city}"

    async with served(weather.streamable_http_app()) as port:
        spec = _spec(McpServer(name="weather", url=f"http://127.0.0.1:{port}/mcp"))
        model = (
            FakeModel()
            .turn(tool_calls=[("weather__forecast", {"city": "Paris"})])
            .turn(text="Sunny.")
        )
        log = await run_once(spec, model, McpTools(egress=LOOPBACK))
    assert log[-1].state is TerminalState.COMPLETED
    [definition] = model.requests[0].tools
    assert definition.description == "Today's forecast for a city."
    assert definition.input_schema["required"] == ["city"]
    assert finishes(log)[0].result["text"] == "Sunny in Paris"


async def test_a_server_on_the_legacy_sse_transport() -> None:
    async with McpStubServer(transport="sse", require_token="sse-token") as legacy:
        legacy.tool("ping", "pong", annotations={"readOnlyHint": True})
        spec = _spec(McpServer(name="old", url=legacy.url, transport="sse", credential="old"))
        model = FakeModel().turn(tool_calls=[("old__ping", {})]).turn(text="Pong.")
        tools = McpTools(egress=LOOPBACK, secrets=PerTenant({"acme": "sse-token"}))
        log = await run_once(spec, model, tools)
    assert log[-1].state is TerminalState.COMPLETED
    assert finishes(log)[0].result == {"text": "pong"}
    assert [(c.tool, c.authorization) for c in legacy.calls] == [("ping", "Bearer sse-token")]
