"""The OpenAI chat-completions wire format, in both directions, without any IO.

Kept apart from the client so the mapping can be tested on plain dicts: what a request
body looks like for a given ``ModelRequest``, and which stream events and usage one
decoded chunk stands for.
"""

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from decimal import Decimal
from decimal import InvalidOperation
from typing import Literal
from typing import get_args
from urllib.parse import urlsplit

from pydantic import JsonValue

from psych_runtime.core.errors import PsychError
from psych_runtime.core.messages import AssistantMessage
from psych_runtime.core.messages import Message
from psych_runtime.core.messages import SystemMessage
from psych_runtime.core.messages import ToolDefinition
from psych_runtime.core.messages import ToolResultMessage
from psych_runtime.core.messages import UserMessage
from psych_runtime.core.metering import Cost
from psych_runtime.core.metering import CostSource
from psych_runtime.core.metering import Usage
from psych_runtime.core.spec.models import NamedToolChoice
from psych_runtime.core.spec.models import ToolChoice
from psych_runtime.model.port import ModelRequest
from psych_runtime.model.port import ReasoningDelta
from psych_runtime.model.port import StreamEvent
from psych_runtime.model.port import TextDelta
from psych_runtime.model.port import ToolCallDelta
from psych_runtime.model.wire_values import count_of
from psych_runtime.model.wire_values import mapping_of
from psych_runtime.model.wire_values import sampling_fields
from psych_runtime.model.wire_values import text_of
from psych_runtime.model.wire_values import tool_fields

MaxTokensField = Literal["auto", "max_tokens", "max_completion_tokens", "both"]
"""Which body field carries a request's output limit; see ``output_limit_fields``."""

MAX_TOKENS_FIELDS: tuple[MaxTokensField, ...] = get_args(MaxTokensField)

# OpenAI's reasoning families (o1, o3, o4-mini, gpt-5 and later) refuse ``max_tokens``
# outright, so they are the models that must get ``max_completion_tokens``. A provider
# prefix such as ``openai/`` (LiteLLM, OpenRouter) is looked through.
_COMPLETION_TOKENS_MODEL = re.compile(
    r"^(?:[\w.-]+/)*(?:ft:)?(?:o\d+|gpt-(?:[5-9]|\d{2,}))(?![a-z0-9])"
)
# OpenAI's own API accepts ``max_completion_tokens`` for every model it serves.
_COMPLETION_TOKENS_HOSTS = frozenset({"api.openai.com"})

_REASONING_FIELDS = ("reasoning_content", "reasoning")
_SLOT_ARGUMENT_CHARS = 1024 * 1024


def message_json(message: Message) -> dict[str, JsonValue]:
    """One conversation message in the provider's shape."""
    if isinstance(message, SystemMessage | UserMessage):
        return {"role": message.role, "content": message.content}
    if isinstance(message, AssistantMessage):
        out: dict[str, JsonValue] = {"role": "assistant"}
        if message.tool_calls:
            # Providers accept a null content next to tool calls; an empty string is
            # refused by some of them.
            out["content"] = message.content or None
            out["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments or "{}"},
                }
                for call in message.tool_calls
            ]
        else:
            out["content"] = message.content
        return out
    result: ToolResultMessage = message
    return {"role": "tool", "tool_call_id": result.tool_call_id, "content": result.content}


def tool_json(tool: ToolDefinition) -> dict[str, JsonValue]:
    """One tool as a function definition with its JSON Schema."""
    return {"type": "function", "function": tool_fields(tool, "parameters")}


def tool_choice_json(choice: ToolChoice) -> JsonValue:
    """A tool choice as chat completions spell it: the mode, or the function to call."""
    if isinstance(choice, NamedToolChoice):
        return {"type": "function", "function": {"name": choice.name}}
    return choice


class UnknownLimitField(PsychError, ValueError):
    """A max-tokens setting that is none of ``MAX_TOKENS_FIELDS``."""


def check_limit_field(setting: str) -> MaxTokensField:
    """``setting`` as a ``MaxTokensField``, refused with a clear error when it is not one.

    Raises:
        UnknownLimitField: the setting names no known choice; a typo here would
            otherwise drop the user's output limit without a word.
    """
    for known in MAX_TOKENS_FIELDS:
        if setting == known:
            return known
    choices = ", ".join(repr(f) for f in MAX_TOKENS_FIELDS)
    raise UnknownLimitField(f"max_tokens_field must be one of {choices}, not {setting!r}")


