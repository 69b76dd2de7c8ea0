"""The egress check one layer down, for SDKs that send through an HTTP client of their own.

The MCP and A2A SDKs are handed an HTTP client rather than an ``HttpTransport``. For
their requests to pass the same policy, the client is built around a transport that
asks the policy about every request's destination, with the Scope the connection
serves, before handing it to the transport that really sends. ``GatedTransport`` is
that check, written once; a binding for one HTTP library (``httpx`` in
``egress/transport.py``, ``httpx2`` in psych-mcp) only names the library's classes.

Redirects are refused rather than followed: a redirect names a destination the
configuration never mentioned. The transport also keeps notes on what it saw (the
last failure, the last error status, the last 401 or 403 challenge), because an SDK
often wraps a failure into something generic, and the notes still tell the real
story (``psych_runtime.tools.remote`` reads them).
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping
from typing import Any
from typing import ClassVar
from typing import Protocol

from psych_runtime.core.scope import Scope
from psych_runtime.egress.policy import EgressDecider
from psych_runtime.egress.policy import EgressPolicy
from psych_runtime.egress.policy import check_egress


class _Request(Protocol):
    @property
    def url(self) -> object: ...


class _Response(Protocol):
    @property
    def status_code(self) -> int: ...

    @property
    def headers(self) -> Mapping[str, str]: ...

    @property
    def has_redirect_location(self) -> bool: ...

    async def aclose(self) -> None: ...


class _Sender[Req, Resp](Protocol):
    async def handle_async_request(self, request: Req) -> Resp: ...

    async def aclose(self) -> None: ...


class RedirectRefusal(Exception):
    """A redirect a ``GatedTransport`` refused; mixed into a library's transport error.

    A binding declares ``class RedirectRefused(RedirectRefusal, <library>.TransportError)``,
    so the SDK treats the refusal like any failed connection while the runtime can
    still tell it apart.

    Args:
        location: where the server pointed.
        request: the request that was answered with the redirect.

    Attributes:
        location: where the server pointed.
    """

    def __init__(self, location: str, *, request: object) -> None:
        super().__init__(redirect_message(location), request=request)  # type: ignore[call-arg]
        self.location = location


def redirect_message(location: str) -> str:
    """The sentence a refused redirect is reported with."""
    return (
        f"the server redirected to {location!r}; redirects are not followed, "
        "so put the final URL in the Spec"
    )


class GatedTransport[Req: _Request, Resp: _Response]:
    """Sends a request only when the egress policy allows its destination.

    A binding subclasses it together with its HTTP library's base transport and
    names the library's classes: ``sender`` (what really sends), ``refusal`` (the
    error for a refused redirect) and the errors that mean a timeout or a failed
    connection.

    Args:
        policy: judges each request's destination.
        scope: the tenant and principal the requests are made for.
        inner: what sends allowed requests; a new ``sender()`` by default (tests
            pass a mock).

    Attributes:
        failure: the last error a request ended with (a refusal, a refused
            redirect, a connection error), or None.
        error_status: the last HTTP status of 400 or above a response carried, or None.
        challenge: the status and ``WWW-Authenticate`` header (None when absent) of
            the last 401 or 403 answer, or None; what an OAuth client reacts to.
    """

    sender: ClassVar[Callable[[], _Sender[Any, Any]]]
    """Builds the library's transport that really sends."""

    refusal: ClassVar[Callable[..., RedirectRefusal]]
    """The library's error for a refused redirect: ``refusal(location, request=...)``."""

    timeout_errors: ClassVar[tuple[type[BaseException], ...]] = (TimeoutError,)
    """Errors of the library that mean the other side did not answer in time."""

    transport_errors: ClassVar[tuple[type[BaseException], ...]] = (OSError,)
    """Errors of the library that mean the other side could not be reached."""

    def __init__(
        self,
        policy: EgressPolicy | EgressDecider,
        scope: Scope,
        *,
        inner: _Sender[Req, Resp] | None = None,
    ) -> None:
        self._policy = policy
        self._scope = scope
        self._inner: _Sender[Req, Resp] = inner if inner is not None else type(self).sender()
        self.failure: BaseException | None = None
        self.error_status: int | None = None
        self.challenge: tuple[int, str | None] | None = None

    def forget(self) -> None:
        """Clear the notes, before a request whose failure should be read on its own."""
        self.failure = None
        self.error_status = None

    async def handle_async_request(self, request: Req) -> Resp:
        """Judge ``request``'s destination, then send it; a redirect is refused.

        Raises:
            EgressDenied: the policy refused the destination; nothing was sent.
            RedirectRefusal: the server answered with a redirect.
            Exception: whatever sending raised.
        """
        import httpx  # deferred: the policy speaks in httpx.URL

        try:
            await check_egress(self._policy, self._scope, httpx.URL(str(request.url)))
            response = await self._inner.handle_async_request(request)
        except Exception as error:
            self.failure = error
            raise
        if response.has_redirect_location:
            await response.aclose()
            refused = type(self).refusal(response.headers["location"], request=request)
            self.failure = refused
            raise refused
        if response.status_code >= 400:
            self.error_status = response.status_code
            if response.status_code in (401, 403):
                www = response.headers.get("www-authenticate")
                self.challenge = (response.status_code, www)
        return response

    async def aclose(self) -> None:
        """Close the transport that sends the requests."""
        await self._inner.aclose()


async def egress_allows(policy: EgressPolicy | EgressDecider, scope: Scope, url: str) -> bool:
    """Whether ``policy`` lets ``scope`` reach ``url``; a bad URL or a failing policy refuses."""
    import httpx  # deferred: the policy speaks in httpx.URL

    try:
        await check_egress(policy, scope, httpx.URL(url))
    except Exception:  # a refusal, a malformed URL, or a policy that fails: no
        return False
    return True


__all__ = ["GatedTransport", "RedirectRefusal", "egress_allows", "redirect_message"]
