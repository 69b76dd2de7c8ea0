"""Discovery of the authorization server, against the live servers."""

from datetime import timedelta

import httpx2
import pytest

from psych_mcp.oauth import InMemoryTokenStore
from psych_mcp.oauth import McpOAuthClient
from psych_runtime import Scope
from psych_runtime import StaticSecretResolver
from psych_runtime.spec import McpOAuth
from psych_runtime.spec import McpServer

from .authserver import ALICE
from .authserver import Client
from .authserver import FakeClock
from .authserver import RecordingFactory
from .authserver import World
from .authserver import bearer_value
from .authserver import call
from .authserver import expect_oauth_error


@pytest.fixture(autouse=True)
def service(world: World) -> Client:
    return world.add_service_client("svc-secret")


def server_at(url: str, **oauth: object) -> McpServer:
    settings = {"preregistered_client_id": "svc", "client_secret_credential": "svc", **oauth}
    return McpServer(name="tools", url=url, oauth=McpOAuth.model_validate(settings))


def make(clock: FakeClock, factory: RecordingFactory) -> McpOAuthClient:
    return McpOAuthClient(
        InMemoryTokenStore(),
        StaticSecretResolver({"svc": "svc-secret"}),
        factory,
        clock=clock.now,
    )


async def test_a_first_401_leads_to_a_token(
    world: World, clock: FakeClock, factory: RecordingFactory
) -> None:
    server = server_at(world.resource)
    oauth = make(clock, factory)
    refused = await call(world.resource, None)
    assert refused.status_code == 401
    assert await oauth.on_unauthorized(ALICE, server, refused.headers["www-authenticate"])
    header = await oauth.authorization_header(ALICE, server)
    assert (await call(world.resource, header)).status_code == 200
    assert world.grants["client_credentials"] == 1


async def test_openid_configuration_is_the_fallback(
    world: World, clock: FakeClock, factory: RecordingFactory
) -> None:
    world.metadata_style = "oidc"
    header = await make(clock, factory).authorization_header(ALICE, server_at(world.resource))
    assert (await call(world.resource, header)).status_code == 200
    assert world.hits["as-metadata"] == 1 and world.hits["openid-metadata"] == 1


async def test_metadata_is_cached_for_a_while(
    world: World, clock: FakeClock, factory: RecordingFactory
) -> None:
    oauth = make(clock, factory)
    server = server_at(world.resource)
    for _ in range(3):
        clock.advance(world.token_lifetime + 1)
        await oauth.authorization_header(ALICE, server)
    assert world.grants["client_credentials"] == 3
    assert world.hits["as-metadata"] == 1 and world.hits["resource-metadata"] == 1
    clock.advance(timedelta(hours=2).total_seconds())
    await oauth.authorization_header(ALICE, server)
    assert world.hits["as-metadata"] == 2 and world.hits["resource-metadata"] == 2


async def test_the_configured_issuer_serves_a_server_without_metadata(
    world: World, clock: FakeClock, factory: RecordingFactory
) -> None:
    server = server_at(world.legacy_resource, issuer=world.issuer)
    oauth = make(clock, factory)
    header = await oauth.authorization_header(ALICE, server)
    assert world.tokens[bearer_value(header)].resource == world.legacy_resource
    # With no metadata to list scopes, none were asked for: the server says which.
    refused = await call(world.legacy_resource, header)
    assert refused.status_code == 403
    challenge = refused.headers["www-authenticate"]
    assert await oauth.on_unauthorized(ALICE, server, challenge, status=403)
    header = await oauth.authorization_header(ALICE, server)
    assert (await call(world.legacy_resource, header)).status_code == 200


async def test_no_metadata_and_no_issuer_is_a_discovery_error(
    world: World, clock: FakeClock, factory: RecordingFactory
) -> None:
    await expect_oauth_error(
        "discovery",
        make(clock, factory).authorization_header(ALICE, server_at(world.legacy_resource)),
    )


async def test_an_issuer_the_server_does_not_list_is_refused(
    world: World, clock: FakeClock, factory: RecordingFactory
) -> None:
    server = server_at(world.resource, issuer="http://127.0.0.1:1")
    await expect_oauth_error("discovery", make(clock, factory).authorization_header(ALICE, server))
    assert world.grants.total() == 0


async def test_metadata_for_another_resource_is_refused(
    world: World, clock: FakeClock, factory: RecordingFactory
) -> None:
    server = server_at(world.legacy_resource, issuer=world.issuer)
    challenge = (
        f'Bearer resource_metadata="{world.resource_origin}'
        '/.well-known/oauth-protected-resource/mcp"'
    )
    await expect_oauth_error(
        "discovery", make(clock, factory).on_unauthorized(ALICE, server, challenge)
    )


async def test_redirects_are_not_followed(
    world: World, clock: FakeClock, factory: RecordingFactory
) -> None:
    # Even a client that would follow redirects by default must not follow them here.
    def following(scope: Scope) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(timeout=10, trust_env=False, follow_redirects=True)

    oauth = McpOAuthClient(InMemoryTokenStore(), StaticSecretResolver({}), following)
    server = server_at(f"{world.resource_origin}/redirected")
    await expect_oauth_error("discovery", oauth.authorization_header(ALICE, server))
    assert world.hits["redirected-metadata"] == 1
    assert world.hits["resource-metadata"] == 0


async def test_an_unreachable_server_is_a_transport_error(
    clock: FakeClock, factory: RecordingFactory
) -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = server_at(f"http://127.0.0.1:{port}/mcp")
    caught = await expect_oauth_error(
        "transport", make(clock, factory).authorization_header(ALICE, server)
    )
    assert str(port) in str(caught)
