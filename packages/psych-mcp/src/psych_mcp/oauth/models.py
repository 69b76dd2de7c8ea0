"""What the OAuth client keeps between calls, and the keys it keeps it under.

Tokens belong to one tenant, one principal and one MCP server: a key holds all three,
so a store cannot hand tenant A's token to tenant B, or Alice's to Bob, unless it
ignores part of the key. A dynamically registered client belongs to one tenant and
one authorization server. A pending authorization (a browser step in progress) is
found by its ``state`` and remembers whose it is, so a callback for another tenant,
principal or server is refused.

Secret fields are ``pydantic.SecretStr`` so that a ``repr`` or a log line shows
asterisks. ``secret_dump`` and ``load`` are how a durable store writes the real values
and reads them back.
"""

from dataclasses import dataclass
from datetime import datetime
from datetime import timedelta
from typing import Any
from typing import Self
from urllib.parse import urlsplit
from urllib.parse import urlunsplit

from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import SecretStr

from psych_runtime import Scope
from psych_runtime.spec import McpServer


def canonical_resource(url: str) -> str:
    """The canonical form of a resource URL (RFC 8707, MCP authorization).

    The scheme and host are lower-cased, a default port and the fragment are dropped,
    and a bare ``/`` path is removed, so two spellings of one server share a key.

    Args:
        url: an absolute http(s) URL.

    Returns:
        The canonical URL.
    """
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    port = parts.port
    if port is not None and (scheme, port) not in {("http", 80), ("https", 443)}:
        host = f"{host}:{port}"
    path = "" if parts.path == "/" else parts.path
    return urlunsplit((scheme, host, path, parts.query, ""))


def split_scopes(scope: str | None) -> list[str]:
    """The scopes of a space-separated scope string, in order, without repeats."""
    seen: dict[str, None] = {}
    for item in (scope or "").split():
        seen.setdefault(item, None)
    return list(seen)


def union_scopes(*scopes: str | None) -> str | None:
    """Join scope strings, keeping the first occurrence of each scope.

    Args:
        *scopes: space-separated scope strings, or None.

    Returns:
        The union as a space-separated string, or None when it is empty.
    """
    joined = split_scopes(" ".join(s for s in scopes if s))
    return " ".join(joined) or None


def covers(granted: str | None, wanted: str | None) -> bool:
    """Whether the ``granted`` scopes include every scope in ``wanted``."""
    return set(split_scopes(wanted)) <= set(split_scopes(granted))


@dataclass(frozen=True, slots=True)
class TokenKey:
    """Whose token for which server: the key tokens are stored under.

    Attributes:
        tenant: the Scope's tenant.
        principal: the Scope's principal; None and ``""`` are different keys.
        server: the Spec-local name of the MCP server.
        resource: the server URL in canonical form.
    """

    tenant: str
    principal: str | None
    server: str
    resource: str

    @classmethod
    def of(cls, scope: Scope, server: McpServer) -> Self:
        """The key for ``server`` as used on behalf of ``scope``."""
        return cls(*scope.pool_key, server.name, canonical_resource(server.url or ""))


class _Stored(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    def secret_dump(self) -> dict[str, Any]:
        """A JSON-ready dict with the real values of secret fields, for durable stores."""
        data = self.model_dump(mode="json")
        for name in type(self).model_fields:
            value = getattr(self, name)
            if isinstance(value, SecretStr):
                data[name] = value.get_secret_value()
        return data

    @classmethod
    def load(cls, data: dict[str, Any]) -> Self:
        """The inverse of ``secret_dump``."""
        return cls.model_validate(data)


class StoredToken(_Stored):
    """An access token as obtained from an authorization server.

    Attributes:
        access_token: the bearer token.
        token_type: the type the server declared (only ``Bearer`` is used).
        expires_at: when the access token stops working (UTC), when the server said.
        refresh_token: the refresh token, when one was issued.
        scope: the scopes granted (or requested, when the server did not say).
        issuer: the authorization server that issued it.
        resource: the resource indicator it was requested for.
    """

    access_token: SecretStr
    token_type: str = "Bearer"
    expires_at: datetime | None = None
    refresh_token: SecretStr | None = None
    scope: str | None = None
    issuer: str | None = None
    resource: str | None = None

    def usable(self, now: datetime, margin: timedelta) -> bool:
        """Whether the access token is still good ``margin`` from ``now``."""
        return self.expires_at is None or now + margin < self.expires_at


class RegisteredClient(_Stored):
    """Client credentials obtained by dynamic client registration (RFC 7591).

    Attributes:
        client_id: the identifier the authorization server issued.
        client_secret: the secret it issued, for a confidential client.
        client_secret_expires_at: when the secret stops working; None for never.
        token_endpoint_auth_method: how the client authenticates at the token endpoint.
        grant_types: the grants it was registered for.
        redirect_uris: the redirect URIs it was registered with.
        issuer: the authorization server it is registered with.
    """

    client_id: str
    client_secret: SecretStr | None = None
    client_secret_expires_at: datetime | None = None
    token_endpoint_auth_method: str = "client_secret_basic"
    grant_types: tuple[str, ...] = ()
    redirect_uris: tuple[str, ...] = ()
    issuer: str


class PendingAuthorization(_Stored):
    """A browser authorization that was started and not yet completed.

    Attributes:
        state: the random value that ties the callback to this request.
        tenant: the tenant it was started for.
        principal: the principal it was started for.
        server: the Spec-local server name.
        server_url: the server URL in canonical form (the token key's resource).
        resource: the resource indicator sent to the authorization server.
        issuer: the authorization server the user was sent to.
        client_id: the client id used in the request.
        redirect_uri: the redirect URI used in the request.
        code_verifier: the PKCE verifier whose S256 hash was sent.
        scope: the scopes asked for.
        created_at: when it was started.
        expires_at: after when the callback is refused.
    """

    state: str
    tenant: str
    principal: str | None
    server: str
    server_url: str
    resource: str
    issuer: str
    client_id: str
    redirect_uri: str
    code_verifier: SecretStr
    scope: str | None = None
    created_at: datetime
    expires_at: datetime

    def belongs_to(self, key: TokenKey) -> bool:
        """Whether this authorization was started for ``key``."""
        return (self.tenant, self.principal, self.server, self.server_url) == (
            key.tenant,
            key.principal,
            key.server,
            key.resource,
        )


__all__ = [
    "PendingAuthorization",
    "RegisteredClient",
    "StoredToken",
    "TokenKey",
    "canonical_resource",
    "covers",
    "split_scopes",
    "union_scopes",
]
