"""The ToolSource port: tools a Spec reaches outside this process, resolved every turn.

MCP servers and A2A peers are data in a Spec; which tools they offer is only known by
asking them, and may change while a Run is under way (a server connected mid-Run, a
tool added or removed). A ``ToolSource`` answers that question at the start of every
turn (``resolve``) and carries out a call of one of its tools (``call``). The core has
no source of its own: ``psych-mcp`` provides one, and a third party can provide more.

The rules every source keeps:

* Names it hands the model are qualified by their owner (``<server>__<tool>``), so two
  servers' tools never collide, and never shadow a static tool or a built-in.
* It narrows what it offers by the Spec's allow rules and the tenant's plane
  (``permitted``), and narrows again at call time: a name the model sends is refused
  unless it survives the same narrowing, however the model came by it.
* A required server it cannot reach makes ``resolve`` raise ``ToolSourceUnavailable``
  (the turn fails ``tool_resolution``); an optional one is left out and named in an
  advisory the model reads.
* A call's failure is raised as ``SourceCallFailed`` with a stable kind; anything else
  a source raises is reported as an ordinary failed call too.
"""

from collections.abc import Collection
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import Protocol
from typing import runtime_checkable

from pydantic import JsonValue

from psych_runtime.core.errors import PsychError
from psych_runtime.core.messages import ToolDefinition
from psych_runtime.core.records import JsonObject
from psych_runtime.core.scope import Scope
from psych_runtime.core.spec import AgentSpec
from psych_runtime.tools.context import ToolContext
from psych_runtime.tools.errors import ToolCallFailed


@dataclass(frozen=True, slots=True)
class SourceTool:
    """One tool a source offers this turn, as the model and the runtime see it.

    Attributes:
        definition: how it is described to the model, under its qualified name, with
            the annotations approval rules classify it by.
        owner: the server or peer it belongs to, as named in the Spec.
        remote_name: its name at the owner.
        safe_to_retry: a call left in doubt by a crash may simply be sent again (the
            tool declared itself idempotent).
        interruptible: a call may be abandoned half way when the Attempt stops.
    """

    definition: ToolDefinition
    owner: str
    remote_name: str
    safe_to_retry: bool = False
    interruptible: bool = True

    @property
    def name(self) -> str:
        """The qualified name the model calls it by."""
        return self.definition.name


@dataclass(frozen=True, slots=True)
class SourceTools:
    """What one source offers for one turn.

    Attributes:
        tools: the tools, already narrowed by the Spec's rules and the tenant's plane.
        advisories: lines for the system prompt (an optional server that could not be
            reached, say), so the model knows what it is missing.
    """

    tools: tuple[SourceTool, ...] = ()
    advisories: tuple[str, ...] = field(default=())


class ToolSourceUnavailable(PsychError):
    """A required server or peer could not be reached; the turn cannot go on.

    Attributes:
        owner: the server or peer, as named in the Spec.
        transient: whether trying again later may work.
    """

    def __init__(self, owner: str, message: str, *, transient: bool = True) -> None:
        super().__init__(message)
        self.owner = owner
        self.transient = transient


class SourceCallFailed(ToolCallFailed):
    """A call to a source's tool failed in a way the model should be told about.

    Attributes:
        kind: a stable classifier (``tool_error``, ``unreachable``, ``excluded``...).
        transient: whether the same call may succeed later.
    """


@runtime_checkable
class ToolSource(Protocol):
    """Tools of remote servers or peers, resolved every turn and called on demand."""

    def serves(self, spec: AgentSpec) -> bool:
        """Whether ``spec`` names anything this source resolves (MCP servers, say)."""
        ...

    async def resolve(
        self, spec: AgentSpec, scope: Scope, *, permitted: Collection[str] | None
    ) -> SourceTools:
        """The tools this source offers ``spec`` for ``scope`` this turn.

        Args:
            spec: the Run's Spec (its servers or peers, their allow rules).
            scope: the tenant and principal the Run acts for; credentials and
                connections are chosen by it, never shared across tenants.
            permitted: the tenant's plane (patterns over qualified names); None
                permits everything.

        Raises:
            ToolSourceUnavailable: a required server or peer cannot be reached.
        """
        ...

    async def call(
        self,
        spec: AgentSpec,
        tool: SourceTool,
        arguments: JsonObject,
        context: ToolContext,
        *,
        permitted: Collection[str] | None,
    ) -> JsonValue:
        """Carry out one call of ``tool`` and return its result as JSON.

        Raises:
            SourceCallFailed: the call failed (or was refused on re-narrowing).
        """
        ...


def owners_of(sources: Sequence[ToolSource], spec: AgentSpec) -> tuple[ToolSource, ...]:
    """The sources that serve ``spec``, in the order they were given."""
    return tuple(source for source in sources if source.serves(spec))


__all__ = [
    "SourceCallFailed",
    "SourceTool",
    "SourceTools",
    "ToolSource",
    "ToolSourceUnavailable",
    "owners_of",
]