def output_limit_fields(
    setting: MaxTokensField, *, model: str, base_url: str | None = None
) -> tuple[str, ...]:
    """The body fields that carry the output limit for one request.

    Servers disagree on the name. OpenAI deprecated ``max_tokens`` in favour of
    ``max_completion_tokens`` and its reasoning models refuse ``max_tokens``, while
    llama.cpp's Python server, vLLM before 0.6.4, Ollama's OpenAI endpoint and many
    gateways read only ``max_tokens`` and silently ignore the newer name, so a limit
    sent under it does not hold there. OpenAI also refuses a request that sets both.

    ``"auto"`` therefore sends ``max_completion_tokens`` to OpenAI's own API and to
    OpenAI's reasoning model families wherever they are served (o1, o3, o4, gpt-5 and
    later, with or without a provider prefix), and ``max_tokens``, which every other
    server reads, everywhere else. ``"both"`` is for a gateway that forwards to
    servers of either kind and tolerates the pair. The other two send exactly the
    field they name.
    """
    if setting == "both":
        return ("max_tokens", "max_completion_tokens")
    if setting != "auto":
        return (setting,)
    host = (urlsplit(base_url).hostname or "") if base_url else ""
    if host.lower() in _COMPLETION_TOKENS_HOSTS or _COMPLETION_TOKENS_MODEL.match(model.lower()):
        return ("max_completion_tokens",)
    return ("max_tokens",)


_OTHER_LIMIT_FIELD: dict[str, MaxTokensField] = {
    "max_tokens": "max_completion_tokens",
    "max_completion_tokens": "max_tokens",
}
# How servers word "I do not take this field": OpenAI's "Unsupported parameter ...
# Use 'max_completion_tokens' instead", pydantic's "Extra inputs are not permitted"
# (extra_forbidden) from servers with strict schemas, and the like.
_FIELD_REFUSALS = (
    "unsupported parameter",
    "not supported",
    "not permitted",
    "extra_forbidden",
    "unrecognized",
    "unknown parameter",
    "unknown field",
    "not allowed",
)


def refused_limit_field(sent: tuple[str, ...], error_body: str) -> MaxTokensField | None:
    """The field to try instead when a 400 refused the one limit field that was sent.

    Only a refusal that names the field and says the server does not take it counts;
    a complaint about its value ("max_tokens is too large") is the user's to fix and
    gets no retry. Returns None when there is nothing to switch to.
    """
    if len(sent) != 1:
        return None
    [field] = sent
    text = error_body.lower()
    if field not in text or not any(words in text for words in _FIELD_REFUSALS):
        return None
    return _OTHER_LIMIT_FIELD.get(field)


def refuses_stream_options(error_body: str) -> bool:
    """Whether a 400 says the server does not take ``stream_options`` at all.

    Older servers and strict gateways refuse the whole request over it; such a server
    is asked again without it, and its streams then carry usage only if it sends
    usage unasked.
    """
    text = error_body.lower()
    return "stream_options" in text and any(words in text for words in _FIELD_REFUSALS)


def request_body(
    request: ModelRequest,
    *,
    max_tokens_field: MaxTokensField = "auto",
    base_url: str | None = None,
    include_usage: bool = True,
) -> dict[str, JsonValue]:
    """The JSON body of a streaming chat-completions request.

    Keys always appear in the same order, messages and tools in the order the request
    gives them (the loop puts the system message first and fixes the tool list for the
    turn), so two requests that share a prefix serialise to bytes that share it too and
    a provider's prompt cache keeps matching. Optional sampling fields are sent only
    when set, leaving the provider's defaults alone otherwise; ``extra`` goes last and
    may override anything. ``max_tokens_field`` and ``base_url`` choose the name of
    the output-limit field (see ``output_limit_fields``). ``tool_choice`` goes only
    with tools, since servers refuse it alone. ``include_usage`` asks for the usage
    chunk at the end of the stream (``stream_options``), which OpenAI, vLLM,
    llama.cpp's server, Ollama and LiteLLM all honour; without it most servers
    report no usage on a stream.
    """
    body: dict[str, JsonValue] = {
        "model": request.model,
        "messages": [message_json(m) for m in request.messages],
    }
    if request.tools:
        body["tools"] = [tool_json(t) for t in request.tools]
        if request.tool_choice is not None:
            body["tool_choice"] = tool_choice_json(request.tool_choice)
    body["stream"] = True
    if include_usage:
        body["stream_options"] = {"include_usage": True}
    body.update(sampling_fields(request))
    if request.max_output_tokens is not None:
        for field in output_limit_fields(max_tokens_field, model=request.model, base_url=base_url):
            body[field] = request.max_output_tokens
    if request.reasoning_effort is not None:
        body["reasoning_effort"] = request.reasoning_effort
    if request.stop:
        body["stop"] = list(request.stop)
    body.update(request.extra)
    return body


