"""``McpTools`` against a real MCP server: pooling, caching, narrowing and failures."""

import asyncio

import mcp_types as types
import pytest

from psych_mcp import McpStubServer
from psych_mcp import McpTools
from psych_mcp import PoolKey
from psych_runtime import EgressDecision
from psych_runtime import EgressPolicy
from psych_runtime import HttpTransport
from psych_runtime import ResolvedCredential
from psych_runtime import Scope
from psych_runtime.adapters import SourceCallFailed
from psych_runtime.adapters import SourceTool
from psych_runtime.adapters import ToolContext
from psych_runtime.adapters import ToolSourceUnavailable
from psych_runtime.spec import AgentSpec
from psych_runtime.spec import McpOAuth
from psych_runtime.spec import McpServer

from ..tenant_secrets import PerTenant

ACME = Scope(tenant="acme", principal="ada")
GLOBEX = Scope(tenant="globex", principal="ada")


def _spec(*servers: McpServer) -> AgentSpec:
    return AgentSpec(name="ops", model="fake", mcp_servers=servers)


def _context(scope: Scope = ACME) -> ToolContext:
    return ToolContext.for_call(run_id="run", call_id="call", scope=scope, attempt_id="attempt")


def _named(offered: tuple[SourceTool, ...], name: str) -> SourceTool:
    return next(tool for tool in offered if tool.name == name)


async def test_connections_are_pooled_per_tenant_and_credential(
    stub: McpStubServer, loopback: EgressPolicy
) -> None:
    stub.tool("whoami", "ok")
    spec = _spec(McpServer(name="crm", url=stub.url, credential="crm-token"))
    secrets = PerTenant({"acme": "acme-secret", "globex": "globex-secret"})
    async with McpTools(egress=loopback, secrets=secrets, catalogue_ttl_seconds=0) as tools:
        offered = await tools.resolve(spec, ACME, permitted=None)
        await tools.resolve(spec, ACME, permitted=None)
        assert len(tools.open_connections) == 1  # the same tenant twice: one connection
        await tools.resolve(spec, GLOBEX, permitted=None)
        keys = tools.open_connections
        assert {key.tenant for key in keys} == {"acme", "globex"}
        assert len({key.credential for key in keys}) == 2
        assert all("secret" not in repr(key) for key in keys)  # a digest, never the token
        await tools.call(spec, offered.tools[0], {}, _context(GLOBEX), permitted=None)
        await tools.call(spec, offered.tools[0], {}, _context(ACME), permitted=None)
        assert len(tools.open_connections) == 2
    assert [call.authorization for call in stub.calls] == [
        "Bearer globex-secret",
        "Bearer acme-secret",
    ]
    assert tools.open_connections == ()


async def test_another_principal_or_secret_gets_its_own_connection(
    stub: McpStubServer, loopback: EgressPolicy
) -> None:
    spec = _spec(McpServer(name="crm", url=stub.url, credential="crm-token"))
    secrets = PerTenant({"acme": "first"})
    async with McpTools(egress=loopback, secrets=secrets) as tools:
        await tools.resolve(spec, ACME, permitted=None)
        await tools.resolve(spec, ACME.model_copy(update={"principal": "bob"}), permitted=None)
        secrets.tokens["acme"] = "rotated"
        await tools.resolve(spec, ACME, permitted=None)
        keys = tools.open_connections
    assert len(keys) == 3
    assert {key.principal for key in keys} == {"ada", "bob"}
    assert isinstance(keys[0], PoolKey)


async def test_the_pool_stays_within_its_bound(stub: McpStubServer, loopback: EgressPolicy) -> None:
    spec = _spec(McpServer(name="crm", url=stub.url))
    async with McpTools(egress=loopback, max_connections=2) as tools:
        for tenant in ("a", "b", "c", "a"):
            await tools.resolve(spec, Scope(tenant=tenant), permitted=None)
        assert [key.tenant for key in tools.open_connections] == ["c", "a"]


