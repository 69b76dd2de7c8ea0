"""Compaction: summarising the early part of a long conversation for the model.

Only the model's view shrinks. The log keeps every record; a ``compaction_applied``
record names the range of the log its summary stands in for, and the conversation the
model is shown replaces that range with the summary from then on.

When to compact is decided from what the provider reported for the previous call
(its prompt size), never from a local token estimate; where to cut is always a turn
boundary, so a tool call and its result are never separated.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from psych_runtime.core.messages import AssistantMessage
from psych_runtime.core.messages import Message
from psych_runtime.core.messages import SystemMessage
from psych_runtime.core.messages import ToolResultMessage
from psych_runtime.core.messages import UserMessage
from psych_runtime.core.records import Record
from psych_runtime.core.spec import CompactionPolicy
from psych_runtime.model.port import ModelRequest
from psych_runtime.runtime.conversation import Conversation

SUMMARY_INSTRUCTION = (
    "You condense conversations between a user, an assistant and its tools. Write a "
    "summary that lets the assistant carry on without the original messages: the user's "
    "goals and constraints, what was decided, facts learned from tools (with the exact "
    "identifiers, numbers and names), what is still open, and anything promised to the "
    "user. Leave out pleasantries. Write plain prose or short lists, no preamble."
)


@dataclass(frozen=True, slots=True)
class Cut:
    """The range of the log a summary will replace, both ends inclusive."""

    from_seq: int
    to_seq: int


def plan_cut(records: Sequence[Record], boundary: int, keep_recent_turns: int) -> Cut | None:
    """Where to cut so the newest ``keep_recent_turns`` turns stay verbatim.

    Args:
        records: the log so far (no turn open).
        boundary: the last seq an earlier compaction already replaced (0 if none).
        keep_recent_turns: turns that must survive untouched.

    Returns:
        The range to summarise, or None when there is nothing old enough to replace.
    """
    starts = [r.seq for r in records if r.type == "turn_started" and r.seq > boundary]
    if len(starts) <= keep_recent_turns:
        return None
    to_seq = starts[len(starts) - keep_recent_turns] - 1
    from_seq = boundary + 1
    if to_seq < from_seq:
        return None
    return Cut(from_seq, to_seq)


def _render(message: Message) -> str:
    if isinstance(message, UserMessage):
        return f"User: {message.content}"
    if isinstance(message, AssistantMessage):
        calls = "".join(f"\n  [called {c.name} with {c.arguments}]" for c in message.tool_calls)
        return f"Assistant: {message.content}{calls}"
    if isinstance(message, ToolResultMessage):
        label = f"Tool {message.name}" if message.name else "Tool"
        return f"{label}{' (error)' if message.is_error else ''}: {message.content}"
    return f"System: {message.content}"


def summary_request(
    records: Sequence[Record],
    cut: Cut,
    policy: CompactionPolicy,
    model: str,
    idle_timeout_seconds: float,
) -> ModelRequest:
    """The metered model call that writes the summary of ``cut``."""
    conversation = Conversation()
    conversation.update([r for r in records if r.seq <= cut.to_seq])
    transcript = "\n\n".join(_render(m) for m in conversation.messages())
    instruction = SUMMARY_INSTRUCTION
    if policy.summary_instructions:
        instruction = f"{instruction}\n\n{policy.summary_instructions}"
    return ModelRequest(
        model=model,
        messages=(
            SystemMessage(content=instruction),
            UserMessage(content=f"Summarise this conversation:\n\n{transcript}"),
        ),
        max_output_tokens=policy.max_summary_tokens,
        idle_timeout_seconds=idle_timeout_seconds,
    )
