"""Agent Runs on real Workers using an MCP server behind OAuth 2.1, through ``McpTools``.

The authorization server is the authlib one of ``tests/oauth/authserver.py``; the MCP
server is an ``McpStubServer`` that publishes protected resource metadata naming it and
checks every bearer token against it (audience, expiry on the shared fake clock,
scopes). What reached the server and what each Run recorded is checked.
"""

from collections.abc import AsyncIterator
from collections.abc import Iterator
from typing import Any

import pytest

from psych_mcp import McpPool
from psych_mcp import McpStubServer
from psych_mcp import McpTools
from psych_mcp.oauth import InMemoryTokenStore
from psych_mcp.oauth import TokenKey
from psych_runtime import AgentSpec
from psych_runtime import ResolvedCredential
from psych_runtime import Scope
from psych_runtime import StaticSecretResolver
from psych_runtime import TerminalState
from psych_runtime import dispatch
from psych_runtime import publish
from psych_runtime.spec import McpOAuth
from psych_runtime.spec import McpServer
from psych_runtime.testing import FakeModel

from ..oauth.authserver import Client
from ..oauth.authserver import FakeClock
from ..oauth.authserver import World
from ..oauth.authserver import bearer_value
from ..oauth.authserver import browse
from ..oauth.authserver import callback_params
from ..oauth.authserver import running as running_world
from .conftest import ACME
from .conftest import GLOBEX
from .conftest import LOOPBACK
from .conftest import finishes
from .conftest import run_once
from .conftest import settled_log
from .conftest import working

SECRET = "s3cret-for-the-service"
REDIRECT = "http://127.0.0.1:8976/callback"


@pytest.fixture
def world() -> Iterator[World]:
    with running_world(World(FakeClock()), resource=False) as world:
        world.add_client(
            Client(
                client_id="svc",
                client_secret=SECRET,
                token_endpoint_auth_method="client_secret_basic",
                grant_types=["client_credentials"],
            )
        )
        world.add_client(
            Client(
                client_id="app",
                client_secret=None,
                token_endpoint_auth_method="none",
                grant_types=["authorization_code", "refresh_token"],
                redirect_uris=[REDIRECT],
                response_types=["code"],
            )
        )
        yield world


@pytest.fixture
async def crm(world: World) -> AsyncIterator[McpStubServer]:
    """An MCP server protected by ``world``'s authorization server."""
    metadata = {"authorization_servers": [world.issuer], "scopes_supported": ["mcp:read"]}
    async with McpStubServer(token_check=world.scopes_of, resource_metadata=metadata) as server:
        world.resource_origin = server.url.removesuffix("/mcp")
        assert world.resource == server.url
        yield server


def _server(crm: McpStubServer, **oauth: Any) -> McpServer:
    settings: dict[str, Any] = {
        "grant": "client_credentials",
        "preregistered_client_id": "svc",
        "client_secret_credential": "crm-secret",
        **oauth,
    }
    return McpServer(name="crm", url=crm.url, oauth=McpOAuth.model_validate(settings))


def _browser_server(crm: McpStubServer) -> McpServer:
    """``crm`` behind the ``authorization_code`` grant, as the preregistered public ``app``."""
    return _server(
        crm,
        grant="authorization_code",
        preregistered_client_id="app",
        client_secret_credential=None,
        redirect_uris=[REDIRECT],
    )


def _spec(server: McpServer) -> AgentSpec:
    return AgentSpec(name="ops", model="fake-standard", mcp_servers=(server,))


def _tools(store: InMemoryTokenStore | None = None) -> McpTools:
    return McpTools(
        egress=LOOPBACK,
        secrets=StaticSecretResolver({"crm-secret": SECRET}),
        token_store=store if store is not None else InMemoryTokenStore(),
    )


