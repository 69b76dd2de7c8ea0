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

A server with ``McpServer.oauth`` gets its ``Authorization`` header from an
``McpOAuthClient`` (tokens per tenant, principal and server) before every connection;
a 401 or 403 it answers is handed to the OAuth client, and when a new token helps the
request is retried once on a fresh connection. When a person must approve access
first (the ``authorization_code`` grant), the server is unavailable until the
consumer completes ``begin_authorization`` / ``complete_authorization``.

Whether a large catalogue is described up front or deferred (``McpServer.preload``) is
the runtime's decision, made over the tools returned here.
"""

import asyncio
import functools
import hashlib
import time
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Self

from pydantic import JsonValue

from psych_mcp._errors import Failure, McpFailure
from psych_mcp._names import admitted, offerable, qualified
from psych_mcp._policy import AnyPolicy, judge
from psych_runtime import (
    EgressDenied,
    EgressPolicy,
    HttpTransport,
    ResolvedCredential,
    Scope,
    SecretResolver,
)
from psych_runtime.adapters import (
    ConnectionPool,
    SourceCallFailed,
    SourceTool,
    SourceTools,
    ToolContext,
    ToolSourceUnavailable,
)
from psych_runtime.spec import AgentSpec, McpServer

if TYPE_CHECKING:
    import httpx2
    import mcp_types

    from psych_mcp._connection import McpConnection
    from psych_mcp.oauth import AuthorizationRequired, McpOAuthClient, OAuthError, TokenStore


@dataclass(frozen=True, slots=True)
class PoolKey:
    """Who may share a connection: one tenant and principal, one server, one credential.

    Attributes:
        tenant: the Scope's tenant.
        principal: the Scope's principal, when known.
        server: the server's name in the Spec.
        url: where it is reached.
        transport: ``http`` or ``sse``.
        credential: a SHA-256 digest of the bearer token or of the OAuth
            ``Authorization`` header (never the token itself; prefixed ``oauth:``),
            or None. A refreshed OAuth token gives a new key, so a new connection.
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
        oauth: the OAuth client for servers with ``McpServer.oauth``; by default one
            is built on first use from ``token_store``, ``secrets`` (for
            ``client_secret_credential``) and HTTP clients that pass the egress
            policy for the Run's Scope.
        token_store: where that default OAuth client keeps tokens, registered
            clients and pending authorizations; ``InMemoryTokenStore()`` when not
            given. Ignored when ``oauth`` is given.

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
        oauth: "McpOAuthClient | None" = None,
        token_store: "TokenStore | None" = None,
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
        self._oauth = oauth
        self._token_store = token_store

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

        For a server behind OAuth, a 401 or 403 answer is handed to the OAuth client
        and the call sent once more when it got a new token; an OAuth failure, or a
        person having to authorize first, is ``unauthorized``.

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

        async def calling(connection: "McpConnection") -> "mcp_types.CallToolResult":
            return await connection.call_tool(tool.remote_name, dict(arguments))

        try:
            result = await self._leased(server, scope, calling, discard=False)
        except McpFailure as error:
            failed = error.failure
            kind = failed.kind
            if kind == "authorization_required" or kind.startswith("oauth_"):
                kind = "unauthorized"
            raise SourceCallFailed(kind, failed.message, transient=failed.transient) from None
        if result.is_error:
            raise SourceCallFailed("tool_error", error_text(result))
        return result_json(result)

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
        return await self._oauth_for(server).begin_authorization(
            scope, server, requested_scope=requested_scope
        )

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
        await self._oauth_for(server).complete_authorization(
            scope, server, code=code, state=state, iss=iss
        )

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
        for attempt in range(2):
            reused = False

            async def listing(conn: "McpConnection") -> "tuple[mcp_types.Tool, ...]":
                nonlocal reused
                cached = conn.catalogue_since(time.monotonic() - self._ttl) if self._ttl else None
                if cached is not None:
                    return cached
                reused = conn.served > 0
                tools = await conn.list_tools()
                conn.catalogue = (time.monotonic(), tools)
                return tools

            try:
                return await self._leased(server, scope, listing, discard=True)
            except McpFailure as error:
                reauthorized = server.oauth is not None and error.failure.kind == "unauthorized"
                if attempt or not reused or reauthorized:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    async def _leased[T](
        self,
        server: McpServer,
        scope: Scope,
        work: "Callable[[McpConnection], Awaitable[T]]",
        *,
        discard: bool,
    ) -> T:
        """Run ``work`` on the pooled connection for ``server`` and ``scope``.

        A connection ``work`` fails on is dropped when ``discard`` is set or it is
        broken. For a server behind OAuth, a 401 or 403 (on connecting or on
        ``work``) goes to the OAuth client and, when it has a new token, everything
        is tried once more with the new ``Authorization`` header, on a new connection.

        Raises:
            McpFailure: what failed, after the one retry.
        """
        retried = False
        while True:
            header = await self._usable(server, scope)
            key = self._key(server, scope, header)
            if server.oauth is not None:
                self._retire_replaced(key)
            opener = functools.partial(self._open, server, scope, header)
            try:
                async with self._pool.lease(key, opener) as conn:
                    try:
                        return await work(conn)
                    except McpFailure:
                        if discard or conn.broken:
                            self._pool.discard(key, conn)
                        raise
            except McpFailure as error:
                if retried or server.oauth is None or error.failure.kind != "unauthorized":
                    raise
                retried = True
                if not await self._reauthorize(server, scope, error):
                    raise

    def _retire_replaced(self, key: PoolKey) -> None:
        """Close this tenant's, principal's and server's connections with older tokens."""
        for other in self._pool.keys():  # noqa: SIM118 (a tuple, not a dict)
            if other != key and other == PoolKey(
                key.tenant, key.principal, key.server, key.url, key.transport, other.credential
            ):
                self._pool.drop(other)

    async def _reauthorize(self, server: McpServer, scope: Scope, error: McpFailure) -> bool:
        """Hand a 401/403 to the OAuth client; whether a retry may now succeed."""
        status, challenge = error.challenge if error.challenge is not None else (401, None)
        retry = self._oauth_for(server).on_unauthorized(scope, server, challenge, status=status)
        return await _oauth_step(server, retry)

    def _oauth_for(self, server: McpServer) -> "McpOAuthClient":
        """The OAuth client, built on first use unless one was given."""
        if server.oauth is None:
            raise ValueError(f"MCP server {server.name!r} has no oauth settings")
        if self._oauth is None:
            from psych_mcp.oauth import InMemoryTokenStore, McpOAuthClient  # deferred

            store = self._token_store if self._token_store is not None else InMemoryTokenStore()
            secrets = self._secrets if self._secrets is not None else _NoSecrets()
            self._oauth = McpOAuthClient(store, secrets, self._oauth_http)
        return self._oauth

    def _oauth_http(self, scope: Scope) -> "httpx2.AsyncClient":
        """An HTTP client for OAuth requests for ``scope``: egress-checked, no redirects."""
        import httpx2

        from psych_mcp._egress import EgressTransport

        return httpx2.AsyncClient(
            transport=EgressTransport(self._policy, scope),
            timeout=self._timeout,
            follow_redirects=False,
            trust_env=False,
        )

    async def _usable(self, server: McpServer, scope: Scope) -> str | None:
        """Check what can be checked before connecting; the bearer token, if any.

        For a server behind OAuth, the whole ``Authorization`` header value from the
        OAuth client (``Bearer ...``) is returned instead.

        Raises:
            McpFailure: the credential is missing, OAuth failed or needs a person
                to authorize first, or the egress policy refuses its URL for ``scope``.
        """
        if server.oauth is None:
            bearer = await self._bearer(server, scope)
        await self._judge(server, scope)
        if server.oauth is not None:  # no OAuth traffic for a server we may not reach
            oauth = self._oauth_for(server)
            bearer = await _oauth_step(server, oauth.authorization_header(scope, server))
        return bearer

    async def _judge(self, server: McpServer, scope: Scope) -> None:
        try:
            await judge(self._policy, scope, server.url)
        except EgressDenied as denied:
            message = f"MCP server {server.name}: {denied}"
            raise McpFailure(Failure("egress_denied", message, transient=False)) from None
        except Exception as error:  # a policy that fails refuses
            message = f"MCP server {server.name}: the egress policy failed ({error!r})"
            raise McpFailure(Failure("egress_denied", message, transient=False)) from None

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
        if digest is not None and server.oauth is not None:
            digest = f"oauth:{digest}"
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

        if server.oauth is not None:
            return await McpConnection.open(
                server,
                policy=self._policy,
                scope=scope,
                bearer=None,
                authorization=bearer,
                timeout=self._timeout,
            )
        return await McpConnection.open(
            server, policy=self._policy, scope=scope, bearer=bearer, timeout=self._timeout
        )


