"""Fluent construction of Specs: ``AgentBuilder`` and ``WorkflowBuilder``.

A builder collects the same fields a Spec has, one call at a time, and ``build()``
validates them into the Spec itself, so a built Spec, the same Spec written as Python
and the same Spec written as a dict are one Version with one hash. Every call returns a
new builder, so a half-built one can be shared and extended in two directions without
either seeing the other's additions.

Example:
    >>> from psych_runtime.core.spec.builders import AgentBuilder
    >>> support = (
    ...     AgentBuilder("support", model="gpt-4o-mini")
    ...     .describe("Answers questions about orders.")
    ...     .instructions("Be brief.")
    ...     .tools("lookup_order")
    ...     .limits(max_turns=8)
    ... )
    >>> spec = support.build()
    >>> spec.limits.max_turns, [tool.name for tool in spec.tools]
    (8, ['lookup_order'])
"""

from collections.abc import Callable
from collections.abc import Mapping
from typing import Protocol
from typing import Self

from pydantic import BaseModel
from pydantic import JsonValue

from psych_runtime.core.spec.agent import AgentSpec
from psych_runtime.core.spec.agent import Skill
from psych_runtime.core.spec.agent import SpawnEnvelope
from psych_runtime.core.spec.agent import SubagentRef
from psych_runtime.core.spec.base import LiveObjectInSpec
from psych_runtime.core.spec.code_execution import CodeExecution
from psych_runtime.core.spec.connections import A2APeer
from psych_runtime.core.spec.connections import McpServer
from psych_runtime.core.spec.limits import CompactionPolicy
from psych_runtime.core.spec.limits import Limits
from psych_runtime.core.spec.limits import SuspensionPolicy
from psych_runtime.core.spec.models import ModelRef
from psych_runtime.core.spec.tools import CodeTool
from psych_runtime.core.spec.tools import HttpTool
from psych_runtime.core.spec.workflow import AgentStep
from psych_runtime.core.spec.workflow import RetryPolicy
from psych_runtime.core.spec.workflow import Step
from psych_runtime.core.spec.workflow import ToolStep
from psych_runtime.core.spec.workflow import ValuePath
from psych_runtime.core.spec.workflow import WorkflowSpec

_Tool = CodeTool | HttpTool | str


class _Registered(Protocol):
    @property
    def name(self) -> str: ...


class _Found(Protocol):
    @property
    def function(self) -> Callable[..., object]: ...


class Registers(Protocol):
    """What ``AgentBuilder.tools`` needs of a registry to put a function in it."""

    def register(self, fn: Callable[..., object], /) -> _Registered:
        """Register ``fn`` under its own name."""
        ...

    def get(self, name: str, /) -> _Found | None:
        """The tool registered under ``name``, if any."""
        ...


def _registered_name(registry: Registers, function: Callable[..., object]) -> str:
    """The name ``function`` is registered under in ``registry``, registering it if new."""
    name = getattr(function, "__name__", None)
    if isinstance(name, str):
        existing = registry.get(name)
        if existing is not None and existing.function is function:
            return name
    return registry.register(function).name


def _refs(mapping: Mapping[str, object] | None) -> dict[str, object]:
    """Value references by name; a plain string is a data path (``"input.order_id"``)."""
    return {
        key: ValuePath(path=value) if isinstance(value, str) else value
        for key, value in (mapping or {}).items()
    }


