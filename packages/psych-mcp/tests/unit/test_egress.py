"""Every request an MCP connection makes passes the egress policy, and redirects stop."""

from typing import Any

import httpx
import httpx2
import pytest

from psych_mcp import McpStubServer
from psych_mcp import McpTools
from psych_mcp._egress import EgressTransport
from psych_mcp._egress import RedirectRefused
from psych_mcp._egress import gated_client
from psych_runtime import EgressDecision
from psych_runtime import EgressDenied
from psych_runtime import EgressPolicy
from psych_runtime import EgressRule
from psych_runtime import HttpTransport
from psych_runtime import Scope
from psych_runtime.adapters import SourceCallFailed
from psych_runtime.adapters import SourceTool
from psych_runtime.adapters import ToolContext
from psych_runtime.adapters import ToolSourceUnavailable
from psych_runtime.adapters.tools import AnyPolicy
from psych_runtime.models import ToolDefinition
from psych_runtime.spec import AgentSpec
from psych_runtime.spec import McpServer

ACME = Scope(tenant="acme")
OPEN = EgressPolicy(resolve_hostnames=False)
"""Allows any public host, without looking names up."""


def _sent_to(seen: list[str], status: int = 200, **headers: str) -> httpx2.MockTransport:
    def answer(request: httpx2.Request) -> httpx2.Response:
        seen.append(str(request.url))
        return httpx2.Response(status, headers=headers, json={})

    return httpx2.MockTransport(answer)


def _connection(
    policy: AnyPolicy, inner: httpx2.MockTransport
) -> tuple[httpx2.AsyncClient, EgressTransport]:
    """The HTTP client an MCP connection gets (``gated_client``), sending to ``inner``."""
    transport = EgressTransport(policy, ACME, inner=inner)
    return gated_client(transport), transport


async def test_a_refused_host_is_never_contacted() -> None:
    seen: list[str] = []
    policy = EgressPolicy(deny=(EgressRule(host="*.evil.example"),), resolve_hostnames=False)
    client, transport = _connection(policy, _sent_to(seen))
    async with client:
        with pytest.raises(EgressDenied, match=r"mcp\.evil\.example"):
            await client.post("https://mcp.evil.example/mcp", json={})
        assert (await client.post("https://mcp.good.example/mcp", json={})).status_code == 200
    assert seen == ["https://mcp.good.example/mcp"]
    assert isinstance(transport.failure, EgressDenied)


async def test_the_policy_is_asked_with_the_connections_scope() -> None:
    asked: list[tuple[Scope, str]] = []

    def decide(scope: Scope, url: httpx.URL) -> EgressDecision:
        asked.append((scope, str(url)))
        return EgressDecision.allow()

    client, _ = _connection(decide, _sent_to([]))
    async with client:
        await client.get("https://mcp.example.com/sse")
    assert asked == [(ACME, "https://mcp.example.com/sse")]


@pytest.mark.parametrize("status", [301, 302, 307, 308])
async def test_a_redirect_is_refused_not_followed(status: int) -> None:
    seen: list[str] = []
    inner = _sent_to(seen, status, location="https://elsewhere.example/mcp")
    transport = EgressTransport(OPEN, ACME, inner=inner)
    # A client that would follow redirects: the transport refuses them all the same.
    async with httpx2.AsyncClient(transport=transport, follow_redirects=True) as client:
        with pytest.raises(RedirectRefused, match=r"elsewhere\.example"):
            await client.post("https://mcp.example.com/mcp", json={})
    assert seen == ["https://mcp.example.com/mcp"]


async def test_error_statuses_are_remembered() -> None:
    client, transport = _connection(OPEN, _sent_to([], 401))
    async with client:
        await client.post("https://mcp.example.com/mcp", json={})
    assert transport.error_status == 401


def _context(scope: Scope = ACME) -> ToolContext:
    return ToolContext.for_call(run_id="run", call_id="call", scope=scope, attempt_id="attempt")


async def _denied_everywhere(tools: McpTools, server: McpServer, **call: Any) -> None:
    spec = AgentSpec(name="ops", model="fake", mcp_servers=(server,))
    with pytest.raises(ToolSourceUnavailable, match="egress") as down:
        await tools.resolve(spec, ACME, permitted=None)
    assert not down.value.transient
    tool = SourceTool(ToolDefinition(name="crm__find"), "crm", "find")
    with pytest.raises(SourceCallFailed) as failed:
        await tools.call(spec, tool, {}, _context(), permitted=None)
    assert failed.value.kind == "egress_denied" and not failed.value.transient


async def test_the_default_policy_refuses_a_loopback_server(stub: McpStubServer) -> None:
    async with McpTools() as tools:
        await _denied_everywhere(tools, McpServer(name="crm", url=stub.url))
    assert stub.listings == 0 and stub.calls == ()


async def test_the_runtimes_http_transport_lends_its_policy(stub: McpStubServer) -> None:
    refusing = EgressPolicy(deny=(EgressRule(host="127.0.0.1"),))
    async with HttpTransport(policy=refusing) as http, McpTools(http=http) as tools:
        await _denied_everywhere(tools, McpServer(name="crm", url=stub.url))
    assert stub.listings == 0


async def test_an_optional_refused_server_is_an_advisory(stub: McpStubServer) -> None:
    server = McpServer(name="crm", url=stub.url, optional=True)
    spec = AgentSpec(name="ops", model="fake", mcp_servers=(server,))
    async with McpTools() as tools:
        offered = await tools.resolve(spec, ACME, permitted=None)
    assert offered.tools == ()
    [advisory] = offered.advisories
    assert "crm is unavailable this turn" in advisory and "loopback" in advisory