async def test_the_catalogue_is_cached_until_its_ttl_passes(
    stub: McpStubServer, loopback: EgressPolicy
) -> None:
    stub.tool("find", "found")
    spec = _spec(McpServer(name="crm", url=stub.url))
    async with McpTools(egress=loopback, catalogue_ttl_seconds=60) as tools:
        first = await tools.resolve(spec, ACME, permitted=None)
        stub.tool("create", "created")
        second = await tools.resolve(spec, ACME, permitted=None)
        assert [t.name for t in first.tools] == [t.name for t in second.tools] == ["crm__find"]
        assert stub.listings == 1
    async with McpTools(egress=loopback, catalogue_ttl_seconds=0) as tools:
        await tools.resolve(spec, ACME, permitted=None)
        stub.remove_tool("find")
        fresh = await tools.resolve(spec, ACME, permitted=None)
        assert [t.name for t in fresh.tools] == ["crm__create"]


async def test_a_name_no_provider_accepts_is_left_out_with_an_advisory(
    stub: McpStubServer, loopback: EgressPolicy
) -> None:
    stub.tool("find", "ok")
    stub.tool("find.all", "ok")
    stub.tool("x" * 70, "ok")
    stub.tool("hidden.one", "ok")
    spec = _spec(McpServer(name="crm", url=stub.url, allow=("find*", "x*")))
    async with McpTools(egress=loopback) as tools:
        offered = await tools.resolve(spec, ACME, permitted=None)
    assert [tool.name for tool in offered.tools] == ["crm__find"]
    assert len(offered.advisories) == 2
    assert "'find.all'" in offered.advisories[0] and "left out" in offered.advisories[0]
    assert not any("hidden" in advisory for advisory in offered.advisories)


async def test_hints_become_annotations_and_definitions(
    stub: McpStubServer, loopback: EgressPolicy
) -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string"}}}
    stub.tool(
        "find", "ok", description="Find.", input_schema=schema, annotations={"readOnlyHint": True}
    )
    stub.tool("sync", "ok", annotations={"destructiveHint": False, "idempotentHint": True})
    stub.tool("wipe", "ok")
    spec = _spec(McpServer(name="crm", url=stub.url))
    async with McpTools(egress=loopback) as tools:
        offered = (await tools.resolve(spec, ACME, permitted=None)).tools
    find, sync, wipe = (_named(offered, f"crm__{n}") for n in ("find", "sync", "wipe"))
    assert find.definition.annotations == {"read-only"} and not find.safe_to_retry
    assert find.definition.description == "Find." and find.definition.input_schema == schema
    assert find.owner == "crm" and find.remote_name == "find"
    assert sync.definition.annotations == {"write", "idempotent"} and sync.safe_to_retry
    assert wipe.definition.annotations == {"destructive"}


async def test_calls_are_narrowed_again_whatever_the_model_sends(
    stub: McpStubServer, loopback: EgressPolicy
) -> None:
    stub.tool("find", "ok")
    stub.tool("delete_all", "gone")
    server = McpServer(name="crm", url=stub.url)
    async with McpTools(egress=loopback) as tools:
        offered = (await tools.resolve(_spec(server), ACME, permitted=None)).tools
        delete_all = _named(offered, "crm__delete_all")
        narrowed = _spec(server.model_copy(update={"allow": ("find",)}))
        with pytest.raises(SourceCallFailed) as refused:
            await tools.call(narrowed, delete_all, {}, _context(), permitted=None)
        assert refused.value.kind == "excluded"
        with pytest.raises(SourceCallFailed, match="not available") as refused:
            await tools.call(_spec(server), delete_all, {}, _context(), permitted=["crm__find"])
        assert refused.value.kind == "excluded"
        stranger = SourceTool(delete_all.definition, "elsewhere", "delete_all")
        with pytest.raises(SourceCallFailed) as refused:
            await tools.call(_spec(server), stranger, {}, _context(), permitted=None)
        assert refused.value.kind == "excluded"
        assert stub.calls == ()
        find = _named(offered, "crm__find")
        assert await tools.call(narrowed, find, {"q": 1}, _context(), permitted=["crm__*"]) == {
            "text": "ok"
        }
    assert [(call.tool, call.arguments) for call in stub.calls] == [("find", {"q": 1})]