@dataclass
class _CallSlot:
    """What one tool call has streamed so far, as far as telling calls apart needs."""

    index: int
    id: str | None = None
    name: str = ""
    arguments: list[str] = field(default_factory=list)
    argument_chars: int = 0

    def add_arguments(self, text: str) -> None:
        self.argument_chars += len(text)
        if self.argument_chars > _SLOT_ARGUMENT_CHARS:
            # Far beyond what any call carries; the runtime refuses it anyway, so
            # only the fact that it had arguments is worth keeping here.
            self.arguments = []
        else:
            self.arguments.append(text)

    def complete(self) -> bool:
        """Whether the arguments so far already form a whole JSON value."""
        text = "".join(self.arguments)
        if not text.strip():
            return False
        try:
            json.loads(text)
        except ValueError:
            return False
        return True


@dataclass
class _CallSlots:
    """Maps the wire's tool-call indices to ours and drops what servers repeat.

    Servers agree on the common case (an id and a name on a call's first fragment,
    argument text after) and differ at the edges, handled here:

    - a fragment that repeats the call's id or its whole name on every chunk adds
      nothing: the repeated name is dropped rather than appended again;
    - a server that puts several calls at the same index is told apart by a new id
      arriving once the previous call's arguments form a whole JSON value (or with
      a different name before any arguments); that call gets an index of its own;
    - a new id in the middle of a call's arguments is a server renaming the call as
      it goes, so the first id is kept.
    """

    by_wire: dict[int, _CallSlot] = field(default_factory=dict)
    taken: set[int] = field(default_factory=set)

    def _fresh(self, wire_index: int) -> _CallSlot:
        index = wire_index if wire_index not in self.taken else max(self.taken) + 1
        self.taken.add(index)
        slot = self.by_wire[wire_index] = _CallSlot(index)
        return slot

    def delta(
        self, wire_index: int, call_id: str | None, name: str | None, arguments: str
    ) -> ToolCallDelta:
        slot = self.by_wire.get(wire_index)
        if slot is None:
            slot = self._fresh(wire_index)
        elif call_id and slot.id and call_id != slot.id:
            new_call = slot.complete() or (
                not slot.argument_chars and bool(name) and name != slot.name
            )
            if new_call:
                slot = self._fresh(wire_index)
            else:
                call_id = None
        elif call_id and call_id == slot.id:
            call_id = None
        if name and slot.name and name == slot.name:
            name = None
        if call_id:
            slot.id = call_id
        if name:
            slot.name += name
        if arguments:
            slot.add_arguments(arguments)
        return ToolCallDelta(index=slot.index, id=call_id, name=name, arguments=arguments)


@dataclass
class StreamTally:
    """What the chunks of one stream have said so far, beyond their deltas."""

    finish_reason: str | None = None
    usage: Usage | None = None
    cost: Cost | None = None
    model: str | None = None
    saw_tool_call: bool = False
    calls: _CallSlots = field(default_factory=_CallSlots)