class _Builder:
    """The immutable field collection both builders share."""

    __slots__ = ("_fields",)

    def __init__(self, fields: dict[str, object]) -> None:
        self._fields = fields

    def _with(self, **changes: object) -> Self:
        return type(self)._from({**self._fields, **changes})

    def _added(self, field: str, *items: object) -> Self:
        existing = self._fields.get(field, ())
        assert isinstance(existing, tuple)
        return self._with(**{field: (*existing, *items)})

    def _merged[M: BaseModel](
        self, field: str, kind: type[M], values: Mapping[str, object]
    ) -> Self:
        current = self._fields.get(field)
        base = current.model_dump(by_alias=True) if isinstance(current, BaseModel) else {}
        return self._with(**{field: kind.model_validate({**base, **values})})

    @classmethod
    def _from(cls, fields: dict[str, object]) -> Self:
        builder = cls.__new__(cls)
        _Builder.__init__(builder, fields)
        return builder

    def describe(self, description: str) -> Self:
        """Set what the agent or workflow is for."""
        return self._with(description=description)

    def tools(
        self, *tools: _Tool | Callable[..., object], registry: Registers | None = None
    ) -> Self:
        """Add static tools: code tools, HTTP tools, code tools by name, or functions.

        A function is registered in ``registry`` (a ``ToolRegistry``) and the Spec gets
        its registered name: a Spec never holds the function itself. A function that
        ``registry`` already holds under its name is not registered twice.

        Raises:
            LiveObjectInSpec: a function was given without a ``registry`` to put it in.
        """
        named: list[_Tool] = []
        for tool in tools:
            if isinstance(tool, CodeTool | HttpTool | str):
                named.append(tool)
                continue
            if registry is None:
                raise LiveObjectInSpec(
                    f"tools() got the function {getattr(tool, '__name__', tool)!r} without a "
                    "registry: pass registry=... to register it (the Spec keeps its name), "
                    "or register it yourself and give its name"
                )
            named.append(_registered_name(registry, tool))
        return self._added("tools", *named)

    def mcp_servers(self, *servers: McpServer) -> Self:
        """Add MCP servers whose tools are offered."""
        return self._added("mcp_servers", *servers)

    def limits(self, **bounds: object) -> Self:
        """Set bounds of ``Limits`` by name; earlier settings of other bounds are kept."""
        return self._merged("limits", Limits, bounds)

    def suspension(self, **fields: object) -> Self:
        """Set fields of ``SuspensionPolicy`` by name, keeping earlier ones."""
        return self._merged("suspension", SuspensionPolicy, fields)

    def fields(self) -> dict[str, object]:
        """What has been set so far, as the keyword arguments of the Spec."""
        return dict(self._fields)


class AgentBuilder(_Builder):
    """Builds an ``AgentSpec`` one call at a time; ``build()`` validates it.

    Args:
        name: the agent's name.
        model: the model, as a ``ModelRef`` or a plain model name (settable later).
    """

    __slots__ = ()

    def __init__(self, name: str, *, model: ModelRef | str | None = None) -> None:
        fields: dict[str, object] = {"name": name}
        if model is not None:
            fields["model"] = model
        super().__init__(fields)

    def model(self, model: ModelRef | str, **settings: object) -> Self:
        """Set the model: a ``ModelRef``, or a name with ``ModelRef`` settings by keyword."""
        if isinstance(model, ModelRef):
            if not settings:
                return self._with(model=model)
            return self._with(model=ModelRef.model_validate({**model.model_dump(), **settings}))
        return self._with(model=ModelRef.model_validate({"model": model, **settings}))

    def instructions(self, text: str) -> Self:
        """Set the system instructions."""
        return self._with(instructions=text)

    def a2a_peers(self, *peers: A2APeer) -> Self:
        """Add remote agents offered as tools."""
        return self._added("a2a_peers", *peers)

    def skill(self, name: str, description: str, body: str) -> Self:
        """Add a skill: its name and description are always shown, its body on demand."""
        return self._added("skills", Skill(name=name, description=description, body=body))

    def subagent(self, name: str, description: str, spec: "AgentSpec | AgentBuilder") -> Self:
        """Add a child agent to the roster; a builder is built first."""
        child = spec.build() if isinstance(spec, AgentBuilder) else spec
        return self._added("subagents", SubagentRef(name=name, description=description, spec=child))

    def spawn(self, envelope: SpawnEnvelope | None = None, **fields: object) -> Self:
        """Allow children composed at run time, within ``envelope`` (or its fields)."""
        chosen = envelope if envelope is not None else SpawnEnvelope.model_validate(fields)
        return self._with(spawn=chosen)

    def compaction(self, policy: CompactionPolicy) -> Self:
        """Set how the conversation is compacted when it grows long."""
        return self._with(compaction=policy)

    def code_execution(self, config: CodeExecution) -> Self:
        """Let the model run code in a sandbox, as ``config`` says."""
        return self._with(code_execution=config)

    def tasks(self, enabled: bool = True) -> Self:
        """Offer the task-list tool."""
        return self._with(tasks_enabled=enabled)

    def components(self, enabled: bool = True) -> Self:
        """Offer the UI-component tool."""
        return self._with(components_enabled=enabled)

    def answer_style(self, style: str | None) -> Self:
        """Set the answer style (``"concise"``, or None for the default)."""
        return self._with(answer_style=style)

    def build(self) -> AgentSpec:
        """The ``AgentSpec``; raises pydantic's ``ValidationError`` naming each bad field."""
        return AgentSpec.model_validate(self._fields)


