"""Reading one model stream to its end, with an idle timeout between chunks.

The idle timer only runs while we are waiting on the source, so a slow consumer never
trips it. A stream that stops without its final event is a transient failure, because
a provider or proxy dropping the connection is the usual cause.
"""

import asyncio
import time
from dataclasses import dataclass

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
    TransientModelError,
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
    loop = asyncio.get_running_loop()
    idle_timer: asyncio.Timeout | None = None
    try:
        # One timeout for the whole stream, pushed forward after every chunk: cheaper
        # than arming a fresh timer per chunk, and it only runs while we wait.
        async with asyncio.timeout(None) as idle_timer:
            while True:
                if idle is not None:
                    idle_timer.reschedule(loop.time() + idle)
                try:
                    event = await iterator.__anext__()
                except StopAsyncIteration:
                    break
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
        text="".join(text_parts),
        calls=[calls[i] for i in sorted(calls)],
        finish_reason=done.finish_reason,
        usage=done.usage,
        provider_cost=done.cost,
        timings=timings,
        model=done.model,
        reasoning="".join(reasoning),
    )
