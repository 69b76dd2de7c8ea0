"""Anthropic's Messages API wire format, in both directions, without any IO.

Kept apart from the client so the mapping can be tested on plain dicts: the request
body a ``ModelRequest`` becomes (system prompt, alternating turns, tool use and tool
results, prompt-caching breakpoints) and the stream events and usage that each
server-sent event of a streamed answer stands for.
"""

import json
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from typing import Literal

from pydantic import JsonValue

from psych_runtime.core.errors import PsychError
from psych_runtime.core.messages import AssistantMessage
from psych_runtime.core.messages import Message
from psych_runtime.core.messages import SystemMessage
from psych_runtime.core.messages import ToolDefinition
from psych_runtime.core.messages import ToolResultMessage
from psych_runtime.core.metering import Usage
from psych_runtime.core.spec.models import NamedToolChoice
from psych_runtime.core.spec.models import ToolChoice
from psych_runtime.model.port import ModelError
from psych_runtime.model.port import ModelRequest
from psych_runtime.model.port import ReasoningDelta
from psych_runtime.model.port import StreamEvent
from psych_runtime.model.port import TextDelta
from psych_runtime.model.port import ToolCallDelta
from psych_runtime.model.transient import error_from_status
from psych_runtime.model.transient import says_context_overflow
from psych_runtime.model.wire_values import count_of
from psych_runtime.model.wire_values import mapping_of
from psych_runtime.model.wire_values import sampling_fields
from psych_runtime.model.wire_values import text_of
from psych_runtime.model.wire_values import tool_fields

CacheTtl = Literal["5m", "1h"]
"""How long a prompt-cache entry lives: five minutes (the default) or one hour."""

_TTL_SECONDS = {"5m": 300, "1h": 3600}

STOP_REASONS: Mapping[str, str] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
}
"""Anthropic's stop reasons in the names the rest of the runtime uses; others pass as-is."""

ERROR_STATUSES: Mapping[str, int] = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}
"""The HTTP status each documented error type is sent with, for errors inside a stream."""


class InvalidPromptCaching(PsychError, ValueError):
    """A ``PromptCaching`` setting the API would refuse."""


@dataclass(frozen=True, slots=True)
class PromptCaching:
    """Where the request marks cache breakpoints (``cache_control``), and for how long.

    The provider caches the prompt up to each breakpoint, in the order tools, system
    prompt, messages. Marking the end of the tool list and of the system prompt lets
    every turn reuse that fixed prefix; marking the last message lets the next turn
    reuse the whole conversation so far. That uses three of the four breakpoints a
    request may carry.

    Attributes:
        tools: mark the last tool definition.
        system: mark the end of the system prompt.
        last_message: mark the last block of the last message.
        ttl: how long the tool and system entries live; ``"1h"`` costs more to
            write and pays off when turns are more than five minutes apart.
        message_ttl: how long the conversation entry lives; it may not outlive
            ``ttl``, because longer-lived entries must come first in the prompt.

    Raises:
        InvalidPromptCaching: ``message_ttl`` is longer than ``ttl``, or either is
            not ``"5m"`` or ``"1h"``.
    """

    tools: bool = True
    system: bool = True
    last_message: bool = True
    ttl: CacheTtl = "5m"
    message_ttl: CacheTtl = "5m"

    def __post_init__(self) -> None:
        for name, value in (("ttl", self.ttl), ("message_ttl", self.message_ttl)):
            if value not in _TTL_SECONDS:
                raise InvalidPromptCaching(f"{name} must be '5m' or '1h', not {value!r}")
        prefix_marked = self.tools or self.system
        if prefix_marked and _TTL_SECONDS[self.message_ttl] > _TTL_SECONDS[self.ttl]:
            raise InvalidPromptCaching(
                "message_ttl may not be longer than ttl: entries that live longer must "
                "come earlier in the prompt"
            )


NO_CACHING = PromptCaching(tools=False, system=False, last_message=False)
"""Marks no breakpoints; the provider then caches nothing for these requests."""