class _NoSecrets:
    """The resolver of an ``McpTools`` built without ``secrets``: it knows no secret."""

    async def resolve(self, scope: Scope, name: str) -> ResolvedCredential | None:
        return None


async def _oauth_step[T](server: McpServer, step: Awaitable[T]) -> T:
    """Await an OAuth client's ``step``; its errors as ``McpFailure``.

    Raises:
        McpFailure: see ``_oauth_failure``; ``egress_denied`` when the policy refused a
            request to the authorization server or the metadata.
    """
    from psych_mcp.oauth import AuthorizationRequired, OAuthError  # deferred

    try:
        return await step
    except (AuthorizationRequired, OAuthError) as refused:
        raise McpFailure(_oauth_failure(server, refused)) from None
    except EgressDenied as denied:
        message = f"MCP server {server.name}: OAuth request refused: {denied}"
        raise McpFailure(Failure("egress_denied", message, transient=False)) from None


_TRANSIENT_OAUTH = frozenset({"transport", "token_request"})


def _oauth_failure(server: McpServer, error: "AuthorizationRequired | OAuthError") -> Failure:
    """An OAuth problem as a failure; never the authorization URL, a token or a secret.

    ``authorization_required`` (a person must approve access in a browser, see
    ``McpTools.begin_authorization``) and ``oauth_<kind>`` for an ``OAuthError``;
    transport failures and 5xx/429 answers of the authorization server are transient.
    """
    from psych_mcp.oauth import AuthorizationRequired  # deferred

    if isinstance(error, AuthorizationRequired):
        message = (
            f"MCP server {server.name} needs a person to authorize access (OAuth) before "
            "it can be used; the authorization has to be completed outside this conversation"
        )
        return Failure("authorization_required", message, transient=False)
    status = error.status
    transient = error.kind == "transport" or (
        error.kind in _TRANSIENT_OAUTH and status is not None and (status >= 500 or status == 429)
    )
    message = f"MCP server {server.name}: OAuth failed ({error.kind}): {error.message}"
    return Failure(f"oauth_{error.kind}", message, transient=transient)


__all__ = ["McpTools", "PoolKey"]
