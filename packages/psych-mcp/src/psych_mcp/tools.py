"""``McpTools``: the tools of the MCP servers a Spec names, asked for every turn.

At the start of each turn the runtime asks ``resolve`` what the Spec's servers offer;
a tool the model then calls goes through ``call``. Both act for the Run's Scope, over
connections from an ``McpPool`` (one per process, keyed by tenant, principal, server
and credential), and both narrow the same way: the server's ``allow`` patterns, the
tenant's plane the runtime hands in, and the ``tenant_policy`` this source was given.

A required server that cannot be reached fails the turn (``ToolSourceUnavailable``);
an optional one is left out and the model is told in an advisory.

Whether a large catalogue is described up front or deferred (``McpServer.preload``) is
the runtime's decision, made over the tools returned here.
"""

from collections.abc import Callable
from collections.abc import Sequence
from typing import TYPE_CHECKING
from typing import ClassVar

from pydantic import JsonValue

from psych_mcp.pool import McpPool
from psych_mcp.pool import McpPoolKey
from psych_runtime import EgressPolicy
from psych_runtime import HttpTransport
from psych_runtime import Scope
from psych_runtime import SecretResolver
from psych_runtime.adapters.tools import RemoteFailure
from psych_runtime.adapters.tools import RemoteTools
from psych_runtime.adapters.tools import SourceCallFailed
from psych_runtime.adapters.tools import SourceTool
from psych_runtime.adapters.tools import TenantAccess
from psych_runtime.adapters.tools import ToolContext
from psych_runtime.adapters.tools import pool_or_own
from psych_runtime.spec import AgentSpec
from psych_runtime.spec import McpServer

if TYPE_CHECKING:
    import mcp_types

    from psych_mcp.oauth import McpOAuthClient
    from psych_mcp.oauth import TokenStore

type DescribeServer = Callable[[Scope, McpServer], str | None]
"""Says something about a server to the model, for one Scope, or nothing (None)."""

PoolKey = McpPoolKey
"""The earlier name of ``McpPoolKey``."""


