"""``McpTools``: the tools of the MCP servers a Spec names, asked for every turn.

At the start of each turn the runtime asks ``resolve`` what the Spec's servers offer;
a tool the model then calls goes through ``call``. Both act for the Run's Scope:

* the server's ``credential`` (a secret's name) is looked up for that tenant and sent
  as a bearer token;
* every request is judged by the egress policy before it leaves;
* connections are pooled per tenant, principal, server, URL, transport and
  credential, so nothing opened for one tenant ever carries another's request;
* a server's catalogue is kept for ``catalogue_ttl_seconds``, so a tool it adds
  shows up on a later turn without a reconnect;
* what is offered and what may be called are narrowed the same way: the server's
  ``allow`` patterns, then the tenant's plane.

A required server that cannot be reached fails the turn (``ToolSourceUnavailable``);
an optional one is left out and the model is told in an advisory.

Not supported yet: servers behind OAuth 2.1 (``McpServer.oauth``). Whether a large
catalogue is described up front or deferred (``McpServer.preload``) is the runtime's
decision, made over the tools returned here.
"""

import asyncio
import hashlib
import time
from collections.abc import Collection
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Self

from pydantic import JsonValue

from psych_mcp._errors import Failure, McpFailure
from psych_mcp._names import admitted, offerable, qualified
from psych_mcp._policy import AnyPolicy, judge
from psych_mcp._pool import ConnectionPool
from psych_runtime import EgressDenied, EgressPolicy, HttpTransport, Scope, SecretResolver
from psych_runtime.adapters import (
    SourceCallFailed,
    SourceTool,
    SourceTools,
    ToolContext,
    ToolSourceUnavailable,
)
from psych_runtime.spec import AgentSpec, McpServer

if TYPE_CHECKING:
    import mcp_types

    from psych_mcp._connection import McpConnection


@dataclass(frozen=True, slots=True)
class PoolKey:
    """Who may share a connection: one tenant and principal, one server, one credential.

    Attributes:
        tenant: the Scope's tenant.
        principal: the Scope's principal, when known.
        server: the server's name in the Spec.
        url: where it is reached.
        transport: ``http`` or ``sse``.
        credential: a SHA-256 digest of the bearer token (never the token), or None.
    """

    tenant: str
    principal: str | None
    server: str
    url: str
    transport: str
    credential: str | None


@dataclass(slots=True)
class _Offer:
    """What one server contributed to a turn, or why it could not."""

    server: McpServer
    tools: list[SourceTool] = field(default_factory=list)
    advisories: list[str] = field(default_factory=list)
    failure: Failure | None = None


