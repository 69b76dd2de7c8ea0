"""The conversation the model sees, projected from the log.

Nothing about the conversation is stored: every request is rebuilt from the records,
so a reclaiming Worker shows the model exactly what the first one would have. The
builder is incremental (it remembers how far it has read) because the agent loop asks
for the messages once per turn.
"""

import json
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field

from psych_runtime.core.messages import AssistantMessage
from psych_runtime.core.messages import Message
from psych_runtime.core.messages import ToolCallRequest
from psych_runtime.core.messages import ToolResultMessage
from psych_runtime.core.messages import UserMessage
from psych_runtime.core.projections.tool_text import render_json
from psych_runtime.core.projections.tool_text import tool_result_text
from psych_runtime.core.records import JsonObject
from psych_runtime.core.records import Record
from psych_runtime.core.records import ToolOutcome

SUMMARY_PREFIX = "Summary of the earlier part of this conversation:\n"


def input_text(payload: JsonObject) -> str | None:
    """The user-visible text of an admission input or a queued message."""
    if not payload:
        return None
    message = payload.get("message")
    if isinstance(message, str):
        return message
    return render_json(payload)


@dataclass
class _Turn:
    seq: int
    text: str
    call_ids: tuple[str, ...]
    calls: dict[str, ToolCallRequest] = field(default_factory=dict)
    built: AssistantMessage | None = None
    """The message last built for this turn (None: nothing to show), valid while fresh."""
    fresh: bool = False

    def message(self) -> AssistantMessage | None:
        """The assistant message this turn shows (None when it has nothing to show).

        Only calls that were started are shown: they alone have a name, arguments and
        a result. A crash can land between the model's answer and the start of its
        calls; a call it left unstarted was never run, so it is left out rather than
        sent without a result (which providers refuse). The model sees what did happen
        and can ask for the rest again. Built once per set of calls, not once per
        request: the agent loop asks for the whole conversation every turn.
        """
        if not self.fresh:
            calls = tuple(self.calls[i] for i in self.call_ids if i in self.calls)
            self.built = (
                AssistantMessage(content=self.text, tool_calls=calls)
                if self.text or calls
                else None
            )
            self.fresh = True
        return self.built


@dataclass
class _Entry:
    seq: int
    message: Message | _Turn


class Conversation:
    """Incrementally folds records into the model-facing message list."""

    def __init__(self) -> None:
        self._entries: list[_Entry] = []
        self._turns: dict[str, _Turn] = {}
        self._queued: dict[str, JsonObject] = {}
        self._program_calls: set[str] = set()
        self._inline_children: set[str] = set()
        self._news: list[UserMessage] = []
        self._read = 0
        self._epoch = 0

    def update(self, records: Sequence[Record], epoch: int = 0) -> None:
        """Fold the records not seen yet (all of them again if ``epoch`` moved)."""
        if epoch != self._epoch:
            self.__init__()  # type: ignore[misc]
            self._epoch = epoch
        for record in records[self._read :]:
            self._fold(record)
        self._read = len(records)

    def messages(self) -> list[Message]:
        """The conversation so far, oldest first (system prompt not included)."""
        out: list[Message] = []
        for entry in self._entries:
            item = entry.message
            if isinstance(item, _Turn):
                shown = item.message()
                if shown is not None:
                    out.append(shown)
            else:
                out.append(item)
        return out

    def _fold(self, record: Record) -> None:
        match record.type:
            case "run_admitted":
                text = input_text(record.input)
                if text is not None:
                    self._entries.append(_Entry(record.seq, UserMessage(content=text)))
            case "queue_enqueued":
                self._queued[record.entry_id] = record.payload
            case "queue_consumed":
                text = input_text(self._queued.get(record.entry_id, {}))
                if text is not None:
                    self._entries.append(_Entry(record.seq, UserMessage(content=text)))
            case "model_call_finished":
                turn = _Turn(record.seq, record.text, tuple(record.tool_calls))
                for call_id in turn.call_ids:
                    self._turns[call_id] = turn
                self._entries.append(_Entry(record.seq, turn))
            case "tool_call_started":
                if record.parent_call_id is not None:
                    self._program_calls.add(record.call_id)
                    return
                owner = self._turns.get(record.call_id)
                if owner is not None:
                    arguments = json.dumps(record.arguments, separators=(",", ":"))
                    owner.calls[record.call_id] = ToolCallRequest(
                        id=record.call_id, name=record.tool, arguments=arguments
                    )
                    owner.fresh = False
            case "tool_call_finished":
                if record.call_id in self._program_calls:
                    return
                asked = self._turns.get(record.call_id)
                name = ""
                if asked is not None and record.call_id in asked.calls:
                    name = asked.calls[record.call_id].name
                self._entries.append(
                    _Entry(
                        record.seq,
                        ToolResultMessage(
                            tool_call_id=record.call_id,
                            name=name,
                            content=tool_result_text(record),
                            is_error=record.outcome is not ToolOutcome.OK,
                        ),
                    )
                )
            case "subagent_spawned":
                if not record.background:
                    self._inline_children.add(record.child_run_id)
            case "subagent_finished":
                # A delegation's answer is its call's result already. A background
                # child's ending lands whenever it lands, possibly between a call and
                # its result, so it is shown when the next turn opens.
                if record.child_run_id in self._inline_children:
                    return
                body = render_json(record.output) if record.output is not None else ""
                if record.failure is not None:
                    body = record.failure.message
                text = f"Subagent {record.name} finished ({record.state.value}). {body}".strip()
                self._news.append(UserMessage(content=text))
            case "turn_started":
                for message in self._news:
                    self._entries.append(_Entry(record.seq, message))
                self._news.clear()
            case "compaction_applied":
                # Everything up to the end of the range goes, not just the range: an
                # earlier summary sits just before it (at the previous range's end) and
                # the new summary was written from a transcript that included it.
                hi = record.replaced_to_seq
                kept = [e for e in self._entries if e.seq > hi]
                summary = _Entry(hi, UserMessage(content=SUMMARY_PREFIX + record.summary))
                self._entries = [summary, *kept]
            case _:
                return
