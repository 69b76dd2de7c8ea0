"""Shared fixtures: an OpenTelemetry SDK with in-memory exporters, and a fast Worker."""

import asyncio
import json
import subprocess
import sys
from collections.abc import AsyncIterator
from collections.abc import Callable
from collections.abc import Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.metrics.export import Metric
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import psych_runtime
from psych_otel import OtelTelemetry
from psych_runtime import AgentSpec
from psych_runtime import CodeTool
from psych_runtime import Runtime
from psych_runtime import Scope
from psych_runtime import Store
from psych_runtime import ToolRegistry
from psych_runtime import Version
from psych_runtime import Worker
from psych_runtime import publish
from psych_runtime.adapters import FinishedSpan
from psych_runtime.adapters import Telemetry
from psych_runtime.models import ModelClient
from psych_runtime.testing import FAST_WORKER
from psych_runtime.testing import worker_in_background

ACME = Scope(tenant="acme")


@dataclass
class Otel:
    """An SDK tracer and meter provider whose output tests can read."""

    exporter: InMemorySpanExporter
    reader: InMemoryMetricReader
    tracer_provider: TracerProvider
    telemetry: OtelTelemetry
    meter_provider: MeterProvider

    @classmethod
    def in_memory(cls) -> "Otel":
        """Providers whose spans and metrics stay in memory; ``shutdown`` when done."""
        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        reader = InMemoryMetricReader()
        meters = MeterProvider(metric_readers=[reader])
        telemetry = OtelTelemetry(tracer_provider=provider, meter_provider=meters)
        return cls(exporter, reader, provider, telemetry, meters)

    def shutdown(self) -> None:
        self.tracer_provider.shutdown()
        self.meter_provider.shutdown()

    def spans(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def named(self, name: str) -> list[ReadableSpan]:
        return [span for span in self.spans() if span.name == name]

    def metric_points(self) -> Iterator[tuple[Metric, Any]]:
        """Every metric recorded so far with each of its data points."""
        data = self.reader.get_metrics_data()
        if data is None:
            return
        for resource in data.resource_metrics:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    for point in metric.data.data_points:
                        yield metric, point

    def points(self, metric: str) -> list[tuple[float, dict[str, Any]]]:
        """Every (sum, attributes) histogram point recorded for ``metric``."""
        return [
            (point.sum, dict(point.attributes or {}))
            for entry, point in self.metric_points()
            if entry.name == metric
        ]


@pytest.fixture
def otel() -> Iterator[Otel]:
    otel = Otel.in_memory()
    yield otel
    otel.shutdown()


def registry_of(*tools: Callable[..., Any]) -> ToolRegistry:
    registry = ToolRegistry()
    for tool in tools:
        registry.register(tool)
    return registry


@asynccontextmanager
async def running_worker(
    store: Store,
    model: ModelClient,
    registry: ToolRegistry,
    telemetry: Telemetry,
    **options: Any,
) -> AsyncIterator[Worker]:
    runtime_options = {k: options.pop(k) for k in ("prices",) if k in options}
    runtime = Runtime(
        store, model, registry, retry_base_seconds=0.01, telemetry=telemetry, **runtime_options
    )
    async with worker_in_background(Worker(store, runtime, **{**FAST_WORKER, **options})) as worker:
        yield worker


OTEL_WORKER = Path(__file__).parent / "e2e" / "otel_worker.py"
"""A Worker with psych-otel installed, in a process of its own (see the script)."""


@asynccontextmanager
async def clerk_on_sqlite(tmp_path: Path) -> AsyncIterator[tuple[str, Store, Version]]:
    """A migrated SQLite store under ``tmp_path``, for ``OTEL_WORKER`` processes to share.

    Yields the store's URL, the store (closed on the way out) and the published Version
    of the agent the worker script's model drives: ``clerk``, with its ``lookup`` tool.
    """
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    store = await psych_runtime.open_store(url, migrate=True)
    try:
        spec = AgentSpec(name="clerk", model="m", tools=(CodeTool(name="lookup"),))
        yield url, store, await publish(store, spec, scope=ACME)
    finally:
        await store.close()


def worker_command(url: str, spans_file: Path, run_id: str, *more: str) -> list[str]:
    """How ``OTEL_WORKER`` is started: work ``run_id`` from ``url``, spans to ``spans_file``."""
    return [sys.executable, str(OTEL_WORKER), url, str(spans_file), run_id, *more]


async def work_in_another_process(url: str, spans_file: Path, run_id: str) -> None:
    """Run ``OTEL_WORKER`` until it has worked ``run_id`` to its end; it must exit 0."""
    finished = await asyncio.to_thread(
        subprocess.run,
        worker_command(url, spans_file, run_id),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert finished.returncode == 0, finished.stderr


def read_exported(path: Path) -> list[dict[str, Any]]:
    """The spans ``e2e/otel_worker.py`` wrote to ``path``, one dict per span."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def as_finished(exported: list[dict[str, Any]]) -> list[FinishedSpan]:
    """Spans written by ``e2e/otel_worker.py`` as the checker's ``FinishedSpan``."""
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    return [
        FinishedSpan(
            name=s["name"],
            span_id=s["span_id"],
            trace_id=s["trace_id"],
            parent_id=s["parent_id"],
            attributes={
                k: tuple(v) if isinstance(v, list) else v for k, v in s["attributes"].items()
            },
            error=s["error"],
            kind=s["kind"],
            started_at=epoch + timedelta(microseconds=s["start_time"] // 1000),
        )
        for s in exported
    ]
