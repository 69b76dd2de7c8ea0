"""Reading one model stream to its end, with an idle timeout between chunks.

The idle timer only runs while we are waiting on the source, so a slow consumer never
trips it. A stream that stops without its final event is a transient failure, because
a provider or proxy dropping the connection is the usual cause.

This is where whatever a model client produced enters the runtime, so it is also where
that output is made safe to keep:

* Fragments are collected in lists and joined once at the end, so assembling an
  answer costs time in proportion to its size however finely it was streamed.
* A tool call's argument text is kept up to ``MAX_TOOL_ARGUMENT_CHARS`` characters,
  and all the calls of one answer together up to ``MAX_ANSWER_ARGUMENT_CHARS``. A call
  over either bound keeps no arguments and says why (``AssembledCall.refusal``); the
  agent loop fails that call ``malformed_arguments``, so the model learns of it and the
  Run goes on. The bounds are module constants rather than Spec limits because they
  protect the process (memory, and time on the event loop) rather than shape an
  agent's behaviour, and no model writes arguments anywhere near them on purpose.
* The loop hands control back to the event loop every ``_EVENTS_PER_YIELD`` events: a
  client whose stream never has to wait (data already buffered, or a test double)
  would otherwise hold the loop for the whole answer and starve the Worker's
  heartbeat, which then loses its lease and repeats the call.
* UTF-16 surrogates are put right. A pair split across two fragments is joined into
  the character it encodes. In the visible text, the reasoning, the tool name, the
  finish reason and the model name, a surrogate left without its partner has no
  character to stand for and no UTF-8 form, so it becomes U+FFFD (the replacement
  character) and the rest of the text is kept: dropping the whole answer for one bad
  code unit would be worse, and the model gets its own words back all but that one.
  Argument text is left as it is, since silently changing what a tool receives would
  be dishonest; the agent loop refuses such arguments instead.
"""

import asyncio
import re
import time
from dataclasses import dataclass
from dataclasses import field

from psych_runtime.core.metering import Cost
from psych_runtime.core.metering import Usage
from psych_runtime.core.records import ModelTimings
from psych_runtime.model.port import ModelClient
from psych_runtime.model.port import ModelRequest
from psych_runtime.model.port import StreamDone
from psych_runtime.model.port import StreamIdleTimeout
from psych_runtime.model.port import StreamIncomplete
from psych_runtime.model.port import TextDelta
from psych_runtime.model.port import ToolCallDelta
from psych_runtime.model.port import TransientModelError

MAX_TOOL_ARGUMENT_CHARS = 256 * 1024
"""The most argument text one tool call may carry, in characters.

A quarter of a million characters is some 64,000 tokens, more than most models may
write in one answer; a call beyond it is far more likely a runaway than a real request.
"""

MAX_ANSWER_ARGUMENT_CHARS = 1024 * 1024
"""The most argument text all the tool calls of one answer may carry together.

Bounds what a turn records and parses however many calls the answer makes (calls
beyond the per-turn cap are still recorded, so the model sees what it asked for).
"""

_MAX_NAME_CHARS = 256
"""Tool names, finish reasons and model names are far shorter; the rest is not kept."""

_MAX_ID_CHARS = 256
"""A longer call id is dropped and the agent loop gives the call one of its own."""

_EVENTS_PER_YIELD = 256
"""How many stream events are read between two turns given back to the event loop."""

_IDLE_SLACK_FRACTION = 64
"""The idle timeout may fire up to this fraction of itself late (5 s of 300 s)."""

_SURROGATE = re.compile("[\ud800-\udfff]")


def _paired(text: str) -> str:
    """Join surrogate pairs into their characters, leaving lone surrogates as they are."""
    if _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def replace_lone_surrogates(text: str) -> str:
    """``text`` with surrogate pairs joined and every lone surrogate made U+FFFD.

    The result always has a UTF-8 encoding, so every store can keep it.
    """
    if _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


@dataclass
class AssembledCall:
    """A tool call put back together from its streamed fragments.

    Attributes:
        id: the provider's id for the call, if it sent a usable one.
        name: the tool the model asked for.
        arguments: the argument text, empty when it was not kept.
        refusal: why the arguments were not kept (too large); None when they were.
    """

    id: str | None = None
    name: str = ""
    arguments: str = ""
    refusal: str | None = None


@dataclass
class _Parts:
    """The fragments of one call while its stream is still arriving."""

    id: str | None = None
    name: list[str] = field(default_factory=list)
    name_chars: int = 0
    arguments: list[str] = field(default_factory=list)
    argument_chars: int = 0
    kept: bool = True
    over_answer_budget: bool = False

    def assembled(self) -> AssembledCall:
        name = replace_lone_surrogates("".join(self.name))
        call_id = replace_lone_surrogates(self.id) if self.id else None
        if self.kept:
            return AssembledCall(call_id, name, _paired("".join(self.arguments)))
        if self.over_answer_budget:
            why = (
                f"the arguments were not kept: this answer's tool calls carried more than "
                f"{MAX_ANSWER_ARGUMENT_CHARS} characters of arguments in all; make fewer "
                "or smaller calls"
            )
        else:
            why = (
                f"the arguments were {self.argument_chars} characters long, more than the "
                f"{MAX_TOOL_ARGUMENT_CHARS} one call may carry; pass less data per call"
            )
        return AssembledCall(call_id, name, "", refusal=why)


