"""A real OAuth 2.1 authorization server and a protected MCP-like resource, on loopback.

The authorization server is authlib's ``AuthorizationServer`` (grants, client
authentication, PKCE and dynamic registration are authlib's own code) behind a small
Starlette app; the resource is a second Starlette app on another port that publishes
protected resource metadata and checks bearer tokens, their audience (the RFC 8707
``resource``), expiry and scopes. Both run under uvicorn in background threads.

Things the tests need to see or steer live on ``World``: the shared fake clock that
decides expiry, counters of registrations and grants, and switches for the metadata
style and PKCE support.
"""

from __future__ import annotations

import hmac
import secrets
import socket
import threading
import time
from collections import Counter
from collections.abc import Awaitable
from collections.abc import Iterator
from contextlib import AbstractAsyncContextManager
from contextlib import contextmanager
from dataclasses import dataclass
from dataclasses import field
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qsl
from urllib.parse import urlsplit

import httpx2
import pytest
import uvicorn
from authlib.oauth2 import AuthorizationServer
from authlib.oauth2 import OAuth2Error
from authlib.oauth2.rfc6749 import AuthorizationCodeMixin
from authlib.oauth2.rfc6749 import ClientMixin
from authlib.oauth2.rfc6749 import JsonPayload
from authlib.oauth2.rfc6749 import JsonRequest
from authlib.oauth2.rfc6749 import OAuth2Request
from authlib.oauth2.rfc6749 import TokenMixin
from authlib.oauth2.rfc6749 import grants
from authlib.oauth2.rfc6749.requests import BasicOAuth2Payload
from authlib.oauth2.rfc7591 import ClientRegistrationEndpoint
from authlib.oauth2.rfc7636 import CodeChallenge
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.responses import Response
from starlette.routing import Route

from psych_mcp.oauth import McpOAuthClient
from psych_mcp.oauth import OAuthError
from psych_runtime import Scope
from psych_runtime.spec import McpServer

SCOPES = ["mcp:read", "mcp:write"]


class FakeClock:
    """The time for both sides: the client's expiry checks and the server's."""

    def __init__(self) -> None:
        self._now = datetime(2031, 1, 1, tzinfo=UTC)

    def now(self) -> datetime:
        return self._now

    def advance(self, seconds: float) -> None:
        self._now += timedelta(seconds=seconds)


@dataclass
class Client(ClientMixin):
    client_id: str
    client_secret: str | None
    token_endpoint_auth_method: str
    grant_types: list[str]
    redirect_uris: list[str] = field(default_factory=list)
    response_types: list[str] = field(default_factory=list)

    def get_client_id(self) -> str:
        return self.client_id

    def get_default_redirect_uri(self) -> str | None:
        return self.redirect_uris[0] if self.redirect_uris else None

    def get_allowed_scope(self, scope: str | None) -> str:
        return " ".join(s for s in (scope or "").split() if s in SCOPES)

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        return redirect_uri in self.redirect_uris

    def check_client_secret(self, client_secret: str) -> bool:
        return self.client_secret is not None and hmac.compare_digest(
            self.client_secret, client_secret
        )

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        return endpoint != "token" or method == self.token_endpoint_auth_method

    def check_response_type(self, response_type: str) -> bool:
        return response_type in self.response_types

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type in self.grant_types


@dataclass
class Code(AuthorizationCodeMixin):
    code: str
    client_id: str
    redirect_uri: str
    scope: str
    user: str
    resource: str
    code_challenge: str | None
    code_challenge_method: str | None

    def get_redirect_uri(self) -> str:
        return self.redirect_uri

    def get_scope(self) -> str:
        return self.scope


@dataclass
class Token(TokenMixin):
    access_token: str
    refresh_token: str | None
    client: Client
    user: str | None
    scope: str
    resource: str
    issued_at: datetime
    expires_in: int
    revoked: bool = False

    def check_client(self, client: Client) -> bool:
        return client.client_id == self.client.client_id

    def get_scope(self) -> str:
        return self.scope

    def get_expires_in(self) -> int:
        return self.expires_in

    def is_expired(self) -> bool:
        return False  # the resource checks expiry against the fake clock

    def is_revoked(self) -> bool:
        return self.revoked

    def get_user(self) -> str | None:
        return self.user

    def get_client(self) -> Client:
        return self.client


