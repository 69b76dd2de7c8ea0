"""The conversation of a Run, as messages a chat screen can show.

The model never sees a stored conversation: it sees what the agent loop projects from
the log each turn. This module walks the same records in the same way so a person
reading the thread reads what the model read, with two deliberate differences: tool
calls issued by a model-written program are listed too (they are real work a reader
wants to see), and messages a compaction replaced stay in place, with the summary
the model got instead added where the compaction happened.

Each compaction adds its own summary message, pinned to its own record, so after two
of them the thread holds both, in log order. That is history, not a second current
summary: the first one is what the model worked from between the two compactions,
and the later one (which was written from a transcript that already contained the
first) is the one in force from its position on. The newest summary is therefore
always the last summary message in the thread; nothing is reordered or repeated.

An assistant message lists only the tool calls that were started. A crash can cut a
turn after the model answered but before some of its calls were started; those calls
never ran and have no result, the model is not shown them again, and a reader is not
shown them either.

Messages queued ``next_run`` are carried into the Run that continues this one, so
they close this Run's thread, in the order they were sent, just as the continuing
Run's model is shown them.

Walking ``continues_run_id`` from Run to Run needs a store, so it belongs to the
runtime; :func:`combine_thread` joins the per-Run results it collects.
"""

from collections.abc import Iterable
from collections.abc import Sequence
from datetime import datetime
from typing import Literal

from pydantic import BaseModel
from pydantic import ConfigDict

from psych_runtime.core.ids import EntryId
from psych_runtime.core.ids import RunId
from psych_runtime.core.ids import ToolCallId
from psych_runtime.core.projections.tool_text import render_json
from psych_runtime.core.projections.tool_text import tool_result_text
from psych_runtime.core.records import CompactionApplied
from psych_runtime.core.records import JsonObject
from psych_runtime.core.records import ModelCallFinished
from psych_runtime.core.records import QueueCancelled
from psych_runtime.core.records import QueueConsumed
from psych_runtime.core.records import QueueEnqueued
from psych_runtime.core.records import QueueKind
from psych_runtime.core.records import Record
from psych_runtime.core.records import RunAdmitted
from psych_runtime.core.records import StepStarted
from psych_runtime.core.records import SubagentFinished
from psych_runtime.core.records import ToolCallFinished
from psych_runtime.core.records import ToolCallStarted
from psych_runtime.core.records import ToolOutcome

_FROZEN = ConfigDict(frozen=True, extra="forbid")

AGENT_STEP_KIND = "agent"
"""The step kind whose input is handed to the model as a user message."""

SUMMARY_PREFIX = "Summary of the earlier conversation:\n"
"""Opens the synthetic message that stands in for a compacted range."""


class MessageView(BaseModel):
    """One message of a thread, pinned to the record it came from.

    Attributes:
        role: who speaks: the person (or a queued message), the model, or a tool.
        content: the text as the model received or produced it.
        run_id: the Run whose log holds the record.
        seq: the record's position in that log, for linking back to it.
        at: when the record was written.
        tool_name: the tool, for a tool message.
        tool_call_id: the call, for a tool message.
        tool_call_ids: the calls an assistant message asked for, in order.
        is_error: a tool message reporting anything other than success.
    """

    model_config = _FROZEN

    role: Literal["user", "assistant", "tool"]
    content: str
    run_id: RunId
    seq: int
    at: datetime
    tool_name: str | None = None
    tool_call_id: ToolCallId | None = None
    tool_call_ids: tuple[ToolCallId, ...] = ()
    is_error: bool = False


class ThreadView(BaseModel):
    """A conversation across one or more Runs, oldest first.

    Attributes:
        run_ids: the Runs whose messages are included, oldest first.
        messages: every message of those Runs, in log order within each Run.
    """

    model_config = _FROZEN

    run_ids: tuple[RunId, ...]
    messages: tuple[MessageView, ...]


def _payload_text(payload: JsonObject) -> str:
    """A queued payload's message, or the whole payload when it has no message."""
    if "message" in payload:
        return render_json(payload["message"])
    return render_json(payload)


def _child_text(record: SubagentFinished) -> str:
    head = f'Subagent "{record.name}" finished ({record.state.value}).'
    if record.failure is not None:
        body = record.failure.message or record.failure.kind
    elif record.output is None:
        return head
    elif isinstance(record.output.get("text"), str):
        body = render_json(record.output["text"])
    else:
        body = render_json(record.output)
    return f"{head}\n{body}" if body else head


