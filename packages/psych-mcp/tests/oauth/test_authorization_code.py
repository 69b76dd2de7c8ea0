"""The authorization_code grant with PKCE, refresh and step-up, against a live server."""

import logging
from collections.abc import Awaitable
from collections.abc import Callable

import pytest

from psych_mcp.oauth import AuthorizationRequired
from psych_mcp.oauth import InMemoryTokenStore
from psych_mcp.oauth import McpOAuthClient
from psych_mcp.oauth import OAuthError
from psych_mcp.oauth import PendingAuthorization
from psych_runtime import Scope
from psych_runtime import StaticSecretResolver
from psych_runtime.spec import McpOAuth
from psych_runtime.spec import McpServer

from .authserver import ALICE
from .authserver import Client
from .authserver import FakeClock
from .authserver import RecordingFactory
from .authserver import World
from .authserver import call
from .authserver import callback_params
from .authserver import expect_oauth_error
from .authserver import renewed_after_expiry

REDIRECT = "http://127.0.0.1:8976/callback"
type Browser = Callable[[str], Awaitable[str]]


def server_for(world: World, **oauth: object) -> McpServer:
    settings = {"grant": "authorization_code", "redirect_uris": [REDIRECT], **oauth}
    return McpServer(name="tools", url=world.resource, oauth=McpOAuth.model_validate(settings))


def make(
    clock: FakeClock, factory: RecordingFactory, secrets: dict[str, str] | None = None
) -> McpOAuthClient:
    return McpOAuthClient(
        InMemoryTokenStore(), StaticSecretResolver(secrets or {}), factory, clock=clock.now
    )


@pytest.fixture
def server(world: World) -> McpServer:
    """The server of ``server_for`` with its defaults."""
    return server_for(world)


async def authorize(
    oauth: McpOAuthClient, scope: Scope, server: McpServer, browser: Browser
) -> dict[str, str]:
    """Ask for a header, take the URL from AuthorizationRequired, play the browser."""
    with pytest.raises(AuthorizationRequired) as required:
        await oauth.authorization_header(scope, server)
    assert required.value.server == server.name
    callback = callback_params(await browser(required.value.url))
    assert callback["state"] == required.value.state
    return callback


async def sign_in(
    oauth: McpOAuthClient, scope: Scope, server: McpServer, browser: Browser
) -> dict[str, str]:
    """``authorize``, then hand the callback to the client as the redirect would."""
    callback = await authorize(oauth, scope, server, browser)
    await oauth.complete_authorization(
        scope, server, code=callback["code"], state=callback["state"]
    )
    return callback


async def test_the_user_authorizes_then_the_token_is_used_and_refreshed(
    world: World, server: McpServer, oauth: McpOAuthClient, clock: FakeClock, browser: Browser
) -> None:
    await sign_in(oauth, ALICE, server, browser)

    header = await oauth.authorization_header(ALICE, server)
    answer = await call(world.resource, header)
    assert answer.status_code == 200
    assert answer.json()["user"] == "alice"
    # A native client registered itself as a public client, with the redirect URI.
    (registration,) = world.registrations
    assert registration["token_endpoint_auth_method"] == "none"
    assert registration["redirect_uris"] == [REDIRECT]
    assert registration["application_type"] == "native"

    await renewed_after_expiry(world, clock, oauth, server, header)
    assert world.grants["refresh_token"] == 1
    # The rotated refresh token is the one kept: a second expiry refreshes again.
    clock.advance(world.token_lifetime + 1)
    assert (await call(world.resource, await oauth.authorization_header(ALICE, server))).is_success
    assert world.grants["refresh_token"] == 2


async def test_the_authorization_url_carries_pkce_s256_and_the_resource(
    world: World, clock: FakeClock, factory: RecordingFactory
) -> None:
    server = server_for(world)
    url = await make(clock, factory).begin_authorization(ALICE, server)
    params = callback_params(url)
    assert url.startswith(f"{world.issuer}/authorize?")
    assert params["code_challenge_method"] == "S256"
    assert len(params["code_challenge"]) == 43
    assert params["resource"] == world.resource
    assert params["redirect_uri"] == REDIRECT
    assert params["scope"] == "mcp:read"
    assert "code_verifier" not in params