class _Request(OAuth2Request):
    def __init__(self, request: Request, query: dict[str, str], form: dict[str, str]):
        super().__init__(request.method, str(request.url), headers=request.headers)
        self._args = query
        self._form = form
        self.payload = BasicOAuth2Payload({**query, **form})

    @property
    def args(self) -> dict[str, str]:
        return self._args

    @property
    def form(self) -> dict[str, str]:
        return self._form


class _JsonPayload(JsonPayload):
    def __init__(self, data: dict[str, Any]):
        self._data = data

    @property
    def data(self) -> dict[str, Any]:
        return self._data


class _JsonRequest(JsonRequest):
    def __init__(self, request: Request, data: dict[str, Any]):
        super().__init__(request.method, str(request.url), request.headers)
        self.payload = _JsonPayload(data)


class _Server(AuthorizationServer):
    def __init__(self, world: World):
        super().__init__(scopes_supported=SCOPES)
        self.world = world

    def query_client(self, client_id: str) -> Client | None:
        return self.world.clients.get(client_id)

    def save_token(self, token: dict[str, Any], request: OAuth2Request) -> None:
        world = self.world
        if request.authorization_code is not None:
            resource = request.authorization_code.resource
        elif request.refresh_token is not None:
            resource = request.refresh_token.resource
        else:
            resource = request.form["resource"]
        world.tokens[token["access_token"]] = Token(
            access_token=token["access_token"],
            refresh_token=token.get("refresh_token"),
            client=request.client,
            user=request.user,
            scope=token.get("scope", ""),
            resource=resource,
            issued_at=world.clock.now(),
            expires_in=token["expires_in"],
        )

    def create_oauth2_request(self, request: Any) -> OAuth2Request:
        assert isinstance(request, OAuth2Request)
        return request

    def create_json_request(self, request: Any) -> JsonRequest:
        assert isinstance(request, JsonRequest)
        return request

    def handle_response(self, status: int, body: Any, headers: Any) -> Response:
        headers = dict(headers)
        if isinstance(body, dict):
            headers.pop("Content-Type", None)
            return JSONResponse(body, status_code=status, headers=headers)
        return Response(body or b"", status_code=status, headers=headers)

    def send_signal(self, name: str, *args: Any, **kwargs: Any) -> None:
        return None


