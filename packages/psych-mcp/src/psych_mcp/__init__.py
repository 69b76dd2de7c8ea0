"""MCP servers' tools for Psych Runtime agents.

Installing the package lets a Spec name MCP servers (``AgentSpec.mcp_servers``): a
``Runtime`` built without explicit ``tool_sources`` gets an ``McpTools`` with its
egress policy and secrets, and ``publish`` accepts such Specs. A process that builds
its own keeps one ``McpPool`` (connections keyed by tenant, principal, server and
credential) and hands it to every ``McpTools``; ``McpStubServer`` is a real MCP
server for tests. Names load on first access, so importing this package never
imports the MCP SDK.

Example::

    import asyncio

    from psych_mcp import McpPool, McpStubServer, McpTools
    from psych_runtime import EgressPolicy, Scope
    from psych_runtime.spec import AgentSpec, McpServer


    async def main() -> None:
        async with McpStubServer() as server:
            server.tool("greet", {"greeting": "hello"}, annotations={"readOnlyHint": True})
            spec = AgentSpec(
                name="helper",
                model="gpt-4o",
                mcp_servers=(McpServer(name="stub", url=server.url),),
            )
            # The stub listens on 127.0.0.1, which the default policy refuses.
            local = EgressPolicy(allow_hosts=frozenset({"127.0.0.1"}))
            async with McpPool(egress=local) as pool:
                tools = McpTools(pool)
                offered = await tools.resolve(spec, Scope(tenant="acme"), permitted=None)
                assert [tool.name for tool in offered.tools] == ["stub__greet"]


    asyncio.run(main())
"""

from typing import TYPE_CHECKING

from psych_mcp._version import __version__
from psych_runtime.adapters.plugins import lazy_exports

if TYPE_CHECKING:
    from psych_mcp.pool import McpPool as McpPool
    from psych_mcp.pool import McpPoolKey as McpPoolKey
    from psych_mcp.stub import McpStubServer as McpStubServer
    from psych_mcp.stub import StubCall as StubCall
    from psych_mcp.tools import McpTools as McpTools
    from psych_mcp.tools import PoolKey as PoolKey

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "McpPool": "psych_mcp.pool",
        "McpPoolKey": "psych_mcp.pool",
        "McpTools": "psych_mcp.tools",
        "PoolKey": "psych_mcp.tools",
        "McpStubServer": "psych_mcp.stub",
        "StubCall": "psych_mcp.stub",
    },
)

__all__ = [
    "McpPool",
    "McpPoolKey",
    "McpStubServer",
    "McpTools",
    "PoolKey",
    "StubCall",
    "__version__",
]