async def test_a_dead_refresh_token_asks_the_user_again(
    world: World, server: McpServer, oauth: McpOAuthClient, clock: FakeClock, browser: Browser
) -> None:
    await sign_in(oauth, ALICE, server, browser)
    for token in world.tokens.values():
        token.revoked = True
    clock.advance(world.token_lifetime + 1)
    with pytest.raises(AuthorizationRequired):
        await oauth.authorization_header(ALICE, server)
    assert world.grants["refresh_token"] == 1


async def test_tokens_stay_with_their_principal_and_tenant(
    server: McpServer, oauth: McpOAuthClient, browser: Browser
) -> None:
    await sign_in(oauth, ALICE, server, browser)
    assert await oauth.authorization_header(ALICE, server)

    for other in (Scope(tenant="acme", principal="bob"), Scope(tenant="globex", principal="alice")):
        with pytest.raises(AuthorizationRequired):
            await oauth.authorization_header(other, server)


async def test_a_callback_is_refused_when_its_state_does_not_match(
    world: World, server: McpServer, oauth: McpOAuthClient, browser: Browser
) -> None:
    callback = await authorize(oauth, ALICE, server, browser)
    code, state = callback["code"], callback["state"]

    await expect_oauth_error(
        "state_mismatch", oauth.complete_authorization(ALICE, server, code=code, state=state + "x")
    )

    # Another principal of the same tenant, or another tenant, cannot complete Alice's
    # authorization; the attempt burns the state, so it cannot be replayed either.
    await expect_oauth_error(
        "state_mismatch",
        oauth.complete_authorization(
            Scope(tenant="acme", principal="bob"), server, code=code, state=state
        ),
    )
    await expect_oauth_error(
        "state_mismatch", oauth.complete_authorization(ALICE, server, code=code, state=state)
    )

    second = callback_params(await browser(await oauth.begin_authorization(ALICE, server)))
    await expect_oauth_error(
        "state_mismatch",
        oauth.complete_authorization(
            Scope(tenant="globex", principal="alice"),
            server,
            code=second["code"],
            state=second["state"],
        ),
    )
    await expect_oauth_error(
        "state_mismatch",
        oauth.complete_authorization(
            ALICE,
            server.model_copy(update={"name": "elsewhere"}),
            code=second["code"],
            state=second["state"],
        ),
    )
    assert world.grants["authorization_code"] == 0


async def test_a_state_is_used_once_and_expires(
    server: McpServer, oauth: McpOAuthClient, clock: FakeClock, browser: Browser
) -> None:
    callback = await sign_in(oauth, ALICE, server, browser)
    await expect_oauth_error(
        "state_mismatch",
        oauth.complete_authorization(ALICE, server, code=callback["code"], state=callback["state"]),
    )

    late = callback_params(await browser(await oauth.begin_authorization(ALICE, server)))
    clock.advance(11 * 60)
    await expect_oauth_error(
        "state_mismatch",
        oauth.complete_authorization(ALICE, server, code=late["code"], state=late["state"]),
    )


async def test_a_callback_from_another_issuer_is_refused(
    server: McpServer, oauth: McpOAuthClient, browser: Browser
) -> None:
    callback = await authorize(oauth, ALICE, server, browser)
    await expect_oauth_error(
        "state_mismatch",
        oauth.complete_authorization(
            ALICE, server, code=callback["code"], state=callback["state"], iss="http://evil.test"
        ),
    )


async def test_insufficient_scope_asks_the_user_for_the_union(
    world: World, server: McpServer, oauth: McpOAuthClient, browser: Browser
) -> None:
    callback = await sign_in(oauth, ALICE, server, browser)
    header = await oauth.authorization_header(ALICE, server)

    refused = await call(world.resource, header, need="mcp:write")
    assert refused.status_code == 403
    with pytest.raises(AuthorizationRequired) as required:
        await oauth.on_unauthorized(ALICE, server, refused.headers["www-authenticate"], status=403)
    assert set(callback_params(required.value.url)["scope"].split()) == {"mcp:read", "mcp:write"}
    callback = callback_params(await browser(required.value.url))
    await oauth.complete_authorization(
        ALICE, server, code=callback["code"], state=callback["state"]
    )
    wider = await oauth.authorization_header(ALICE, server)
    assert (await call(world.resource, wider, need="mcp:write")).status_code == 200