async def test_client_credentials_token_reaches_the_server(
    world: World, crm: McpStubServer
) -> None:
    crm.tool("find", lambda arguments: {"found": arguments["q"]})
    model = FakeModel().turn(tool_calls=[("crm__find", {"q": "ada"})]).turn(text="Found.")
    log = await run_once(_spec(_server(crm)), model, _tools())
    assert log[-1].state is TerminalState.COMPLETED
    [call] = crm.calls
    token = world.tokens[bearer_value(call.authorization)]
    assert token.client.client_id == "svc" and token.resource == crm.url
    assert token.scope == "mcp:read"
    assert world.grants["client_credentials"] == 1
    assert finishes(log)[0].result["structured"] == {"found": "ada"}
    # Nothing the model saw carries the token.
    assert all(bearer_value(call.authorization) not in str(r.messages) for r in model.requests)


async def test_an_expired_token_is_fetched_again_and_the_call_retried(
    world: World, crm: McpStubServer
) -> None:
    def find(arguments: dict[str, Any]) -> str:
        if len(crm.calls) == 1:
            world.clock.advance(world.token_lifetime + 60)  # the token dies after this call
        return "found"

    crm.tool("find", find)
    model = (
        FakeModel()
        .turn(tool_calls=[("crm__find", {})])
        .turn(tool_calls=[("crm__find", {})])
        .turn(text="Done.")
    )
    tools = _tools()
    async with working(model, tools) as (store, _):
        version = await publish(store, _spec(_server(crm)), scope=ACME)
        run = await dispatch(store, version, "Go.", scope=ACME)
        log = await settled_log(store, run.run_id)
        # The connection with the dead token was closed: one connection, the new token.
        [key] = tools.open_connections
    assert log[-1].state is TerminalState.COMPLETED
    assert [f.outcome.value for f in finishes(log)] == ["ok", "ok"]
    first, second = (bearer_value(call.authorization) for call in crm.calls)
    assert first != second
    assert world.grants["client_credentials"] == 2
    assert key.credential is not None and key.credential.startswith("oauth:")
    assert first not in key.credential and second not in key.credential


async def test_step_up_for_a_tool_that_needs_a_wider_scope(
    world: World, crm: McpStubServer
) -> None:
    crm.tool("delete", "deleted", scopes=("mcp:write",))
    model = FakeModel().turn(tool_calls=[("crm__delete", {"id": 7})]).turn(text="Deleted.")
    log = await run_once(_spec(_server(crm)), model, _tools())
    assert log[-1].state is TerminalState.COMPLETED
    [finished] = finishes(log)
    assert finished.outcome.value == "ok" and finished.result == {"text": "deleted"}
    # The first attempt was refused with 403 insufficient_scope before reaching the
    # tool; the one that reached it carried a token with the wider scope.
    [call] = crm.calls
    granted = world.tokens[bearer_value(call.authorization)].scope.split()
    assert {"mcp:read", "mcp:write"} <= set(granted)
    assert world.grants["client_credentials"] == 2


async def test_authorization_code_needs_a_person_then_works(
    world: World, crm: McpStubServer
) -> None:
    crm.tool("find", "found")
    server = _browser_server(crm)
    spec = _spec(server)
    store = InMemoryTokenStore()
    failed = await run_once(spec, FakeModel(), _tools(store))
    settled = failed[-1]
    assert settled.state is TerminalState.FAILED
    assert settled.failure.kind == "tool_resolution" and not settled.failure.transient
    assert "authorize" in settled.failure.message and "crm" in settled.failure.message
    assert world.issuer not in settled.failure.message  # no authorization URL
    assert crm.calls == ()

    # The consumer's web route: send the user to the URL, complete with the callback.
    tools = _tools(store)
    url = await tools.begin_authorization(ACME, server)
    assert url.startswith(f"{world.issuer}/authorize?")
    callback = callback_params(await browse(url))
    assert callback.keys() >= {"code", "state"}
    await tools.complete_authorization(ACME, server, code=callback["code"], state=callback["state"])
    assert await store.get(TokenKey.of(ACME, server)) is not None

    model = FakeModel().turn(tool_calls=[("crm__find", {})]).turn(text="Found.")
    log = await run_once(spec, model, tools)
    assert log[-1].state is TerminalState.COMPLETED
    [call] = crm.calls
    assert world.tokens[bearer_value(call.authorization)].user == "alice"


