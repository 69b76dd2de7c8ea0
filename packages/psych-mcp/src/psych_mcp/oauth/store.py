"""The TokenStore port and the in-memory store.

A store keeps three things for the OAuth client: access tokens per ``TokenKey``,
clients obtained by dynamic registration per (tenant, issuer), and pending browser
authorizations per ``state``. It applies no policy of its own (expiry, scope checks);
it must only never answer a lookup with a value stored under a different key.
"""

from typing import Protocol

from psych_mcp.oauth.models import PendingAuthorization
from psych_mcp.oauth.models import RegisteredClient
from psych_mcp.oauth.models import StoredToken
from psych_mcp.oauth.models import TokenKey


class TokenStore(Protocol):
    """Where the OAuth client keeps tokens, registered clients and pending requests."""

    async def get(self, key: TokenKey) -> StoredToken | None:
        """The token stored under ``key``, or None."""
        ...

    async def put(self, key: TokenKey, token: StoredToken) -> None:
        """Store ``token`` under ``key``, replacing any token already there."""
        ...

    async def delete(self, key: TokenKey) -> None:
        """Forget the token under ``key``; nothing happens when there is none."""
        ...

    async def get_client(self, tenant: str, issuer: str) -> RegisteredClient | None:
        """The client registered for ``tenant`` at ``issuer``, or None."""
        ...

    async def put_client(self, tenant: str, issuer: str, client: RegisteredClient) -> None:
        """Keep ``client`` as the registration of ``tenant`` at ``issuer``."""
        ...

    async def delete_client(self, tenant: str, issuer: str) -> None:
        """Forget the registration of ``tenant`` at ``issuer``."""
        ...

    async def put_pending(self, pending: PendingAuthorization) -> None:
        """Keep a pending authorization under its state.

        Implementations may drop pending authorizations that expired before
        ``pending.created_at`` while they are at it.
        """
        ...

    async def take_pending(self, state: str) -> PendingAuthorization | None:
        """Remove and return the pending authorization for ``state``, or None.

        Taking is atomic: two callers with the same state never both receive it, so a
        callback cannot be replayed.
        """
        ...


class InMemoryTokenStore:
    """A ``TokenStore`` in a dict: for tests and single-process programs.

    Everything is lost when the process ends; users must authorize again and clients
    registered dynamically are registered anew.
    """

    def __init__(self) -> None:
        self._tokens: dict[TokenKey, StoredToken] = {}
        self._clients: dict[tuple[str, str], RegisteredClient] = {}
        self._pending: dict[str, PendingAuthorization] = {}

    async def get(self, key: TokenKey) -> StoredToken | None:
        """The token stored under ``key``, or None."""
        return self._tokens.get(key)

    async def put(self, key: TokenKey, token: StoredToken) -> None:
        """Store ``token`` under ``key``, replacing any token already there."""
        self._tokens[key] = token

    async def delete(self, key: TokenKey) -> None:
        """Forget the token under ``key``."""
        self._tokens.pop(key, None)

    async def get_client(self, tenant: str, issuer: str) -> RegisteredClient | None:
        """The client registered for ``tenant`` at ``issuer``, or None."""
        return self._clients.get((tenant, issuer))

    async def put_client(self, tenant: str, issuer: str, client: RegisteredClient) -> None:
        """Keep ``client`` as the registration of ``tenant`` at ``issuer``."""
        self._clients[tenant, issuer] = client

    async def delete_client(self, tenant: str, issuer: str) -> None:
        """Forget the registration of ``tenant`` at ``issuer``."""
        self._clients.pop((tenant, issuer), None)

    async def put_pending(self, pending: PendingAuthorization) -> None:
        """Keep a pending authorization, dropping those already expired."""
        expired = [s for s, p in self._pending.items() if p.expires_at <= pending.created_at]
        for state in expired:
            del self._pending[state]
        self._pending[pending.state] = pending

    async def take_pending(self, state: str) -> PendingAuthorization | None:
        """Remove and return the pending authorization for ``state``, or None."""
        return self._pending.pop(state, None)

    def __repr__(self) -> str:
        return f"InMemoryTokenStore(tokens={len(self._tokens)}, clients={len(self._clients)})"


__all__ = ["InMemoryTokenStore", "TokenStore"]
