"""``McpPool``: the process's connections to MCP servers, shared by every Run of every tenant.

Build one per process and hand it to every ``McpTools``. Isolation comes from the key
alone (``McpPoolKey``): the Run's tenant and principal, the server's name in the Spec,
where and how it is reached, and a digest of the credential the connection carries.
Two tenants never share a connection, and neither do two tokens of one tenant.

For each connection the pool:

* looks the server's ``credential`` (a secret's name) up for the Run's tenant and
  sends it as a bearer token;
* asks the egress policy before anything is sent, and again for every request (the
  connection's HTTP client sends through the core's egress check);
* keeps the server's catalogue for ``catalogue_ttl_seconds`` (a listing is asked for
  again after that, so a tool the server adds shows up without a reconnect);
* bounds the number of open connections and closes idle ones.

OAuth: a server with ``McpServer.oauth`` gets its ``Authorization`` header from an
``McpOAuthClient`` (tokens per tenant, principal and server) before every connection;
a 401 or 403 it answers goes to the OAuth client and, when a new token helps, the
request is sent once more on a fresh connection (the key follows the token). A server
whose Spec has no ``oauth`` but that answers 401 with a Bearer challenge is switched
to OAuth with the pool's default identity (``oauth_identity`` and ``oauth_grant``)
when the pool has one (an ``oauth`` client or an identity was given); without one
the failure says the server wants OAuth.
"""

import functools
import time
from collections import OrderedDict
from collections.abc import Awaitable
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING
from typing import ClassVar
from typing import Literal

from psych_runtime import EgressDenied
from psych_runtime import HttpTransport
from psych_runtime import ResolvedCredential
from psych_runtime import Scope
from psych_runtime import SecretResolver
from psych_runtime.adapters.sandbox import Sandbox
from psych_runtime.adapters.tools import AnyPolicy
from psych_runtime.adapters.tools import RemoteError
from psych_runtime.adapters.tools import RemoteFailure
from psych_runtime.adapters.tools import RemotePool
from psych_runtime.adapters.tools import credential_digest
from psych_runtime.spec import McpOAuth
from psych_runtime.spec import McpServer

if TYPE_CHECKING:
    import httpx2
    import mcp_types

    from psych_mcp._connection import McpConnection
    from psych_mcp._stdio import ServerProcess
    from psych_mcp.oauth import AuthorizationRequired
    from psych_mcp.oauth import McpOAuthClient
    from psych_mcp.oauth import OAuthError
    from psych_mcp.oauth import TokenStore

type OAuthGrant = Literal["authorization_code", "client_credentials"]
"""The OAuth grants a server's token may be obtained with."""

KEPT_STDERR_OF = 256
"""How many stdio servers' stderr (per tenant, principal and server) the pool remembers."""


@dataclass(frozen=True, slots=True)
class McpPoolKey:
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