class _ClientCredentials(grants.ClientCredentialsGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = ["client_secret_basic", "client_secret_post"]


class _AuthorizationCode(grants.AuthorizationCodeGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = ["client_secret_basic", "client_secret_post", "none"]

    def save_authorization_code(self, code: str, request: OAuth2Request) -> None:
        data = request.payload.data
        world: World = self.server.world
        world.codes[code] = Code(
            code=code,
            client_id=request.client.client_id,
            redirect_uri=data["redirect_uri"],
            scope=request.scope or "",
            user=request.user,
            resource=data["resource"],
            code_challenge=data.get("code_challenge"),
            code_challenge_method=data.get("code_challenge_method"),
        )

    def query_authorization_code(self, code: str, client: Client) -> Code | None:
        found: Code | None = self.server.world.codes.get(code)
        if found is not None and found.client_id == client.client_id:
            return found
        return None

    def delete_authorization_code(self, authorization_code: Code) -> None:
        self.server.world.codes.pop(authorization_code.code, None)

    def authenticate_user(self, authorization_code: Code) -> str:
        return authorization_code.user


class _Refresh(grants.RefreshTokenGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = ["client_secret_basic", "client_secret_post", "none"]
    INCLUDE_NEW_REFRESH_TOKEN = True

    def authenticate_refresh_token(self, refresh_token: str) -> Token | None:
        for token in self.server.world.tokens.values():
            if token.refresh_token == refresh_token and not token.revoked:
                return token
        return None

    def authenticate_user(self, refresh_token: Token) -> str | None:
        return refresh_token.user

    def revoke_old_credential(self, refresh_token: Token) -> None:
        refresh_token.revoked = True


class _Registration(ClientRegistrationEndpoint):
    def authenticate_token(self, request: JsonRequest) -> str:
        return "open registration"

    def get_server_metadata(self) -> dict[str, Any]:
        metadata: dict[str, Any] = self.server.world.as_metadata()
        return metadata

    def save_client(
        self, client_info: dict[str, Any], client_metadata: dict[str, Any], request: JsonRequest
    ) -> Client:
        world: World = self.server.world
        client = Client(
            client_id=client_info["client_id"],
            client_secret=client_info["client_secret"],
            token_endpoint_auth_method=client_metadata["token_endpoint_auth_method"],
            grant_types=list(client_metadata.get("grant_types", [])),
            redirect_uris=list(client_metadata.get("redirect_uris", [])),
            response_types=list(client_metadata.get("response_types", [])),
        )
        world.clients[client.client_id] = client
        world.registrations.append(dict(request.payload.data))
        return client


def _token_generator(world: World) -> Any:
    def generate(
        grant_type: str,
        client: Client,
        user: str | None = None,
        scope: str | None = None,
        expires_in: int | None = None,
        include_refresh_token: bool = True,
    ) -> dict[str, Any]:
        token: dict[str, Any] = {
            "token_type": "Bearer",
            "access_token": secrets.token_urlsafe(24),
            "expires_in": world.token_lifetime,
            "scope": client.get_allowed_scope(scope),
        }
        if include_refresh_token:
            token["refresh_token"] = secrets.token_urlsafe(24)
        return token

    return generate


class World:
    """The authorization server's and the resource's shared state."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.issuer = ""
        self.resource_origin = ""
        self.clients: dict[str, Client] = {}
        self.codes: dict[str, Code] = {}
        self.tokens: dict[str, Token] = {}
        self.registrations: list[dict[str, Any]] = []
        self.grants: Counter[str] = Counter()
        self.hits: Counter[str] = Counter()
        self.token_lifetime = 300
        self.metadata_style = "oauth"  # or "oidc": only the OpenID document is served
        self.pkce_advertised = True
        self.client_metadata_documents = False
        self.auth_methods = ["client_secret_basic", "client_secret_post", "none"]
        self.approve_as = "alice"
        self.resource_scopes = ["mcp:read"]
        self.server = _Server(self)
        self.server.register_token_generator("default", _token_generator(self))
        self.server.register_grant(_ClientCredentials)
        self.server.register_grant(_AuthorizationCode, [CodeChallenge(required=True)])
        self.server.register_grant(_Refresh)
        self.server.register_endpoint(_Registration)

    @property
    def resource(self) -> str:
        return f"{self.resource_origin}/mcp"

    @property
    def legacy_resource(self) -> str:
        return f"{self.resource_origin}/legacy"

    def scopes_of(self, access_token: str, resource: str | None = None) -> frozenset[str] | None:
        """The scopes ``access_token`` grants for ``resource`` (``self.resource`` by
        default), or None when it is unknown, revoked, for another audience or expired
        on the shared clock."""
        token = self.tokens.get(access_token)
        if (
            token is None
            or token.revoked
            or token.resource != (resource if resource is not None else self.resource)
            or self.clock.now() >= token.issued_at + timedelta(seconds=token.expires_in)
        ):
            return None
        return frozenset(token.scope.split())

    def add_client(self, client: Client) -> Client:
        self.clients[client.client_id] = client
        return client

    def add_service_client(self, secret: str, client_id: str = "svc") -> Client:
        """A confidential client that authenticates with ``secret`` for client_credentials."""
        return self.add_client(
            Client(
                client_id=client_id,
                client_secret=secret,
                token_endpoint_auth_method="client_secret_basic",
                grant_types=["client_credentials"],
            )
        )

    def as_metadata(self) -> dict[str, Any]:
        metadata: dict[str, Any] = {
            "issuer": self.issuer,
            "authorization_endpoint": f"{self.issuer}/authorize",
            "token_endpoint": f"{self.issuer}/token",
            "registration_endpoint": f"{self.issuer}/register",
            "scopes_supported": SCOPES,
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "client_credentials", "refresh_token"],
            "token_endpoint_auth_methods_supported": self.auth_methods,
        }
        if self.pkce_advertised:
            metadata["code_challenge_methods_supported"] = ["S256"]
        if self.client_metadata_documents:
            metadata["client_id_metadata_document_supported"] = True
        return metadata

    # -- the authorization server ---------------------------------------------------

    def as_app(self) -> Starlette:
        async def oauth_metadata(request: Request) -> Response:
            self.hits["as-metadata"] += 1
            if self.metadata_style != "oauth":
                return Response(status_code=404)
            return JSONResponse(self.as_metadata())

        async def openid_metadata(request: Request) -> Response:
            self.hits["openid-metadata"] += 1
            if self.metadata_style != "oidc":
                return Response(status_code=404)
            return JSONResponse(self.as_metadata())

        async def authorize(request: Request) -> Response:
            query = dict(request.query_params)
            # MCP asks authorization servers for PKCE with S256 and resource indicators.
            if query.get("code_challenge_method") != "S256" or not query.get("code_challenge"):
                return JSONResponse({"error": "invalid_request"}, status_code=400)
            if query.get("resource") not in {self.resource, self.legacy_resource}:
                return JSONResponse({"error": "invalid_target"}, status_code=400)
            oauth_request = _Request(request, query, {})
            try:
                grant = self.server.get_consent_grant(
                    request=oauth_request, end_user=self.approve_as
                )
            except OAuth2Error as error:
                response: Response = self.server.handle_error_response(oauth_request, error)
                return response
            approved: Response = self.server.create_authorization_response(
                request=oauth_request, grant_user=self.approve_as, grant=grant
            )
            return approved

        async def token(request: Request) -> Response:
            form = {k: str(v) for k, v in (await request.form()).items()}
            grant_type = form.get("grant_type", "")
            self.grants[grant_type] += 1
            resources = {self.resource, self.legacy_resource}
            if form.get("resource") not in resources:
                return JSONResponse({"error": "invalid_target"}, status_code=400)
            code = self.codes.get(form.get("code", ""))
            if code is not None and code.resource != form["resource"]:
                return JSONResponse({"error": "invalid_target"}, status_code=400)
            response: Response = self.server.create_token_response(_Request(request, {}, form))
            return response

        async def register(request: Request) -> Response:
            body = await request.json()
            response: Response = self.server.create_endpoint_response(
                "client_registration", _JsonRequest(request, body)
            )
            return response

        return Starlette(
            routes=[
                Route("/.well-known/oauth-authorization-server", oauth_metadata),
                Route("/.well-known/openid-configuration", openid_metadata),
                Route("/authorize", authorize),
                Route("/token", token, methods=["POST"]),
                Route("/register", register, methods=["POST"]),
            ]
        )

    # -- the protected resource -----------------------------------------------------

    def resource_app(self) -> Starlette:
        def prm_url() -> str:
            return f"{self.resource_origin}/.well-known/oauth-protected-resource/mcp"

        async def resource_metadata(request: Request) -> Response:
            self.hits["resource-metadata"] += 1
            return JSONResponse(
                {
                    "resource": self.resource,
                    "authorization_servers": [self.issuer],
                    "scopes_supported": self.resource_scopes,
                }
            )

        async def redirected_metadata(request: Request) -> Response:
            self.hits["redirected-metadata"] += 1
            return Response(status_code=302, headers={"Location": prm_url()})

        def check(request: Request, resource: str, hint: str | None) -> Response:
            need = request.query_params.get("need", "mcp:read").split()
            meta = f', resource_metadata="{hint}"' if hint else ""
            header = request.headers.get("authorization", "")
            if not header.startswith("Bearer "):
                challenge = f'Bearer scope="mcp:read"{meta}'
                return Response(status_code=401, headers={"WWW-Authenticate": challenge})
            granted = self.scopes_of(header.removeprefix("Bearer "), resource)
            if granted is None:
                challenge = f'Bearer error="invalid_token"{meta}'
                return Response(status_code=401, headers={"WWW-Authenticate": challenge})
            token = self.tokens[header.removeprefix("Bearer ")]
            if not set(need) <= granted:
                wanted = " ".join(need)
                challenge = f'Bearer error="insufficient_scope", scope="{wanted}"{meta}'
                return Response(status_code=403, headers={"WWW-Authenticate": challenge})
            return JSONResponse(
                {"user": token.user, "client": token.client.client_id, "scope": token.scope}
            )

        async def mcp(request: Request) -> Response:
            return check(request, self.resource, prm_url())

        async def legacy(request: Request) -> Response:
            return check(request, self.legacy_resource, None)

        return Starlette(
            routes=[
                Route("/.well-known/oauth-protected-resource/mcp", resource_metadata),
                Route("/.well-known/oauth-protected-resource/redirected", redirected_metadata),
                Route("/mcp", mcp),
                Route("/legacy", legacy),
            ]
        )


class RecordingFactory:
    """An HTTP client factory that records the Scope and URL of every request."""

    def __init__(self) -> None:
        self.scopes: list[Scope] = []
        self.urls: list[str] = []

    def __call__(self, scope: Scope) -> AbstractAsyncContextManager[httpx2.AsyncClient]:
        self.scopes.append(scope)

        async def record(request: httpx2.Request) -> None:
            self.urls.append(str(request.url))

        return httpx2.AsyncClient(timeout=10, trust_env=False, event_hooks={"request": [record]})


class Served:
    """One ASGI app served by uvicorn on a free loopback port, in a thread."""

    def __init__(self, app: Starlette) -> None:
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.bind(("127.0.0.1", 0))
        port = self._socket.getsockname()[1]
        self.origin = f"http://127.0.0.1:{port}"
        config = uvicorn.Config(
            app, log_level="warning", lifespan="off", ws="none", http="h11", access_log=False
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._socket]}, daemon=True
        )

    def start(self) -> None:
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the test server did not start")
            time.sleep(0.01)

    def request_stop(self) -> None:
        self._server.should_exit = True

    def join(self) -> None:
        self._thread.join(10)
        self._socket.close()


@contextmanager
def running(world: World, *, resource: bool = True) -> Iterator[World]:
    """Serve ``world``'s authorization server (and, unless ``resource`` is False, its
    protected resource app) on loopback until the block exits.

    Without the resource app, the caller serves the resource itself (an MCP server)
    and sets ``world.resource_origin`` to its origin.
    """
    authorization = Served(world.as_app())
    world.issuer = authorization.origin
    served = [authorization]
    if resource:
        app = Served(world.resource_app())
        world.resource_origin = app.origin
        served.append(app)
    for server in served:
        server.start()
    try:
        yield world
    finally:
        # All shut down at once: each waits for uvicorn's polling interval.
        for server in served:
            server.request_stop()
        for server in served:
            server.join()


async def browse(url: str) -> str:
    """Plays the user's browser: opens an authorization URL, returns the redirect target."""
    async with httpx2.AsyncClient(timeout=10, trust_env=False) as client:
        response = await client.get(url, follow_redirects=False)
    assert response.status_code == 302, response.text
    return response.headers["location"]


ALICE = Scope(tenant="acme", principal="alice")
"""The Scope the tests ask for tokens in."""


def bearer_value(header: str | None) -> str:
    """The token in an ``Authorization`` header value."""
    assert header is not None and header.startswith("Bearer ")
    return header.removeprefix("Bearer ")


def callback_params(location: str) -> dict[str, str]:
    """The query parameters of a redirect ``Location``."""
    return dict(parse_qsl(urlsplit(location).query))


async def call(url: str, header: str | None, need: str = "mcp:read") -> httpx2.Response:
    """GET the resource at ``url`` with ``header`` as ``Authorization``, asking for ``need``."""
    headers = {"Authorization": header} if header else {}
    async with httpx2.AsyncClient(timeout=10, trust_env=False) as http:
        return await http.get(url, params={"need": need}, headers=headers)


async def expect_oauth_error(kind: str, step: Awaitable[object]) -> OAuthError:
    """Await ``step``, which must raise an ``OAuthError`` of ``kind``; that error."""
    with pytest.raises(OAuthError) as caught:
        await step
    assert caught.value.kind == kind
    return caught.value


async def renewed_after_expiry(
    world: World, clock: FakeClock, oauth: McpOAuthClient, server: McpServer, header: str
) -> str:
    """Let ``header``'s token expire: the resource refuses it, and ``oauth`` renews it.

    Returns:
        The new header, which differs from ``header`` and which the resource accepts.
    """
    clock.advance(world.token_lifetime + 1)
    assert (await call(world.resource, header)).status_code == 401
    renewed = await oauth.authorization_header(ALICE, server)
    assert renewed is not None and renewed != header
    assert (await call(world.resource, renewed)).status_code == 200
    return renewed
