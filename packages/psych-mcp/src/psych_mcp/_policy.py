"""Asking the egress policy about one destination, for one Scope.

The runtime's ``HttpTransport`` accepts an ``EgressPolicy`` or any callable with the
same shape; so does ``McpTools``, and this is where either is asked. ``httpx`` is
imported on first use only, since the policy speaks in ``httpx.URL``.
"""

import inspect
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from psych_runtime import EgressDecision, EgressDenied, EgressPolicy, Scope

if TYPE_CHECKING:
    import httpx

type EgressDecider = Callable[[Scope, "httpx.URL"], EgressDecision | Awaitable[EgressDecision]]
"""A callable judging one destination, as ``HttpTransport`` also accepts."""

type AnyPolicy = EgressPolicy | EgressDecider
"""What may judge an MCP connection's requests."""


async def judge(policy: AnyPolicy, scope: Scope, url: str) -> EgressDecision:
    """Ask ``policy`` whether ``url`` may be reached for ``scope``.

    Raises:
        EgressDenied: the policy refused the destination.
    """
    import httpx  # deferred: the policy's URL type, not a client

    target = httpx.URL(url)
    if isinstance(policy, EgressPolicy):
        decision = await policy.decide(scope, target)
    else:
        outcome = policy(scope, target)
        decision = await outcome if inspect.isawaitable(outcome) else outcome
    if not decision.allowed:
        raise EgressDenied(target, decision)
    return decision


__all__ = ["AnyPolicy", "EgressDecider", "judge"]
