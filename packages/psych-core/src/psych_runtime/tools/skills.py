"""Skills: instructions a model loads only when it needs them.

A Spec's skills cost the prompt one line each (name and description, in a section of
the system prompt); a skill's body, which may be long, reaches the model only when it
calls the built-in ``load_skill``. The call is recorded like any tool call, so the log
shows which skill was read on which turn, and a second load of the same skill in one
Run says so in its result (the body is given again, since compaction may have dropped
the first copy from the conversation), and names the skills its body links to.

Skill bodies and instructions may point at other skills with ``[[skill:name]]``;
publishing checks that every such link names a skill of the same Spec
(``psych_runtime.core.validation``).
"""

from collections.abc import Sequence
from typing import Final

from pydantic import JsonValue

from psych_runtime.core.messages import ToolDefinition
from psych_runtime.core.records import JsonObject
from psych_runtime.core.records import ToolOutcome
from psych_runtime.core.spec import Skill
from psych_runtime.core.state import RunStateView
from psych_runtime.core.validation import SKILL_LINK
from psych_runtime.tools.errors import ToolArgumentsInvalid

LOAD_SKILL: Final = "load_skill"
"""The built-in's name (reserved: no registered tool may take it)."""


def skills_section(skills: Sequence[Skill]) -> str:
    """The system prompt's list of skills: one line each, bodies left out."""
    if not skills:
        return ""
    lines = [
        "Skills you can load: each is a set of instructions for one kind of task. Before "
        f"doing such a task, call {LOAD_SKILL} with the skill's name to read them.",
    ]
    lines.extend(f"- {skill.name}: {skill.description}" for skill in skills)
    return "\n".join(lines)


def load_skill_definition(skills: Sequence[Skill]) -> ToolDefinition:
    """How ``load_skill`` is described to the model: one argument, the skill's name."""
    return ToolDefinition(
        name=LOAD_SKILL,
        description=(
            "Read the full instructions of one of the skills listed in the system prompt. "
            "Call it before a task the skill covers; links such as [[skill:name]] in the "
            "text point at other skills you can load the same way."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "name": {
                    "type": "string",
                    "enum": [skill.name for skill in skills],
                    "description": "The skill's name, as listed.",
                }
            },
            "required": ["name"],
            "additionalProperties": False,
        },
        annotations=frozenset({"read-only", "idempotent"}),
    )


def load_skill(skills: Sequence[Skill], arguments: JsonObject, state: RunStateView) -> JsonValue:
    """The result of a ``load_skill`` call: the skill's body, flagged when loaded before.

    Raises:
        ToolArgumentsInvalid: no skill of this Spec has that name.
    """
    name = arguments.get("name")
    chosen = next((skill for skill in skills if skill.name == name), None)
    if chosen is None or set(arguments) != {"name"}:
        known = ", ".join(skill.name for skill in skills) or "none"
        raise ToolArgumentsInvalid(
            LOAD_SKILL, [f"name: pass exactly one argument, name, one of: {known}"]
        )
    earlier = [
        result.turn
        for result in state.tool_results
        if result.tool == LOAD_SKILL
        and result.outcome is ToolOutcome.OK
        and isinstance(result.result, dict)
        and result.result.get("skill") == chosen.name
    ]
    loaded: JsonObject = {"skill": chosen.name, "instructions": chosen.body}
    linked = sorted({name for name in SKILL_LINK.findall(chosen.body) if name != chosen.name})
    if linked:
        loaded["linked_skills"] = list(linked)
    if earlier:
        loaded["already_loaded"] = True
        loaded["first_loaded_on_turn"] = earlier[0]
        loaded["note"] = (
            "You loaded this skill earlier in this run; these are the same instructions."
        )
    return loaded


__all__ = [
    "LOAD_SKILL",
    "load_skill",
    "load_skill_definition",
    "skills_section",
]
