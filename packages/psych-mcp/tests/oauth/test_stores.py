"""The TokenStore contract, run against every store."""

import os
import stat
from collections.abc import AsyncIterator
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from pathlib import Path

import pytest
from pydantic import SecretStr

from psych_mcp.oauth import InMemoryTokenStore
from psych_mcp.oauth import PendingAuthorization
from psych_mcp.oauth import RegisteredClient
from psych_mcp.oauth import SqliteTokenStore
from psych_mcp.oauth import StoredToken
from psych_mcp.oauth import TokenKey
from psych_mcp.oauth import TokenStore

NOW = datetime(2031, 5, 6, 7, 8, 9, 123456, tzinfo=UTC)
KEY = TokenKey("acme", "alice", "tools", "https://mcp.example/mcp")


def token(value: str, **extra: object) -> StoredToken:
    fields: dict[str, object] = {
        "access_token": SecretStr(value),
        "expires_at": NOW + timedelta(minutes=5),
        "refresh_token": SecretStr(f"refresh-{value}"),
        "scope": "mcp:read mcp:write",
        "issuer": "https://auth.example",
        "resource": "https://mcp.example/mcp",
        **extra,
    }
    return StoredToken.model_validate(fields)


def pending(state: str, *, created: datetime = NOW, tenant: str = "acme") -> PendingAuthorization:
    return PendingAuthorization(
        state=state,
        tenant=tenant,
        principal="alice",
        server="tools",
        server_url="https://mcp.example/mcp",
        resource="https://mcp.example/mcp",
        issuer="https://auth.example",
        client_id="client-1",
        redirect_uri="http://127.0.0.1:1/cb",
        code_verifier=SecretStr(f"verifier-{state}"),
        scope="mcp:read",
        created_at=created,
        expires_at=created + timedelta(minutes=10),
    )


@pytest.fixture(params=["memory", "sqlite"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[TokenStore]:
    if request.param == "memory":
        yield InMemoryTokenStore()
        return
    sqlite = SqliteTokenStore(tmp_path / "tokens.sqlite")
    yield sqlite
    await sqlite.close()


async def test_a_token_round_trips_with_its_expiry_and_secrets(store: TokenStore) -> None:
    assert await store.get(KEY) is None
    original = token("abc")
    await store.put(KEY, original)
    loaded = await store.get(KEY)
    assert loaded == original
    assert loaded is not None
    assert loaded.expires_at == NOW + timedelta(minutes=5)
    assert loaded.expires_at.tzinfo is not None
    assert loaded.access_token.get_secret_value() == "abc"
    assert loaded.refresh_token is not None
    assert loaded.refresh_token.get_secret_value() == "refresh-abc"
    bare = token("bare", expires_at=None, refresh_token=None, scope=None)
    await store.put(KEY, bare)
    assert await store.get(KEY) == bare


async def test_keys_isolate_tenants_principals_servers_and_urls(store: TokenStore) -> None:
    keys = [
        KEY,
        TokenKey("globex", "alice", "tools", KEY.resource),
        TokenKey("acme", "bob", "tools", KEY.resource),
        TokenKey("acme", None, "tools", KEY.resource),
        TokenKey("acme", "", "tools", KEY.resource),
        TokenKey("acme", "alice", "other", KEY.resource),
        TokenKey("acme", "alice", "tools", "https://mcp.example/other"),
    ]
    for i, key in enumerate(keys):
        await store.put(key, token(f"t{i}"))
    for i, key in enumerate(keys):
        found = await store.get(key)
        assert found is not None and found.access_token.get_secret_value() == f"t{i}"


async def test_put_overwrites_and_delete_forgets(store: TokenStore) -> None:
    other = TokenKey("acme", "bob", "tools", KEY.resource)
    await store.put(KEY, token("old"))
    await store.put(other, token("bob"))
    await store.put(KEY, token("new"))
    assert (await store.get(KEY)) == token("new")
    await store.delete(KEY)
    assert await store.get(KEY) is None
    await store.delete(KEY)
    assert await store.get(other) == token("bob")


async def test_registered_clients_are_kept_per_tenant_and_issuer(store: TokenStore) -> None:
    client = RegisteredClient(
        client_id="c1",
        client_secret=SecretStr("cs1"),
        client_secret_expires_at=NOW,
        token_endpoint_auth_method="client_secret_post",
        grant_types=("client_credentials",),
        issuer="https://auth.example",
    )
    await store.put_client("acme", "https://auth.example", client)
    assert await store.get_client("acme", "https://auth.example") == client
    assert await store.get_client("globex", "https://auth.example") is None
    assert await store.get_client("acme", "https://other.example") is None
    await store.delete_client("acme", "https://auth.example")
    assert await store.get_client("acme", "https://auth.example") is None


async def test_a_pending_authorization_is_taken_once(store: TokenStore) -> None:
    await store.put_pending(pending("s1"))
    await store.put_pending(pending("s2", tenant="globex"))
    taken = await store.take_pending("s1")
    assert taken == pending("s1")
    assert taken is not None and taken.code_verifier.get_secret_value() == "verifier-s1"
    assert await store.take_pending("s1") is None
    assert await store.take_pending("unknown") is None
    assert await store.take_pending("s2") == pending("s2", tenant="globex")


async def test_expired_pending_authorizations_are_dropped(store: TokenStore) -> None:
    await store.put_pending(pending("old"))
    await store.put_pending(pending("new", created=NOW + timedelta(hours=1)))
    assert await store.take_pending("old") is None
    assert await store.take_pending("new") is not None


async def test_sqlite_keeps_everything_across_reopening(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "tokens.sqlite"
    async with SqliteTokenStore(path) as first:
        await first.put(KEY, token("durable"))
        await first.put_client(
            "acme", "https://auth.example", RegisteredClient(client_id="c", issuer="x")
        )
        await first.put_pending(pending("s"))
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    async with SqliteTokenStore(path) as second:
        assert await second.get(KEY) == token("durable")
        assert await second.get_client("acme", "https://auth.example") == RegisteredClient(
            client_id="c", issuer="x"
        )
        assert await second.take_pending("s") == pending("s")
    with pytest.raises(RuntimeError):
        await second.get(KEY)


async def test_secrets_do_not_show_in_reprs() -> None:
    shown = repr(token("very-secret-token")) + repr(pending("st"))
    assert "very-secret-token" not in shown
    assert "verifier-st" not in shown
