"""The text a model is shown for a settled tool call.

The thread projection and the agent loop must render a result identically, or a
conversation replayed for a person would differ from the one the model actually had.
Keeping the wording in one pure function is what makes them agree.
"""

import json

from pydantic import JsonValue

from psych_runtime.core.records import ToolCallFinished
from psych_runtime.core.records import ToolFailure
from psych_runtime.core.records import ToolOutcome

UNKNOWN_OUTCOME_TEXT = (
    "This call was interrupted before its result was recorded, so it may or may not "
    "have taken effect. Check the current state before trying it again."
)
"""Shown for an ``unknown`` outcome, where repeating the call blindly could double an effect."""

ABORTED_TEXT = "This call was cancelled before it finished; part of its effect may have happened."
"""Shown for an ``aborted`` outcome."""


def render_json(value: JsonValue) -> str:
    """Render a JSON value compactly, leaving a string exactly as it is.

    Strings pass through untouched so a tool that returns prose is not wrapped in
    quotes; anything else becomes compact JSON, the cheapest faithful form in tokens.
    """
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)


def failure_text(failure: ToolFailure | None) -> str:
    """Say what went wrong without the classifier or a host traceback.

    The ``kind`` is for programs, not for the model, and a host traceback leaks
    internals the model cannot act on; only code the model itself wrote gets its
    traceback back, because there it is the most useful thing to read.
    """
    if failure is None:
        return "The tool failed without saying why."
    text = failure.message or f"The tool failed ({failure.kind})."
    if failure.traceback_is_for_the_model and failure.traceback:
        text = f"{text}\n\n{failure.traceback}"
    return text


def elided_text(result_bytes: int, handle: str, preview: str | None) -> str:
    """Describe a result too large to show whole, and how to read the rest.

    The model gets the size so it can judge whether paging is worth it, the handle
    to page with, and the opening of the result so it often needs nothing more.
    """
    size = f"{result_bytes} bytes" if result_bytes > 0 else "too large"
    head = (
        f"[Result not shown in full ({size}). Read it with read_tool_output using "
        f'handle "{handle}".]'
    )
    if not preview:
        return head
    return f"{head}\nIt begins:\n{preview}"


def tool_result_text(finished: ToolCallFinished) -> str:
    """The content of the tool message the model received for this call."""
    if finished.outcome is ToolOutcome.OK:
        if finished.result_handle is not None:
            return elided_text(finished.result_bytes, finished.result_handle, finished.preview)
        return render_json(finished.result)
    if finished.outcome is ToolOutcome.ERROR:
        return failure_text(finished.failure)
    if finished.outcome is ToolOutcome.ABORTED:
        return ABORTED_TEXT
    return UNKNOWN_OUTCOME_TEXT


__all__ = [
    "ABORTED_TEXT",
    "UNKNOWN_OUTCOME_TEXT",
    "elided_text",
    "failure_text",
    "render_json",
    "tool_result_text",
]
