"""The Telemetry contract against wrong adapters, chosen by an environment variable.

``test_telemetry_mutants`` runs this module in one subprocess: ``PSYCH_TELEMETRY_MUTANTS``
names the mutants (see ``telemetry_mutants.TELEMETRY_MUTANTS``, and ``control`` for the
unchanged adapter), each case runs once per mutant (``case[name]``), and the caller
selects the pairs it expects by node id. It is not collected on its own.
"""

import contextlib
import os
from collections.abc import AsyncIterator
from collections.abc import Iterator
from typing import Any

import pytest
import pytest_asyncio
from opentelemetry import trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from contract.tests.mutants.telemetry_mutants import build
from contract.tests.mutants.telemetry_mutants import telemetry_mutant
from psych_contract import Measurement
from psych_contract import TelemetryContract
from psych_contract import TelemetryHarness
from psych_otel import OtelSpan
from psych_otel import finished_span
from psych_runtime.adapters import TelemetrySpan

NAMES = [name for name in os.environ.get("PSYCH_TELEMETRY_MUTANTS", "").split(",") if name]


def _measurements(reader: InMemoryMetricReader) -> list[Measurement]:
    data = reader.get_metrics_data()
    if data is None:
        return []
    return [
        Measurement(
            metric=metric.name,
            unit=metric.unit or "",
            attributes=dict(point.attributes or {}),
            total=point.sum,  # type: ignore[union-attr]
            count=point.count,  # type: ignore[union-attr]
        )
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
        for point in metric.data.data_points
    ]


@contextlib.contextmanager
def _activate(span: TelemetrySpan) -> Iterator[Any]:
    assert isinstance(span, OtelSpan)
    with trace.use_span(span.span, end_on_exit=False):
        yield


class TestMutant(TelemetryContract):
    @pytest_asyncio.fixture(params=NAMES)
    async def telemetry_harness(
        self, request: pytest.FixtureRequest
    ) -> AsyncIterator[TelemetryHarness]:
        exporter = InMemorySpanExporter()
        tracers = TracerProvider()
        tracers.add_span_processor(SimpleSpanProcessor(exporter))
        reader = InMemoryMetricReader()
        meters = MeterProvider(metric_readers=[reader])
        yield TelemetryHarness(
            telemetry=build(telemetry_mutant(request.param), tracers, meters),
            finished=lambda: [finished_span(span) for span in exporter.get_finished_spans()],
            activate=_activate,
            measurements=lambda: _measurements(reader),
        )
        tracers.shutdown()
        meters.shutdown()
