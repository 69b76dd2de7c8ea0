"""The agent Spec and the parts only an agent has: skills, subagents, spawning.

An agent is data: a model, instructions, and the names of what it may use. Subagents
are embedded whole rather than referenced, so one Version hash pins the entire tree
and editing a child can never change a parent's published behaviour behind its back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from typing import Annotated
from typing import Literal
from typing import Required
from typing import Self
from typing import TypedDict
from typing import Unpack

from pydantic import Field
from pydantic import field_validator
from pydantic import model_validator

from psych_runtime.core.spec.base import SpecModel
from psych_runtime.core.spec.base import sorted_by_name
from psych_runtime.core.spec.base import sorted_set
from psych_runtime.core.spec.code_execution import CodeExecution
from psych_runtime.core.spec.connections import A2APeer
from psych_runtime.core.spec.connections import McpServer
from psych_runtime.core.spec.connections import McpServers
from psych_runtime.core.spec.limits import CompactionPolicy
from psych_runtime.core.spec.limits import Limits
from psych_runtime.core.spec.limits import SuspensionPolicy
from psych_runtime.core.spec.models import ModelId
from psych_runtime.core.spec.models import ModelRef
from psych_runtime.core.spec.models import model_name_as_ref
from psych_runtime.core.spec.names import BINDABLE_BUILTINS
from psych_runtime.core.spec.names import OWNER_SEPARATOR
from psych_runtime.core.spec.names import Description
from psych_runtime.core.spec.names import Name
from psych_runtime.core.spec.names import Text
from psych_runtime.core.spec.tools import CodeTool
from psych_runtime.core.spec.tools import HttpTool
from psych_runtime.core.spec.tools import SpecTools
from psych_runtime.core.spec.tools import StaticTool

ToolPattern = Annotated[str, Field(min_length=1, max_length=256)]


class Skill(SpecModel):
    """Instructions the model loads only when it needs them.

    The description sits in every prompt; the body is fetched through ``load_skill``,
    so a long procedure costs tokens only in the turns that use it. A body may point at
    other skills of the same Spec with ``[[skill:name]]``.

    Attributes:
        name: how the model asks for it.
        description: when the skill applies, shown in every prompt.
        body: the instructions themselves.
    """

    name: Name
    description: Annotated[Text, Field(min_length=1, max_length=1_024)]
    body: Annotated[Text, Field(min_length=1)]


class SubagentRef(SpecModel):
    """A child agent the parent may delegate to, embedded in the parent's Spec.

    Attributes:
        name: how the parent's model addresses it.
        description: what the child is for; the parent's model chooses by this, so a
            one-word description is refused.
        spec: the child's full Spec.
    """

    name: Name
    description: Annotated[Text, Field(min_length=20, max_length=2_048)]
    spec: AgentSpec


class SpawnEnvelope(SpecModel):
    """The ceiling on children the model may compose for itself at run time.

    Attributes:
        tools: tool name patterns a composed child may hold at most; empty means
            whatever the parent holds. A child never holds more than its parent.
        models: model ids a composed child may use; empty means the parent's model only.
        max_depth: how deep composed children may nest.
        max_alive: composed children running at once.
        may_message: whether the parent may steer a running child.
    """

    tools: tuple[ToolPattern, ...] = ()
    models: tuple[ModelId, ...] = ()
    max_depth: Annotated[int, Field(ge=1, le=16)] = 2
    max_alive: Annotated[int, Field(ge=1, le=32)] = 3
    may_message: bool = True

    @field_validator("tools", "models")
    @classmethod
    def _as_set(cls, values: tuple[str, ...]) -> tuple[str, ...]:
        return sorted_set(values)


class SpawnRequest(SpecModel):
    """The arguments a model sends to ``spawn_subagent``, validated before anything runs.

    The minimum lengths push the model to brief its child properly: a child sees none of
    the parent's conversation, only what is written here.

    Attributes:
        name: the child's name.
        purpose: why the child exists.
        task: everything the child needs to know to do the work.
        deliverable: what the child should hand back.
        tools: the tools requested for the child, narrowed again by the envelope.
        model: the model requested, from the envelope's list.
    """

    name: Name
    purpose: Annotated[Text, Field(min_length=20, max_length=2_048)]
    task: Annotated[Text, Field(min_length=40, max_length=65_536)]
    deliverable: Annotated[Text, Field(min_length=15, max_length=4_096)]
    tools: tuple[ToolPattern, ...] = ()
    model: ModelId | None = None

    @field_validator("tools")
    @classmethod
    def _as_set(cls, values: tuple[str, ...]) -> tuple[str, ...]:
        return sorted_set(values)


class AgentSettings(TypedDict, total=False):
    """``AgentSpec``'s keyword arguments, spelled out for type checkers.

    They follow the fields one for one, except that ``model`` also takes a plain model
    id and ``tools`` plain code tool names.
    """

    kind: Literal["agent"]
    name: Required[str]
    model: Required[ModelRef | str]
    tools: tuple[CodeTool | HttpTool | str, ...]
    description: str
    instructions: str
    mcp_servers: tuple[McpServer, ...]
    a2a_peers: tuple[A2APeer, ...]
    skills: tuple[Skill, ...]
    subagents: tuple[SubagentRef, ...]
    spawn: SpawnEnvelope | None
    compaction: CompactionPolicy | None
    code_execution: CodeExecution | None
    limits: Limits
    suspension: SuspensionPolicy
    tasks_enabled: bool
    components_enabled: bool
    answer_style: Literal["concise"] | None


class AgentSpec(SpecModel):
    """An agent: a model, its instructions, and everything it may reach, as data.

    The model may be given as a plain model id and a code tool as a plain name
    (``AgentSpec(name="courier", model="gpt-4o-mini", tools=("track_parcel",))``);
    both are stored as the full ``ModelRef`` and ``CodeTool``, so the shorthand and the
    long form are the same Version.

    Attributes:
        kind: always ``"agent"``.
        name: the agent's name.
        description: what the agent is for.
        instructions: the system prompt's core.
        model: which model to call.
        tools: code and HTTP tools, by name; held in name order.
        mcp_servers: MCP servers whose tools join each turn.
        a2a_peers: remote agents offered as tools.
        skills: instructions loaded on demand.
        subagents: children the agent may delegate to.
        spawn: the ceiling for children composed at run time; None forbids them.
        compaction: when history is summarised; None never summarises.
        code_execution: ``run_code`` settings; None does not offer it.
        limits: bounds on the Run.
        suspension: how long suspensions may wait.
        tasks_enabled: whether ``update_tasks`` is offered.
        components_enabled: whether ``show_component`` is offered.
        answer_style: ``"concise"`` asks the model for short answers.
    """

    kind: Literal["agent"] = "agent"
    name: Name
    description: Description = ""
    instructions: Text = ""
    model: ModelRef
    tools: SpecTools = ()
    mcp_servers: McpServers = ()
    a2a_peers: tuple[A2APeer, ...] = ()
    skills: tuple[Skill, ...] = ()
    subagents: tuple[SubagentRef, ...] = ()
    spawn: SpawnEnvelope | None = None
    compaction: CompactionPolicy | None = None
    code_execution: CodeExecution | None = None
    limits: Limits = Limits()
    suspension: SuspensionPolicy = SuspensionPolicy()
    tasks_enabled: bool = False
    components_enabled: bool = False
    answer_style: Literal["concise"] | None = None

    if TYPE_CHECKING:
        # Only type checkers see this signature, so the shorthand type-checks; at run
        # time pydantic's own __init__ validates, unchanged.
        def __init__(self, **settings: Unpack[AgentSettings]) -> None: ...

    @field_validator("model", mode="before")
    @classmethod
    def _model_name(cls, value: object) -> object:
        return model_name_as_ref(value)

    @field_validator("a2a_peers")
    @classmethod
    def _peers(cls, peers: tuple[A2APeer, ...]) -> tuple[A2APeer, ...]:
        return sorted_by_name(peers, "A2A peer")

    @field_validator("skills")
    @classmethod
    def _skills(cls, skills: tuple[Skill, ...]) -> tuple[Skill, ...]:
        return sorted_by_name(skills, "skill")

    @field_validator("subagents")
    @classmethod
    def _subagents(cls, subagents: tuple[SubagentRef, ...]) -> tuple[SubagentRef, ...]:
        return sorted_by_name(subagents, "subagent")

    @model_validator(mode="after")
    def _names_do_not_collide(self) -> Self:
        owners = check_owner_names(self.tools, self.mcp_servers, self.a2a_peers)
        execution = self.code_execution
        if execution is not None and execution.bindings is not None:
            granted = {tool.name for tool in self.tools}
            stray = [
                name
                for name in execution.bindings
                if name not in granted
                and name not in BINDABLE_BUILTINS
                and not any(name.startswith(owner + OWNER_SEPARATOR) for owner in owners)
            ]
            if stray:
                raise ValueError(
                    "code_execution.bindings may only name granted tools, bindable "
                    "built-ins or tools of a connected server or peer; unknown: " + ", ".join(stray)
                )
        return self


def check_owner_names(
    tools: tuple[StaticTool, ...],
    servers: tuple[McpServer, ...],
    peers: tuple[A2APeer, ...],
) -> tuple[str, ...]:
    """Refuse static tools that would collide with names minted for remote sources.

    Every tool a server or peer offers reaches the model as ``<owner>__<tool>``; a
    static tool spelled that way would be indistinguishable from one of them. A server
    and a peer sharing a name would mint colliding names in the same way.

    Args:
        tools: the Spec's static tools.
        servers: its MCP servers.
        peers: its A2A peers (empty for a workflow).

    Returns:
        The owner names (servers and peers), for further checks.

    Raises:
        ValueError: on the first kind of collision found.
    """
    server_names = {server.name for server in servers}
    peer_names = {peer.name for peer in peers}
    shared = sorted(server_names & peer_names)
    if shared:
        raise ValueError(
            "an MCP server and an A2A peer may not share a name (their tool names would "
            f"collide): {', '.join(shared)}"
        )
    owners = tuple(sorted(server_names | peer_names))
    minted = [
        tool.name
        for tool in tools
        if any(tool.name.startswith(owner + OWNER_SEPARATOR) for owner in owners)
    ]
    if minted:
        raise ValueError(
            "static tool names may not start with a connected server's or peer's name "
            f"followed by {OWNER_SEPARATOR!r}: {', '.join(minted)}"
        )
    return owners


SubagentRef.model_rebuild()

__all__ = [
    "AgentSettings",
    "AgentSpec",
    "Skill",
    "SpawnEnvelope",
    "SpawnRequest",
    "SubagentRef",
    "check_owner_names",
]
