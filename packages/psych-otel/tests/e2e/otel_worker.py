"""A Worker in a process of its own that writes the spans it exports to a file.

Usage: ``python otel_worker.py STORE_URL SPANS_FILE RUN_ID [HANG_MARKER]``

It configures the OpenTelemetry SDK with an exporter that appends one JSON line per
finished span, runs a Worker (an agent that calls ``lookup`` once, then answers; its
model client says it reaches ``openai``) until RUN_ID settles, and exits. With
HANG_MARKER, ``lookup`` creates that file and then hangs, under a one-second lease,
so a test can SIGKILL the process in the middle of the call.
"""

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from collections.abc import Sequence
from pathlib import Path

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export import SpanExporter
from opentelemetry.sdk.trace.export import SpanExportResult
from opentelemetry.trace import StatusCode

import psych_runtime
from psych_otel import OtelTelemetry
from psych_runtime.models import ModelRequest
from psych_runtime.models import StreamEvent
from psych_runtime.testing import FakeModel


class JsonLinesExporter(SpanExporter):
    """Appends each finished span to a file as one JSON object per line."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        with self.path.open("a") as out:
            for span in spans:
                context = span.context
                assert context is not None
                entry = {
                    "name": span.name,
                    "span_id": format(context.span_id, "016x"),
                    "trace_id": format(context.trace_id, "032x"),
                    "parent_id": format(span.parent.span_id, "016x") if span.parent else None,
                    "parent_is_remote": bool(span.parent and span.parent.is_remote),
                    "attributes": {k: v for k, v in (span.attributes or {}).items()},
                    "error": span.status.status_code is StatusCode.ERROR,
                    "kind": span.kind.name.lower(),
                    "start_time": span.start_time,
                }
                out.write(json.dumps(entry, default=list) + "\n")
        return SpanExportResult.SUCCESS


class OneLookup:
    """Calls ``lookup`` once, then answers; decided from the conversation it is sent."""

    provider_name = "openai"

    async def known_models(self) -> frozenset[str]:
        return frozenset()

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        script = FakeModel()
        if any(message.role == "tool" for message in request.messages):
            script.turn(text="A1 is packed.")
        else:
            script.turn(tool_calls=[("lookup", {"order_id": "A1"})])
        return script.stream(request)


def tools(hang_marker: Path | None) -> psych_runtime.ToolRegistry:
    """``lookup``, which hangs after creating ``hang_marker`` when one is given."""

    async def lookup(order_id: str) -> str:
        """Look an order up."""
        if hang_marker is not None:
            hang_marker.write_text(order_id)
            await asyncio.Event().wait()
        return f"order {order_id} is packed"

    registry = psych_runtime.ToolRegistry()
    registry.register(lookup)
    return registry


async def main(url: str, spans: Path, run_id: str, hang_marker: Path | None) -> None:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(JsonLinesExporter(spans)))
    store = await psych_runtime.open_store(url)
    runtime = psych_runtime.Runtime(
        store, OneLookup(), tools(hang_marker), telemetry=OtelTelemetry(tracer_provider=provider)
    )
    lease = {"lease_seconds": 1.0, "heartbeat_seconds": 0.25} if hang_marker else {}
    worker = psych_runtime.Worker(store, runtime, poll_interval=0.05, **lease)
    task = asyncio.create_task(worker.run())
    try:
        async with asyncio.timeout(20):
            while True:
                log = await store.read(psych_runtime.RunId(run_id))
                if log and log[-1].type == "run_settled":
                    break
                await asyncio.sleep(0.02)
    finally:
        await worker.stop()
        await asyncio.gather(task, return_exceptions=True)
        await store.close()
        provider.shutdown()


if __name__ == "__main__":
    marker = Path(sys.argv[4]) if len(sys.argv) > 4 else None
    asyncio.run(main(sys.argv[1], Path(sys.argv[2]), sys.argv[3], marker))