class McpTools(RemoteTools[McpServer, McpPool, "mcp_types.Tool"]):
    """A ``ToolSource`` for the MCP servers named in a Spec (``AgentSpec.mcp_servers``).

    Give it the process's ``McpPool``. For a program with a single source, the
    pool's settings may be passed here instead (``McpTools(egress=...)``), and a pool
    of its own is built from them.

    Args:
        pool: the process's pool of MCP connections.
        tenant_policy: which tools a tenant may use (a ``TenantAccess``), on top of
            the plane the runtime hands in; an answer that cannot be had permits
            nothing.
        describe_server: a line about a server for the system prompt of a Run of
            that Scope, or None for nothing; asked each turn the server is reached.
        http: with no ``pool``: the Runtime's ``HttpTransport`` (the pool's ``transport``).
        egress: with no ``pool``: the egress policy, when no ``http`` is given.
        secrets: with no ``pool``: where credentials are looked up.
        max_connections: with no ``pool``: see ``McpPool``.
        idle_seconds: with no ``pool``: see ``McpPool``.
        catalogue_ttl_seconds: with no ``pool``: see ``McpPool`` (300 s by default).
        timeout_seconds: with no ``pool``: see ``McpPool``.
        oauth: with no ``pool``: see ``McpPool``.
        token_store: with no ``pool``: see ``McpPool``.

    Raises:
        TypeError: ``pool`` is not an ``McpPool``, a pool setting is given beside a
            ``pool``, or ``tenant_policy`` is not a ``TenantAccess``.
        ValueError: a pool setting is out of range.
    """

    item_noun: ClassVar[str] = "a tool named"

    def __init__(
        self,
        pool: McpPool | None = None,
        *,
        tenant_policy: TenantAccess | None = None,
        describe_server: DescribeServer | None = None,
        http: HttpTransport | None = None,
        egress: EgressPolicy | None = None,
        secrets: SecretResolver | None = None,
        max_connections: int | None = None,
        idle_seconds: float | None = None,
        catalogue_ttl_seconds: float | None = None,
        timeout_seconds: float | None = None,
        oauth: "McpOAuthClient | None" = None,
        token_store: "TokenStore | None" = None,
    ) -> None:
        pool = pool_or_own(
            McpPool,
            pool,
            transport=http,
            egress=egress,
            secrets=secrets,
            max_connections=max_connections,
            idle_seconds=idle_seconds,
            catalogue_ttl_seconds=catalogue_ttl_seconds,
            timeout_seconds=timeout_seconds,
            oauth=oauth,
            token_store=token_store,
        )
        if describe_server is not None and not callable(describe_server):
            raise TypeError("describe_server must be a callable (scope, server) -> str | None")
        super().__init__(pool, tenant_policy=tenant_policy)
        self._describe_server = describe_server

    def endpoints(self, spec: AgentSpec) -> tuple[McpServer, ...]:
        """The Spec's MCP servers."""
        return spec.mcp_servers

    async def catalogue(self, endpoint: McpServer, scope: Scope) -> "Sequence[mcp_types.Tool]":
        """The server's tools for ``scope``, from the pool's cache while it is fresh."""
        return await self.pool.list_tools(endpoint, scope)

    def remote_name(self, item: "mcp_types.Tool") -> str:
        """The tool's name at its server."""
        return item.name

    def source_tool(self, endpoint: McpServer, item: "mcp_types.Tool", name: str) -> SourceTool:
        """The MCP tool as offered: its hints decide its annotations and retry safety."""
        from psych_mcp._mapping import tool_definition  # deferred: the SDK's types
        from psych_mcp._mapping import tool_hints  # deferred: the SDK's types

        hints = tool_hints(item.annotations)
        definition = tool_definition(name, item, hints)
        return SourceTool(definition, endpoint.name, item.name, safe_to_retry=hints.safe_to_retry)

    async def invoke(
        self,
        endpoint: McpServer,
        tool: SourceTool,
        arguments: dict[str, JsonValue],
        context: ToolContext,
    ) -> JsonValue:
        """Call the tool at its server and map its result to JSON.

        Raises:
            RemoteError: the call did not reach the tool (see ``call_failure``).
            SourceCallFailed: ``tool_error``, the tool or the server said no.
        """
        from psych_mcp._mapping import error_text  # deferred: the SDK's types
        from psych_mcp._mapping import result_json  # deferred: the SDK's types

        result = await self.pool.call_tool(
            endpoint, context.scope, tool.remote_name, dict(arguments)
        )
        if result.is_error:
            raise SourceCallFailed("tool_error", error_text(result))
        return result_json(result)

    def describe(self, endpoint: McpServer, scope: Scope) -> str | None:
        """What ``describe_server`` says about the server, if it was given."""
        if self._describe_server is None:
            return None
        described = self._describe_server(scope, endpoint)
        return described if isinstance(described, str) and described.strip() else None

    def call_failure(self, failure: RemoteFailure) -> SourceCallFailed:
        """A call's failure; OAuth trouble of any kind is ``unauthorized``."""
        kind = failure.kind
        if kind == "authorization_required" or kind.startswith("oauth_"):
            kind = "unauthorized"
        return SourceCallFailed(kind, failure.message, transient=failure.transient)

    async def begin_authorization(
        self, scope: Scope, server: McpServer, *, requested_scope: str | None = None
    ) -> str:
        """Start the browser step of the ``authorization_code`` grant; the URL to open.

        For a server whose ``oauth.grant`` is ``authorization_code`` and that has no
        token yet for ``scope`` (Runs then fail, or leave it out when it is
        optional, saying a person must authorize): send the user of ``scope`` to
        the returned URL. The authorization server redirects the browser to the
        Spec's first redirect URI with ``code`` and ``state``; hand both to
        ``complete_authorization``. The URL carries no secret.

        Raises:
            ValueError: ``server`` has no ``oauth`` settings.
            OAuthError: the server's settings allow no browser step, or discovery or
                registration failed.
        """
        return await self.pool.begin_authorization(scope, server, requested_scope=requested_scope)

    async def complete_authorization(
        self,
        scope: Scope,
        server: McpServer,
        *,
        code: str,
        state: str,
        iss: str | None = None,
    ) -> None:
        """Finish a browser authorization: exchange ``code`` for a token and keep it.

        Call it from the route behind the redirect URI with the callback's ``code``,
        ``state`` (and ``iss`` when present), for the same Scope and server as
        ``begin_authorization``. The next turn uses the token.

        Raises:
            ValueError: ``server`` has no ``oauth`` settings.
            OAuthError: ``state_mismatch`` for an unknown, reused, expired or foreign
                ``state``; another kind when the token endpoint refuses.
        """
        await self.pool.complete_authorization(scope, server, code=code, state=state, iss=iss)


__all__ = ["DescribeServer", "McpTools", "PoolKey"]
