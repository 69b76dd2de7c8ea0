"""Publish-time validation: every problem in a Spec, found once, reported together.

Model construction already refuses anything that is wrong on its face (a bad name, a
duplicate, a loop with two stop rules). What remains needs outside knowledge or a view
of the whole tree: which tools the process registered, which models exist, which MCP
servers answer, whether skill links resolve, whether a tree of subagents fits its own
depth limit. Those checks run here, before a Version exists, because a Run in front of
a customer is the wrong moment to find a typo.

All issues are gathered and raised in one ``SpecValidationError`` so an author fixes
them in one pass instead of one per publish attempt.
"""

import re
from collections.abc import Collection
from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import replace

from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import JsonValue
from pydantic import ValidationError

from psych_runtime.core.errors import PsychError
from psych_runtime.core.json_schema import schema_problems
from psych_runtime.core.narrowing import narrow
from psych_runtime.core.spec import SPEC_ADAPTER
from psych_runtime.core.spec import AgentSpec
from psych_runtime.core.spec import AgentStep
from psych_runtime.core.spec import McpServer
from psych_runtime.core.spec import NamedToolChoice
from psych_runtime.core.spec import StaticTool
from psych_runtime.core.spec import ToolStep
from psych_runtime.core.spec import WorkflowSpec
from psych_runtime.core.spec import WorkflowStepRef
from psych_runtime.core.spec import walk_steps
from psych_runtime.core.spec.code_execution import CodeExecution
from psych_runtime.core.spec.code_execution import WorkspaceMode
from psych_runtime.core.spec.names import OWNER_SEPARATOR
from psych_runtime.core.spec.names import RESERVED_TOOL_NAMES

MAX_NESTING = 16
"""Embedded Specs (subagents, agent and workflow steps) may nest this deep below the root."""

JSON_SCHEMA_TYPES: frozenset[str] = frozenset(
    {"object", "array", "string", "number", "integer", "boolean", "null"}
)

SKILL_LINK = re.compile(r"\[\[skill:([^\]]*)\]\]")
"""A ``[[skill:name]]`` link in instructions or a skill's body; group 1 is the name."""


