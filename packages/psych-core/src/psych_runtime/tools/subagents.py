"""Subagent tools as the model sees them, and the narrowing that shapes each child.

Two ways to have a child Run do part of the work:

* ``delegate``: the parent's Spec embeds a roster of ``SubagentRef`` children; the
  call runs one of them to its end and returns its answer (blocking).
* ``spawn_subagent`` / ``check_subagent`` / ``message_subagent``: the model composes a
  child at run time, within the Spec's ``SpawnEnvelope``; the child runs in the
  background as a Run of its own, and its ending reaches the parent's log.

Everything here is pure: the tool definitions, reading the model's arguments, and the
narrowing rule (a child holds at most what its parent holds, so access only shrinks
down a tree). Running the children is ``runtime/agent/delegation.py``'s job.
"""

from collections.abc import Sequence
from typing import Final

from pydantic import JsonValue
from pydantic import ValidationError

from psych_runtime.core.messages import ToolDefinition
from psych_runtime.core.narrowing import narrow
from psych_runtime.core.records import JsonObject
from psych_runtime.core.spec import AgentSpec
from psych_runtime.core.spec import ModelRef
from psych_runtime.core.spec import SpawnEnvelope
from psych_runtime.core.spec import SpawnRequest
from psych_runtime.core.spec import StaticTool
from psych_runtime.core.spec import SubagentRef
from psych_runtime.tools.errors import ToolArgumentsInvalid

DELEGATE: Final = "delegate"
SPAWN_SUBAGENT: Final = "spawn_subagent"
CHECK_SUBAGENT: Final = "check_subagent"
MESSAGE_SUBAGENT: Final = "message_subagent"
SUBAGENT_TOOLS: Final = frozenset({DELEGATE, SPAWN_SUBAGENT, CHECK_SUBAGENT, MESSAGE_SUBAGENT})


def narrowed_tools(
    wanted: Sequence[StaticTool], parent: Sequence[StaticTool], ceiling: Sequence[str] | None = None
) -> tuple[StaticTool, ...]:
    """The tools of ``wanted`` a child may hold under ``parent`` (and a pattern ceiling).

    A child keeps a tool only when its parent holds a tool of the same name, so no child
    can do what its parent could not.
    """
    names = narrow((tool.name for tool in wanted), granted=[t.name for t in parent])
    if ceiling is not None:
        names = narrow(names, granted=ceiling)
    kept = set(names)
    return tuple(tool for tool in wanted if tool.name in kept)


def roster_child_spec(ref: SubagentRef, parent: AgentSpec) -> AgentSpec:
    """A roster child's Spec as it runs: its tools narrowed to those its parent holds."""
    tools = narrowed_tools(ref.spec.tools, parent.tools)
    if tools == ref.spec.tools:
        return ref.spec
    return ref.spec.model_copy(update={"tools": tools})


def delegate_definition(parent: AgentSpec) -> ToolDefinition:
    """``delegate``: one argument picks the child, the other briefs it."""
    lines = [
        "Hand a task to one of your subagents and wait for its answer. The subagent sees "
        "none of this conversation: put everything it needs in the task.",
        "Subagents:",
    ]
    for ref in parent.subagents:
        tools = ", ".join(tool.name for tool in roster_child_spec(ref, parent).tools) or "none"
        lines.append(f"- {ref.name}: {ref.description} (tools: {tools})")
    return ToolDefinition(
        name=DELEGATE,
        description="\n".join(lines),
        input_schema={
            "type": "object",
            "properties": {
                "agent": {
                    "type": "string",
                    "enum": [ref.name for ref in parent.subagents],
                    "description": "Which subagent does the task.",
                },
                "task": {
                    "type": "string",
                    "minLength": 1,
                    "description": "Everything the subagent needs to know to do the task.",
                },
            },
            "required": ["agent", "task"],
            "additionalProperties": False,
        },
    )


def read_delegation(parent: AgentSpec, arguments: JsonObject) -> tuple[SubagentRef, str]:
    """The roster entry and the task a ``delegate`` call names.

    Raises:
        ToolArgumentsInvalid: an unknown subagent, an empty task, or other arguments.
    """
    name, task = arguments.get("agent"), arguments.get("task")
    ref = next((ref for ref in parent.subagents if ref.name == name), None)
    problems = []
    if ref is None:
        known = ", ".join(ref.name for ref in parent.subagents)
        problems.append(f"agent: one of {known}")
    if not isinstance(task, str) or not task.strip():
        problems.append("task: a non-empty string")
    if set(arguments) - {"agent", "task"}:
        problems.append("only agent and task may be given")
    if problems or ref is None or not isinstance(task, str):
        raise ToolArgumentsInvalid(DELEGATE, problems)
    return ref, task