async def test_a_preregistered_confidential_client_uses_its_secret(
    world: World, clock: FakeClock, factory: RecordingFactory, browser: Browser
) -> None:
    world.add_client(
        Client(
            client_id="web-app",
            client_secret="web-secret",
            token_endpoint_auth_method="client_secret_basic",
            grant_types=["authorization_code", "refresh_token"],
            redirect_uris=[REDIRECT],
            response_types=["code"],
        )
    )
    server = server_for(world, preregistered_client_id="web-app", client_secret_credential="web")
    oauth = make(clock, factory, secrets={"web": "web-secret"})
    await sign_in(oauth, ALICE, server, browser)
    header = await oauth.authorization_header(ALICE, server)
    assert (await call(world.resource, header)).json()["client"] == "web-app"
    assert world.registrations == []


async def test_authorization_code_needs_a_redirect_uri(
    world: World, clock: FakeClock, factory: RecordingFactory
) -> None:
    server = server_for(world, redirect_uris=[])
    await expect_oauth_error(
        "configuration", make(clock, factory).authorization_header(ALICE, server)
    )


async def test_a_server_without_pkce_s256_is_refused(
    world: World, clock: FakeClock, factory: RecordingFactory
) -> None:
    world.pkce_advertised = False
    await expect_oauth_error(
        "unsupported", make(clock, factory).begin_authorization(ALICE, server_for(world))
    )


class RecordingStore(InMemoryTokenStore):
    def __init__(self) -> None:
        super().__init__()
        self.verifiers: list[str] = []

    async def put_pending(self, pending: PendingAuthorization) -> None:
        self.verifiers.append(pending.code_verifier.get_secret_value())
        await super().put_pending(pending)


async def test_no_token_code_or_verifier_reaches_our_logs_or_errors(
    world: World,
    clock: FakeClock,
    factory: RecordingFactory,
    browser: Browser,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="psych_mcp")
    store = RecordingStore()
    oauth = McpOAuthClient(store, StaticSecretResolver({}), factory, clock=clock.now)
    server = server_for(world)
    callback = await sign_in(oauth, ALICE, server, browser)
    clock.advance(world.token_lifetime + 1)
    await oauth.authorization_header(ALICE, server)
    # The used code again, under a fresh state: the server refuses it.
    state = callback_params(await oauth.begin_authorization(ALICE, server))["state"]
    with pytest.raises(OAuthError) as reused:
        await oauth.complete_authorization(ALICE, server, code=callback["code"], state=state)
    errors = [str(reused.value), repr(reused.value)]
    assert reused.value.kind == "invalid_grant"

    secrets = [callback["code"], *store.verifiers]
    for token in world.tokens.values():
        secrets += [token.access_token, token.refresh_token or ""]
    for client in world.clients.values():
        secrets.append(client.client_secret or "")
    ours = [r.getMessage() for r in caplog.records if r.name.startswith("psych_mcp")]
    assert ours, "the client logs its steps"
    for text in ours + errors:
        for secret in filter(None, secrets):
            assert secret not in text


async def test_a_client_metadata_document_url_is_the_client_id_where_supported(
    world: World, clock: FakeClock, factory: RecordingFactory, browser: Browser
) -> None:
    document = "https://client.example/psych.json"
    # The test server does not fetch documents: it knows this client id already.
    world.add_client(
        Client(
            client_id=document,
            client_secret=None,
            token_endpoint_auth_method="none",
            grant_types=["authorization_code", "refresh_token"],
            redirect_uris=[REDIRECT],
            response_types=["code"],
        )
    )
    server = server_for(world, cimd_url=document)
    # Where the server does not advertise documents, the client registers instead.
    await make(clock, factory).begin_authorization(ALICE, server)
    assert len(world.registrations) == 1

    world.client_metadata_documents = True
    oauth = make(clock, factory)
    await sign_in(oauth, ALICE, server, browser)
    header = await oauth.authorization_header(ALICE, server)
    assert (await call(world.resource, header)).json()["client"] == document
    assert len(world.registrations) == 1