async def test_results_are_mapped_and_errors_are_tool_errors(
    stub: McpStubServer, loopback: EgressPolicy
) -> None:
    def picture(arguments: dict[str, object]) -> list[types.ContentBlock]:
        return [
            types.TextContent(text=f"a {arguments['colour']} square"),
            types.ImageContent(data="iVBORw0=", mime_type="image/png"),
        ]

    def broken(arguments: dict[str, object]) -> None:
        raise LookupError("no such contact")

    stub.tool("picture", picture)
    stub.tool("refuses", "unused", fail="quota exceeded")
    stub.tool("broken", broken)
    server = McpServer(name="crm", url=stub.url)
    async with McpTools(egress=loopback) as tools:
        offered = (await tools.resolve(_spec(server), ACME, permitted=None)).tools
        result = await tools.call(
            _spec(server),
            _named(offered, "crm__picture"),
            {"colour": "red"},
            _context(),
            permitted=None,
        )
        assert result == {
            "text": "a red square",
            "content": [{"type": "image", "mime_type": "image/png", "data": "iVBORw0="}],
        }
        for name, message in (
            ("crm__refuses", "quota exceeded"),
            ("crm__broken", "no such contact"),
        ):
            with pytest.raises(SourceCallFailed, match=message) as failed:
                await tools.call(
                    _spec(server), _named(offered, name), {}, _context(), permitted=None
                )
            assert failed.value.kind == "tool_error" and not failed.value.transient
        stub.remove_tool("picture")  # gone since the turn began
        with pytest.raises(SourceCallFailed) as failed:
            await tools.call(
                _spec(server), _named(offered, "crm__picture"), {}, _context(), permitted=None
            )
        assert failed.value.kind == "tool_error"
        # The connection survives a tool's failure.
        assert len(tools.open_connections) == 1


async def test_credentials_missing_or_refused(stub: McpStubServer, loopback: EgressPolicy) -> None:
    stub.tool("find", "ok")
    stub.require_token = "right"
    server = McpServer(name="crm", url=stub.url, credential="crm-token")
    tool = SourceTool((await _offered_anyway(stub, loopback)).definition, "crm", "find")
    async with McpTools(egress=loopback, secrets=PerTenant({"acme": "wrong"})) as tools:
        with pytest.raises(ToolSourceUnavailable, match="nobody") as down:
            await tools.resolve(_spec(server), Scope(tenant="nobody"), permitted=None)
        assert not down.value.transient and "crm-token" in str(down.value)
        with pytest.raises(SourceCallFailed) as failed:
            await tools.call(
                _spec(server), tool, {}, _context(Scope(tenant="nobody")), permitted=None
            )
        assert failed.value.kind == "missing_credential"
        with pytest.raises(ToolSourceUnavailable, match="401") as down:
            await tools.resolve(_spec(server), ACME, permitted=None)
        assert not down.value.transient
        with pytest.raises(SourceCallFailed) as failed:
            await tools.call(_spec(server), tool, {}, _context(), permitted=None)
        assert failed.value.kind == "unauthorized"
        optional = server.model_copy(update={"optional": True})
        offered = await tools.resolve(_spec(optional), Scope(tenant="nobody"), permitted=None)
        assert offered.tools == () and "unavailable this turn" in offered.advisories[0]
    assert stub.calls == ()


async def _offered_anyway(stub: McpStubServer, loopback: EgressPolicy) -> SourceTool:
    token, stub.require_token = stub.require_token, None
    try:
        async with McpTools(egress=loopback) as tools:
            spec = _spec(McpServer(name="crm", url=stub.url))
            return (await tools.resolve(spec, ACME, permitted=None)).tools[0]
    finally:
        stub.require_token = token


async def test_a_failing_secret_resolver_or_policy_is_reported_not_raised(
    stub: McpStubServer, loopback: EgressPolicy
) -> None:
    class Broken:
        async def resolve(self, scope: Scope, name: str) -> ResolvedCredential | None:
            raise RuntimeError("vault down")

    def policy_that_fails(scope: Scope, url: object) -> EgressDecision:
        raise RuntimeError("policy bug")

    with_credential = McpServer(name="crm", url=stub.url, credential="crm-token")
    async with McpTools(egress=loopback, secrets=Broken()) as tools:
        with pytest.raises(ToolSourceUnavailable, match="looking up the secret") as down:
            await tools.resolve(_spec(with_credential), ACME, permitted=None)
        assert down.value.transient and "vault down" not in str(down.value)
    async with McpTools(http=HttpTransport(policy=policy_that_fails)) as tools:
        with pytest.raises(ToolSourceUnavailable, match="egress policy failed") as down:
            await tools.resolve(_spec(McpServer(name="crm", url=stub.url)), ACME, permitted=None)
        assert not down.value.transient
    assert stub.listings == 0