def _cache_control(ttl: CacheTtl) -> dict[str, JsonValue]:
    marker: dict[str, JsonValue] = {"type": "ephemeral"}
    if ttl != "5m":
        marker["ttl"] = ttl
    return marker


def tool_json(tool: ToolDefinition) -> dict[str, JsonValue]:
    """One tool definition; a tool without a schema takes an empty object."""
    return tool_fields(tool, "input_schema")


def tool_choice_json(choice: ToolChoice) -> dict[str, JsonValue]:
    """A tool choice as the Messages API spells it."""
    if isinstance(choice, NamedToolChoice):
        return {"type": "tool", "name": choice.name}
    return {"type": {"auto": "auto", "required": "any", "none": "none"}[choice]}


def _input_object(arguments: str) -> dict[str, JsonValue]:
    """A recorded call's argument text as the object ``tool_use.input`` must be.

    Text that is not a JSON object was refused when the call was made (the model was
    told so in the call's result), so an empty object stands in for it here.
    """
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _blocks(message: Message) -> list[dict[str, JsonValue]]:
    """The content blocks one of our messages becomes; empty text is left out."""
    if isinstance(message, AssistantMessage):
        blocks: list[dict[str, JsonValue]] = []
        if message.content:
            blocks.append({"type": "text", "text": message.content})
        blocks.extend(
            {
                "type": "tool_use",
                "id": call.id,
                "name": call.name,
                "input": _input_object(call.arguments),
            }
            for call in message.tool_calls
        )
        return blocks
    if isinstance(message, ToolResultMessage):
        result: dict[str, JsonValue] = {"type": "tool_result", "tool_use_id": message.tool_call_id}
        if message.content:
            result["content"] = message.content
        if message.is_error:
            result["is_error"] = True
        return [result]
    return [{"type": "text", "text": message.content}] if message.content else []


def _role(message: Message) -> Literal["user", "assistant"]:
    return "assistant" if isinstance(message, AssistantMessage) else "user"


Turn = tuple[Literal["user", "assistant"], list[dict[str, JsonValue]]]
"""One turn of the conversation: its role and its content blocks."""


def split_messages(
    messages: tuple[Message, ...],
) -> tuple[list[dict[str, JsonValue]], list[Turn]]:
    """The system blocks and the alternating turns a conversation becomes.

    System messages that open the conversation form the system prompt. The API has
    no system role inside the conversation, so a later one travels as user text.
    Tool results are user content, and consecutive messages of one role are merged
    into one turn, since the API expects user and assistant turns to alternate.
    """
    system, turns, _ = _split(messages)
    return system, turns


def _split(
    messages: tuple[Message, ...],
) -> tuple[list[dict[str, JsonValue]], list[Turn], list[dict[str, JsonValue] | None]]:
    """``split_messages``, plus the last block each message became (None: no block)."""
    system: list[dict[str, JsonValue]] = []
    last_blocks: list[dict[str, JsonValue] | None] = []
    rest = list(messages)
    while rest and isinstance(rest[0], SystemMessage):
        first = rest.pop(0)
        if first.content:
            system.append({"type": "text", "text": first.content})
        last_blocks.append(system[-1] if system else None)
    turns: list[Turn] = []
    for message in rest:
        blocks = _blocks(message)
        if not blocks:
            last_blocks.append(None)
            continue
        role = _role(message)
        if turns and turns[-1][0] == role:
            turns[-1][1].extend(blocks)
        else:
            turns.append((role, blocks))
        last_blocks.append(blocks[-1])
    return system, turns, last_blocks


MAX_BREAKPOINTS = 4
"""Cache breakpoints one Messages request may carry."""


