"""Telemetry overhead per turn: no adapter, the OpenTelemetry API alone, and the SDK.

Run with ``python -m benchmarks.otel`` (``--quick`` for fewer samples). Prints one JSON
object per line. The workload is the one in PERFORMANCE.md (an agent making K=10
sequential ``lookup`` calls, then answering) on the in-memory store, run through
``Session`` with three telemetry settings, in interleaved rounds so the machine's
drift hits all three alike:

- ``none``: ``NO_TELEMETRY``, what a process without an adapter runs;
- ``api``: ``OtelTelemetry`` with no SDK configured, what installing ``psych-otel``
  costs before anyone sets up tracing (it reports itself disabled, so no spans are
  built);
- ``sdk``: ``OtelTelemetry`` over an SDK ``TracerProvider`` with a
  ``SimpleSpanProcessor`` into an ``InMemorySpanExporter`` and a ``MeterProvider``
  with an ``InMemoryMetricReader``: every span and measurement really recorded.

Overheads are medians against ``none`` measured in the same process, per tool turn
(divided by K, as ``benchmarks/run.py`` reports engine overhead).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
from collections.abc import Sequence
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import psych_runtime
from benchmarks.run import ScriptModel
from benchmarks.run import bare_loop
from benchmarks.run import lookup
from benchmarks.run import spec
from benchmarks.run import timed
from psych_otel import OtelTelemetry
from psych_runtime.adapters import NO_TELEMETRY
from psych_runtime.adapters import Telemetry

K = 10


def _median_ms(samples: Sequence[float]) -> float:
    return statistics.median(samples) * 1000


async def _samples(telemetry: Telemetry, n: int, after: Any = None) -> list[float]:
    """``n`` timed K-turn Runs through a session using ``telemetry``."""
    async with psych_runtime.session(
        ScriptModel(K),
        tools=[lookup],
        runtime=psych_runtime.RuntimeSettings(telemetry=telemetry),
    ) as s:
        version = await psych_runtime.publish(s.store, spec())

        async def one() -> None:
            dispatched = await s.dispatch(version, "status?", trace_context={})
            await s.wait(dispatched.run_id)
            if after is not None:
                after()

        await one()  # warm up
        return await timed(one, n)


async def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer samples")
    args = parser.parse_args(argv)
    rounds, per_round = (3, 10) if args.quick else (6, 30)
    exporter = InMemorySpanExporter()
    tracers = TracerProvider()
    tracers.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    meters = MeterProvider(metric_readers=[reader])
    # With no SDK installed globally, the API hands out non-recording spans.
    assert not isinstance(trace.get_tracer_provider(), TracerProvider)
    modes: dict[str, tuple[Telemetry, Any]] = {
        "none": (NO_TELEMETRY, None),
        "api": (OtelTelemetry(), None),
        "sdk": (OtelTelemetry(tracer_provider=tracers, meter_provider=meters), exporter.clear),
    }
    samples: dict[str, list[float]] = {mode: [] for mode in modes}
    baseline: list[float] = []
    for _ in range(rounds):
        baseline += await timed(lambda: bare_loop(K), per_round)
        for mode, (telemetry, after) in modes.items():
            samples[mode] += await _samples(telemetry, per_round, after)
    base = _median_ms(baseline)
    none = _median_ms(samples["none"])
    turns = K
    for mode in modes:
        run = _median_ms(samples[mode])
        print(
            json.dumps(
                {
                    "metric": "telemetry_overhead",
                    "store": "memory",
                    "mode": mode,
                    "k": K,
                    "run_median_ms": round(run, 4),
                    "engine_overhead_per_tool_turn_ms": round((run - base) / turns, 4),
                    "telemetry_overhead_per_tool_turn_ms": round((run - none) / turns, 4),
                    "samples": len(samples[mode]),
                }
            ),
            flush=True,
        )
    tracers.shutdown()
    meters.shutdown()


if __name__ == "__main__":
    asyncio.run(main())