async def test_a_server_behind_oauth_without_usable_metadata_is_unavailable(
    stub: McpStubServer, loopback: EgressPolicy
) -> None:
    stub.tool("find", "ok")
    tool = SourceTool((await _offered_anyway(stub, loopback)).definition, "crm", "find")
    server = McpServer(name="crm", url=stub.url, oauth=McpOAuth())
    async with McpTools(egress=loopback) as tools:
        # The stub publishes no protected resource metadata: discovery fails.
        with pytest.raises(ToolSourceUnavailable, match=r"OAuth failed \(discovery\)") as down:
            await tools.resolve(_spec(server), ACME, permitted=None)
        assert not down.value.transient
        optional = server.model_copy(update={"optional": True})
        offered = await tools.resolve(_spec(optional), ACME, permitted=None)
        assert offered.tools == () and "OAuth" in offered.advisories[0]
        with pytest.raises(SourceCallFailed) as failed:
            await tools.call(_spec(server), tool, {}, _context(), permitted=None)
        assert failed.value.kind == "unauthorized"
    assert stub.calls == ()


async def test_no_oauth_traffic_for_a_server_the_policy_refuses() -> None:
    server = McpServer(name="crm", url="http://127.0.0.1:9/mcp", oauth=McpOAuth())
    async with McpTools() as tools:  # EgressPolicy(): no loopback
        with pytest.raises(ToolSourceUnavailable, match="crm") as down:
            await tools.resolve(_spec(server), ACME, permitted=None)
        assert not down.value.transient and "OAuth" not in str(down.value)


async def test_a_slow_call_times_out_as_transient(
    stub: McpStubServer, loopback: EgressPolicy
) -> None:
    stub.tool("slow", "late", delay=2.0)
    server = McpServer(name="crm", url=stub.url)
    async with McpTools(egress=loopback, timeout_seconds=0.5) as tools:
        offered = (await tools.resolve(_spec(server), ACME, permitted=None)).tools
        with pytest.raises(SourceCallFailed) as failed:
            await tools.call(_spec(server), offered[0], {}, _context(), permitted=None)
    assert failed.value.kind == "timeout" and failed.value.transient


async def test_a_broken_connection_is_reopened_on_next_use(
    stub: McpStubServer, loopback: EgressPolicy
) -> None:
    stub.tool("find", "found")
    server = McpServer(name="crm", url=stub.url)
    async with McpTools(egress=loopback, catalogue_ttl_seconds=0) as tools:
        offered = (await tools.resolve(_spec(server), ACME, permitted=None)).tools
        await stub.stop()
        with pytest.raises(SourceCallFailed) as failed:
            await tools.call(_spec(server), offered[0], {}, _context(), permitted=None)
        assert failed.value.kind == "unreachable" and failed.value.transient
        with pytest.raises(ToolSourceUnavailable) as down:
            await tools.resolve(_spec(server), ACME, permitted=None)
        assert down.value.transient and "unreachable" in str(down.value)
        await stub.start()  # the same port again
        again = await tools.resolve(_spec(server), ACME, permitted=None)
        assert [tool.name for tool in again.tools] == ["crm__find"]
        assert await tools.call(_spec(server), offered[0], {}, _context(), permitted=None) == {
            "text": "found"
        }


async def test_servers_are_asked_at_once(loopback: EgressPolicy) -> None:
    async with McpStubServer() as one, McpStubServer() as two:
        one.tool("search", "one")
        two.tool("search", "two")
        spec = _spec(McpServer(name="one", url=one.url), McpServer(name="two", url=two.url))
        async with McpTools(egress=loopback) as tools:
            offered = await asyncio.wait_for(tools.resolve(spec, ACME, permitted=None), 10)
    assert [tool.name for tool in offered.tools] == ["one__search", "two__search"]


@pytest.mark.parametrize(
    "options", [{"catalogue_ttl_seconds": -1}, {"timeout_seconds": 0}, {"max_connections": 0}]
)
def test_limits_are_checked(options: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        McpTools(**options)  # type: ignore[arg-type]


def test_it_serves_specs_that_name_servers() -> None:
    tools = McpTools()
    assert tools.serves(_spec(McpServer(name="crm", url="https://crm.example.com/mcp")))
    assert not tools.serves(_spec())
