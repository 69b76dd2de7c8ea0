"""``McpPool`` and ``McpTools(pool, ...)`` as the reference API writes them.

One pool per process: every ``McpTools`` (and every tenant) draws its connections from
it, and isolation comes from the key alone.
"""

import inspect
from typing import Any

import pytest

from psych_mcp import McpPool
from psych_mcp import McpPoolKey
from psych_mcp import McpStubServer
from psych_mcp import McpTools
from psych_runtime import EgressPolicy
from psych_runtime import HttpTransport
from psych_runtime import Scope
from psych_runtime import StaticSecretResolver
from psych_runtime.adapters import SourceCallFailed
from psych_runtime.adapters import ToolSource
from psych_runtime.spec import McpServer

from ..tenant_secrets import PerTenant
from .test_tools import ACME
from .test_tools import GLOBEX
from .test_tools import _context
from .test_tools import _spec


async def test_the_reference_constructors_work_as_written(
    stub: McpStubServer, loopback: EgressPolicy
) -> None:
    stub.tool("find", "found", annotations={"readOnlyHint": True})
    async with HttpTransport(policy=loopback) as http:
        pool = McpPool(
            transport=http,
            secrets=StaticSecretResolver({}),
            catalogue_ttl_seconds=300.0,
            oauth=None,
            oauth_identity=None,
            oauth_grant="client_credentials",
        )
        tools = McpTools(pool, tenant_policy=None, describe_server=None)
        assert isinstance(tools, ToolSource) and tools.pool is pool
        offered = await tools.resolve(
            _spec(McpServer(name="crm", url=stub.url)), ACME, permitted=None
        )
        await pool.close()
    assert [tool.name for tool in offered.tools] == ["crm__find"]
    assert pool.policy is loopback


async def test_the_catalogue_is_kept_five_minutes_by_default(
    stub: McpStubServer, loopback: EgressPolicy
) -> None:
    assert inspect.signature(McpPool).parameters["catalogue_ttl_seconds"].default == 300.0
    assert McpTools().pool.ttl_seconds == 300.0  # a pool of its own, with the same default
    spec = _spec(McpServer(name="crm", url=stub.url))
    async with McpTools(egress=loopback) as tools:
        await tools.resolve(spec, ACME, permitted=None)
        await tools.resolve(spec, ACME, permitted=None)
    assert stub.listings == 1


async def test_one_pool_serves_every_source_and_tenant_on_separate_connections(
    stub: McpStubServer, loopback: EgressPolicy
) -> None:
    stub.tool("whoami", "ok")
    spec = _spec(McpServer(name="crm", url=stub.url, credential="crm-token"))
    pool = McpPool(egress=loopback, secrets=PerTenant({"acme": "a-secret", "globex": "g-secret"}))
    first, second = McpTools(pool), McpTools(pool)
    async with pool:
        offered = await first.resolve(spec, ACME, permitted=None)
        await second.resolve(spec, ACME, permitted=None)
        assert len(pool.open_connections) == 1  # two sources, one tenant: one connection
        await second.resolve(spec, GLOBEX, permitted=None)
        await first.call(spec, offered.tools[0], {}, _context(GLOBEX), permitted=None)
        keys = pool.open_connections
    assert all(isinstance(key, McpPoolKey) for key in keys)
    assert {(key.tenant, key.server) for key in keys} == {("acme", "crm"), ("globex", "crm")}
    assert len({key.credential for key in keys}) == 2
    assert [call.authorization for call in stub.calls] == ["Bearer g-secret"]


async def test_the_tenant_policy_narrows_the_offer_and_the_call(
    stub: McpStubServer, loopback: EgressPolicy
) -> None:
    stub.tool("find", "found")
    stub.tool("export", "exported")

    class OnlyFind:
        def permitted(self, scope: Scope) -> list[str] | None:
            return ["crm__find"] if scope.tenant == "acme" else None

    spec = _spec(McpServer(name="crm", url=stub.url))
    async with McpPool(egress=loopback, catalogue_ttl_seconds=0) as pool:
        everything = await McpTools(pool).resolve(spec, GLOBEX, permitted=None)
        narrowed = McpTools(pool, tenant_policy=OnlyFind())
        offered = await narrowed.resolve(spec, ACME, permitted=None)
        assert [tool.name for tool in offered.tools] == ["crm__find"]
        export = next(tool for tool in everything.tools if tool.name == "crm__export")
        with pytest.raises(SourceCallFailed) as refused:
            await narrowed.call(spec, export, {}, _context(ACME), permitted=None)
        assert refused.value.kind == "excluded"
        assert await narrowed.call(spec, export, {}, _context(GLOBEX), permitted=None)
        # Both planes apply: the runtime's plane can narrow what the policy permits.
        offered = await narrowed.resolve(spec, ACME, permitted=["crm__export"])
        assert offered.tools == ()
    assert [call.tool for call in stub.calls] == ["export"]


