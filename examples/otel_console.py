"""Every step of a Run as OpenTelemetry spans, printed by the SDK's console exporter.

Needs ``pip install "psych-runtime[otel]" opentelemetry-sdk``. The program configures
the SDK (a tracer provider whose processor hands each finished span to a
``ConsoleSpanExporter``), gives the session's Runtime an ``OtelTelemetry`` over it, and
runs an agent that calls one tool. Each span is printed as one line when it
ends; drop the ``formatter`` to see the exporter's full JSON instead.
"""

import asyncio

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

import psych_runtime
from psych_otel import OtelTelemetry
from psych_runtime.testing import FakeModel


def one_line(span: ReadableSpan) -> str:
    """The span's name and a few telling attributes, on one line."""
    attributes = span.attributes or {}
    shown = (
        "gen_ai.request.model",
        "gen_ai.tool.name",
        "psych.turn.number",
        "psych.tool.outcome",
        "psych.run.terminal_state",
    )
    details = " ".join(f"{key}={attributes[key]!s}" for key in shown if key in attributes)
    return f"{span.name} {details}".rstrip() + "\n"


async def track_parcel(tracking_id: str) -> dict[str, str]:
    """Report where a parcel is right now."""
    return {"tracking_id": tracking_id, "state": "out for delivery"}


spec = psych_runtime.AgentSpec(
    name="courier",
    instructions="Answer questions about parcel deliveries.",
    model="gpt-4o-mini",
    tools=("track_parcel",),
)
model = (
    FakeModel()
    .turn(tool_calls=[("track_parcel", {"tracking_id": "P-100"})])
    .turn(text="Parcel P-100 is out for delivery.")
)


async def main() -> None:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(formatter=one_line)))
    telemetry = OtelTelemetry(tracer_provider=provider)
    async with psych_runtime.session(
        model,
        tools=[track_parcel],
        runtime=psych_runtime.RuntimeSettings(telemetry=telemetry),
    ) as s:
        answer = await s.ask(spec, "Has parcel P-100 left the depot?")
    provider.shutdown()
    print(answer.text)


asyncio.run(main())
