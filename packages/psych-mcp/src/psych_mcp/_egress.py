"""Every HTTP request an MCP connection makes is judged by the egress policy first.

The MCP SDK sends its requests through an ``httpx2.AsyncClient`` (not the ``httpx``
client the runtime's ``HttpTransport`` holds), so the policy is applied one layer
down, in the client's transport: ``EgressTransport`` asks the policy about each
request's destination, with the Scope the connection serves, and only then hands the
request to a real ``httpx2.AsyncHTTPTransport``. Nothing the SDK sends, the initial
handshake, a tool call, the SSE stream or the closing ``DELETE``, gets around it.

Redirects are refused rather than followed: a redirect names a destination the
configuration never mentioned, and the server's real URL belongs in the Spec. The
transport also keeps the last failure, the last error status and the last
``WWW-Authenticate`` challenge it saw, so a call that fails somewhere inside the SDK
can still be reported for what it was, and an OAuth client can answer a 401 or 403.
"""

import httpx2

from psych_mcp._policy import AnyPolicy, judge
from psych_runtime import Scope


class RedirectRefused(httpx2.TransportError):
    """A server answered with a redirect, which an MCP connection never follows.

    Attributes:
        location: where the server pointed, for the message.
    """

    def __init__(self, location: str, *, request: httpx2.Request) -> None:
        super().__init__(
            f"the MCP server redirected to {location!r}; redirects are not followed, "
            "so put the final URL in the Spec",
            request=request,
        )
        self.location = location


class EgressTransport(httpx2.AsyncBaseTransport):
    """An ``httpx2`` transport that sends a request only when the policy allows it.

    Args:
        policy: judges each request's destination.
        scope: the tenant and principal the connection serves, passed to the policy.
        inner: what actually sends allowed requests; a fresh
            ``httpx2.AsyncHTTPTransport`` unless given (tests pass a mock).

    Attributes:
        failure: the last error a request ended with (a refusal, a refused
            redirect, a connection error), or None.
        error_status: the last HTTP status of 400 or above a response carried, or None.
        challenge: the status and ``WWW-Authenticate`` header (None when absent) of
            the last 401 or 403 answer, or None; what an OAuth client needs to react.
    """

    def __init__(
        self,
        policy: AnyPolicy,
        scope: Scope,
        *,
        inner: httpx2.AsyncBaseTransport | None = None,
    ) -> None:
        self._policy = policy
        self._scope = scope
        self._inner = inner if inner is not None else httpx2.AsyncHTTPTransport()
        self.failure: BaseException | None = None
        self.error_status: int | None = None
        self.challenge: tuple[int, str | None] | None = None

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        """Judge ``request``'s destination, then send it; a redirect is refused.

        Raises:
            EgressDenied: the policy refused the destination; nothing was sent.
            RedirectRefused: the server answered with a redirect.
            httpx2.TransportError: sending failed.
        """
        try:
            await judge(self._policy, self._scope, str(request.url))
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
            if response.status_code in (401, 403):
                self.challenge = (response.status_code, response.headers.get("www-authenticate"))
        return response

    async def aclose(self) -> None:
        """Close the transport that sends the requests."""
        await self._inner.aclose()


__all__ = ["EgressTransport", "RedirectRefused"]
