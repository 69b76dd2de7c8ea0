"""The ``httpx2`` binding of the core's egress check: every MCP request is judged first.

The MCP SDK sends its requests through an ``httpx2.AsyncClient`` (not the ``httpx``
client the runtime's ``HttpTransport`` holds), so the check happens one layer down,
in the client's transport: ``EgressTransport`` is the core's ``GatedTransport`` over
``httpx2``. Nothing the SDK sends (the handshake, a tool call, the SSE stream, the
closing ``DELETE``) and nothing the OAuth client sends gets around it; redirects are
refused. This module is the only one in the package that builds an HTTP client.
"""

import httpx2

from psych_runtime.adapters.tools import GatedTransport
from psych_runtime.adapters.tools import RedirectRefusal


class RedirectRefused(RedirectRefusal, httpx2.TransportError):
    """A server answered with a redirect, which an MCP connection never follows."""


class EgressTransport(GatedTransport[httpx2.Request, httpx2.Response], httpx2.AsyncBaseTransport):
    """An ``httpx2`` transport that sends a request only when the policy allows it.

    Args:
        policy: judges each request's destination.
        scope: the tenant and principal the connection serves, passed to the policy.
        inner: what actually sends allowed requests; a fresh
            ``httpx2.AsyncHTTPTransport`` unless given (tests pass a mock).
    """

    sender = httpx2.AsyncHTTPTransport
    refusal = RedirectRefused
    timeout_errors = (httpx2.TimeoutException,)
    transport_errors = (httpx2.TransportError,)


def gated_client(
    transport: EgressTransport,
    *,
    headers: dict[str, str] | None = None,
    timeout: httpx2.Timeout | float | None = None,
) -> httpx2.AsyncClient:
    """An ``httpx2`` client sending through ``transport``, redirects off, no proxy from the env."""
    return httpx2.AsyncClient(
        transport=transport,
        headers=headers,
        timeout=timeout,
        follow_redirects=False,
        trust_env=False,
    )


__all__ = ["EgressTransport", "RedirectRefused", "gated_client"]