class WorkflowBuilder(_Builder):
    """Builds a ``WorkflowSpec`` one call at a time; ``build()`` validates it.

    Steps are added in order with ``agent_step``, ``tool_step`` or, for any other kind,
    ``step`` with the step model (or its dict). Where a value reference is expected
    (``input``, ``arguments_from``, ``output``), a plain string is a data path such as
    ``"steps.fetch.output.items"``; write a ``LiteralValue`` for a fixed value.

    Args:
        name: the workflow's name.
    """

    __slots__ = ()

    def __init__(self, name: str) -> None:
        super().__init__({"name": name})

    def step(self, *steps: Step | Mapping[str, object]) -> Self:
        """Append steps of any kind, as models or as dicts."""
        return self._added("steps", *steps)

    def agent_step(
        self,
        name: str,
        spec: AgentSpec | AgentBuilder,
        *,
        input: Mapping[str, object] | None = None,
        **common: object,
    ) -> Self:
        """Append an agent step; ``input`` maps names to value references."""
        agent = spec.build() if isinstance(spec, AgentBuilder) else spec
        step = AgentStep.model_validate(
            {"name": name, "spec": agent, "input": _refs(input), **common}
        )
        return self._added("steps", step)

    def tool_step(
        self,
        name: str,
        tool: str,
        *,
        arguments: Mapping[str, JsonValue] | None = None,
        arguments_from: Mapping[str, object] | None = None,
        **common: object,
    ) -> Self:
        """Append a step that calls one tool with fixed and computed arguments."""
        step = ToolStep.model_validate(
            {
                "name": name,
                "tool": tool,
                "arguments": dict(arguments or {}),
                "arguments_from": _refs(arguments_from),
                **common,
            }
        )
        return self._added("steps", step)

    def input_schema(self, schema: Mapping[str, JsonValue]) -> Self:
        """Require the Run's input to satisfy this JSON Schema before any step."""
        return self._with(input_schema=dict(schema))

    def initial_state(self, **values: JsonValue) -> Self:
        """Set the state the first step sees."""
        return self._with(initial_state=values)

    def output(self, mapping: Mapping[str, object]) -> Self:
        """Set the workflow's output, key by key, as value references."""
        return self._with(output=_refs(mapping))

    def retry(self, policy: RetryPolicy | None = None, **fields: object) -> Self:
        """Set the retry policy of steps that set none."""
        chosen = policy if policy is not None else RetryPolicy.model_validate(fields)
        return self._with(retry=chosen)

    def build(self) -> WorkflowSpec:
        """The ``WorkflowSpec``; raises pydantic's ``ValidationError`` naming bad fields."""
        return WorkflowSpec.model_validate(self._fields)


__all__ = ["AgentBuilder", "WorkflowBuilder"]
