"""``RemoteTools``: a ``ToolSource`` over a ``RemotePool``, narrowing the way the runtime does.

The half every remote source shares, whatever its protocol: ask each endpoint the
Spec names what it offers (at once), narrow the offer by the Spec's ``allow`` rules
and the tenant's planes, name what survives ``<owner>__<tool>``, and tell the model
in an advisory what an optional endpoint that could not be reached would have
offered. A call is narrowed again first, by the same function, however the model
came by the name; a failure comes back as ``SourceCallFailed`` with a kind from the
shared vocabulary.

The planes a call must pass: the Spec's ``allow`` patterns, the tenant's plane the
runtime hands in (``permitted``), and the source's own ``tenant_policy`` when it was
built with one (an answer that cannot be had permits nothing).

A protocol adds: which endpoints of a Spec are its own, how to list one's catalogue
and turn an entry into a ``SourceTool``, and how to make one call.
"""

import asyncio
from abc import abstractmethod
from collections.abc import Callable
from collections.abc import Collection
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import Any
from typing import ClassVar

from pydantic import JsonValue

from psych_runtime._closing import ClosedOnExit
from psych_runtime.core.records import JsonObject
from psych_runtime.core.scope import Scope
from psych_runtime.core.spec import AgentSpec
from psych_runtime.tools.access import TenantAccess
from psych_runtime.tools.access import permitted_for
from psych_runtime.tools.context import ToolContext
from psych_runtime.tools.remote.failures import RemoteError
from psych_runtime.tools.remote.failures import RemoteFailure
from psych_runtime.tools.remote.names import Endpoint
from psych_runtime.tools.remote.names import admitted
from psych_runtime.tools.remote.names import offerable
from psych_runtime.tools.remote.names import qualified
from psych_runtime.tools.remote.pool import RemotePool
from psych_runtime.tools.sources import SourceCallFailed
from psych_runtime.tools.sources import SourceTool
from psych_runtime.tools.sources import SourceTools
from psych_runtime.tools.sources import ToolSourceUnavailable


def pool_or_own[P](pool_type: type[P], pool: P | None, **settings: object) -> P:
    """``pool``, or a pool of a source's own built from the settings that were given.

    A source takes the process's pool; a program with a single source may pass the
    pool's settings to the source instead. Both at once is refused, since the
    settings would silently not apply to a pool built elsewhere.

    Args:
        pool_type: the protocol's pool class.
        pool: the pool handed to the source, or None.
        settings: the pool settings handed to the source; None counts as not given.

    Raises:
        TypeError: ``pool`` is not a ``pool_type``, or settings are given beside it.
    """
    given = {name: value for name, value in settings.items() if value is not None}
    if pool is None:
        build: Callable[..., P] = pool_type
        return build(**given)
    if not isinstance(pool, pool_type):
        raise TypeError(f"pool must be an {pool_type.__name__}, not {type(pool).__name__}")
    if given:
        names = ", ".join(sorted(given))
        raise TypeError(
            f"{names} configure the pool: pass them to {pool_type.__name__}(...), not beside a pool"
        )
    return pool


@dataclass(slots=True)
class _Offer[E]:
    """What one endpoint contributed to a turn, or why it could not."""

    endpoint: E
    tools: list[SourceTool] = field(default_factory=list)
    advisories: list[str] = field(default_factory=list)
    failure: RemoteFailure | None = None