def usage_from(raw: Mapping[str, object]) -> Usage:
    """Our ``Usage`` from a provider's usage object.

    ``prompt_tokens`` counts the whole prompt, cached part included, so the cache
    reads and writes are taken out of it to leave the uncached input. Both OpenAI's
    field names (``prompt_tokens_details``) and the Anthropic-style ones that proxies
    pass through (``cache_read_input_tokens``, ``cache_creation_input_tokens``) are
    understood. Reasoning tokens are recorded for visibility; they are already part of
    ``completion_tokens``.
    """
    details = mapping_of(raw.get("prompt_tokens_details"))
    cache_read = count_of(details.get("cached_tokens")) or count_of(
        raw.get("cache_read_input_tokens")
    )
    cache_write = (
        count_of(details.get("cache_creation_tokens"))
        or count_of(details.get("cache_write_tokens"))
        or count_of(raw.get("cache_creation_input_tokens"))
    )
    split = mapping_of(raw.get("cache_creation")) or mapping_of(details.get("cache_creation"))
    one_hour = min(count_of(split.get("ephemeral_1h_input_tokens")), cache_write)
    if "prompt_tokens" in raw:
        uncached = max(count_of(raw.get("prompt_tokens")) - cache_read - cache_write, 0)
    else:
        uncached = count_of(raw.get("input_tokens"))
    output = count_of(raw.get("completion_tokens")) or count_of(raw.get("output_tokens"))
    completion = mapping_of(raw.get("completion_tokens_details"))
    return Usage(
        input=uncached,
        output=output,
        cache_read=cache_read,
        cache_write=cache_write,
        cache_write_1h=one_hour,
        reasoning=count_of(completion.get("reasoning_tokens")),
    )


def provider_cost(raw: Mapping[str, object], model: str) -> Cost | None:
    """A cost the provider put in its usage object (``usage.cost``, in USD), if any."""
    value = raw.get("cost")
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        amount = Decimal(str(value))
    except InvalidOperation:
        return None
    if not amount.is_finite() or amount < 0:
        return None
    return Cost(amount=amount, currency="USD", model=model, source=CostSource.PROVIDER)


def read_chunk(chunk: Mapping[str, object], tally: StreamTally, model: str) -> list[StreamEvent]:
    """The events one decoded chunk carries; finish, usage and cost go into ``tally``.

    Only the first choice is read: the client never asks for more than one.
    """
    events: list[StreamEvent] = []
    tally.model = text_of(chunk.get("model")) or tally.model
    usage = chunk.get("usage")
    if isinstance(usage, Mapping):
        tally.usage = usage_from(usage)
        tally.cost = provider_cost(usage, tally.model or model) or tally.cost
    choices = chunk.get("choices")
    if not isinstance(choices, list):
        return events
    for choice in choices:
        if not isinstance(choice, Mapping) or count_of(choice.get("index")) != 0:
            continue
        delta = mapping_of(choice.get("delta"))
        for name in _REASONING_FIELDS:
            if reasoning := text_of(delta.get(name)):
                events.append(ReasoningDelta(text=reasoning))
                break
        if content := text_of(delta.get("content")):
            events.append(TextDelta(text=content))
        calls = delta.get("tool_calls")
        legacy = delta.get("function_call")
        if isinstance(calls, list) and calls:
            events.extend(_tool_call_deltas(calls, tally))
        elif isinstance(legacy, Mapping):
            # The older single-function form; servers that send it beside
            # ``tool_calls`` say the same thing twice, so it is read only alone.
            events.extend(_tool_call_deltas([{"index": 0, "function": legacy}], tally))
        tally.finish_reason = text_of(choice.get("finish_reason")) or tally.finish_reason
    return events


def _tool_call_deltas(calls: list[object], tally: StreamTally) -> list[StreamEvent]:
    events: list[StreamEvent] = []
    for position, call in enumerate(calls):
        if not isinstance(call, Mapping):
            continue
        index = call.get("index")
        function = mapping_of(call.get("function"))
        call_id = call.get("id")
        name = function.get("name")
        arguments = function.get("arguments")
        events.append(
            tally.calls.delta(
                count_of(index) if isinstance(index, int) else position,
                call_id if isinstance(call_id, str) and call_id else None,
                name if isinstance(name, str) and name else None,
                arguments if isinstance(arguments, str) else "",
            )
        )
        tally.saw_tool_call = True
    return events


__all__ = [
    "MAX_TOKENS_FIELDS",
    "MaxTokensField",
    "StreamTally",
    "UnknownLimitField",
    "check_limit_field",
    "message_json",
    "output_limit_fields",
    "provider_cost",
    "read_chunk",
    "refused_limit_field",
    "refuses_stream_options",
    "request_body",
    "tool_choice_json",
    "tool_json",
    "usage_from",
]