async def test_a_failing_tenant_policy_permits_nothing(
    stub: McpStubServer, loopback: EgressPolicy
) -> None:
    stub.tool("find", "found")

    class Broken:
        async def permitted(self, scope: Scope) -> list[str] | None:
            raise RuntimeError("the plans service is down")

    async with McpPool(egress=loopback) as pool:
        tools = McpTools(pool, tenant_policy=Broken())
        offered = await tools.resolve(
            _spec(McpServer(name="crm", url=stub.url)), ACME, permitted=None
        )
    assert offered.tools == ()


async def test_describe_server_speaks_to_the_model_for_the_scope(
    stub: McpStubServer, loopback: EgressPolicy
) -> None:
    seen: list[tuple[str, str]] = []

    def describe(scope: Scope, server: McpServer) -> str | None:
        seen.append((scope.tenant, server.name))
        return f"{server.name} is acme's CRM." if scope.tenant == "acme" else None

    spec = _spec(McpServer(name="crm", url=stub.url))
    async with McpPool(egress=loopback) as pool:
        tools = McpTools(pool, describe_server=describe)
        assert (await tools.resolve(spec, ACME, permitted=None)).advisories == (
            "crm is acme's CRM.",
        )
        assert (await tools.resolve(spec, GLOBEX, permitted=None)).advisories == ()
    assert seen == [("acme", "crm"), ("globex", "crm")]


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"egress": EgressPolicy()}, "egress configure the pool: pass them to McpPool"),
        ({"catalogue_ttl_seconds": 5}, "catalogue_ttl_seconds configure the pool"),
        ({"secrets": StaticSecretResolver({})}, "secrets configure the pool"),
    ],
)
def test_pool_settings_beside_a_pool_are_refused(settings: dict[str, Any], message: str) -> None:
    with pytest.raises(TypeError, match=message):
        McpTools(McpPool(), **settings)


@pytest.mark.parametrize(
    ("build", "error", "message"),
    [
        (lambda: McpTools(object()), TypeError, "pool must be an McpPool, not object"),  # type: ignore[arg-type]
        (lambda: McpTools(tenant_policy="yes"), TypeError, "permitted"),  # type: ignore[arg-type]
        (lambda: McpTools(describe_server="crm"), TypeError, "describe_server"),  # type: ignore[arg-type]
        (lambda: McpPool(transport=EgressPolicy()), TypeError, "HttpTransport"),  # type: ignore[arg-type]
        (lambda: McpPool(catalogue_ttl_seconds=-1), ValueError, "catalogue_ttl_seconds"),
        (lambda: McpPool(catalogue_ttl_seconds="300"), ValueError, "catalogue_ttl_seconds"),  # type: ignore[arg-type]
        (lambda: McpPool(catalogue_ttl_seconds=True), ValueError, "catalogue_ttl_seconds"),
        (lambda: McpPool(timeout_seconds=0), ValueError, "timeout_seconds"),
        (lambda: McpPool(oauth_grant="Client_Credentials"), ValueError, "oauth_grant"),  # type: ignore[arg-type]
        (lambda: McpPool(oauth_grant="*"), ValueError, "oauth_grant"),  # type: ignore[arg-type]
        (lambda: McpPool(oauth_identity={"grant": "x"}), TypeError, "McpOAuth"),  # type: ignore[arg-type]
        (
            lambda: McpPool(transport=HttpTransport(), egress=EgressPolicy()),
            ValueError,
            "transport or egress",
        ),
    ],
)
def test_bad_settings_are_refused_with_our_errors(
    build: Any, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        build()
