"""psych-otel passes the Telemetry conformance suite, over the real OpenTelemetry SDK."""

import contextlib
from collections.abc import AsyncIterator
from collections.abc import Iterator
from typing import Any

import pytest_asyncio
from opentelemetry import trace

from psych_contract import Measurement
from psych_contract import TelemetryContract
from psych_contract import TelemetryHarness
from psych_otel import OtelSpan
from psych_otel import finished_span
from psych_runtime.adapters import TelemetrySpan

from ..conftest import Otel


def _measurements(otel: Otel) -> list[Measurement]:
    """Every histogram point recorded so far, as the suite's ``Measurement``."""
    return [
        Measurement(
            metric=metric.name,
            unit=metric.unit or "",
            attributes=dict(point.attributes or {}),
            total=point.sum,
            count=point.count,
        )
        for metric, point in otel.metric_points()
    ]


@contextlib.contextmanager
def _activate(span: TelemetrySpan) -> Iterator[Any]:
    assert isinstance(span, OtelSpan)
    with trace.use_span(span.span, end_on_exit=False):
        yield


class TestOtelTelemetry(TelemetryContract):
    @pytest_asyncio.fixture
    async def telemetry_harness(self) -> AsyncIterator[TelemetryHarness]:
        otel = Otel.in_memory()
        yield TelemetryHarness(
            telemetry=otel.telemetry,
            finished=lambda: [finished_span(span) for span in otel.spans()],
            activate=_activate,
            measurements=lambda: _measurements(otel),
        )
        otel.shutdown()