class McpPool(RemotePool[McpServer, McpPoolKey, "McpConnection"]):
    """Connections to MCP servers by ``McpPoolKey``; one per process serves every Run.

    Args:
        transport: the Runtime's ``HttpTransport``; only its egress policy is used (the
            MCP SDK sends through an HTTP client of its own, which checks each request
            against that policy).
        secrets: where a server's ``credential`` name is looked up for the Run's
            tenant. Without one, a server that names a credential cannot be used.
        catalogue_ttl_seconds: how long a server's list of tools is reused before it is
            asked again; 0 asks every turn.
        oauth: the OAuth client for servers behind OAuth; by default one is built on
            first use from ``token_store``, ``secrets`` (for
            ``client_secret_credential``) and HTTP clients that pass the egress policy
            for the Run's Scope.
        oauth_identity: the client identity used for a server whose Spec sets no
            ``oauth`` and that asks for OAuth (401 with a Bearer challenge).
        oauth_grant: the grant used with ``oauth_identity`` (or with a bare identity
            when only ``oauth`` is given).
        egress: the policy to use when no ``transport`` is given; ``EgressPolicy()``
            (which refuses private and loopback addresses) when neither is.
        token_store: where the default OAuth client keeps tokens, registered clients
            and pending authorizations; ``InMemoryTokenStore()`` when not given.
            Ignored when ``oauth`` is given.
        max_connections: how many server connections stay open at once (a stdio
            server's connection is its process); past it the least recently used is
            closed.
        idle_seconds: how long an unused connection stays open.
        timeout_seconds: how long connecting (starting a stdio server included),
            listing tools and each call may take.
        sandbox: where stdio servers' processes start, contained like model-written
            code (see ``psych_mcp`` README); on this host, as child processes, when None.

    Raises:
        ValueError: a limit is out of range, both ``transport`` and ``egress`` are
            given, or ``oauth_grant`` is not a grant.
        TypeError: ``transport`` is not an ``HttpTransport``, ``oauth_identity`` not
            an ``McpOAuth`` or ``sandbox`` not a ``Sandbox``.
    """

    noun: ClassVar[str] = "MCP server"
    ttl_name: ClassVar[str] = "catalogue_ttl_seconds"

    def __init__(
        self,
        *,
        transport: HttpTransport | None = None,
        secrets: SecretResolver | None = None,
        catalogue_ttl_seconds: float = 300.0,
        oauth: "McpOAuthClient | None" = None,
        oauth_identity: McpOAuth | None = None,
        oauth_grant: OAuthGrant = "client_credentials",
        egress: AnyPolicy | None = None,
        token_store: "TokenStore | None" = None,
        max_connections: int = 64,
        idle_seconds: float = 300.0,
        timeout_seconds: float = 30.0,
        sandbox: "Sandbox | None" = None,
    ) -> None:
        super().__init__(
            transport=transport,
            egress=egress,
            secrets=secrets,
            ttl_seconds=catalogue_ttl_seconds,
            max_connections=max_connections,
            idle_seconds=idle_seconds,
            timeout_seconds=timeout_seconds,
        )
        if oauth_grant not in ("authorization_code", "client_credentials"):
            raise ValueError(
                f"oauth_grant must be 'client_credentials' or 'authorization_code', "
                f"not {oauth_grant!r}"
            )
        if oauth_identity is not None and not isinstance(oauth_identity, McpOAuth):
            raise TypeError(
                f"oauth_identity must be an McpOAuth, not {type(oauth_identity).__name__}"
            )
        self._oauth = oauth
        self._token_store = token_store
        self._default_identity: McpOAuth | None = None
        if oauth_identity is not None or oauth is not None:
            identity = oauth_identity if oauth_identity is not None else McpOAuth()
            self._default_identity = identity.model_copy(update={"grant": oauth_grant})
        self._wants_oauth: set[tuple[str, str | None]] = set()
        if sandbox is not None and not isinstance(sandbox, Sandbox):
            raise TypeError(f"sandbox must be a Sandbox, not {type(sandbox).__name__}")
        self._sandbox = sandbox
        self._processes: OrderedDict[tuple[str, str | None, str], ServerProcess] = OrderedDict()

    def stderr(self, scope: Scope, server: str) -> str | None:
        """The end of what the stdio server ``server`` wrote to stderr, for ``scope``.

        From its running process, or from the last one when it has exited; None when
        no process of it was started for this tenant and principal (of the most recent
        ``KEPT_STDERR_OF`` servers).
        """
        process = self._processes.get((*scope.pool_key, server))
        return None if process is None else process.stderr_tail

    def key(self, server: McpServer, scope: Scope, credential: str | None) -> McpPoolKey:
        """The key of ``server`` for ``scope``; ``credential`` is the header sent, if any."""
        digest = credential_digest(credential)
        if digest is not None and server.oauth is not None:
            digest = f"oauth:{digest}"
        url = server.url if server.url is not None else f"stdio:{server.command}"
        return McpPoolKey(*scope.pool_key, server.name, url, server.transport, digest)

    async def list_tools(self, server: McpServer, scope: Scope) -> "tuple[mcp_types.Tool, ...]":
        """The server's tools, from the connection's cache while it is fresh.

        A connection that fails after having served before is dropped and the listing
        tried once more on a new one: listing changes nothing, and a pooled connection
        may simply have gone stale.

        Raises:
            RemoteError: the server could not be listed.
        """
        for attempt in range(2):
            reused = False

            async def listing(conn: "McpConnection") -> "tuple[mcp_types.Tool, ...]":
                nonlocal reused
                cached = self.fresh(conn.catalogue, time.monotonic())
                if cached is not None:
                    return cached
                reused = conn.served > 0
                tools = await conn.list_tools()
                conn.catalogue.keep(tools, time.monotonic())
                return tools

            try:
                return await self._leased(server, scope, listing, discard=True)
            except RemoteError as error:
                behind_oauth = self._effective(server).oauth is not None
                reauthorized = behind_oauth and error.failure.kind == "unauthorized"
                if attempt or not reused or reauthorized:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    async def call_tool(
        self, server: McpServer, scope: Scope, name: str, arguments: dict[str, object]
    ) -> "mcp_types.CallToolResult":
        """Call the tool ``name`` of ``server`` once, for ``scope``.

        Raises:
            RemoteError: the call failed before the tool could answer.
        """

        async def calling(connection: "McpConnection") -> "mcp_types.CallToolResult":
            return await connection.call_tool(name, dict(arguments))

        return await self._leased(server, scope, calling, discard=False)

    async def begin_authorization(
        self, scope: Scope, server: McpServer, *, requested_scope: str | None = None
    ) -> str:
        """Start the browser step of the ``authorization_code`` grant; the URL to open.

        See ``McpTools.begin_authorization``.

        Raises:
            ValueError: ``server`` has no ``oauth`` settings.
            OAuthError: the server's settings allow no browser step, or discovery or
                registration failed.
        """
        return await self._oauth_for(server).begin_authorization(
            scope, server, requested_scope=requested_scope
        )

    async def complete_authorization(
        self, scope: Scope, server: McpServer, *, code: str, state: str, iss: str | None = None
    ) -> None:
        """Finish a browser authorization: exchange ``code`` for a token and keep it.

        See ``McpTools.complete_authorization``.

        Raises:
            ValueError: ``server`` has no ``oauth`` settings.
            OAuthError: ``state_mismatch`` for an unknown, reused, expired or foreign
                ``state``; another kind when the token endpoint refuses.
        """
        await self._oauth_for(server).complete_authorization(
            scope, server, code=code, state=state, iss=iss
        )

    # --- connections ----------------------------------------------------------------

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
            RemoteError: what failed, after the one retry.
        """
        if server.transport == "stdio":  # no OAuth, no egress check: a process of ours
            key, starting = await self._stdio(server, scope)
            return await self.on_connection(
                key, starting, work, discard=lambda _, conn: discard or conn.broken
            )
        retried = False
        while True:
            effective = self._effective(server)
            header = await self._usable(effective, scope)
            key = self.key(effective, scope, header)
            if effective.oauth is not None:
                self._retire_replaced(key)
            opener = functools.partial(self._open, effective, scope, header)
            try:
                return await self.on_connection(
                    key, opener, work, discard=lambda _, conn: discard or conn.broken
                )
            except RemoteError as error:
                if error.failure.kind != "unauthorized" or retried:
                    raise
                if effective.oauth is None:
                    if not self._adopt_default_oauth(server, error):
                        raise _wants_oauth(server, error) from None
                    continue  # the same request, now with the default identity
                retried = True
                if not await self._reauthorize(effective, scope, error):
                    raise

    async def _stdio(
        self, server: McpServer, scope: Scope
    ) -> "tuple[McpPoolKey, Callable[[], Awaitable[McpConnection]]]":
        """The key of the stdio server's process for ``scope``, and how to start it.

        Raises:
            RemoteError: a secret is missing or the program cannot be found.
        """
        from psych_mcp._stdio import launch  # deferred: the SDK's transport types

        launched = await launch(self, server, scope)
        key = McpPoolKey(
            scope.tenant,
            scope.principal,
            server.name,
            f"stdio:{launched.command_line}",
            "stdio",
            credential_digest(launched.fingerprint),
        )

        async def opening() -> "McpConnection":
            from psych_mcp._connection import McpConnection
            from psych_mcp._stdio import LocalProcess

            if self._sandbox is not None:
                from psych_mcp._sandboxed import SandboxedProcess

                process: ServerProcess = await SandboxedProcess.start(self._sandbox, launched)
            else:
                process = await LocalProcess.start(launched)
            self._keep_stderr_of(scope, server.name, process)
            return await McpConnection.open_stdio(server, process, timeout=self.timeout_seconds)

        return key, opening

    def _keep_stderr_of(self, scope: Scope, server: str, process: "ServerProcess") -> None:
        where = (*scope.pool_key, server)
        self._processes[where] = process
        self._processes.move_to_end(where)
        while len(self._processes) > KEPT_STDERR_OF:
            self._processes.popitem(last=False)

    def _effective(self, server: McpServer) -> McpServer:
        """``server``, with the default OAuth identity once it has asked for OAuth."""
        if server.oauth is None and (server.name, server.url) in self._wants_oauth:
            return server.model_copy(update={"oauth": self._default_identity})
        return server

    def _adopt_default_oauth(self, server: McpServer, error: RemoteError) -> bool:
        """Switch ``server`` to the default identity after a Bearer challenge; whether it did."""
        if self._default_identity is None or not _bearer_challenge(error):
            return False
        self._wants_oauth.add((server.name, server.url))
        return True

    def _retire_replaced(self, key: McpPoolKey) -> None:
        """Close this tenant's, principal's and server's connections with older tokens."""
        for other in self.open_connections:
            if other != key and other == McpPoolKey(
                key.tenant, key.principal, key.server, key.url, key.transport, other.credential
            ):
                self.drop(other)

    async def _usable(self, server: McpServer, scope: Scope) -> str | None:
        """Check what can be checked before connecting; the credential to send, if any.

        For a server behind OAuth, the whole ``Authorization`` header value from the
        OAuth client (``Bearer ...``) is returned instead of a bearer token.

        Raises:
            RemoteError: the credential is missing, OAuth failed or needs a person to
                authorize first, or the egress policy refuses its URL for ``scope``.
        """
        if server.oauth is None:
            bearer = await self.credential(server, scope)
        assert server.url is not None  # an HTTP or SSE server
        await self.judge(server, scope, server.url)
        if server.oauth is not None:  # no OAuth traffic for a server we may not reach
            oauth = self._oauth_for(server)
            bearer = await _oauth_step(server, oauth.authorization_header(scope, server))
        return bearer

    async def _open(
        self, server: McpServer, scope: Scope, credential: str | None
    ) -> "McpConnection":
        from psych_mcp._connection import McpConnection  # deferred: importing the SDK is slow

        oauth = server.oauth is not None
        return await McpConnection.open(
            server,
            policy=self.policy,
            scope=scope,
            bearer=None if oauth else credential,
            authorization=credential if oauth else None,
            timeout=self.timeout_seconds,
        )

    # --- OAuth ----------------------------------------------------------------------

    async def _reauthorize(self, server: McpServer, scope: Scope, error: RemoteError) -> bool:
        """Hand a 401/403 to the OAuth client; whether a retry may now succeed."""
        status, challenge = error.challenge if error.challenge is not None else (401, None)
        retry = self._oauth_for(server).on_unauthorized(scope, server, challenge, status=status)
        return await _oauth_step(server, retry)

    def _oauth_for(self, server: McpServer) -> "McpOAuthClient":
        """The OAuth client, built on first use unless one was given."""
        if server.oauth is None:
            raise ValueError(f"MCP server {server.name!r} has no oauth settings")
        if self._oauth is None:
            from psych_mcp.oauth import InMemoryTokenStore  # deferred
            from psych_mcp.oauth import McpOAuthClient  # deferred

            store = self._token_store if self._token_store is not None else InMemoryTokenStore()
            secrets = self.secrets if self.secrets is not None else _NoSecrets()
            self._oauth = McpOAuthClient(store, secrets, self._oauth_http)
        return self._oauth

    def _oauth_http(self, scope: Scope) -> "httpx2.AsyncClient":
        """An HTTP client for OAuth requests for ``scope``: egress-checked, no redirects."""
        from psych_mcp._egress import EgressTransport
        from psych_mcp._egress import gated_client

        return gated_client(EgressTransport(self.policy, scope), timeout=self.timeout_seconds)


