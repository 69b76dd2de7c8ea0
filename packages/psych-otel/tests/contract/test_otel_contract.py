"""psych-otel passes the Telemetry conformance suite, over the real OpenTelemetry SDK."""

import contextlib
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest_asyncio
from opentelemetry import trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from psych_contract import Measurement, TelemetryContract, TelemetryHarness
from psych_otel import OtelSpan, OtelTelemetry, finished_span
from psych_runtime.adapters import TelemetrySpan


def _measurements(reader: InMemoryMetricReader) -> list[Measurement]:
    """Every histogram point the reader holds, as the suite's ``Measurement``."""
    data = reader.get_metrics_data()
    found: list[Measurement] = []
    if data is None:
        return found
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                for point in metric.data.data_points:
                    found.append(
                        Measurement(
                            metric=metric.name,
                            unit=metric.unit or "",
                            attributes=dict(point.attributes or {}),
                            total=point.sum,  # type: ignore[union-attr]
                            count=point.count,  # type: ignore[union-attr]
                        )
                    )
    return found


@contextlib.contextmanager
def _activate(span: TelemetrySpan) -> Iterator[Any]:
    assert isinstance(span, OtelSpan)
    with trace.use_span(span.span, end_on_exit=False):
        yield


class TestOtelTelemetry(TelemetryContract):
    @pytest_asyncio.fixture
    async def telemetry_harness(self) -> AsyncIterator[TelemetryHarness]:
        exporter = InMemorySpanExporter()
        tracers = TracerProvider()
        tracers.add_span_processor(SimpleSpanProcessor(exporter))
        reader = InMemoryMetricReader()
        meters = MeterProvider(metric_readers=[reader])
        yield TelemetryHarness(
            telemetry=OtelTelemetry(tracer_provider=tracers, meter_provider=meters),
            finished=lambda: [finished_span(span) for span in exporter.get_finished_spans()],
            activate=_activate,
            measurements=lambda: _measurements(reader),
        )
        tracers.shutdown()
        meters.shutdown()
