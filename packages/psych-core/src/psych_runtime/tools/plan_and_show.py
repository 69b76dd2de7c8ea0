"""The built-ins ``update_tasks`` and ``show_component``: a plan and UI for the consumer.

``update_tasks`` (offered when the Spec sets ``tasks_enabled``) replaces the agent's
whole task list; ``show_component`` (offered with ``components_enabled``) hands the
consumer one structured piece of UI (a card, a chart, ...). Both are recorded in the
log (``task_list_updated``, ``component_shown``) in the same batch as the call's
finish, so ``status()`` and ``report()`` show them and a crash never leaves one half
written. A component is data for the consumer's own interface, so anything in it that
a browser would execute or load from an unvetted scheme (``javascript:``, ``data:``,
``vbscript:``, ``file:`` links) is refused.
"""

import re
from collections.abc import Iterator
from typing import Final
from typing import get_args

from pydantic import JsonValue
from pydantic import ValidationError

from psych_runtime.core.messages import ToolDefinition
from psych_runtime.core.records import Component
from psych_runtime.core.records import JsonObject
from psych_runtime.core.records import Task
from psych_runtime.tools.errors import ToolArgumentsInvalid

UPDATE_TASKS: Final = "update_tasks"
SHOW_COMPONENT: Final = "show_component"

MAX_TASKS: Final = 50
"""The most tasks one list may hold."""

_UNSAFE_SCHEME = re.compile(r"^\s*(javascript|data|vbscript|file)\s*:", re.IGNORECASE)
_STATUSES = list(get_args(Task.model_fields["status"].annotation))
_KINDS = list(get_args(Component.model_fields["kind"].annotation))

UPDATE_TASKS_DEFINITION: Final = ToolDefinition(
    name=UPDATE_TASKS,
    description=(
        "Replace your task list for this run: the plan you are following, shown to the "
        "user. Send the whole list every time, each task with a short title and a status "
        "(pending, in_progress, completed or cancelled); keep at most one in_progress."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "tasks": {
                "type": "array",
                "maxItems": MAX_TASKS,
                "items": {
                    "type": "object",
                    "properties": {
                        "title": {"type": "string", "minLength": 1, "maxLength": 1024},
                        "status": {"type": "string", "enum": _STATUSES},
                        "note": {"type": "string", "maxLength": 4096},
                    },
                    "required": ["title", "status"],
                    "additionalProperties": False,
                },
            }
        },
        "required": ["tasks"],
        "additionalProperties": False,
    },
    annotations=frozenset({"idempotent"}),
)

SHOW_COMPONENT_DEFINITION: Final = ToolDefinition(
    name=SHOW_COMPONENT,
    description=(
        "Show the user a structured piece of interface next to your answer: a card, a "
        "carousel, a detail view, a timeline, a chart or a metric. Give its kind, an "
        "optional title, and its data as a JSON object; links must be http or https."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "kind": {"type": "string", "enum": _KINDS},
            "title": {"type": "string", "maxLength": 1024},
            "data": {"type": "object"},
        },
        "required": ["kind"],
        "additionalProperties": False,
    },
)


def tasks_from(arguments: JsonObject) -> tuple[Task, ...]:
    """The task list an ``update_tasks`` call sets.

    Raises:
        ToolArgumentsInvalid: the arguments do not describe a list of tasks.
    """
    if set(arguments) != {"tasks"} or not isinstance(arguments["tasks"], list):
        raise ToolArgumentsInvalid(UPDATE_TASKS, ["tasks: pass one argument, a list of tasks"])
    raw = arguments["tasks"]
    if len(raw) > MAX_TASKS:
        raise ToolArgumentsInvalid(UPDATE_TASKS, [f"tasks: at most {MAX_TASKS} tasks"])
    problems: list[str] = []
    tasks: list[Task] = []
    for index, item in enumerate(raw):
        try:
            tasks.append(Task.model_validate(item))
        except ValidationError as error:
            problems.extend(_problems(f"tasks[{index}]", error))
    if problems:
        raise ToolArgumentsInvalid(UPDATE_TASKS, problems)
    return tuple(tasks)


def component_from(arguments: JsonObject) -> Component:
    """The component a ``show_component`` call shows.

    Raises:
        ToolArgumentsInvalid: the arguments are not a component, or a string in it is a
            link with a scheme a browser would execute or that leaves the web.
    """
    try:
        component = Component.model_validate(arguments)
    except ValidationError as error:
        raise ToolArgumentsInvalid(SHOW_COMPONENT, _problems("", error)) from None
    unsafe = [
        f"{where}: {value[:40]!r} uses a scheme that is not allowed (use http or https)"
        for where, value in _strings(component.model_dump(mode="json"), "")
        if _UNSAFE_SCHEME.match(value)
    ]
    if unsafe:
        raise ToolArgumentsInvalid(SHOW_COMPONENT, unsafe)
    return component


def _strings(value: JsonValue, where: str) -> Iterator[tuple[str, str]]:
    """Every string in a JSON value, with its path."""
    if isinstance(value, str):
        yield where or "(value)", value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, f"{where}.{key}" if where else key)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, f"{where}[{index}]")


def _problems(prefix: str, error: ValidationError) -> list[str]:
    found = []
    for issue in error.errors():
        location = ".".join(str(part) for part in issue["loc"])
        where = f"{prefix}.{location}" if prefix and location else prefix or location
        found.append(f"{where or '(arguments)'}: {issue['msg']}")
    return found


__all__ = [
    "MAX_TASKS",
    "SHOW_COMPONENT",
    "SHOW_COMPONENT_DEFINITION",
    "UPDATE_TASKS",
    "UPDATE_TASKS_DEFINITION",
    "component_from",
    "tasks_from",
]
