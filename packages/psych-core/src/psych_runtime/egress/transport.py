"""The egress seam: the only place in the library that opens HTTP connections.

Everything that talks HTTP (the model client, HTTP tools, MCP) is handed an
``HttpTransport`` instead of building a client of its own. A policy enforced at one
call site out of several would be worse than none, because people would rely on it;
``tests/unit/egress/test_egress_seam.py`` fails the build when another module opens a
connection itself.

Redirects are never followed automatically: each hop would be a new destination the
policy never saw. A caller that wants to follow one makes a second request, which is
checked like the first.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from collections.abc import Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from pydantic import JsonValue

from psych_runtime._closing import ClosedOnExit
from psych_runtime.core.scope import Scope
from psych_runtime.egress.policy import EgressDecider
from psych_runtime.egress.policy import EgressPolicy
from psych_runtime.egress.policy import check_egress

if TYPE_CHECKING:
    import httpx

DEFAULT_PHASES = {"connect": 5.0, "read": 60.0, "write": 30.0, "pool": 5.0}
"""Seconds per phase used when neither the transport nor the call says otherwise."""

type Timeout = httpx.Timeout | float | None


class _Default:
    """Stands for ``default_timeout()`` in a signature without importing httpx to build it."""

    def __repr__(self) -> str:
        return "default_timeout()"


_DEFAULT = _Default()


def default_timeout() -> httpx.Timeout:
    """The library's default timeouts (``DEFAULT_PHASES``) as an ``httpx.Timeout``."""
    import httpx  # deferred: importing httpx costs a noticeable part of a second

    return httpx.Timeout(**DEFAULT_PHASES)


def _as_timeout(value: Timeout) -> httpx.Timeout:
    import httpx

    return value if isinstance(value, httpx.Timeout) else httpx.Timeout(value)


class HttpTransport(ClosedOnExit):
    """One ``httpx.AsyncClient`` behind an egress check.

    Args:
        policy: consulted before every request; None means ``EgressPolicy()``, which
            refuses private and loopback destinations. Any callable
            ``(scope, url) -> EgressDecision`` (sync or async) works too.
        client: an existing client to send through, e.g. one configured with a proxy
            or custom TLS. The transport does not close a client it was given.
        timeout: the default timeouts of requests that do not set their own
            (``default_timeout()`` unless given). A plain number applies to every phase;
            None disables timeouts.
    """

    def __init__(
        self,
        *,
        policy: EgressPolicy | EgressDecider | None = None,
        client: httpx.AsyncClient | None = None,
        timeout: Timeout | _Default = _DEFAULT,
    ) -> None:
        self._policy: EgressPolicy | EgressDecider = (
            policy if policy is not None else EgressPolicy()
        )
        self._client = client
        self._owns_client = client is None
        # Resolved on first use, so building a transport does not import httpx.
        self._timeout_given = timeout
        self._timeout: httpx.Timeout | None = None
        self._closed = False

    @property
    def policy(self) -> EgressPolicy | EgressDecider:
        """The policy every request is checked against."""
        return self._policy

    @property
    def timeout(self) -> httpx.Timeout:
        """The default timeouts, so a caller can override one phase and keep the rest."""
        if self._timeout is None:
            given = self._timeout_given
            self._timeout = default_timeout() if isinstance(given, _Default) else _as_timeout(given)
        return self._timeout

    def _http(self) -> httpx.AsyncClient:
        if self._closed:
            raise RuntimeError("this HttpTransport has been closed")
        if self._client is None:
            # Created on first use so constructing a transport (say, in a module-level
            # Runtime) never needs a running event loop.
            import httpx

            self._client = httpx.AsyncClient(timeout=self.timeout, follow_redirects=False)
        return self._client

    def _timeout_for(self, timeout: Timeout) -> httpx.Timeout:
        if timeout is None:
            return self.timeout
        return _as_timeout(timeout)

    async def _allowed(
        self,
        method: str,
        url: str | httpx.URL,
        scope: Scope,
        headers: Mapping[str, str] | None,
        json: JsonValue,
        content: bytes | str | None,
        timeout: Timeout,
    ) -> tuple[httpx.AsyncClient, httpx.Request]:
        """The client and the request, built once the policy allows the destination."""
        import httpx

        target = httpx.URL(url)
        await check_egress(self._policy, scope, target)
        client = self._http()
        request = client.build_request(
            method,
            target,
            headers=dict(headers or {}),
            json=json,
            content=content,
            timeout=self._timeout_for(timeout),
        )
        return client, request

    async def request(
        self,
        method: str,
        url: str | httpx.URL,
        *,
        scope: Scope,
        headers: Mapping[str, str] | None = None,
        json: JsonValue = None,
        content: bytes | str | None = None,
        timeout: Timeout = None,
    ) -> httpx.Response:
        """Send one request and read its whole response.

        Args:
            method: the HTTP method.
            url: the destination, checked against the policy first.
            scope: the tenant the request is made for, passed to the policy.
            headers: request headers.
            json: a JSON body; ignored when None.
            content: a raw body, for callers that serialise their own.
            timeout: overrides the transport's default timeouts for this call.

        Raises:
            EgressDenied: the policy refused the destination; nothing was sent.
            httpx.HTTPError: the request itself failed.
        """
        client, request = await self._allowed(method, url, scope, headers, json, content, timeout)
        return await client.send(request, follow_redirects=False)

    @asynccontextmanager
    async def stream(
        self,
        method: str,
        url: str | httpx.URL,
        *,
        scope: Scope,
        headers: Mapping[str, str] | None = None,
        json: JsonValue = None,
        content: bytes | str | None = None,
        timeout: Timeout = None,
    ) -> AsyncIterator[httpx.Response]:
        """Send one request and yield the response before its body has been read.

        The body is consumed incrementally (``aiter_bytes``); the response is closed
        when the block exits, however it exits. Arguments and errors are those of
        ``request``.
        """
        client, request = await self._allowed(method, url, scope, headers, json, content, timeout)
        response = await client.send(request, stream=True, follow_redirects=False)
        try:
            yield response
        finally:
            await response.aclose()

    async def aclose(self) -> None:
        """Close the client this transport created; a client passed in stays open."""
        self._closed = True
        client, self._client = self._client, None
        if client is not None and self._owns_client:
            await client.aclose()

    # ``aclose`` is httpx's name for it; ``ClosedOnExit`` calls it ``close``.
    close = aclose


__all__ = ["DEFAULT_PHASES", "HttpTransport", "default_timeout"]
