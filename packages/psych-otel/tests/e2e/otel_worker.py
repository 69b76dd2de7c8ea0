"""A Worker in a process of its own that writes the spans it exports to a file.

Usage: ``python otel_worker.py STORE_URL SPANS_FILE RUN_ID``

It configures the OpenTelemetry SDK with an exporter that appends one JSON line per
finished span, runs a Worker (an agent that calls ``lookup`` once, then answers) until
RUN_ID settles, and exits.
"""

import asyncio
import json
import sys
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import StatusCode

import psych_runtime
from psych_otel import OtelTelemetry
from psych_runtime.models import ModelRequest, StreamEvent
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
                }
                out.write(json.dumps(entry, default=list) + "\n")
        return SpanExportResult.SUCCESS


class OneLookup:
    """Calls ``lookup`` once, then answers; decided from the conversation it is sent."""

    async def known_models(self) -> frozenset[str]:
        return frozenset()

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        script = FakeModel()
        if any(message.role == "tool" for message in request.messages):
            script.turn(text="A1 is packed.")
        else:
            script.turn(tool_calls=[("lookup", {"order_id": "A1"})])
        return script.stream(request)


def lookup(order_id: str) -> str:
    """Look an order up."""
    return f"order {order_id} is packed"


async def main(url: str, spans: Path, run_id: str) -> None:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(JsonLinesExporter(spans)))
    store = await psych_runtime.open_store(url)
    registry = psych_runtime.ToolRegistry()
    registry.register(lookup)
    runtime = psych_runtime.Runtime(
        store, OneLookup(), registry, telemetry=OtelTelemetry(tracer_provider=provider)
    )
    worker = psych_runtime.Worker(store, runtime, poll_interval=0.05)
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
    asyncio.run(main(sys.argv[1], Path(sys.argv[2]), sys.argv[3]))
