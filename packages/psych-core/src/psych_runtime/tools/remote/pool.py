"""``RemotePool``: the connections of one kind of remote tool source, for the whole process.

One pool serves every Run of every tenant. Who may share a connection is decided
only by its key, which a pool builds from the Run's Scope (tenant and principal),
the endpoint's name in the Spec and a digest of the credential the connection
carries, never from the URL alone. So one tenant's connection, and the token in it,
is never handed to another, whichever way the pools are wired.

What every pool does the same way lives here: the bounded LRU of connections with
idle expiry (``ConnectionPool``), looking a credential up for the Run's tenant, asking
the egress policy before anything is sent, and dropping a connection a failure
leaves in doubt. A pool for one protocol adds how to open a connection and what to
do with it.
"""

import hashlib
from abc import abstractmethod
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Hashable
from dataclasses import dataclass
from typing import ClassVar

from psych_runtime._closing import ClosedOnExit
from psych_runtime.core.scope import Scope
from psych_runtime.egress.policy import EgressDecider
from psych_runtime.egress.policy import EgressDenied
from psych_runtime.egress.policy import EgressPolicy
from psych_runtime.egress.policy import check_egress
from psych_runtime.egress.transport import HttpTransport
from psych_runtime.tools.pool import ConnectionPool
from psych_runtime.tools.pool import Poolable
from psych_runtime.tools.remote.failures import RemoteError
from psych_runtime.tools.remote.failures import RemoteFailure
from psych_runtime.tools.remote.names import Endpoint
from psych_runtime.tools.secrets import SecretResolver

type AnyPolicy = EgressPolicy | EgressDecider
"""What may judge a remote source's requests: a policy, or any callable of its shape."""


def credential_digest(value: str | None) -> str | None:
    """A SHA-256 digest standing for a credential in a pool key (never the secret itself)."""
    return None if value is None else hashlib.sha256(value.encode()).hexdigest()


@dataclass(slots=True)
class Catalogue[T]:
    """What an endpoint offers, as last listed, reused while it is fresh.

    Attributes:
        value: the listing, or None before the first.
        listed_at: when it was listed (monotonic seconds).
        stale: the endpoint announced a change since; the next use lists again.
    """

    value: T | None = None
    listed_at: float = 0.0
    stale: bool = False

    def fresh(self, ttl: float, now: float) -> T | None:
        """The listing when it is at most ``ttl`` seconds old and not stale; else None."""
        if self.value is None or self.stale or not ttl or now - self.listed_at > ttl:
            return None
        return self.value

    def keep(self, value: T, now: float) -> None:
        """Remember ``value`` as listed at ``now``."""
        self.value, self.listed_at, self.stale = value, now, False

    def invalidate(self) -> None:
        """Forget freshness: the endpoint said its offer changed."""
        self.stale = True


