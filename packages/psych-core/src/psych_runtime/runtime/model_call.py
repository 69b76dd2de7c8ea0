"""Reading one model stream to its end, with an idle timeout between chunks.

The idle timer only runs while we are waiting on the source, so a slow consumer never
trips it. A stream that stops without its final event is a transient failure, because
a provider or proxy dropping the connection is the usual cause.
"""

import asyncio
import time
from dataclasses import dataclass, field

from psych_runtime.core.metering import Cost, Usage
from psych_runtime.core.records import ModelTimings
from psych_runtime.model.port import (
    ModelClient,
    ModelRequest,
    StreamDone,
    StreamIdleTimeout,
    StreamIncomplete,
    TextDelta,
    ToolCallDelta,
)


@dataclass
class AssembledCall:
    """A tool call put back together from its streamed fragments."""

    id: str | None = None
    name: str = ""
    arguments: str = ""


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
    deltas: list[str] = field(default_factory=list)


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
    calls: dict[int, AssembledCall] = {}
    done: StreamDone | None = None
    stream = model.stream(request)
    iterator = stream.__aiter__()
    try:
        while True:
            try:
                if idle is None:
                    event = await iterator.__anext__()
                else:
                    event = await asyncio.wait_for(iterator.__anext__(), idle)
            except StopAsyncIteration:
                break
            except TimeoutError:
                raise StreamIdleTimeout(
                    f"no data from the model for {request.idle_timeout_seconds:g}s"
                ) from None
            if first_at is None:
                first_at = time.perf_counter()
            if isinstance(event, TextDelta):
                text_parts.append(event.text)
            elif isinstance(event, ToolCallDelta):
                call = calls.setdefault(event.index, AssembledCall())
                if event.id:
                    call.id = event.id
                if event.name:
                    call.name += event.name
                call.arguments += event.arguments
            elif isinstance(event, StreamDone):
                done = event
                break
            else:
                reasoning.append(event.text)
    finally:
        closer = getattr(iterator, "aclose", None)
        if closer is not None:
            await closer()
    ended = time.perf_counter()
    if done is None:
        raise StreamIncomplete("the model's stream ended before its final event")
    first = first_at if first_at is not None else ended
    timings = ModelTimings(
        queue_wait_seconds=max(first - started, 0.0),
        time_to_first_token_seconds=max(first - started, 0.0) if first_at is not None else None,
        stream_duration_seconds=max(ended - first, 0.0),
    )
    return ModelAnswer(
        text="".join(text_parts),
        calls=[calls[i] for i in sorted(calls)],
        finish_reason=done.finish_reason,
        usage=done.usage,
        provider_cost=done.cost,
        timings=timings,
        model=done.model,
        reasoning="".join(reasoning),
        deltas=text_parts,
    )