def spawn_definitions(envelope: SpawnEnvelope, parent: AgentSpec) -> tuple[ToolDefinition, ...]:
    """``spawn_subagent`` and ``check_subagent``, and ``message_subagent`` when allowed."""
    ceiling = narrowed_tools(parent.tools, parent.tools, envelope.tools or None)
    tools = ", ".join(tool.name for tool in ceiling) or "none"
    models = ", ".join(envelope.models) or parent.model.model
    schema = SpawnRequest.model_json_schema()
    schema.pop("title", None)
    definitions = [
        ToolDefinition(
            name=SPAWN_SUBAGENT,
            description=(
                "Start a subagent of your own design working in the background; you "
                "carry on meanwhile and its result reaches you when it finishes. It sees "
                "none of this conversation, so brief it fully. "
                f"Tools it may be given (name them in tools): {tools}. "
                f"Models it may use: {models}. "
                f"At most {envelope.max_alive} may run at once."
            ),
            input_schema=schema,
        ),
        ToolDefinition(
            name=CHECK_SUBAGENT,
            description="See how a subagent you started is getting on.",
            input_schema=_name_schema(),
            annotations=frozenset({"read-only"}),
        ),
    ]
    if envelope.may_message:
        message: JsonValue = {
            "type": "string",
            "minLength": 1,
            "description": "What to tell it; it reads this before its next step.",
        }
        definitions.append(
            ToolDefinition(
                name=MESSAGE_SUBAGENT,
                description="Send a running subagent you started a message, to steer it.",
                input_schema=_name_schema(message=message),
            )
        )
    return tuple(definitions)


def _name_schema(**more: JsonValue) -> dict[str, JsonValue]:
    """Arguments naming one child, plus ``more`` properties (all required)."""
    name: JsonValue = {"type": "string", "description": "The subagent's name."}
    return {
        "type": "object",
        "properties": {"name": name, **more},
        "required": ["name", *more],
        "additionalProperties": False,
    }


def read_spawn(arguments: JsonObject) -> SpawnRequest:
    """The model's ``spawn_subagent`` arguments as a validated ``SpawnRequest``.

    Raises:
        ToolArgumentsInvalid: what the request is missing or gets wrong.
    """
    try:
        return SpawnRequest.model_validate(arguments)
    except ValidationError as error:
        problems = [
            f"{'.'.join(str(part) for part in issue['loc']) or 'request'}: {issue['msg']}"
            for issue in error.errors(include_url=False)
        ]
        raise ToolArgumentsInvalid(SPAWN_SUBAGENT, problems) from None


def read_named(tool: str, arguments: JsonObject, *, message: bool = False) -> tuple[str, str]:
    """The child's name (and the message, for ``message_subagent``) a call gives.

    Raises:
        ToolArgumentsInvalid: a missing or empty name or message, or other arguments.
    """
    allowed = {"name", "message"} if message else {"name"}
    name, text = arguments.get("name"), arguments.get("message", "")
    problems = []
    if not isinstance(name, str) or not name:
        problems.append("name: the subagent's name")
    if message and (not isinstance(text, str) or not text.strip()):
        problems.append("message: a non-empty string")
    if set(arguments) - allowed:
        problems.append(f"only {' and '.join(sorted(allowed))} may be given")
    if problems or not isinstance(name, str) or not isinstance(text, str):
        raise ToolArgumentsInvalid(tool, problems)
    return name, text


def composed_child_spec(
    request: SpawnRequest, envelope: SpawnEnvelope, parent: AgentSpec, *, may_spawn: bool
) -> AgentSpec:
    """The Spec of a child composed at run time, narrowed on every plane.

    Tools are the request's patterns within the envelope's ceiling within what the
    parent holds; an empty request gives the child no tools. The model is the
    requested one when the envelope lists it, else the parent's. The child may compose
    children of its own (under the same envelope, narrowed to its own tools) only when
    ``may_spawn``.

    Raises:
        ToolArgumentsInvalid: the request names a model the envelope does not allow.
    """
    allowed_models = envelope.models or (parent.model.model,)
    model = request.model or (
        parent.model.model if parent.model.model in allowed_models else allowed_models[0]
    )
    if model not in allowed_models:
        raise ToolArgumentsInvalid(SPAWN_SUBAGENT, [f"model: one of {', '.join(allowed_models)}"])
    held = narrowed_tools(parent.tools, parent.tools, envelope.tools or None)
    tools = narrowed_tools(held, held, request.tools) if request.tools else ()
    child_envelope = (
        envelope.model_copy(update={"tools": tuple(tool.name for tool in tools)})
        if may_spawn
        else None
    )
    ref: ModelRef = parent.model.model_copy(update={"model": model, "fallbacks": ()})
    instructions = (
        f"You are {request.name}, a subagent started for this purpose: {request.purpose}\n"
        f"When you are done, answer with: {request.deliverable}"
    )
    return AgentSpec(
        name=request.name,
        description=request.purpose,
        instructions=instructions,
        model=ref,
        tools=tools,
        spawn=child_envelope,
        limits=parent.limits,
        suspension=parent.suspension,
    )


__all__ = [
    "CHECK_SUBAGENT",
    "DELEGATE",
    "MESSAGE_SUBAGENT",
    "SPAWN_SUBAGENT",
    "SUBAGENT_TOOLS",
    "composed_child_spec",
    "delegate_definition",
    "narrowed_tools",
    "read_delegation",
    "read_named",
    "read_spawn",
    "roster_child_spec",
    "spawn_definitions",
]