class RemotePool[E: Endpoint, K: Hashable, C: Poolable](ClosedOnExit):
    """Connections to the endpoints of one protocol, by key, bounded and closed when idle.

    Args:
        transport: the Runtime's ``HttpTransport``; its egress policy judges every
            request the pool's connections make.
        egress: the policy to use when no ``transport`` is given; ``EgressPolicy()``
            (which refuses private and loopback addresses) when neither is.
        secrets: where an endpoint's ``credential`` is looked up for the Run's tenant;
            without one, an endpoint that names a credential cannot be used.
        ttl_seconds: how long an endpoint's catalogue is reused before it is asked
            again; 0 asks every time.
        max_connections: how many connections stay open at once; past it the least
            recently used is closed.
        idle_seconds: how long an unused connection stays open.
        timeout_seconds: how long opening a connection, and each request, may take.

    Raises:
        ValueError: a limit is out of range, or both ``transport`` and ``egress``
            are given.
    """

    noun: ClassVar[str] = "endpoint"
    """How the endpoints are called in messages (``MCP server``, ``agent``)."""

    ttl_name: ClassVar[str] = "ttl_seconds"
    """What the subclass calls ``ttl_seconds`` in its own signature, for error messages."""

    def __init__(
        self,
        *,
        transport: HttpTransport | None = None,
        egress: AnyPolicy | None = None,
        secrets: SecretResolver | None = None,
        ttl_seconds: float = 300.0,
        max_connections: int = 64,
        idle_seconds: float = 300.0,
        timeout_seconds: float = 30.0,
    ) -> None:
        if transport is not None and egress is not None:
            raise ValueError("pass transport or egress, not both (the transport's policy is used)")
        if transport is not None and not isinstance(transport, HttpTransport):
            raise TypeError(f"transport must be an HttpTransport, not {type(transport).__name__}")
        for name, value in ((self.ttl_name, ttl_seconds), ("idle_seconds", idle_seconds)):
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise ValueError(f"{name} must be a number of seconds, not {value!r}")
        if isinstance(timeout_seconds, bool) or not isinstance(timeout_seconds, int | float):
            raise ValueError(
                f"timeout_seconds must be a number of seconds, not {timeout_seconds!r}"
            )
        if timeout_seconds <= 0:
            raise ValueError(f"timeout_seconds must be positive, got {timeout_seconds}")
        self._policy: AnyPolicy = (
            transport.policy
            if transport is not None
            else egress
            if egress is not None
            else EgressPolicy()
        )
        self._secrets = secrets
        self._ttl = float(ttl_seconds)
        self._timeout = float(timeout_seconds)
        self._pool: ConnectionPool[K, C] = ConnectionPool(
            max_connections=max_connections, idle_seconds=idle_seconds
        )

    @property
    def policy(self) -> AnyPolicy:
        """The egress policy every request is judged by."""
        return self._policy

    @property
    def secrets(self) -> SecretResolver | None:
        """Where credentials are looked up, if anywhere."""
        return self._secrets

    @property
    def ttl_seconds(self) -> float:
        """How long a catalogue is reused before the endpoint is asked again."""
        return self._ttl

    @property
    def timeout_seconds(self) -> float:
        """How long opening a connection, and each request, may take."""
        return self._timeout

    @property
    def open_connections(self) -> tuple[K, ...]:
        """The keys of the connections open now, least recently used first."""
        return self._pool.keys()

    def label(self, endpoint: E) -> str:
        """How ``endpoint`` is named in messages (``MCP server crm``)."""
        return f"{self.noun} {endpoint.name}"

    async def credential(self, endpoint: E, scope: Scope) -> str | None:
        """The secret ``endpoint``'s ``credential`` names, for ``scope``'s tenant.

        Raises:
            RemoteError: ``missing_credential``; transient when the resolver failed.
        """
        if endpoint.credential is None:
            return None
        return await self.secret(endpoint, scope, endpoint.credential)

    async def secret(self, endpoint: E, scope: Scope, name: str) -> str:
        """The secret called ``name`` for ``scope``'s tenant, needed to reach ``endpoint``.

        Raises:
            RemoteError: ``missing_credential``; transient when the resolver failed.
        """
        label = self.label(endpoint)
        resolved = None
        if self._secrets is not None:
            try:
                resolved = await self._secrets.resolve(scope, name)
            except Exception as error:  # the application's resolver: report, never crash
                message = f"{label}: looking up the secret {name!r} failed ({type(error).__name__})"
                raise RemoteError(RemoteFailure("missing_credential", message, True)) from None
        if resolved is None:
            message = f"{label}: no secret {name!r} for tenant {scope.tenant!r}"
            raise RemoteError(RemoteFailure("missing_credential", message, transient=False))
        return resolved.secret.get_secret_value()

    async def judge(self, endpoint: E, scope: Scope, url: str) -> None:
        """Ask the egress policy about ``url`` for ``scope`` before anything is sent.

        Raises:
            RemoteError: ``egress_denied``; a policy that fails refuses too.
        """
        import httpx  # deferred: the policy speaks in httpx.URL

        try:
            await check_egress(self._policy, scope, httpx.URL(url))
        except EgressDenied as denied:
            message = f"{self.label(endpoint)}: {denied}"
            raise RemoteError(RemoteFailure("egress_denied", message, False)) from None
        except Exception as error:  # a policy that fails refuses
            message = f"{self.label(endpoint)}: the egress policy failed ({error!r})"
            raise RemoteError(RemoteFailure("egress_denied", message, False)) from None

    def fresh[T](self, catalogue: Catalogue[T], now: float) -> T | None:
        """``catalogue``'s listing while the pool's TTL says it is fresh."""
        return catalogue.fresh(self._ttl, now)

    async def on_connection[T](
        self,
        key: K,
        opener: Callable[[], Awaitable[C]],
        work: Callable[[C], Awaitable[T]],
        *,
        discard: Callable[[RemoteError, C], bool],
    ) -> T:
        """Run ``work`` on the connection for ``key``, opening it first when there is none.

        Args:
            key: who may share the connection.
            opener: opens a new one (its ``RemoteError`` pools nothing).
            work: what to do with it.
            discard: whether a ``RemoteError`` from ``work`` leaves the connection
                in doubt, so the next use opens a new one.

        Raises:
            RemoteError: what failed.
        """
        async with self._pool.lease(key, opener) as connection:
            try:
                return await work(connection)
            except RemoteError as error:
                if discard(error, connection):
                    self._pool.discard(key, connection)
                raise

    def drop(self, key: K) -> None:
        """Retire the connection of ``key``: it closes once nobody uses it."""
        self._pool.drop(key)

    @abstractmethod
    def key(self, endpoint: E, scope: Scope, credential: str | None) -> K:
        """The pool key of ``endpoint`` for ``scope``, carrying ``credential``."""

    async def close(self) -> None:
        """Close every connection; the pool stays usable and reconnects on demand."""
        await self._pool.close()


__all__ = ["AnyPolicy", "Catalogue", "RemotePool", "credential_digest"]
