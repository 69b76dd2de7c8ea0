"""Which tools a tenant may use: the consumer's plane of access narrowing.

Between what a source offers and what a Spec grants sits what the tenant is permitted,
which only the consumer knows (a plan, a contract, an admin setting). ``TenantAccess``
answers it per turn with patterns (an exact name, or a trailing ``*`` prefix), or None
for no restriction. An answer that cannot be had (the lookup raised) permits nothing:
access fails closed.
"""

import inspect
import logging
from collections.abc import Awaitable
from collections.abc import Collection
from typing import Protocol
from typing import runtime_checkable

from psych_runtime.core.scope import Scope

log = logging.getLogger(__name__)


@runtime_checkable
class TenantAccess(Protocol):
    """The consumer's answer to "which tools may this tenant use?"."""

    def permitted(self, scope: Scope) -> Collection[str] | Awaitable[Collection[str] | None] | None:
        """Patterns of the tools ``scope`` may use, or None for no restriction."""
        ...


class PermitAll:
    """The default: every tenant may use every tool its Specs grant."""

    def permitted(self, scope: Scope) -> None:
        """No restriction."""
        return None


async def permitted_for(access: TenantAccess, scope: Scope) -> Collection[str] | None:
    """Ask ``access`` about ``scope``; a failure permits nothing."""
    try:
        answer = access.permitted(scope)
        if inspect.isawaitable(answer):
            answer = await answer
    except Exception:
        log.warning(
            "tenant access lookup failed for %s; no tool is permitted", scope.tenant, exc_info=True
        )
        return ()
    if answer is None:
        return None
    if isinstance(answer, str):
        return (answer,)
    return tuple(answer)


__all__ = ["PermitAll", "TenantAccess", "permitted_for"]
