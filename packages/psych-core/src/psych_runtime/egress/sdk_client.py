"""An ``httpx`` client for an SDK that talks HTTP itself, with the egress check inside it.

Some SDKs (the A2A SDK, for one) are handed an ``httpx.AsyncClient`` and send through
it. ``egress_client`` builds that client around ``EgressTransport``, the ``httpx``
binding of ``GatedTransport``: every request it sends is judged by the policy first,
and redirects are refused. Importing this module imports ``httpx``; the runtime only
does so when such an SDK is first used.
"""

import httpx

from psych_runtime.core.scope import Scope
from psych_runtime.egress.gated import GatedTransport
from psych_runtime.egress.gated import RedirectRefusal
from psych_runtime.egress.policy import EgressDecider
from psych_runtime.egress.policy import EgressPolicy


class RedirectRefused(RedirectRefusal, httpx.TransportError):
    """A server answered with a redirect, which is never followed (``location`` says where)."""


class EgressTransport(GatedTransport[httpx.Request, httpx.Response], httpx.AsyncBaseTransport):
    """An ``httpx`` transport that sends a request only when the policy allows it.

    Args:
        policy: judges each request's destination.
        scope: the tenant and principal the requests are made for.
        inner: what sends allowed requests; a new ``httpx.AsyncHTTPTransport`` by default.
    """

    sender = httpx.AsyncHTTPTransport
    refusal = RedirectRefused
    timeout_errors = (httpx.TimeoutException,)
    transport_errors = (httpx.TransportError,)


def egress_client(
    policy: EgressPolicy | EgressDecider,
    scope: Scope,
    *,
    timeout: float,
    headers: dict[str, str] | None = None,
    inner: httpx.AsyncBaseTransport | None = None,
) -> tuple[httpx.AsyncClient, EgressTransport]:
    """An HTTP client for ``scope`` whose every request the policy judges first.

    Returns:
        The client (redirects off, no proxy settings read from the environment) and
        the transport inside it, whose notes say what went wrong when a request fails.
    """
    transport = EgressTransport(policy, scope, inner=inner)
    client = httpx.AsyncClient(
        transport=transport,
        timeout=timeout,
        follow_redirects=False,
        trust_env=False,
        headers=headers,
    )
    return client, transport


__all__ = ["EgressTransport", "RedirectRefused", "egress_client"]
