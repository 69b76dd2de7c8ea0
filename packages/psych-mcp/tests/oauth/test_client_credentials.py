"""The client_credentials grant against a live authlib authorization server."""

import logging

import pytest

from psych_mcp.oauth import InMemoryTokenStore
from psych_mcp.oauth import McpOAuthClient
from psych_mcp.oauth import SqliteTokenStore
from psych_mcp.oauth import TokenKey
from psych_runtime import ResolvedCredential
from psych_runtime import Scope
from psych_runtime import StaticSecretResolver
from psych_runtime.spec import McpOAuth
from psych_runtime.spec import McpServer

from .authserver import ALICE
from .authserver import FakeClock
from .authserver import RecordingFactory
from .authserver import World
from .authserver import bearer_value
from .authserver import call
from .authserver import expect_oauth_error
from .authserver import renewed_after_expiry

SECRET = "s3cret-for-acme"


def server_for(world: World, **oauth: object) -> McpServer:
    settings = {"grant": "client_credentials", **oauth}
    return McpServer(name="tools", url=world.resource, oauth=McpOAuth.model_validate(settings))


def service_server(world: World) -> McpServer:
    """A server reached as the preregistered ``svc`` client, its secret resolvable."""
    world.add_service_client(SECRET)
    return server_for(world, preregistered_client_id="svc", client_secret_credential="svc-secret")


def make(
    clock: FakeClock,
    factory: RecordingFactory,
    secrets: object | None = None,
    store: object | None = None,
) -> McpOAuthClient:
    return McpOAuthClient(
        store or InMemoryTokenStore(),  # type: ignore[arg-type]
        secrets or StaticSecretResolver({"svc-secret": SECRET}),  # type: ignore[arg-type]
        factory,
        clock=clock.now,
    )


@pytest.fixture
def server(world: World) -> McpServer:
    """The server of ``service_server``."""
    return service_server(world)


async def test_a_token_is_fetched_cached_and_accepted(
    world: World, server: McpServer, oauth: McpOAuthClient, factory: RecordingFactory
) -> None:
    header = await oauth.authorization_header(ALICE, server)
    assert header is not None and header.startswith("Bearer ")
    answer = await call(world.resource, header)
    assert answer.status_code == 200, answer.headers
    assert answer.json()["client"] == "svc"
    assert world.grants["client_credentials"] == 1

    assert await oauth.authorization_header(ALICE, server) == header
    assert world.grants["client_credentials"] == 1
    # Every request went through the injected factory, for the caller's Scope.
    assert factory.scopes and all(s == ALICE for s in factory.scopes)
    # The resource indicator reached the server: the resource checks the audience.
    token = world.tokens[bearer_value(header)]
    assert token.resource == world.resource


async def test_an_expired_token_is_replaced(
    world: World, server: McpServer, oauth: McpOAuthClient, clock: FakeClock
) -> None:
    first = await oauth.authorization_header(ALICE, server)
    assert first is not None
    await renewed_after_expiry(world, clock, oauth, server, first)
    assert world.grants["client_credentials"] == 2


async def test_a_server_without_oauth_gets_no_header(
    clock: FakeClock, factory: RecordingFactory
) -> None:
    oauth = make(clock, factory)
    plain = McpServer(name="plain", url="http://127.0.0.1:9/mcp")
    assert await oauth.authorization_header(ALICE, plain) is None
    assert await oauth.on_unauthorized(ALICE, plain, 'Bearer error="invalid_token"') is False
    assert factory.urls == []


class PerTenantSecrets:
    """A SecretResolver whose values differ by tenant, like a real vault."""

    def __init__(self, values: dict[tuple[str, str], str]) -> None:
        self.values = values
        self.asked: list[tuple[str, str]] = []

    async def resolve(self, scope: Scope, name: str) -> ResolvedCredential | None:
        from pydantic import SecretStr

        self.asked.append((scope.tenant, name))
        value = self.values.get((scope.tenant, name))
        return None if value is None else ResolvedCredential(identity=name, secret=SecretStr(value))


async def test_the_secret_is_resolved_by_name_for_each_tenant(
    world: World, clock: FakeClock, factory: RecordingFactory, caplog: pytest.LogCaptureFixture
) -> None:
    world.add_service_client(SECRET)
    wrong = "not-the-secret-of-svc"
    secrets = PerTenantSecrets({("acme", "svc-secret"): SECRET, ("globex", "svc-secret"): wrong})
    server = server_for(world, preregistered_client_id="svc", client_secret_credential="svc-secret")
    oauth = make(clock, factory, secrets=secrets)
    caplog.set_level(logging.DEBUG, logger="psych_mcp")

    assert await oauth.authorization_header(ALICE, server)
    globex = Scope(tenant="globex", principal="alice")
    caught = await expect_oauth_error("invalid_client", oauth.authorization_header(globex, server))
    assert caught.status == 401
    assert ("acme", "svc-secret") in secrets.asked and ("globex", "svc-secret") in secrets.asked
    # The secret shows up nowhere: not in the error, not in our log lines.
    for text in (str(caught), repr(caught), caplog.text):
        assert wrong not in text and SECRET not in text


async def test_a_missing_secret_is_a_typed_error(
    world: World, clock: FakeClock, factory: RecordingFactory
) -> None:
    world.add_service_client(SECRET)
    server = server_for(world, preregistered_client_id="svc", client_secret_credential="absent")
    oauth = make(clock, factory)
    await expect_oauth_error("missing_credential", oauth.authorization_header(ALICE, server))
    assert world.grants["client_credentials"] == 0


