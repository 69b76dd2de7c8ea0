"""The memory built-ins: ``remember`` and ``forget``, and what the prompt recalls.

With a ``MemoryStore`` configured and an end user known for the Run, the model is told
what it remembers about that person (the newest facts, in a section of the system
prompt) and may keep a new fact with ``remember`` or drop a wrong one with ``forget``.
Both are ordinary tool calls, recorded in the log like any other.
"""

from collections.abc import Sequence
from typing import Final

from psych_runtime.core.messages import ToolDefinition
from psych_runtime.core.records import JsonObject
from psych_runtime.memory.port import MAX_MEMORY_CHARS
from psych_runtime.memory.port import Memory
from psych_runtime.tools.errors import ToolArgumentsInvalid

REMEMBER: Final = "remember"
FORGET: Final = "forget"
MEMORY_TOOLS: Final = frozenset({REMEMBER, FORGET})

END_USER_INPUT_KEY: Final = "end_user_id"
"""Where a Run's input names the end user its facts belong to."""

WITHHELD_FACT: Final = "(kept in the memory store only; not recorded in the log)"
"""What the log records instead of the text of a ``remember`` call's fact.

A fact's text lives only in the MemoryStore, where ``erase`` reaches it; the log,
which is never rewritten, names facts by id."""

REMEMBER_DEFINITION = ToolDefinition(
    name=REMEMBER,
    description=(
        "Keep one fact about the user for later conversations: a preference, a detail "
        "they told you, a decision. One short, self-contained sentence per fact; never "
        "keep secrets such as passwords or card numbers."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "fact": {"type": "string", "minLength": 1, "maxLength": MAX_MEMORY_CHARS},
        },
        "required": ["fact"],
        "additionalProperties": False,
    },
)

FORGET_DEFINITION = ToolDefinition(
    name=FORGET,
    description=(
        "Drop a fact you remembered about the user that is wrong or out of date, by the "
        "id shown next to it."
    ),
    input_schema={
        "type": "object",
        "properties": {"id": {"type": "string", "minLength": 1}},
        "required": ["id"],
        "additionalProperties": False,
    },
)


def shared_section(facts: Sequence[str]) -> str:
    """The system prompt's list of what every Run of the process knows ("" for none)."""
    if not facts:
        return ""
    return "\n".join(["What you know in every conversation:", *(f"- {fact}" for fact in facts)])


def memory_section(facts: Sequence[Memory]) -> str:
    """The system prompt's list of what is remembered about the user."""
    if not facts:
        return (
            "You remember nothing about this user yet. Use remember to keep a fact for "
            "later conversations."
        )
    lines = ["What you remember about this user from earlier conversations (id: fact):"]
    lines.extend(f"- {fact.id}: {fact.content}" for fact in facts)
    return "\n".join(lines)


def recorded_memory_section(facts: Sequence[Memory]) -> str:
    """The section as the log records it: the same list, the facts' ids without their text.

    The model is sent ``memory_section``; ``model_call_started.system_prompt`` keeps
    this one, so erasing a person's facts leaves nothing of their text in any log.
    """
    if not facts:
        return memory_section(facts)
    lines = ["What you remember about this user from earlier conversations (id: fact):"]
    lines.extend(f"- {fact.id}: (text kept in the memory store only)" for fact in facts)
    return "\n".join(lines)


def recorded_arguments(name: str, arguments: JsonObject) -> JsonObject:
    """The arguments a ``remember`` call's start record carries: the fact withheld."""
    if name == REMEMBER and "fact" in arguments:
        return {**arguments, "fact": WITHHELD_FACT}
    return arguments


def read_fact(arguments: JsonObject) -> str:
    """The fact a ``remember`` call keeps.

    Raises:
        ToolArgumentsInvalid: anything but one non-empty ``fact``.
    """
    fact = arguments.get("fact")
    if set(arguments) != {"fact"} or not isinstance(fact, str) or not fact.strip():
        raise ToolArgumentsInvalid(REMEMBER, ["fact: one non-empty string, and nothing else"])
    if fact == WITHHELD_FACT:
        # Only a call rebuilt from the log carries this; the fact itself is not known.
        raise ToolArgumentsInvalid(REMEMBER, ["fact: the text of the fact to keep"])
    return fact


def read_fact_id(arguments: JsonObject) -> str:
    """The id a ``forget`` call names.

    Raises:
        ToolArgumentsInvalid: anything but one non-empty ``id``.
    """
    fact_id = arguments.get("id")
    if set(arguments) != {"id"} or not isinstance(fact_id, str) or not fact_id:
        raise ToolArgumentsInvalid(FORGET, ["id: the id of a remembered fact, and nothing else"])
    return fact_id


def end_user_of(run_input: JsonObject, default: str | None) -> str | None:
    """The end user a Run's facts belong to: its input's, else the Runtime's."""
    named = run_input.get(END_USER_INPUT_KEY)
    if isinstance(named, str) and named:
        return named
    return default


__all__ = [
    "END_USER_INPUT_KEY",
    "FORGET",
    "FORGET_DEFINITION",
    "MEMORY_TOOLS",
    "REMEMBER",
    "REMEMBER_DEFINITION",
    "WITHHELD_FACT",
    "end_user_of",
    "memory_section",
    "read_fact",
    "read_fact_id",
    "recorded_arguments",
    "recorded_memory_section",
]