async def test_an_optional_server_awaiting_authorization_is_an_advisory(
    world: World, crm: McpStubServer
) -> None:
    server = _browser_server(crm).model_copy(update={"optional": True})
    model = FakeModel().turn(text="Fine without it.")
    log = await run_once(_spec(server), model, _tools())
    assert log[-1].state is TerminalState.COMPLETED
    system = model.requests[0].messages[0].content
    assert "The MCP server crm is unavailable this turn" in system
    assert "authorize" in system and world.issuer not in system


async def test_two_tenants_get_their_own_tokens(world: World, crm: McpStubServer) -> None:
    class Both:
        async def resolve(self, scope: Scope, name: str) -> ResolvedCredential | None:
            if scope.tenant not in {"acme", "globex"}:
                return None
            return await StaticSecretResolver({"crm-secret": SECRET}).resolve(scope, name)

    crm.tool("whoami", lambda arguments: arguments["tenant"])
    server = _server(crm)
    store = InMemoryTokenStore()
    tools = McpTools(egress=LOOPBACK, secrets=Both(), token_store=store)
    model = (
        FakeModel()
        .turn(tool_calls=[("crm__whoami", {"tenant": "acme"})])
        .turn(text="Done.")
        .turn(tool_calls=[("crm__whoami", {"tenant": "globex"})])
        .turn(text="Done.")
    )
    async with working(model, tools) as (runs, _):
        for scope in (ACME, GLOBEX):
            version = await publish(runs, _spec(server), scope=scope)
            run = await dispatch(runs, version, "Go.", scope=scope)
            assert (await settled_log(runs, run.run_id))[-1].state is TerminalState.COMPLETED
        keys = tools.open_connections
    assert {key.tenant for key in keys} == {"acme", "globex"}
    assert len({key.credential for key in keys}) == 2
    seen = {call.arguments["tenant"]: bearer_value(call.authorization) for call in crm.calls}
    for scope in (ACME, GLOBEX):
        stored = await store.get(TokenKey.of(scope, server))
        assert stored is not None
        assert seen[scope.tenant] == stored.access_token.get_secret_value()
    assert seen["acme"] != seen["globex"]
    assert world.grants["client_credentials"] == 2


async def test_the_pools_identity_serves_a_server_whose_spec_names_no_oauth(
    world: World, crm: McpStubServer
) -> None:
    crm.tool("find", "found")
    plain = McpServer(name="crm", url=crm.url)  # the Spec says nothing about OAuth
    pool = McpPool(
        egress=LOOPBACK,
        secrets=StaticSecretResolver({"crm-secret": SECRET}),
        oauth_identity=McpOAuth(
            preregistered_client_id="svc", client_secret_credential="crm-secret"
        ),
        oauth_grant="client_credentials",
    )
    model = FakeModel().turn(tool_calls=[("crm__find", {})]).turn(text="Found.")
    log = await run_once(_spec(plain), model, McpTools(pool))
    assert log[-1].state is TerminalState.COMPLETED
    [call] = crm.calls
    assert world.tokens[bearer_value(call.authorization)].client.client_id == "svc"
    assert world.grants["client_credentials"] == 1


async def test_without_an_identity_the_failure_says_the_server_wants_oauth(
    world: World, crm: McpStubServer
) -> None:
    crm.tool("find", "found")
    model = FakeModel().turn(text="unused")
    log = await run_once(
        _spec(McpServer(name="crm", url=crm.url)), model, McpTools(McpPool(egress=LOOPBACK))
    )
    assert log[-1].state is TerminalState.FAILED
    assert log[-1].failure.kind == "tool_resolution"
    assert "wants OAuth" in log[-1].failure.message and "401" in log[-1].failure.message
    assert not crm.calls and world.grants["client_credentials"] == 0