def request_body(
    request: ModelRequest,
    *,
    default_max_tokens: int,
    caching: PromptCaching,
) -> dict[str, JsonValue]:
    """The JSON body of a streamed Messages request.

    The output limit is required by this API, so ``default_max_tokens`` stands in
    when the request sets none. The ``reasoning_effort`` setting is not sent:
    extended thinking requires its signed thinking blocks to be sent back on every
    later turn, and the conversation does not keep them. ``extra`` goes last and may
    override anything.
    """
    system, turns, last_blocks = _split(request.messages)
    tools = [tool_json(tool) for tool in request.tools]
    marked: list[dict[str, JsonValue]] = []
    if caching.tools and tools:
        marked.append(tools[-1])
    if caching.system and system:
        marked.append(system[-1])
    prefix = len(marked)
    # The request's own breakpoints (after the messages it names), then the last
    # message; past the API's limit, the latest breakpoints are the ones kept.
    wanted = [
        last_blocks[index]
        for index in sorted(set(request.cache_breakpoints))
        if 0 <= index < len(last_blocks)
    ]
    if caching.last_message and turns:
        wanted.append(turns[-1][1][-1])
    for block in wanted:
        if block is not None and all(block is not seen for seen in marked):
            marked.append(block)
    if len(marked) > MAX_BREAKPOINTS:
        marked = marked[:prefix] + marked[prefix:][prefix - MAX_BREAKPOINTS :]
    for position, block in enumerate(marked):
        ttl = caching.ttl if position < prefix else caching.message_ttl
        block["cache_control"] = _cache_control(ttl)
    body: dict[str, JsonValue] = {
        "model": request.model,
        "max_tokens": request.max_output_tokens or default_max_tokens,
    }
    if system:
        body["system"] = list[JsonValue](system)
    body["messages"] = [
        {"role": role, "content": list[JsonValue](blocks)} for role, blocks in turns
    ]
    if tools:
        body["tools"] = list[JsonValue](tools)
        if request.tool_choice is not None:
            body["tool_choice"] = tool_choice_json(request.tool_choice)
    body["stream"] = True
    body.update(sampling_fields(request))
    if request.stop:
        body["stop_sequences"] = list(request.stop)
    body.update(request.extra)
    return body


def usage_from(raw: Mapping[str, object]) -> Usage:
    """Our ``Usage`` from a Messages usage object.

    ``input_tokens`` already leaves out the cached part, so it is the uncached input
    as it stands. Cache writes are split by lifetime in ``cache_creation``; the
    one-hour part is kept apart because it is billed at a higher rate. When only the
    split is given, the writes are its sum.
    """
    split = mapping_of(raw.get("cache_creation"))
    short = count_of(split.get("ephemeral_5m_input_tokens"))
    long = count_of(split.get("ephemeral_1h_input_tokens"))
    writes = count_of(raw.get("cache_creation_input_tokens")) or short + long
    return Usage(
        input=count_of(raw.get("input_tokens")),
        output=count_of(raw.get("output_tokens")),
        cache_read=count_of(raw.get("cache_read_input_tokens")),
        cache_write=writes,
        cache_write_1h=min(long, writes),
    )


_USAGE_FIELDS = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
    "cache_creation",
)


@dataclass
class MessageTally:
    """What the events of one stream have said so far, beyond their deltas.

    Attributes:
        usage: the usage fields reported so far; ``message_delta`` repeats them with
            running totals, so a later value replaces an earlier one.
        stop_reason: the provider's stop reason, once ``message_delta`` gave it.
        model: the model that answered, from ``message_start``.
        stopped: ``message_stop`` arrived, so the answer is complete.
        saw_tool_call: a ``tool_use`` block was streamed.
        tool_blocks: indexes of the ``tool_use`` blocks, whose JSON deltas are
            arguments.
        streamed_input: ``tool_use`` blocks that sent at least one JSON delta.
    """

    usage: dict[str, object] = field(default_factory=dict)
    stop_reason: str | None = None
    model: str | None = None
    stopped: bool = False
    saw_tool_call: bool = False
    tool_blocks: set[int] = field(default_factory=set)
    streamed_input: set[int] = field(default_factory=set)

    @property
    def finish_reason(self) -> str | None:
        """The stop reason in the runtime's names (see ``STOP_REASONS``)."""
        if self.stop_reason is None:
            return None
        return STOP_REASONS.get(self.stop_reason, self.stop_reason)

    def reported_usage(self) -> Usage | None:
        """The usage the stream reported, or None when it reported none."""
        return usage_from(self.usage) if self.usage else None

    def _merge_usage(self, raw: object) -> None:
        for name, value in mapping_of(raw).items():
            if name in _USAGE_FIELDS and value is not None:
                self.usage[name] = value