class _CallAssembler:
    """Collects tool-call fragments by index, within the size bounds."""

    def __init__(self) -> None:
        self.calls: dict[int, _Parts] = {}
        self._kept_chars = 0

    def add(self, delta: ToolCallDelta) -> None:
        call = self.calls.get(delta.index)
        if call is None:
            call = self.calls[delta.index] = _Parts()
        if delta.id:
            call.id = delta.id if len(delta.id) <= _MAX_ID_CHARS else None
        if delta.name and call.name_chars < _MAX_NAME_CHARS:
            piece = delta.name[: _MAX_NAME_CHARS - call.name_chars]
            call.name.append(piece)
            call.name_chars += len(piece)
        size = len(delta.arguments)
        if not size:
            return
        call.argument_chars += size
        if not call.kept:
            return
        if call.argument_chars > MAX_TOOL_ARGUMENT_CHARS:
            self._drop(call, size)
        elif self._kept_chars + size > MAX_ANSWER_ARGUMENT_CHARS:
            self._drop(call, size)
            call.over_answer_budget = True
        else:
            call.arguments.append(delta.arguments)
            self._kept_chars += size

    def _drop(self, call: _Parts, latest: int) -> None:
        """Let go of a call's arguments; ``latest`` characters of them were never kept."""
        self._kept_chars -= call.argument_chars - latest
        call.arguments = []
        call.kept = False

    def assembled(self) -> list[AssembledCall]:
        return [self.calls[index].assembled() for index in sorted(self.calls)]


@dataclass
class ModelAnswer:
    """Everything one successful model call produced."""

    text: str
    calls: list[AssembledCall]
    finish_reason: str
    usage: Usage | None
    provider_cost: Cost | None
    timings: ModelTimings
    model: str | None = None
    reasoning: str = ""


async def call_model(model: ModelClient, request: ModelRequest) -> ModelAnswer:
    """Stream ``request`` through ``model`` and assemble the answer.

    Raises:
        StreamIdleTimeout: no chunk within ``request.idle_timeout_seconds``.
        StreamIncomplete: the stream ended without ``StreamDone``.
        ModelError: whatever the client raised.
    """
    idle = request.idle_timeout_seconds or None
    started = time.perf_counter()
    first_at: float | None = None
    text_parts: list[str] = []
    reasoning: list[str] = []
    calls = _CallAssembler()
    done: StreamDone | None = None
    unyielded = 0
    stream = model.stream(request)
    iterator = stream.__aiter__()
    loop = asyncio.get_running_loop()
    idle_timer: asyncio.Timeout | None = None
    try:
        # One timeout for the whole stream, pushed forward before every wait: cheaper
        # than arming a fresh timer per chunk, and it only runs while we wait. It is
        # pushed a little further than needed, so that a fast stream moves it once per
        # ``slack`` seconds rather than once per chunk; it can fire up to ``slack`` late,
        # never early.
        slack = idle / _IDLE_SLACK_FRACTION if idle is not None else 0.0
        due = 0.0
        async with asyncio.timeout(None) as idle_timer:
            while True:
                if idle is not None and loop.time() + idle > due:
                    due = loop.time() + idle + slack
                    idle_timer.reschedule(due)
                try:
                    event = await iterator.__anext__()
                except StopAsyncIteration:
                    break
                if first_at is None:
                    first_at = time.perf_counter()
                unyielded += 1
                if unyielded >= _EVENTS_PER_YIELD:
                    # Let the heartbeat and every other Run have the loop for a moment.
                    unyielded = 0
                    await asyncio.sleep(0)
                if isinstance(event, TextDelta):
                    text_parts.append(event.text)
                elif isinstance(event, ToolCallDelta):
                    calls.add(event)
                elif isinstance(event, StreamDone):
                    done = event
                    break
                else:
                    reasoning.append(event.text)
    except TimeoutError as error:
        if idle_timer is None or not idle_timer.expired():
            # The client's own timeout, not our idle timer: still worth a retry.
            raise TransientModelError(f"the model client timed out: {error}") from error
        raise StreamIdleTimeout(
            f"no data from the model for {request.idle_timeout_seconds:g}s"
        ) from None
    finally:
        closer = getattr(iterator, "aclose", None)
        if closer is not None:
            await closer()
    ended = time.perf_counter()
    if done is None:
        raise StreamIncomplete("the model's stream ended before its final event")
    first = first_at if first_at is not None else ended
    # Microseconds are plenty for a latency report, and shorter numbers keep every
    # model_call_finished record smaller.
    wait = round(max(first - started, 0.0), 6)
    timings = ModelTimings(
        queue_wait_seconds=wait,
        time_to_first_token_seconds=wait if first_at is not None else None,
        stream_duration_seconds=round(max(ended - first, 0.0), 6),
    )
    return ModelAnswer(
        text=replace_lone_surrogates("".join(text_parts)),
        calls=calls.assembled(),
        finish_reason=replace_lone_surrogates(done.finish_reason[:_MAX_NAME_CHARS]),
        usage=done.usage,
        provider_cost=done.cost,
        timings=timings,
        model=replace_lone_surrogates(done.model[:_MAX_NAME_CHARS]) if done.model else None,
        reasoning=replace_lone_surrogates("".join(reasoning)),
    )


__all__ = [
    "MAX_ANSWER_ARGUMENT_CHARS",
    "MAX_TOOL_ARGUMENT_CHARS",
    "AssembledCall",
    "ModelAnswer",
    "call_model",
    "replace_lone_surrogates",
]