class _NoSecrets:
    """The resolver of a pool built without ``secrets``: it knows no secret."""

    async def resolve(self, scope: Scope, name: str) -> ResolvedCredential | None:
        return None


def _bearer_challenge(error: RemoteError) -> bool:
    """Whether a refusal came with a ``WWW-Authenticate: Bearer`` challenge."""
    challenge = error.challenge[1] if error.challenge is not None else None
    return challenge is not None and challenge.strip().lower().startswith("bearer")


def _wants_oauth(server: McpServer, error: RemoteError) -> RemoteError:
    """``error``, saying so when the server asked for OAuth that nobody configured."""
    if not _bearer_challenge(error):
        return error
    message = (
        f"MCP server {server.name} wants OAuth ({error.failure.message}); set "
        "McpServer.oauth in the Spec, or give the McpPool an oauth client or identity"
    )
    return RemoteError(RemoteFailure("unauthorized", message, False), challenge=error.challenge)


async def _oauth_step[T](server: McpServer, step: Awaitable[T]) -> T:
    """Await an OAuth client's ``step``; its errors as ``RemoteError``.

    Raises:
        RemoteError: see ``_oauth_failure``; ``egress_denied`` when the policy refused a
            request to the authorization server or the metadata.
    """
    from psych_mcp.oauth import AuthorizationRequired  # deferred
    from psych_mcp.oauth import OAuthError  # deferred

    try:
        return await step
    except (AuthorizationRequired, OAuthError) as refused:
        raise RemoteError(_oauth_failure(server, refused)) from None
    except EgressDenied as denied:
        message = f"MCP server {server.name}: OAuth request refused: {denied}"
        raise RemoteError(RemoteFailure("egress_denied", message, transient=False)) from None


_TRANSIENT_OAUTH = frozenset({"transport", "token_request"})


def _oauth_failure(server: McpServer, error: "AuthorizationRequired | OAuthError") -> RemoteFailure:
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
        return RemoteFailure("authorization_required", message, transient=False)
    status = error.status
    transient = error.kind == "transport" or (
        error.kind in _TRANSIENT_OAUTH and status is not None and (status >= 500 or status == 429)
    )
    message = f"MCP server {server.name}: OAuth failed ({error.kind}): {error.message}"
    return RemoteFailure(f"oauth_{error.kind}", message, transient=transient)


__all__ = ["McpPool", "McpPoolKey", "OAuthGrant"]