def _message(
    record: Record,
    role: Literal["user", "assistant", "tool"],
    content: str,
    *,
    tool_name: str | None = None,
    tool_call_id: ToolCallId | None = None,
    tool_call_ids: tuple[ToolCallId, ...] = (),
    is_error: bool = False,
) -> MessageView:
    return MessageView(
        role=role,
        content=content,
        run_id=record.run_id,
        seq=record.seq,
        at=record.at,
        tool_name=tool_name,
        tool_call_id=tool_call_id,
        tool_call_ids=tool_call_ids,
        is_error=is_error,
    )


def thread_messages(records: Sequence[Record]) -> tuple[MessageView, ...]:
    """Project one Run's log into the messages of its conversation.

    Args:
        records: the Run's records in log order (a whole log or any prefix of one).
            In a prefix that stops mid-turn, a call the model asked for shows up on its
            assistant message once its start is recorded.

    Returns:
        The messages in the order their records were written.
    """
    enqueued: dict[EntryId, QueueEnqueued] = {}
    tool_names: dict[ToolCallId, str] = {}
    # A model call is written before its tool calls start, so which of them ever
    # started is only known by looking ahead.
    started = {record.call_id for record in records if isinstance(record, ToolCallStarted)}
    messages: list[MessageView] = []
    for record in records:
        match record:
            case RunAdmitted() if "message" in record.input:
                messages.append(_message(record, "user", render_json(record.input["message"])))
            case StepStarted() if record.kind == AGENT_STEP_KIND and "message" in record.input:
                messages.append(_message(record, "user", render_json(record.input["message"])))
            case QueueEnqueued():
                enqueued[record.entry_id] = record
            case QueueConsumed() if record.entry_id in enqueued:
                text = _payload_text(enqueued[record.entry_id].payload)
                messages.append(_message(record, "user", text))
            case ModelCallFinished():
                calls = tuple(call_id for call_id in record.tool_calls if call_id in started)
                if record.text or calls:
                    messages.append(_message(record, "assistant", record.text, tool_call_ids=calls))
            case ToolCallStarted():
                tool_names[record.call_id] = record.tool
            case ToolCallFinished():
                messages.append(
                    _message(
                        record,
                        "tool",
                        tool_result_text(record),
                        tool_name=tool_names.get(record.call_id),
                        tool_call_id=record.call_id,
                        is_error=record.outcome is not ToolOutcome.OK,
                    )
                )
            case SubagentFinished():
                messages.append(_message(record, "user", _child_text(record)))
            case CompactionApplied():
                messages.append(_message(record, "user", SUMMARY_PREFIX + record.summary))
            case _:
                pass
    messages.extend(_carried(records, enqueued))
    return tuple(messages)


def _carried(
    records: Sequence[Record], enqueued: dict[EntryId, QueueEnqueued]
) -> list[MessageView]:
    """``next_run`` messages, shown last: they open the Run that continues this one."""
    cancelled = {r.entry_id for r in records if isinstance(r, QueueCancelled)}
    return [
        _message(entry, "user", _payload_text(entry.payload))
        for entry in enqueued.values()
        if entry.queue is QueueKind.NEXT_RUN and entry.entry_id not in cancelled
    ]


def project_thread(records: Sequence[Record]) -> ThreadView:
    """The thread of a single Run, without following ``continues_run_id``."""
    run_ids = (records[0].run_id,) if records else ()
    return ThreadView(run_ids=run_ids, messages=thread_messages(records))


def combine_thread(views_oldest_first: Iterable[ThreadView]) -> ThreadView:
    """Join per-Run threads into one conversation.

    The caller has already walked the chain of continuations and ordered it; this only
    concatenates, so the same Run passed twice appears twice.
    """
    run_ids: list[RunId] = []
    messages: list[MessageView] = []
    for view in views_oldest_first:
        run_ids.extend(view.run_ids)
        messages.extend(view.messages)
    return ThreadView(run_ids=tuple(run_ids), messages=tuple(messages))


__all__ = [
    "MessageView",
    "ThreadView",
    "combine_thread",
    "project_thread",
    "thread_messages",
]