def error_in_stream(payload: Mapping[str, object]) -> ModelError:
    """The ``ModelError`` for an ``error`` event sent after the stream began.

    The error's ``type`` is classified like the HTTP status the API sends it with, so
    an overload or a rate limit is worth a retry and a refused request is not.
    """
    error = mapping_of(payload.get("error"))
    kind = error.get("type")
    body = json.dumps({"error": dict(error)}, default=str)
    status = ERROR_STATUSES.get(kind) if isinstance(kind, str) else None
    if status is None:
        status = 400 if says_context_overflow(body) else 500
    return error_from_status(status, {}, body)


def read_event(name: str, data: Mapping[str, object], tally: MessageTally) -> list[StreamEvent]:
    """The stream events one decoded server-sent event carries.

    Args:
        name: the SSE event name; the payload's own ``type`` wins when present.
        data: the decoded payload.
        tally: the stream's running state, updated in place.

    Raises:
        ModelError: for an ``error`` event (see ``error_in_stream``).
    """
    kind = data.get("type")
    kind = kind if isinstance(kind, str) else name
    if kind == "message_start":
        message = mapping_of(data.get("message"))
        tally.model = text_of(message.get("model")) or tally.model
        tally._merge_usage(message.get("usage"))
        return []
    if kind == "content_block_start":
        return _block_start(data, tally)
    if kind == "content_block_delta":
        return _block_delta(data, tally)
    if kind == "message_delta":
        delta = mapping_of(data.get("delta"))
        tally.stop_reason = text_of(delta.get("stop_reason")) or tally.stop_reason
        tally._merge_usage(data.get("usage"))
        return []
    if kind == "message_stop":
        tally.stopped = True
        return []
    if kind == "error":
        raise error_in_stream(data)
    # ping, content_block_stop, and event types added after this was written.
    return []


def _block_part(data: Mapping[str, object], key: str) -> tuple[int, Mapping[str, object], object]:
    """The block's index, the part of the event at ``key``, and that part's type."""
    part = mapping_of(data.get(key))
    return count_of(data.get("index")), part, part.get("type")


def _block_start(data: Mapping[str, object], tally: MessageTally) -> list[StreamEvent]:
    index, block, kind = _block_part(data, "content_block")
    if kind == "tool_use":
        tally.tool_blocks.add(index)
        tally.saw_tool_call = True
        call_id = text_of(block.get("id")) or None
        return [ToolCallDelta(index=index, id=call_id, name=text_of(block.get("name")) or None)]
    if kind == "text":
        return _piece(TextDelta, block.get("text"))
    if kind == "thinking":
        return _piece(ReasoningDelta, block.get("thinking"))
    return []


def _block_delta(data: Mapping[str, object], tally: MessageTally) -> list[StreamEvent]:
    index, delta, kind = _block_part(data, "delta")
    if kind == "text_delta":
        return _piece(TextDelta, delta.get("text"))
    if kind == "input_json_delta" and index in tally.tool_blocks:
        partial = text_of(delta.get("partial_json"))
        if not partial:
            return []
        tally.streamed_input.add(index)
        return [ToolCallDelta(index=index, arguments=partial)]
    if kind == "thinking_delta":
        return _piece(ReasoningDelta, delta.get("thinking"))
    return []


def _piece(event: type[TextDelta | ReasoningDelta], value: object) -> list[StreamEvent]:
    """The one delta a block's text carries, or none for an empty or missing text."""
    text = text_of(value)
    return [event(text=text)] if text else []


__all__ = [
    "ERROR_STATUSES",
    "NO_CACHING",
    "STOP_REASONS",
    "CacheTtl",
    "InvalidPromptCaching",
    "MessageTally",
    "PromptCaching",
    "error_in_stream",
    "read_event",
    "request_body",
    "split_messages",
    "tool_choice_json",
    "tool_json",
    "usage_from",
]
