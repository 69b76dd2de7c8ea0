"""McpOAuthClient: OAuth 2.1 tokens for MCP servers, per tenant and principal.

The MCP connection code asks ``authorization_header`` before each connection and
calls ``on_unauthorized`` when the server answers 401 or 403. In between, this client
discovers the server's authorization server, registers itself when allowed, obtains,
refreshes and widens tokens, and keeps them in a ``TokenStore`` under the Scope's
tenant and principal, so no tenant or user ever receives another's token.

With the ``client_credentials`` grant everything happens here. With
``authorization_code`` a person must approve access once: the client raises
``AuthorizationRequired`` with the URL to open, the consumer sends the user there and
passes the ``code`` and ``state`` of the callback to ``complete_authorization``.
"""

import asyncio
import logging
import weakref
from collections.abc import Callable
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qsl
from urllib.parse import quote
from urllib.parse import urlencode
from urllib.parse import urlsplit
from urllib.parse import urlunsplit

from pydantic import SecretStr

from psych_mcp.oauth.challenge import parse_bearer_challenge
from psych_mcp.oauth.discovery import Discovered
from psych_mcp.oauth.discovery import Discovery
from psych_mcp.oauth.endpoints import ClientAuth
from psych_mcp.oauth.endpoints import Grant
from psych_mcp.oauth.endpoints import register_client
from psych_mcp.oauth.endpoints import request_token
from psych_mcp.oauth.endpoints import secret_auth_method
from psych_mcp.oauth.errors import AuthorizationRequired
from psych_mcp.oauth.errors import OAuthError
from psych_mcp.oauth.http import HttpClientFactory
from psych_mcp.oauth.http import OAuthHttp
from psych_mcp.oauth.metadata import AuthorizationServerMetadata
from psych_mcp.oauth.metadata import same_issuer
from psych_mcp.oauth.models import PendingAuthorization
from psych_mcp.oauth.models import RegisteredClient
from psych_mcp.oauth.models import StoredToken
from psych_mcp.oauth.models import TokenKey
from psych_mcp.oauth.models import covers
from psych_mcp.oauth.models import union_scopes
from psych_mcp.oauth.pkce import new_code_verifier
from psych_mcp.oauth.pkce import new_state
from psych_mcp.oauth.pkce import s256_challenge
from psych_mcp.oauth.store import TokenStore
from psych_runtime import Scope
from psych_runtime import SecretResolver
from psych_runtime.spec import McpOAuth
from psych_runtime.spec import McpServer

_log = logging.getLogger(__name__)

# Errors after which a refresh token is not worth keeping.
_DEAD_REFRESH = frozenset({"invalid_grant", "invalid_scope", "unauthorized_client"})


def utc_now() -> datetime:
    """The current time in UTC, the default clock."""
    return datetime.now(UTC)


def _with_query(url: str, params: dict[str, str]) -> str:
    parts = urlsplit(url)
    kept = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k not in params]
    query = urlencode([*kept, *params.items()], quote_via=quote)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))


def _bearer(token: StoredToken) -> str:
    return f"Bearer {token.access_token.get_secret_value()}"


def _default_scope(discovered: Discovered) -> str | None:
    """The scopes to ask for when no challenge said: those the resource lists."""
    metadata = discovered.resource_metadata
    if metadata is not None and metadata.scopes_supported:
        return " ".join(metadata.scopes_supported)
    return None