class McpTools:
    """A ``ToolSource`` for the MCP servers named in a Spec (``AgentSpec.mcp_servers``).

    Args:
        http: the Runtime's ``HttpTransport``; only its egress policy is used (the
            MCP SDK sends through an HTTP client of its own, which checks each
            request against that policy).
        egress: the policy to use when no ``http`` is given; ``EgressPolicy()``
            (which refuses private and loopback addresses) when neither is.
        secrets: where a server's ``credential`` name is looked up for the Run's
            tenant. Without one, a server that names a credential cannot be used.
        max_connections: how many server connections stay open at once; past it
            the least recently used is closed.
        idle_seconds: how long an unused connection stays open.
        catalogue_ttl_seconds: how long a server's list of tools is reused before it
            is asked again; 0 asks every turn.
        timeout_seconds: how long connecting, listing tools and each call may take.

    Raises:
        ValueError: a limit is out of range.
    """

    def __init__(
        self,
        *,
        http: HttpTransport | None = None,
        egress: EgressPolicy | None = None,
        secrets: SecretResolver | None = None,
        max_connections: int = 64,
        idle_seconds: float = 300.0,
        catalogue_ttl_seconds: float = 30.0,
        timeout_seconds: float = 30.0,
    ) -> None:
        if catalogue_ttl_seconds < 0:
            raise ValueError(f"catalogue_ttl_seconds may not be negative: {catalogue_ttl_seconds}")
        if timeout_seconds <= 0:
            raise ValueError(f"timeout_seconds must be positive, got {timeout_seconds}")
        self._policy: AnyPolicy = (
            http.policy if http is not None else egress if egress is not None else EgressPolicy()
        )
        self._secrets = secrets
        self._ttl = catalogue_ttl_seconds
        self._timeout = timeout_seconds
        self._pool: ConnectionPool[PoolKey, McpConnection] = ConnectionPool(
            max_connections=max_connections, idle_seconds=idle_seconds
        )

    @property
    def open_connections(self) -> tuple[PoolKey, ...]:
        """The keys of the connections open now, least recently used first."""
        return self._pool.keys()

    def serves(self, spec: AgentSpec) -> bool:
        """Whether ``spec`` names any MCP server."""
        return bool(spec.mcp_servers)

    async def resolve(
        self, spec: AgentSpec, scope: Scope, *, permitted: Collection[str] | None
    ) -> SourceTools:
        """The tools ``spec``'s servers offer ``scope`` this turn, narrowed.

        Servers are asked at once. A tool whose qualified name a provider would
        refuse is left out and named in an advisory.

        Raises:
            ToolSourceUnavailable: a required server could not be used (the first,
                in the Spec's order, when several could not).
        """
        offers = await asyncio.gather(
            *(self._offer(server, scope, permitted) for server in spec.mcp_servers)
        )
        tools: list[SourceTool] = []
        advisories: list[str] = []
        for offer in offers:
            if offer.failure is not None and not offer.server.optional:
                raise ToolSourceUnavailable(
                    offer.server.name, offer.failure.message, transient=offer.failure.transient
                )
            tools.extend(offer.tools)
            advisories.extend(offer.advisories)
        return SourceTools(tuple(tools), tuple(advisories))

    async def call(
        self,
        spec: AgentSpec,
        tool: SourceTool,
        arguments: dict[str, JsonValue],
        context: ToolContext,
        *,
        permitted: Collection[str] | None,
    ) -> JsonValue:
        """Call ``tool`` at its server for ``context.scope`` and return the result as JSON.

        The call is narrowed again first, by the Spec's allow rules and ``permitted``,
        however the model came by the name.

        Raises:
            SourceCallFailed: ``excluded`` (not granted or not permitted),
                ``missing_credential``, ``egress_denied``, ``unreachable``
                (transient), ``unauthorized``, ``tool_error`` (the tool or the
                server said no), and the other kinds of ``_failures``.
        """
        server = next((s for s in spec.mcp_servers if s.name == tool.owner), None)
        if server is None or not admitted(server, tool.remote_name, permitted):
            raise SourceCallFailed("excluded", f"{tool.name} is not available to this agent")
        from psych_mcp._mapping import error_text, result_json  # deferred: the SDK's types

        scope = context.scope
        try:
            bearer = await self._usable(server, scope)
            async with self._pool.lease(
                self._key(server, scope, bearer), lambda: self._open(server, scope, bearer)
            ) as connection:
                result = await connection.call_tool(tool.remote_name, dict(arguments))
        except McpFailure as error:
            failed = error.failure
            transient = failed.transient
            raise SourceCallFailed(failed.kind, failed.message, transient=transient) from None
        if result.is_error:
            raise SourceCallFailed("tool_error", error_text(result))
        return result_json(result)

    async def close(self) -> None:
        """Close every open connection; the source stays usable and reconnects on demand."""
        await self._pool.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def _offer(
        self, server: McpServer, scope: Scope, permitted: Collection[str] | None
    ) -> _Offer:
        from psych_mcp._mapping import tool_definition, tool_hints  # deferred: the SDK's types

        offer = _Offer(server)
        try:
            catalogue = await self._catalogue(server, scope)
        except McpFailure as error:
            offer.failure = error.failure
            offer.advisories.append(
                f"The MCP server {server.name} is unavailable this turn ({error.failure.message})."
            )
            return offer
        for remote in catalogue:
            if not admitted(server, remote.name, permitted):
                continue
            name = qualified(server.name, remote.name)
            if not offerable(name):
                offer.advisories.append(
                    f"The MCP server {server.name} offers a tool named {remote.name!r}, which "
                    "cannot be named to the model; it was left out."
                )
                continue
            hints = tool_hints(remote.annotations)
            definition = tool_definition(name, remote, hints)
            offer.tools.append(
                SourceTool(definition, server.name, remote.name, safe_to_retry=hints.safe_to_retry)
            )
        return offer

    async def _catalogue(self, server: McpServer, scope: Scope) -> "tuple[mcp_types.Tool, ...]":
        """The server's tools, from the cache while it is fresh.

        A connection that fails after having served before is dropped and the
        listing tried once more on a new one: listing changes nothing, and a pooled
        connection may simply have gone stale.
        """
        bearer = await self._usable(server, scope)
        key = self._key(server, scope, bearer)
        for attempt in range(2):
            async with self._pool.lease(key, lambda: self._open(server, scope, bearer)) as conn:
                cached = conn.catalogue_since(time.monotonic() - self._ttl) if self._ttl else None
                if cached is not None:
                    return cached
                reused = conn.served > 0
                try:
                    tools = await conn.list_tools()
                except McpFailure:
                    self._pool.discard(key, conn)
                    if attempt or not reused:
                        raise
                    continue
                conn.catalogue = (time.monotonic(), tools)
                return tools
        raise AssertionError("unreachable")  # pragma: no cover

    async def _usable(self, server: McpServer, scope: Scope) -> str | None:
        """Check what can be checked before connecting; the bearer token, if any.

        Raises:
            McpFailure: the server needs OAuth, its credential is missing, or the
                egress policy refuses its URL for ``scope``.
        """
        if server.oauth is not None:
            message = f"MCP server {server.name} needs OAuth, which psych-mcp does not support yet"
            raise McpFailure(Failure("oauth_unsupported", message, transient=False))
        bearer = await self._bearer(server, scope)
        try:
            await judge(self._policy, scope, server.url)
        except EgressDenied as denied:
            message = f"MCP server {server.name}: {denied}"
            raise McpFailure(Failure("egress_denied", message, transient=False)) from None
        except Exception as error:  # a policy that fails refuses
            message = f"MCP server {server.name}: the egress policy failed ({error!r})"
            raise McpFailure(Failure("egress_denied", message, transient=False)) from None
        return bearer

    async def _bearer(self, server: McpServer, scope: Scope) -> str | None:
        if server.credential is None:
            return None
        resolved = None
        if self._secrets is not None:
            try:
                resolved = await self._secrets.resolve(scope, server.credential)
            except Exception as error:  # the application's resolver: report, never crash
                message = (
                    f"MCP server {server.name}: looking up the secret {server.credential!r} "
                    f"failed ({type(error).__name__})"
                )
                raise McpFailure(Failure("missing_credential", message, transient=True)) from None
        if resolved is None:
            message = (
                f"MCP server {server.name}: no secret {server.credential!r} for tenant "
                f"{scope.tenant!r}"
            )
            raise McpFailure(Failure("missing_credential", message, transient=False))
        return resolved.secret.get_secret_value()

    def _key(self, server: McpServer, scope: Scope, bearer: str | None) -> PoolKey:
        digest = None if bearer is None else hashlib.sha256(bearer.encode()).hexdigest()
        return PoolKey(
            tenant=scope.tenant,
            principal=scope.principal,
            server=server.name,
            url=server.url,
            transport=server.transport,
            credential=digest,
        )

    async def _open(self, server: McpServer, scope: Scope, bearer: str | None) -> "McpConnection":
        from psych_mcp._connection import McpConnection  # deferred: importing the SDK is slow

        return await McpConnection.open(
            server, policy=self._policy, scope=scope, bearer=bearer, timeout=self._timeout
        )


__all__ = ["McpTools", "PoolKey"]
