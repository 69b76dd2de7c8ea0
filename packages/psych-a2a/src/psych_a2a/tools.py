"""``A2ATools``: the skills of the A2A peers a Spec names, offered as tools every turn.

At the start of each turn the runtime asks ``resolve`` what the Spec's peers offer:
each peer's Agent Card is read (from its well-known path under the peer's URL, or
from the URL itself when that names the card), its signature checked when a
``CardVerifier`` covers the peer, and its skills offered as ``<peer>__<skill>`` after
narrowing by the peer's ``allow`` list, the tenant's plane and this source's
``tenant_policy``. A call sends the model's ``message`` to the peer and follows the
task it starts until it settles or waits for input (see ``A2APool``), and returns
its state and artifacts as the tool result.

Everything acts for the Run's Scope, over connections from an ``A2APool`` (one per
process, keyed by tenant, principal, peer and credential).

A required peer that cannot be reached fails the turn (``ToolSourceUnavailable``);
an optional one is left out and the model is told in an advisory.
"""

from collections.abc import Sequence
from typing import TYPE_CHECKING
from typing import ClassVar

from pydantic import JsonValue

from psych_a2a.cards import CardVerifier
from psych_a2a.pool import BINDINGS
from psych_a2a.pool import WELL_KNOWN_CARD
from psych_a2a.pool import A2APool
from psych_a2a.pool import A2APoolKey
from psych_a2a.pool import card_url
from psych_runtime import EgressPolicy
from psych_runtime import HttpTransport
from psych_runtime import Scope
from psych_runtime import SecretResolver
from psych_runtime.adapters.tools import RemoteTools
from psych_runtime.adapters.tools import SourceCallFailed
from psych_runtime.adapters.tools import SourceTool
from psych_runtime.adapters.tools import TenantAccess
from psych_runtime.adapters.tools import ToolContext
from psych_runtime.adapters.tools import pool_or_own
from psych_runtime.spec import A2APeer
from psych_runtime.spec import AgentSpec

if TYPE_CHECKING:
    from a2a.types import AgentSkill

PoolKey = A2APoolKey
"""The earlier name of ``A2APoolKey``."""


class A2ATools(RemoteTools[A2APeer, A2APool, "AgentSkill"]):
    """A ``ToolSource`` for the A2A peers named in a Spec (``AgentSpec.a2a_peers``).

    Give it the process's ``A2APool``. For a program with a single source, the pool's
    settings may be passed here instead (``A2ATools(egress=...)``), and a pool of its
    own is built from them.

    Args:
        pool: the process's pool of peer connections.
        tenant_policy: which tools a tenant may use (a ``TenantAccess``), on top of
            the plane the runtime hands in; an answer that cannot be had permits
            nothing.
        http: with no ``pool``: the Runtime's ``HttpTransport`` (the pool's ``transport``).
        egress: with no ``pool``: the egress policy, when no ``http`` is given.
        secrets: with no ``pool``: where credentials are looked up.
        verifier: with no ``pool``: see ``A2APool``.
        max_connections: with no ``pool``: see ``A2APool``.
        idle_seconds: with no ``pool``: see ``A2APool``.
        card_ttl_seconds: with no ``pool``: see ``A2APool`` (300 s by default).
        timeout_seconds: with no ``pool``: see ``A2APool``.
        poll_seconds: with no ``pool``: see ``A2APool``.

    Raises:
        TypeError: a pool that is no ``A2APool``, pool settings beside one, or a
            ``tenant_policy`` without a ``permitted(scope)`` method.
        ValueError: a pool setting out of range.
    """

    item_noun: ClassVar[str] = "a skill with id"

    def __init__(
        self,
        pool: A2APool | None = None,
        *,
        tenant_policy: TenantAccess | None = None,
        http: HttpTransport | None = None,
        egress: EgressPolicy | None = None,
        secrets: SecretResolver | None = None,
        verifier: CardVerifier | None = None,
        max_connections: int | None = None,
        idle_seconds: float | None = None,
        card_ttl_seconds: float | None = None,
        timeout_seconds: float | None = None,
        poll_seconds: float | None = None,
    ) -> None:
        pool = pool_or_own(
            A2APool,
            pool,
            transport=http,
            egress=egress,
            secrets=secrets,
            verifier=verifier,
            max_connections=max_connections,
            idle_seconds=idle_seconds,
            card_ttl_seconds=card_ttl_seconds,
            timeout_seconds=timeout_seconds,
            poll_seconds=poll_seconds,
        )
        super().__init__(pool, tenant_policy=tenant_policy)

    def endpoints(self, spec: AgentSpec) -> tuple[A2APeer, ...]:
        """The Spec's A2A peers."""
        return spec.a2a_peers

    async def catalogue(self, endpoint: A2APeer, scope: Scope) -> "Sequence[AgentSkill]":
        """The skills on the peer's Agent Card, read for ``scope``."""
        return list((await self.pool.card(endpoint, scope)).skills)

    def remote_name(self, item: "AgentSkill") -> str:
        """The skill's id."""
        return item.id

    def source_tool(self, endpoint: A2APeer, item: "AgentSkill", name: str) -> SourceTool:
        """The skill as a tool taking the message to send."""
        from psych_a2a._mapping import skill_definition  # deferred: the SDK's types

        return SourceTool(skill_definition(name, endpoint.name, item), endpoint.name, item.id)

    async def invoke(
        self,
        endpoint: A2APeer,
        tool: SourceTool,
        arguments: dict[str, JsonValue],
        context: ToolContext,
    ) -> JsonValue:
        """Send the model's message to the peer and follow the task it starts.

        The result is the task's state, text and artifacts; a task left waiting for
        input (``input-required``) is a result too, with its ``task_id`` so the
        model can answer it in a later call.

        Raises:
            SourceCallFailed: ``invalid_arguments``.
            RemoteError: ``missing_credential``, ``egress_denied``, ``card_unverified``,
                ``unreachable`` and ``timeout`` (transient), ``unauthorized``,
                ``incompatible``, ``protocol_error``, ``task_failed``,
                ``task_canceled``, ``task_rejected``.
        """
        text, task_id, context_id = _arguments(tool.name, arguments)
        return await self.pool.exchange(
            endpoint,
            context.scope,
            text,
            task_id=task_id,
            context_id=context_id,
            message_id=context.idempotency_key,
        )


def _arguments(name: str, arguments: dict[str, JsonValue]) -> tuple[str, str | None, str | None]:
    text = arguments.get("message")
    if not isinstance(text, str) or not text.strip():
        raise SourceCallFailed("invalid_arguments", f"{name} needs a non-empty 'message' string")
    ids: list[str | None] = []
    for field_name in ("task_id", "context_id"):
        value = arguments.get(field_name)
        if value is not None and (not isinstance(value, str) or len(value) > 256):
            raise SourceCallFailed(
                "invalid_arguments", f"{name}: '{field_name}' must be a string id"
            )
        ids.append(value or None)
    unknown = set(arguments) - {"message", "task_id", "context_id"}
    if unknown:
        raise SourceCallFailed("invalid_arguments", f"{name} takes no {', '.join(sorted(unknown))}")
    return text, ids[0], ids[1]


__all__ = ["BINDINGS", "WELL_KNOWN_CARD", "A2ATools", "PoolKey", "card_url"]
