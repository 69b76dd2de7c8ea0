"""Every HTTP request to a peer, and every push notification, passes the egress policy.

The A2A SDK talks HTTP through an ``httpx.AsyncClient`` it is handed. The runtime's
egress seam is the policy an ``HttpTransport`` carries (an ``EgressPolicy`` or any
callable of the same shape); ``EgressTransport`` applies it one layer down, in the
client's transport, so nothing the SDK sends (the Agent Card fetch, a message, the
stream of a task, a poll, a cancel) gets past it. Redirects are refused: a peer's
real address belongs in the Spec.
"""

import inspect
from collections.abc import Awaitable, Callable

import httpx

from psych_runtime import EgressDecision, EgressDenied, EgressPolicy, Scope

type EgressDecider = Callable[[Scope, httpx.URL], EgressDecision | Awaitable[EgressDecision]]
"""A callable judging one destination, as ``HttpTransport`` also accepts."""

type AnyPolicy = EgressPolicy | EgressDecider
"""What may judge a request to a peer or a push notification."""


async def judge(policy: AnyPolicy, scope: Scope, url: str | httpx.URL) -> EgressDecision:
    """Ask ``policy`` whether ``url`` may be reached for ``scope``.

    Raises:
        EgressDenied: the policy refused the destination.
    """
    target = url if isinstance(url, httpx.URL) else httpx.URL(url)
    if isinstance(policy, EgressPolicy):
        decision = await policy.decide(scope, target)
    else:
        outcome = policy(scope, target)
        decision = await outcome if inspect.isawaitable(outcome) else outcome
    if not decision.allowed:
        raise EgressDenied(target, decision)
    return decision


class RedirectRefused(httpx.TransportError):
    """A peer answered with a redirect, which is never followed.

    Attributes:
        location: where the peer pointed.
    """

    def __init__(self, location: str, *, request: httpx.Request) -> None:
        super().__init__(
            f"the peer redirected to {location!r}; redirects are not followed, "
            "so put the final URL in the Spec",
            request=request,
        )
        self.location = location


class EgressTransport(httpx.AsyncBaseTransport):
    """An ``httpx`` transport that sends a request only when the policy allows it.

    Args:
        policy: judges each request's destination.
        scope: the tenant and principal the requests are made for.
        inner: what sends allowed requests; a new ``httpx.AsyncHTTPTransport`` by default.

    Attributes:
        failure: the last error a request ended with (a refusal, a refused redirect,
            a connection error), or None; kept so a failure the SDK wraps can still
            be reported for what it was.
        error_status: the last HTTP status of 400 or above, or None.
    """

    def __init__(
        self,
        policy: AnyPolicy,
        scope: Scope,
        *,
        inner: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._policy = policy
        self._scope = scope
        self._inner = inner if inner is not None else httpx.AsyncHTTPTransport()
        self.failure: BaseException | None = None
        self.error_status: int | None = None

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Judge ``request``'s destination, then send it; a redirect is refused.

        Raises:
            EgressDenied: the policy refused the destination; nothing was sent.
            RedirectRefused: the peer answered with a redirect.
            httpx.TransportError: sending failed.
        """
        try:
            await judge(self._policy, self._scope, request.url)
            response = await self._inner.handle_async_request(request)
        except Exception as error:
            self.failure = error
            raise
        if response.has_redirect_location:
            await response.aclose()
            refused = RedirectRefused(response.headers["location"], request=request)
            self.failure = refused
            raise refused
        if response.status_code >= 400:
            self.error_status = response.status_code
        return response

    async def aclose(self) -> None:
        """Close the transport that sends the requests."""
        await self._inner.aclose()


def egress_client(
    policy: AnyPolicy,
    scope: Scope,
    *,
    timeout: float,
    headers: dict[str, str] | None = None,
    inner: httpx.AsyncBaseTransport | None = None,
) -> tuple[httpx.AsyncClient, EgressTransport]:
    """An HTTP client for ``scope`` whose every request the policy judges first."""
    transport = EgressTransport(policy, scope, inner=inner)
    client = httpx.AsyncClient(
        transport=transport,
        timeout=timeout,
        follow_redirects=False,
        trust_env=False,
        headers=headers,
    )
    return client, transport


__all__ = [
    "AnyPolicy",
    "EgressDecider",
    "EgressTransport",
    "RedirectRefused",
    "egress_client",
    "judge",
]
