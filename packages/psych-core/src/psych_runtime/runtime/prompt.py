"""Assembling the system prompt in a fixed order.

Providers cache a prompt's prefix. Everything that stays the same for the whole Run
(instructions, style) comes first and everything that may change from turn to turn
(advisories about withheld tools) comes last, so a change late in the prompt does not
invalidate the cached part before it.
"""

from collections.abc import Sequence

CONCISE_STYLE = (
    "Answer briefly: lead with the result, skip restating the question, and leave out "
    "detail the user did not ask for."
)


def withheld_advisory(tool: str, streak: int) -> str:
    """The notice a model gets when a tool is taken away after repeated failures."""
    return (
        f"The tool {tool} has failed {streak} times in a row in this run and is no longer "
        "available. Do not try to call it; work around it or explain the problem to the user."
    )


def system_prompt(
    instructions: str,
    *,
    answer_style: str | None = None,
    sections: Sequence[str] = (),
    advisories: Sequence[str] = (),
) -> str:
    """Join the stable parts first and the per-turn advisories last."""
    parts = [instructions.strip()] if instructions.strip() else []
    if answer_style == "concise":
        parts.append(CONCISE_STYLE)
    parts.extend(s for s in sections if s)
    parts.extend(advisories)
    return "\n\n".join(parts)