class ValidationIssue(BaseModel):
    """One problem, located by a dotted path from the root of the Spec.

    Attributes:
        path: for example ``subagents.0.spec.tools.1``; empty for the Spec itself.
        message: what is wrong, in words an author can act on.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str
    message: str


class SpecValidationError(PsychError, ValueError):
    """A Spec cannot be published; ``issues`` lists every reason.

    Attributes:
        issues: each problem with its path, in the order they were found.
    """

    def __init__(self, issues: Iterable[ValidationIssue]) -> None:
        self.issues: tuple[ValidationIssue, ...] = tuple(issues)
        count = len(self.issues)
        lines = "\n".join(f"  - {issue.path or '(spec)'}: {issue.message}" for issue in self.issues)
        super().__init__(f"the spec has {count} issue{'s' if count != 1 else ''}:\n{lines}")


def _names(values: Iterable[str], field: str) -> frozenset[str]:
    if isinstance(values, str):
        raise TypeError(f"{field} takes a collection of names, not a single string")
    return frozenset(values)


@dataclass(frozen=True, init=False)
class ValidationContext:
    """What the publishing process knows about its surroundings.

    Each collection switches one check on; left empty, that dimension is not checked,
    because a Spec may well be published by a process that is not the one running it.

    Attributes:
        registered_tools: names in the tool registry; code tools must be among them.
        known_models: model ids the consumer can serve.
        reachable_mcp_servers: MCP server names that answered; required servers must be
            among them.
        sandbox_profiles: sandbox profiles the host provides.
        registry_is_complete: treat ``registered_tools`` as the whole registry even
            when it is empty, so a code tool is refused when nothing is registered.
            By default, True when ``registered_tools`` is given (a registry's
            ``names``), False when it is not (nothing is known about code tools then).
        capabilities: Spec fields beyond the core that installed plugins run
            (``"mcp_servers"`` with psych-mcp, say); ``publish`` adds the installed
            ones. A field in ``NOT_RUN_YET`` named here is accepted.
    """

    registered_tools: frozenset[str]
    known_models: frozenset[str]
    reachable_mcp_servers: frozenset[str]
    sandbox_profiles: frozenset[str]
    registry_is_complete: bool
    capabilities: frozenset[str]

    def __init__(
        self,
        *,
        registered_tools: Iterable[str] | None = None,
        known_models: Iterable[str] = (),
        reachable_mcp_servers: Iterable[str] = (),
        sandbox_profiles: Iterable[str] = (),
        registry_is_complete: bool | None = None,
        capabilities: Iterable[str] = (),
    ) -> None:
        if registry_is_complete is None:
            registry_is_complete = registered_tools is not None
        object.__setattr__(
            self, "registered_tools", _names(registered_tools or (), "registered_tools")
        )
        object.__setattr__(self, "known_models", _names(known_models, "known_models"))
        object.__setattr__(
            self,
            "reachable_mcp_servers",
            _names(reachable_mcp_servers, "reachable_mcp_servers"),
        )
        object.__setattr__(self, "sandbox_profiles", _names(sandbox_profiles, "sandbox_profiles"))
        object.__setattr__(self, "registry_is_complete", registry_is_complete)
        object.__setattr__(self, "capabilities", _names(capabilities, "capabilities"))

    def with_capabilities(self, capabilities: Iterable[str]) -> "ValidationContext":
        """The same context, also accepting ``capabilities``."""
        return replace(self, capabilities=self.capabilities | frozenset(capabilities))


def _at(path: str, *parts: object) -> str:
    return ".".join([path, *map(str, parts)] if path else [str(part) for part in parts])


def schema_issues(schema: Mapping[str, JsonValue]) -> list[str]:
    """A shallow look at a tool's input schema, catching the usual authoring slips.

    Only the root is examined: enough to catch a schema that providers would reject
    outright, without pretending to be a JSON Schema validator.

    Args:
        schema: the schema as written; an empty one is accepted.

    Returns:
        Messages, empty when nothing is wrong.
    """
    if not schema:
        return []
    if "type" not in schema:
        return ["the input schema has no root 'type'"]
    found: list[str] = []
    kind = schema["type"]
    kinds = kind if isinstance(kind, list) else [kind]
    for each in kinds:
        if not isinstance(each, str) or each not in JSON_SCHEMA_TYPES:
            found.append(f"{each!r} is not a JSON Schema type")
    if "object" in kinds:
        properties = schema.get("properties", {})
        required = schema.get("required", [])
        if not isinstance(properties, dict):
            found.append("'properties' must be an object")
            properties = {}
        if not isinstance(required, list):
            found.append("'required' must be a list")
            required = []
        for name in required:
            if not isinstance(name, str) or name not in properties:
                found.append(f"required property {name!r} is not in 'properties'")
    return found


class _Collector:
    """Walks a Spec tree once, in a fixed order, writing down every issue."""

    def __init__(self, context: ValidationContext) -> None:
        self.context = context
        self.issues: list[ValidationIssue] = []

    def add(self, path: str, message: str) -> None:
        self.issues.append(ValidationIssue(path=path, message=message))

    def visit(
        self, spec: AgentSpec | WorkflowSpec, path: str, depth: int, ancestors: frozenset[int]
    ) -> None:
        if depth > MAX_NESTING:
            self.add(path, f"specs are nested more than {MAX_NESTING} levels deep")
            return
        if id(spec) in ancestors:
            self.add(path, f"spec {spec.name!r} contains itself")
            return
        inside = ancestors | {id(spec)}
        if isinstance(spec, AgentSpec):
            self.agent(spec, path, depth, inside)
        else:
            self.workflow(spec, path, depth, inside)

    def agent(self, spec: AgentSpec, path: str, depth: int, ancestors: frozenset[int]) -> None:
        self.models(spec, path)
        self.forced_tool(spec, path)
        self.tools(spec.tools, path)
        self.servers(spec.mcp_servers, path)
        self.skill_links(spec, path)
        deepest = _delegation_depth(spec, {}, frozenset())
        if deepest > spec.limits.max_delegation_depth:
            self.add(
                _at(path, "subagents"),
                f"the subagent tree is {deepest} levels deep but "
                f"limits.max_delegation_depth is {spec.limits.max_delegation_depth}",
            )
        execution = spec.code_execution
        profiles = self.context.sandbox_profiles
        if (
            execution is not None
            and execution.enabled
            and profiles
            and execution.profile not in profiles
        ):
            self.add(
                _at(path, "code_execution", "profile"),
                f"sandbox profile {execution.profile!r} is not provided here "
                f"(available: {', '.join(sorted(profiles))})",
            )
        if execution is not None and execution.enabled:
            self.code_gaps(execution, path)
        for index, ref in enumerate(spec.subagents):
            self.visit(ref.spec, _at(path, "subagents", index, "spec"), depth + 1, ancestors)

    def code_gaps(self, execution: CodeExecution, path: str) -> None:
        """Refuse the ``run_code`` settings this release does not honour yet.

        A program's workspace is fresh every time (no state survives between
        programs); a Spec that asks to keep one across the Run is refused rather than
        quietly half-run.
        """
        if execution.workspace is not WorkspaceMode.EPHEMERAL:
            self.add(
                _at(path, "code_execution", "workspace"),
                "this release does not keep a workspace across programs yet; "
                "leave workspace at 'ephemeral'",
            )

    def models(self, spec: AgentSpec, path: str) -> None:
        known = self.context.known_models
        if not known:
            return
        wanted: list[tuple[str, str]] = [(_at(path, "model", "model"), spec.model.model)]
        wanted += [
            (_at(path, "model", "fallbacks", i), model)
            for i, model in enumerate(spec.model.fallbacks)
        ]
        if spec.compaction is not None and spec.compaction.model is not None:
            wanted.append((_at(path, "compaction", "model"), spec.compaction.model))
        if spec.spawn is not None:
            wanted += [
                (_at(path, "spawn", "models", i), model)
                for i, model in enumerate(spec.spawn.models)
            ]
        for where, model in wanted:
            if model not in known:
                self.add(where, f"model {model!r} is not known")

    def forced_tool(self, spec: AgentSpec, path: str) -> None:
        """Refuse a ``tool_choice`` naming a tool the Spec can never offer.

        A static tool or a built-in is known by name; a tool of an MCP server or A2A
        peer is only known once the server answers, so its owner prefix (and the
        server's allow list) is all that can be checked here.
        """
        choice = spec.model.tool_choice
        if not isinstance(choice, NamedToolChoice):
            return
        name = choice.name
        if name in RESERVED_TOOL_NAMES or any(tool.name == name for tool in spec.tools):
            return
        for server in spec.mcp_servers:
            prefix = server.name + OWNER_SEPARATOR
            if name.startswith(prefix) and narrow(
                [name[len(prefix) :]], granted=server.allow or None
            ):
                return
        if any(name.startswith(peer.name + OWNER_SEPARATOR) for peer in spec.a2a_peers):
            return
        self.add(
            _at(path, "model", "tool_choice", "name"),
            f"tool_choice names {name!r}, which is none of this spec's tools, built-ins, "
            "or MCP server and A2A peer tools",
        )

    def tools(self, tools: tuple[StaticTool, ...], path: str) -> None:
        registered = self.context.registered_tools
        checked = bool(registered) or self.context.registry_is_complete
        code = [tool.name for tool in tools if tool.kind == "code"]
        # What a turn would offer of the granted code tools: the same narrowing the
        # runtime applies to the registry each turn.
        offered = set(narrow(registered, granted=code)) if checked else set(code)
        for index, tool in enumerate(tools):
            where = _at(path, "tools", index)
            if tool.kind == "code":
                if tool.name not in offered:
                    self.add(where, f"code tool {tool.name!r} is not registered")
            else:
                for message in schema_issues(tool.input_schema) or schema_problems(
                    tool.input_schema
                ):
                    self.add(_at(where, "input_schema"), f"tool {tool.name!r}: {message}")

    def schema(self, schema: Mapping[str, JsonValue] | None, where: str) -> None:
        """Refuse a JSON Schema the runtime could not check values against."""
        for message in schema_problems(schema):
            self.add(where, f"not a usable JSON Schema (2020-12): {message}")

    def servers(self, servers: tuple[McpServer, ...], path: str) -> None:
        reachable = self.context.reachable_mcp_servers
        if not reachable:
            return
        for index, server in enumerate(servers):
            if not server.optional and server.name not in reachable:
                self.add(
                    _at(path, "mcp_servers", index),
                    f"MCP server {server.name!r} is required but not reachable; "
                    "mark it optional if Runs may proceed without it",
                )

    def skill_links(self, spec: AgentSpec, path: str) -> None:
        names = {skill.name for skill in spec.skills}
        texts = [(_at(path, "instructions"), spec.instructions)]
        texts += [
            (_at(path, "skills", i, "body"), skill.body) for i, skill in enumerate(spec.skills)
        ]
        for where, text in texts:
            for target in SKILL_LINK.findall(text):
                if target not in names:
                    self.add(where, f"[[skill:{target}]] links to a skill this spec does not have")

    def workflow(
        self, spec: WorkflowSpec, path: str, depth: int, ancestors: frozenset[int]
    ) -> None:
        self.tools(spec.tools, path)
        self.servers(spec.mcp_servers, path)
        granted = {tool.name for tool in spec.tools}
        self.schema(spec.input_schema, _at(path, "input_schema"))
        for where, step in walk_steps(spec.steps, _at(path, "steps")):
            self.schema(getattr(step, "output_schema", None), _at(where, "output_schema"))
            self.schema(getattr(step, "payload_schema", None), _at(where, "payload_schema"))
            if isinstance(step, ToolStep):
                if not self.tool_reachable(step.tool, granted, spec.mcp_servers):
                    self.add(
                        _at(where, "tool"),
                        f"tool {step.tool!r} is neither granted by the workflow nor registered",
                    )
            elif isinstance(step, AgentStep | WorkflowStepRef):
                self.visit(step.spec, _at(where, "spec"), depth + 1, ancestors)

    def tool_reachable(self, name: str, granted: set[str], servers: tuple[McpServer, ...]) -> bool:
        if name in granted or name in self.context.registered_tools:
            return True
        for server in servers:
            prefix = server.name + OWNER_SEPARATOR
            tool = name[len(prefix) :]
            # An empty allow list grants everything the server offers.
            if name.startswith(prefix) and narrow([tool], granted=server.allow or None):
                return True
        return False


def _delegation_depth(spec: AgentSpec, memo: dict[int, int], active: frozenset[int]) -> int:
    """Levels of subagents below ``spec``; a cycle counts as no further depth."""
    key = id(spec)
    if key in memo:
        return memo[key]
    if key in active or not spec.subagents:
        return 0
    below = active | {key}
    depth = 1 + max(_delegation_depth(ref.spec, memo, below) for ref in spec.subagents)
    memo[key] = depth
    return depth


def collect_issues(
    spec: AgentSpec | WorkflowSpec, context: ValidationContext | None = None
) -> tuple[ValidationIssue, ...]:
    """Every issue in what a constructed Spec says, without raising.

    These checks hold for every capability, run or not yet run; whether this release
    can run the Spec at all is ``unsupported_issues``'s question, and ``validate``
    asks both.

    Args:
        spec: the Spec to check.
        context: what the publishing process knows; None checks only what needs no
            outside knowledge.

    Returns:
        The issues in visiting order; empty when nothing the Spec says is wrong.
    """
    collector = _Collector(context or ValidationContext())
    collector.visit(spec, "", 0, frozenset())
    return tuple(collector.issues)


NOT_RUN_YET: Mapping[str, str] = {
    "workflow.mcp_servers": "MCP servers",
    "agent.mcp_servers": "MCP servers",
    "agent.a2a_peers": "A2A peers",
    "agent.code_execution": "code execution",
}
"""What this release cannot run yet, keyed by Spec kind or ``kind.field.path``.

A key naming a kind refuses every Spec of that kind; a key naming a field refuses a
Spec whose field is set to anything but its default, unless an installed plugin runs
it (``ValidationContext.capabilities``: psych-mcp adds ``mcp_servers``). The row goes
when the capability lands in the core, and its Specs publish from then on with the
hash they always had.
"""


def _not_default(spec: AgentSpec | WorkflowSpec, path: str) -> bool:
    owner: BaseModel = spec
    *parents, leaf = path.split(".")
    for part in parents:
        owner = getattr(owner, part)
    default = type(owner).model_fields[leaf].get_default(call_default_factory=True)
    return bool(getattr(owner, leaf) != default)


def unsupported_issues(
    spec: AgentSpec | WorkflowSpec, path: str = "", *, capabilities: Collection[str] = ()
) -> tuple[ValidationIssue, ...]:
    """What in ``spec`` asks for a capability this release does not run yet.

    A Spec that publishes cleanly but then fails, or is quietly half-run, in front of a
    customer is worse than one refused at publish. A workflow's agent steps and nested
    workflows are examined too, since the engine runs them.

    Args:
        spec: a constructed Spec.
        path: where ``spec`` sits in the Spec being published ("" for the root).
        capabilities: fields installed plugins run, which are not refused.

    Returns:
        One issue per refused kind or field, in ``NOT_RUN_YET`` order, then those of
        nested Specs in step order.
    """
    issues = []
    for key, capability in NOT_RUN_YET.items():
        kind, _, field_path = key.partition(".")
        if kind != spec.kind or field_path in capabilities:
            continue
        if not field_path:
            issues.append(
                ValidationIssue(
                    path=_at(path, "kind") if path else "kind",
                    message=f"this release does not run {capability} yet",
                )
            )
        elif _not_default(spec, field_path):
            issues.append(
                ValidationIssue(
                    path=_at(path, field_path) if path else field_path,
                    message=f"this release does not run {capability} yet; "
                    "leave this field at its default to publish",
                )
            )
    if isinstance(spec, WorkflowSpec):
        for where, step in walk_steps(spec.steps, _at(path, "steps") if path else "steps"):
            if isinstance(step, AgentStep | WorkflowStepRef):
                issues.extend(
                    unsupported_issues(step.spec, _at(where, "spec"), capabilities=capabilities)
                )
            if isinstance(step, AgentStep) and step.spec.spawn is not None:
                # An agent step runs inline in the workflow's Attempt, which cannot
                # suspend to wait for background children.
                issues.append(
                    ValidationIssue(
                        path=_at(where, "spec", "spawn"),
                        message="this release does not run subagents composed at run "
                        "time inside a workflow's agent step yet; use a roster "
                        "(subagents) there, or leave spawn unset",
                    )
                )
    return tuple(issues)


_MISSING = object()


def _child(node: object, element: int | str) -> object:
    """``node[element]`` for a mapping, sequence or model, or ``_MISSING``."""
    if isinstance(node, Mapping):
        return node.get(element, _MISSING)
    if isinstance(node, list | tuple):
        if isinstance(element, int) and 0 <= element < len(node):
            return node[element]
        return _MISSING
    if isinstance(node, BaseModel) and isinstance(element, str):
        return getattr(node, element, _MISSING)
    return _MISSING


def _clean_path(loc: tuple[int | str, ...], data: object) -> str:
    """Turn a pydantic error location into a dotted path through the author's input.

    Pydantic puts the chosen member of a tagged union (``agent``, ``code``...) into the
    location; those elements are dropped by following the input alongside, so the path
    names only keys and indexes the author actually wrote. Below a plain name written
    as shorthand (a model id, a code tool's name) the path stops at that name.
    """
    parts: list[str] = []
    node: object = data
    for element in loc:
        if isinstance(node, str):
            break
        child = _child(node, element)
        if child is _MISSING and _kind_of(node) == element:
            continue
        node = child
        parts.append(str(element))
    return ".".join(parts)


def _kind_of(node: object) -> object:
    if isinstance(node, Mapping):
        return node.get("kind")
    return getattr(node, "kind", None)


def _from_pydantic(error: ValidationError, data: object) -> list[ValidationIssue]:
    details = error.errors()
    issues = []
    for detail in details:
        loc = detail["loc"]
        if detail["type"] == "too_short" and any(
            len(other["loc"]) > len(loc) and other["loc"][: len(loc)] == loc for other in details
        ):
            # A collection is "too short" only because a member failed; that member's
            # own error says what is wrong.
            continue
        message = detail["msg"].removeprefix("Value error, ")
        issues.append(ValidationIssue(path=_clean_path(detail["loc"], data), message=message))
    return issues


_SURROGATE = re.compile("[\ud800-\udfff]")


def unencodable_issues(spec: AgentSpec | WorkflowSpec) -> tuple[ValidationIssue, ...]:
    """Every string in the Spec holding a lone surrogate, each with its path.

    Such a string has no UTF-8 encoding, so the Spec could be neither hashed into a
    Version nor stored; an author fixes it like any other invalid value.
    """
    issues: list[ValidationIssue] = []
    try:
        dumped = spec.model_dump()
    except (ValueError, RecursionError):
        # Nesting too deep to dump; ``collect_issues`` reports that on its own.
        return ()
    # Walked with an explicit stack: a Spec's free-form JSON may nest deeply.
    stack: list[tuple[object, str]] = [(dumped, "")]
    while stack:
        node, path = stack.pop()
        if isinstance(node, str):
            found = _SURROGATE.search(node)
            if found is not None:
                issues.append(
                    ValidationIssue(
                        path=path,
                        message=(
                            f"holds a lone surrogate (U+{ord(found.group()):04X}) at "
                            f"character {found.start()}, which cannot be encoded as UTF-8"
                        ),
                    )
                )
        elif isinstance(node, Mapping):
            for key, child in reversed(list(node.items())):
                key_text = str(key)
                if _SURROGATE.search(key_text) is not None:
                    issues.append(
                        ValidationIssue(path=path, message="has a key holding a lone surrogate")
                    )
                    continue
                stack.append((child, _at(path, key_text)))
        elif isinstance(node, list | tuple | frozenset | set):
            for index, child in reversed(list(enumerate(node))):
                stack.append((child, _at(path, index)))
    return tuple(issues)


def validate(
    spec_or_dict: AgentSpec | WorkflowSpec | Mapping[str, object],
    *,
    context: ValidationContext | None = None,
) -> AgentSpec | WorkflowSpec:
    """Build (when given a dict) and check a Spec, raising every issue at once.

    Args:
        spec_or_dict: a Spec model, or a plain mapping naming its ``kind``.
        context: what the publishing process knows about its surroundings.

    Returns:
        The validated Spec.

    Raises:
        SpecValidationError: listing every issue with its path, first whatever asks for
            a capability this release does not run yet (``NOT_RUN_YET``). When the
            mapping cannot even be built into a model, the construction errors are
            what it lists.
    """
    if isinstance(spec_or_dict, AgentSpec | WorkflowSpec):
        spec = spec_or_dict
    else:
        try:
            spec = SPEC_ADAPTER.validate_python(spec_or_dict)
        except ValidationError as error:
            raise SpecValidationError(_from_pydantic(error, spec_or_dict)) from None
    capabilities = context.capabilities if context is not None else frozenset()
    issues = (
        unsupported_issues(spec, capabilities=capabilities)
        + unencodable_issues(spec)
        + collect_issues(spec, context)
    )
    if issues:
        raise SpecValidationError(issues)
    return spec


__all__ = [
    "JSON_SCHEMA_TYPES",
    "MAX_NESTING",
    "NOT_RUN_YET",
    "SKILL_LINK",
    "SpecValidationError",
    "ValidationContext",
    "ValidationIssue",
    "collect_issues",
    "schema_issues",
    "unencodable_issues",
    "unsupported_issues",
    "validate",
]