class RemoteTools[E: Endpoint, P: RemotePool[Any, Any, Any], I](ClosedOnExit):
    """The tools of the remote endpoints a Spec names, resolved every turn.

    Args:
        pool: the process's pool of connections for this protocol.
        tenant_policy: the consumer's answer to which tools a tenant may use
            (``TenantAccess``), applied on top of the plane the runtime hands in.

    Raises:
        TypeError: ``tenant_policy`` is not a ``TenantAccess``.
    """

    item_noun: ClassVar[str] = "a tool named"
    """How an entry of the catalogue is introduced in an advisory (``a skill with id``)."""

    def __init__(self, pool: P, *, tenant_policy: TenantAccess | None = None) -> None:
        if tenant_policy is not None and not isinstance(tenant_policy, TenantAccess):
            raise TypeError(
                "tenant_policy must have a permitted(scope) method (a TenantAccess), not "
                f"{type(tenant_policy).__name__}"
            )
        self._pool = pool
        self._tenant_policy = tenant_policy

    @property
    def pool(self) -> P:
        """The pool the connections come from."""
        return self._pool

    @property
    def open_connections(self) -> tuple[object, ...]:
        """The keys of the pool's open connections, least recently used first."""
        return self._pool.open_connections

    @abstractmethod
    def endpoints(self, spec: AgentSpec) -> tuple[E, ...]:
        """The endpoints of ``spec`` this source serves, in the Spec's order."""

    @abstractmethod
    async def catalogue(self, endpoint: E, scope: Scope) -> Sequence[I]:
        """What ``endpoint`` offers ``scope`` now (the pool may answer from its cache).

        Raises:
            RemoteError: it could not be asked.
        """

    @abstractmethod
    def remote_name(self, item: I) -> str:
        """The name ``item`` has at its endpoint."""

    @abstractmethod
    def source_tool(self, endpoint: E, item: I, name: str) -> SourceTool:
        """``item`` of ``endpoint`` as the tool offered to the model under ``name``."""

    @abstractmethod
    async def invoke(
        self, endpoint: E, tool: SourceTool, arguments: JsonObject, context: ToolContext
    ) -> JsonValue:
        """Carry out one call of ``tool`` at ``endpoint``, already admitted.

        Raises:
            RemoteError: the call failed.
            SourceCallFailed: the arguments are refused before anything is sent.
        """

    def describe(self, endpoint: E, scope: Scope) -> str | None:
        """A line about ``endpoint`` for the system prompt, or None (the default)."""
        return None

    def call_failure(self, failure: RemoteFailure) -> SourceCallFailed:
        """How a failed call is reported; a protocol may fold its own kinds into shared ones."""
        return SourceCallFailed(failure.kind, failure.message, transient=failure.transient)

    def serves(self, spec: AgentSpec) -> bool:
        """Whether ``spec`` names any endpoint of this source."""
        return bool(self.endpoints(spec))

    async def resolve(
        self, spec: AgentSpec, scope: Scope, *, permitted: Collection[str] | None
    ) -> SourceTools:
        """What ``spec``'s endpoints offer ``scope`` this turn, narrowed.

        Endpoints are asked at once. A tool whose qualified name a provider would
        refuse is left out and named in an advisory.

        Raises:
            ToolSourceUnavailable: a required endpoint could not be used (the first,
                in the Spec's order, when several could not).
        """
        planes = (permitted, await self._own_plane(scope))
        offers = await asyncio.gather(
            *(self._offer(endpoint, scope, planes) for endpoint in self.endpoints(spec))
        )
        tools: list[SourceTool] = []
        advisories: list[str] = []
        for offer in offers:
            if offer.failure is not None and not offer.endpoint.optional:
                raise ToolSourceUnavailable(
                    offer.endpoint.name, offer.failure.message, transient=offer.failure.transient
                )
            tools.extend(offer.tools)
            advisories.extend(offer.advisories)
        return SourceTools(tuple(tools), tuple(advisories))

    async def call(
        self,
        spec: AgentSpec,
        tool: SourceTool,
        arguments: JsonObject,
        context: ToolContext,
        *,
        permitted: Collection[str] | None,
    ) -> JsonValue:
        """Call ``tool`` for ``context.scope`` and return its result as JSON.

        The call is narrowed again first, by the Spec's allow rules and every plane.

        Raises:
            SourceCallFailed: ``excluded`` (not granted or not permitted), or what the
                call failed with.
        """
        endpoint = next((e for e in self.endpoints(spec) if e.name == tool.owner), None)
        planes = (permitted, await self._own_plane(context.scope))
        if endpoint is None or not admitted(endpoint, tool.remote_name, *planes):
            raise SourceCallFailed("excluded", f"{tool.name} is not available to this agent")
        try:
            return await self.invoke(endpoint, tool, arguments, context)
        except RemoteError as error:
            raise self.call_failure(error.failure) from None

    async def close(self) -> None:
        """Close the pool's connections; the source stays usable and reconnects on demand."""
        await self._pool.close()

    async def _own_plane(self, scope: Scope) -> Collection[str] | None:
        if self._tenant_policy is None:
            return None
        return await permitted_for(self._tenant_policy, scope)

    async def _offer(
        self, endpoint: E, scope: Scope, planes: tuple[Collection[str] | None, ...]
    ) -> _Offer[E]:
        offer: _Offer[E] = _Offer(endpoint)
        label = self._pool.label(endpoint)
        try:
            catalogue = await self.catalogue(endpoint, scope)
        except RemoteError as error:
            offer.failure = error.failure
            offer.advisories.append(
                f"The {label} is unavailable this turn ({error.failure.message})."
            )
            return offer
        for item in catalogue:
            remote = self.remote_name(item)
            if not admitted(endpoint, remote, *planes):
                continue
            name = qualified(endpoint.name, remote)
            if not offerable(name):
                offer.advisories.append(
                    f"The {label} offers {self.item_noun} {remote!r}, which cannot be named "
                    "to the model; it was left out."
                )
                continue
            offer.tools.append(self.source_tool(endpoint, item, name))
        described = self.describe(endpoint, scope)
        if described:
            offer.advisories.append(described)
        return offer


__all__ = ["RemoteTools", "pool_or_own"]