async def test_client_secret_post_is_used_when_basic_is_not_offered(
    world: World, clock: FakeClock, factory: RecordingFactory
) -> None:
    client = world.add_service_client(SECRET)
    client.token_endpoint_auth_method = "client_secret_post"
    world.auth_methods = ["client_secret_post"]
    server = server_for(world, preregistered_client_id="svc", client_secret_credential="svc-secret")
    header = await make(clock, factory).authorization_header(ALICE, server)
    assert (await call(world.resource, header)).status_code == 200


async def test_insufficient_scope_steps_up_to_the_union(
    world: World, server: McpServer, oauth: McpOAuthClient
) -> None:
    header = await oauth.authorization_header(ALICE, server)
    assert world.tokens[bearer_value(header)].scope == "mcp:read"

    refused = await call(world.resource, header, need="mcp:write")
    assert refused.status_code == 403
    challenge = refused.headers["www-authenticate"]
    assert await oauth.on_unauthorized(ALICE, server, challenge, status=403) is True

    wider = await oauth.authorization_header(ALICE, server)
    assert wider != header
    assert set(world.tokens[bearer_value(wider)].scope.split()) == {
        "mcp:read",
        "mcp:write",
    }
    assert (await call(world.resource, wider, need="mcp:write")).status_code == 200
    assert (await call(world.resource, wider, need="mcp:read")).status_code == 200
    # Asked again for scopes the token already has, a new token would not help.
    again = 'Bearer error="insufficient_scope", scope="mcp:write"'
    assert await oauth.on_unauthorized(ALICE, server, again, status=403) is False
    assert await oauth.on_unauthorized(ALICE, server, None, status=403) is False


async def test_a_401_replaces_a_revoked_token(
    world: World, server: McpServer, oauth: McpOAuthClient
) -> None:
    header = await oauth.authorization_header(ALICE, server)
    world.tokens[bearer_value(header)].revoked = True

    refused = await call(world.resource, header)
    assert refused.status_code == 401
    assert await oauth.on_unauthorized(ALICE, server, refused.headers["www-authenticate"])
    fresh = await oauth.authorization_header(ALICE, server)
    assert fresh != header
    assert (await call(world.resource, fresh)).status_code == 200


async def test_tokens_never_cross_tenants_or_principals(
    world: World, clock: FakeClock, factory: RecordingFactory
) -> None:
    server = service_server(world)
    store = InMemoryTokenStore()
    oauth = make(clock, factory, store=store)
    scopes = [
        ALICE,
        Scope(tenant="acme", principal="bob"),
        Scope(tenant="acme"),
        Scope(tenant="globex", principal="alice"),
    ]
    headers = [await oauth.authorization_header(s, server) for s in scopes]
    assert len(set(headers)) == len(scopes)
    for scope, header in zip(scopes, headers, strict=True):
        stored = await store.get(TokenKey.of(scope, server))
        assert stored is not None
        assert f"Bearer {stored.access_token.get_secret_value()}" == header


async def test_dynamic_registration_survives_a_restart(
    world: World, clock: FakeClock, factory: RecordingFactory, tmp_path: object
) -> None:
    from pathlib import Path

    path = Path(str(tmp_path)) / "oauth.sqlite"
    server = server_for(world, client_name="psych tests")

    async with SqliteTokenStore(path) as store:
        oauth = make(clock, factory, store=store)
        header = await oauth.authorization_header(ALICE, server)
        assert (await call(world.resource, header)).status_code == 200
    assert len(world.registrations) == 1
    sent = world.registrations[0]
    assert sent["grant_types"] == ["client_credentials"]
    assert sent["client_name"] == "psych tests"
    registered = next(iter(world.clients.values()))

    clock.advance(world.token_lifetime + 1)
    async with SqliteTokenStore(path) as reopened:
        oauth = make(clock, factory, store=reopened)
        header = await oauth.authorization_header(ALICE, server)
        assert (await call(world.resource, header)).status_code == 200
        assert world.tokens[bearer_value(header)].client is registered
        assert len(world.registrations) == 1

        # Another tenant registers a client of its own.
        await oauth.authorization_header(Scope(tenant="globex"), server)
        assert len(world.registrations) == 2


async def test_a_forgotten_registration_is_renewed(
    world: World, clock: FakeClock, factory: RecordingFactory
) -> None:
    server = server_for(world)
    oauth = make(clock, factory)
    await oauth.authorization_header(ALICE, server)
    world.clients.clear()  # the authorization server lost its client database
    clock.advance(world.token_lifetime + 1)
    await expect_oauth_error("invalid_client", oauth.authorization_header(ALICE, server))
    header = await oauth.authorization_header(ALICE, server)
    assert (await call(world.resource, header)).status_code == 200
    assert len(world.registrations) == 2


async def test_registration_must_be_allowed(
    world: World, clock: FakeClock, factory: RecordingFactory
) -> None:
    server = server_for(world, allow_dynamic_registration=False)
    await expect_oauth_error(
        "configuration", make(clock, factory).authorization_header(ALICE, server)
    )
    assert world.registrations == []


async def test_concurrent_callers_share_one_token_request(
    world: World, clock: FakeClock, factory: RecordingFactory
) -> None:
    import asyncio

    server = service_server(world)
    oauth = make(clock, factory)
    headers = await asyncio.gather(*(oauth.authorization_header(ALICE, server) for _ in range(5)))
    assert len(set(headers)) == 1
    assert world.grants["client_credentials"] == 1