class McpOAuthClient:
    """Obtains, keeps and renews OAuth tokens for MCP servers, per tenant.

    Args:
        token_store: where tokens, registered clients and pending authorizations live.
        secrets: resolves ``McpOAuth.client_secret_credential`` by name for the Scope.
        http_client_factory: gives the HTTP client for each request, called with the
            request's Scope; this is where the egress policy applies.
        clock: the current time (UTC); injectable for tests.
        expiry_margin: a token this close to expiry counts as expired, so it is not
            sent only to expire on the way.
        metadata_ttl: how long discovered metadata is reused.
        authorization_ttl: how long a started browser authorization may be completed.
    """

    def __init__(
        self,
        token_store: TokenStore,
        secrets: SecretResolver,
        http_client_factory: HttpClientFactory,
        *,
        clock: Callable[[], datetime] = utc_now,
        expiry_margin: timedelta = timedelta(seconds=30),
        metadata_ttl: timedelta = timedelta(hours=1),
        authorization_ttl: timedelta = timedelta(minutes=10),
    ) -> None:
        self._store = token_store
        self._secrets = secrets
        self._http = OAuthHttp(http_client_factory)
        self._clock = clock
        self._margin = expiry_margin
        self._authorization_ttl = authorization_ttl
        self._discovery = Discovery(self._http, clock=clock, ttl=metadata_ttl)
        self._locks: weakref.WeakValueDictionary[object, asyncio.Lock] = (
            weakref.WeakValueDictionary()
        )

    # -- the public API -------------------------------------------------------------

    async def authorization_header(self, scope: Scope, server: McpServer) -> str | None:
        """The ``Authorization`` header value to send to ``server`` for ``scope``.

        A stored token that is still valid is used as it is; an expired one is
        refreshed when it has a refresh token. Without a usable token the
        ``client_credentials`` grant fetches a new one, while ``authorization_code``
        needs a person and raises ``AuthorizationRequired``.

        Args:
            scope: the tenant and principal the connection is made for.
            server: the MCP server.

        Returns:
            ``"Bearer <token>"``, or None when the server has no ``oauth`` settings.

        Raises:
            AuthorizationRequired: a user must approve access in a browser first.
            OAuthError: discovery, registration or the token request failed.
        """
        oauth = server.oauth
        if oauth is None:
            return None
        key = TokenKey.of(scope, server)
        async with self._lock(key):
            token = await self._store.get(key)
            held = token.scope if token is not None else None
            if token is not None and token.usable(self._clock(), self._margin):
                return _bearer(token)
            if token is not None and token.refresh_token is not None:
                refreshed = await self._refresh(scope, server, key, token)
                if refreshed is not None:
                    return _bearer(refreshed)
            if oauth.grant == "client_credentials":
                return _bearer(await self._client_credentials(scope, server, key, held))
            raise await self._authorization_required(scope, server, key, held, None)

    async def begin_authorization(
        self, scope: Scope, server: McpServer, *, requested_scope: str | None = None
    ) -> str:
        """Start a browser authorization and return the URL to open.

        A PKCE verifier and a ``state`` value are generated and kept, as a pending
        authorization, in the token store; only the verifier's S256 hash is in the URL.

        Args:
            scope: the tenant and principal the access is for.
            server: an MCP server whose ``oauth.grant`` is ``authorization_code``.
            requested_scope: the scopes to ask for, added to those of any token held;
                by default the scopes the server's metadata lists.

        Returns:
            The authorization URL.

        Raises:
            OAuthError: ``configuration`` when the server's settings do not allow a
                browser authorization, ``unsupported`` when the authorization server
                lacks PKCE S256, or another kind when discovery or registration fails.
        """
        key = TokenKey.of(scope, server)
        async with self._lock(key):
            token = await self._store.get(key)
            held = token.scope if token is not None else None
            pending = await self._begin(scope, server, key, union_scopes(held, requested_scope))
        return pending[0]

    async def complete_authorization(
        self,
        scope: Scope,
        server: McpServer,
        *,
        code: str,
        state: str,
        iss: str | None = None,
    ) -> None:
        """Exchange the code of a browser authorization for a token and keep it.

        The pending authorization is taken by ``state``; it must have been started for
        the same tenant, principal and server, and not have expired. It can be used
        once only.

        Args:
            scope: the tenant and principal completing the authorization.
            server: the MCP server it was started for.
            code: the ``code`` query parameter of the callback.
            state: the ``state`` query parameter of the callback.
            iss: the ``iss`` query parameter of the callback (RFC 9207), when present;
                it must name the authorization server the user was sent to.

        Raises:
            OAuthError: ``state_mismatch`` for an unknown, reused, expired or foreign
                ``state`` or a wrong ``iss``; a token endpoint kind when the exchange
                is refused.
        """
        key = TokenKey.of(scope, server)
        pending = await self._store.take_pending(state)
        if pending is None:
            raise OAuthError(
                "state_mismatch",
                "no pending authorization has this state (unknown, already used or expired)",
            )
        if not pending.belongs_to(key):
            raise OAuthError(
                "state_mismatch",
                f"the authorization response does not belong to a request for MCP server "
                f"{server.name!r} by this tenant and principal",
            )
        if self._clock() >= pending.expires_at:
            raise OAuthError("state_mismatch", "the pending authorization has expired")
        if iss is not None and not same_issuer(iss, pending.issuer):
            raise OAuthError("state_mismatch", "the authorization response names another issuer")
        oauth = self._oauth(server)
        async with self._lock(key):
            metadata = await self._discovery.authorization_server(scope, pending.issuer)
            client = await self._client(
                scope, oauth, pending.issuer, metadata, "authorization_code"
            )
            if client.client_id != pending.client_id:
                raise OAuthError(
                    "state_mismatch",
                    "the client registration changed since the authorization began; begin it again",
                )
            form = {
                "grant_type": "authorization_code",
                "code": code,
                "redirect_uri": pending.redirect_uri,
                "code_verifier": pending.code_verifier.get_secret_value(),
                "resource": pending.resource,
            }
            token = await self._token(
                scope, oauth, pending.issuer, metadata, client, form, pending.scope
            )
            await self._store.put(key, token)
        _log.debug("authorization completed for MCP server %r", server.name)

    async def on_unauthorized(
        self,
        scope: Scope,
        server: McpServer,
        www_authenticate: str | None,
        *,
        status: int = 401,
    ) -> bool:
        """React to a 401 or 403 answer from ``server``.

        A 403 whose Bearer challenge says ``insufficient_scope`` asks for more scopes:
        a token for the union of the scopes held and the scopes challenged is
        requested (step-up). A 401 means the token was missing, expired or revoked: it
        is refreshed when possible, otherwise dropped and, with
        ``client_credentials``, fetched anew. A ``resource_metadata`` URL in the
        challenge refreshes discovery first.

        The caller should retry a request once after True: a server that keeps
        refusing fresh tokens would otherwise be asked forever.

        Args:
            scope: the tenant and principal of the refused request.
            server: the MCP server that refused it.
            www_authenticate: the answer's ``WWW-Authenticate`` header, if any.
            status: the answer's status code.

        Returns:
            True when a new token is stored and a retry may succeed; False when a new
            token would not help (a 403 for another reason, or one asking for scopes
            the token already has).

        Raises:
            AuthorizationRequired: with ``authorization_code``, when a user must
                approve (again, or for more scopes).
            OAuthError: discovery, registration or the token request failed.
        """
        oauth = server.oauth
        if oauth is None:
            return False
        challenge = parse_bearer_challenge(www_authenticate)
        hint = challenge.resource_metadata if challenge is not None else None
        asked = challenge.scope if challenge is not None else None
        key = TokenKey.of(scope, server)
        async with self._lock(key):
            if hint is not None:
                await self._discovery.resolve(scope, server, metadata_url=hint)
            token = await self._store.get(key)
            held = token.scope if token is not None else None
            wanted = union_scopes(held, asked)
            if challenge is not None and challenge.insufficient_scope:
                if asked is None or (token is not None and covers(held, asked)):
                    return False
                _log.debug("MCP server %r asks for more scopes", server.name)
            elif status == 403:
                return False
            else:
                if (
                    token is not None
                    and token.refresh_token is not None
                    and await self._refresh(scope, server, key, token) is not None
                ):
                    return True
                await self._store.delete(key)
            if oauth.grant == "client_credentials":
                await self._client_credentials(scope, server, key, wanted)
                return True
            raise await self._authorization_required(scope, server, key, wanted, None)

    # -- acquiring tokens ---------------------------------------------------------------

    def _lock(self, key: object) -> asyncio.Lock:
        lock = self._locks.get(key)
        if lock is None:
            lock = asyncio.Lock()
            self._locks[key] = lock
        return lock

    @staticmethod
    def _oauth(server: McpServer) -> McpOAuth:
        if server.oauth is None:
            raise OAuthError("configuration", f"MCP server {server.name!r} has no oauth settings")
        return server.oauth

    async def _client_credentials(
        self, scope: Scope, server: McpServer, key: TokenKey, requested: str | None
    ) -> StoredToken:
        oauth = self._oauth(server)
        discovered = await self._discovery.resolve(scope, server)
        wanted = requested or _default_scope(discovered)
        metadata = discovered.authorization_server
        client = await self._client(scope, oauth, discovered.issuer, metadata, "client_credentials")
        form = {"grant_type": "client_credentials", "resource": discovered.resource}
        if wanted:
            form["scope"] = wanted
        token = await self._token(scope, oauth, discovered.issuer, metadata, client, form, wanted)
        await self._store.put(key, token)
        _log.debug("obtained a client_credentials token for MCP server %r", server.name)
        return token

    async def _refresh(
        self, scope: Scope, server: McpServer, key: TokenKey, token: StoredToken
    ) -> StoredToken | None:
        """Refresh ``token``; None (and the token dropped) when it cannot be."""
        assert token.refresh_token is not None
        oauth = self._oauth(server)
        discovered = await self._discovery.resolve(scope, server)
        if token.issuer is not None and not same_issuer(token.issuer, discovered.issuer):
            await self._store.delete(key)
            return None
        metadata = discovered.authorization_server
        grant: Grant = oauth.grant
        client = await self._client(scope, oauth, discovered.issuer, metadata, grant)
        form = {
            "grant_type": "refresh_token",
            "refresh_token": token.refresh_token.get_secret_value(),
            "resource": token.resource or discovered.resource,
        }
        try:
            fresh = await self._token(
                scope, oauth, discovered.issuer, metadata, client, form, token.scope
            )
        except OAuthError as exc:
            if exc.kind in _DEAD_REFRESH or exc.kind == "invalid_client":
                _log.debug("refresh refused for MCP server %r (%s)", server.name, exc.kind)
                await self._store.delete(key)
                return None
            raise
        if fresh.refresh_token is None:
            # RFC 6749 section 6: without a new refresh token the old one stays valid.
            fresh = fresh.model_copy(update={"refresh_token": token.refresh_token})
        await self._store.put(key, fresh)
        _log.debug("refreshed the token for MCP server %r", server.name)
        return fresh

    async def _token(
        self,
        scope: Scope,
        oauth: McpOAuth,
        issuer: str,
        metadata: AuthorizationServerMetadata,
        client: ClientAuth,
        form: dict[str, str],
        requested: str | None,
    ) -> StoredToken:
        try:
            return await request_token(
                self._http,
                scope,
                metadata,
                client,
                form,
                now=self._clock(),
                requested_scope=requested,
                resource=form["resource"],
            )
        except OAuthError as exc:
            if exc.kind == "invalid_client" and client.dynamic:
                # The server forgot the registration: register again next time.
                await self._store.delete_client(scope.tenant, issuer)
            raise

    async def _authorization_required(
        self,
        scope: Scope,
        server: McpServer,
        key: TokenKey,
        wanted: str | None,
        hint: str | None,
    ) -> AuthorizationRequired:
        url, state, requested = await self._begin(scope, server, key, wanted, hint)
        return AuthorizationRequired(
            server=server.name, url=url, state=state, requested_scope=requested
        )

    async def _begin(
        self,
        scope: Scope,
        server: McpServer,
        key: TokenKey,
        wanted: str | None,
        hint: str | None = None,
    ) -> tuple[str, str, str | None]:
        oauth = self._oauth(server)
        if oauth.grant != "authorization_code":
            raise OAuthError(
                "configuration",
                f"MCP server {server.name!r} uses the client_credentials grant, which has "
                "no browser step",
            )
        if not oauth.redirect_uris:
            raise OAuthError(
                "configuration",
                f"MCP server {server.name!r} uses the authorization_code grant but its "
                "oauth settings list no redirect_uris",
            )
        redirect_uri = oauth.redirect_uris[0]
        discovered = await self._discovery.resolve(scope, server, metadata_url=hint)
        metadata = discovered.authorization_server
        if metadata.authorization_endpoint is None:
            raise OAuthError(
                "discovery",
                f"the authorization server {discovered.issuer!r} has no authorization endpoint",
            )
        if "S256" not in metadata.code_challenge_methods_supported:
            raise OAuthError(
                "unsupported",
                f"the authorization server {discovered.issuer!r} does not advertise PKCE "
                "with S256, which is required",
            )
        client = await self._client(scope, oauth, discovered.issuer, metadata, "authorization_code")
        requested = union_scopes(wanted or _default_scope(discovered))
        if (
            requested is not None
            and metadata.scopes_supported is not None
            and "offline_access" in metadata.scopes_supported
        ):
            # Servers that follow OpenID Connect issue refresh tokens only for this.
            requested = union_scopes(requested, "offline_access")
        verifier = new_code_verifier()
        state = new_state()
        now = self._clock()
        await self._store.put_pending(
            PendingAuthorization(
                state=state,
                tenant=key.tenant,
                principal=key.principal,
                server=key.server,
                server_url=key.resource,
                resource=discovered.resource,
                issuer=discovered.issuer,
                client_id=client.client_id,
                redirect_uri=redirect_uri,
                code_verifier=SecretStr(verifier),
                scope=requested,
                created_at=now,
                expires_at=now + self._authorization_ttl,
            )
        )
        params = {
            "response_type": "code",
            "client_id": client.client_id,
            "redirect_uri": redirect_uri,
            "state": state,
            "code_challenge": s256_challenge(verifier),
            "code_challenge_method": "S256",
            "resource": discovered.resource,
        }
        if requested:
            params["scope"] = requested
        _log.debug("authorization started for MCP server %r", server.name)
        return _with_query(metadata.authorization_endpoint, params), state, requested

    # -- the client's own identity --------------------------------------------------

    async def _client(
        self,
        scope: Scope,
        oauth: McpOAuth,
        issuer: str,
        metadata: AuthorizationServerMetadata,
        grant: Grant,
    ) -> ClientAuth:
        """Who this client is at ``issuer``: preregistered, a metadata URL, or registered."""
        if oauth.preregistered_client_id is not None:
            name = oauth.client_secret_credential
            if name is None:
                return ClientAuth(oauth.preregistered_client_id, None, "none", dynamic=False)
            credential = await self._secrets.resolve(scope, name)
            if credential is None:
                raise OAuthError(
                    "missing_credential",
                    f"no secret named {name!r} exists for tenant {scope.tenant!r}",
                )
            return ClientAuth(
                oauth.preregistered_client_id,
                credential.secret,
                secret_auth_method(metadata),
                dynamic=False,
            )
        if (
            oauth.cimd_url is not None
            and grant == "authorization_code"
            and metadata.client_id_metadata_document_supported
        ):
            return ClientAuth(oauth.cimd_url, None, "none", dynamic=False)
        if not oauth.allow_dynamic_registration:
            raise OAuthError(
                "configuration",
                "no preregistered client id is set and dynamic client registration is not allowed",
            )
        async with self._lock(("client", scope.tenant, issuer)):
            stored = await self._store.get_client(scope.tenant, issuer)
            if stored is None or not self._fits(stored, oauth, grant):
                stored = await register_client(
                    self._http, scope, metadata, self._registration(oauth, metadata, grant)
                )
                await self._store.put_client(scope.tenant, issuer, stored)
        return ClientAuth(
            stored.client_id,
            stored.client_secret,
            stored.token_endpoint_auth_method,
            dynamic=True,
        )

    def _fits(self, client: RegisteredClient, oauth: McpOAuth, grant: Grant) -> bool:
        if grant not in client.grant_types:
            return False
        if (
            grant == "authorization_code"
            and oauth.redirect_uris
            and oauth.redirect_uris[0] not in client.redirect_uris
        ):
            return False
        expires = client.client_secret_expires_at
        return expires is None or self._clock() + self._margin < expires

    @staticmethod
    def _registration(
        oauth: McpOAuth, metadata: AuthorizationServerMetadata, grant: Grant
    ) -> dict[str, Any]:
        supported = metadata.token_endpoint_auth_methods_supported
        body: dict[str, Any] = {
            "client_name": oauth.client_name,
            "application_type": oauth.application_type,
        }
        if grant == "client_credentials":
            body["grant_types"] = ["client_credentials"]
            body["response_types"] = []
            body["token_endpoint_auth_method"] = secret_auth_method(metadata)
        else:
            body["grant_types"] = ["authorization_code", "refresh_token"]
            body["response_types"] = ["code"]
            body["redirect_uris"] = list(oauth.redirect_uris)
            public = oauth.application_type == "native" and "none" in supported
            body["token_endpoint_auth_method"] = "none" if public else secret_auth_method(metadata)
        return body


__all__ = ["McpOAuthClient", "utc_now"]
