"""Deliberately wrong Telemetry adapters, each a small edit of ``psych_otel.OtelTelemetry``.

Each one still passes every span through the real OpenTelemetry SDK and gets one
thing wrong that a real adapter could: a metric attribute dropped (so input and output
tokens add up as one), a unit misnamed, a span kind or a backdated start ignored, a
remote parent lost, an error status or a late attribute never set. Each names the
``TelemetryContract`` cases that must fail against it.
"""

from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import replace
from types import MappingProxyType
from typing import Any

from opentelemetry.metrics import MeterProvider
from opentelemetry.trace import TracerProvider

from psych_otel import OtelSpan
from psych_otel import OtelTelemetry
from psych_runtime.adapters import PSYCH_SCHEMA
from psych_runtime.adapters import MetricRule
from psych_runtime.adapters import TelemetrySchema

MEASURED = "test_model_calls_are_measured"
PRICED = "test_a_priced_call_is_measured_in_its_currency"
FAILED_CALL = "test_a_failed_call_is_timed_with_its_error_type"
RUN_CASE = "test_a_run_with_a_tool_gives_conforming_spans"
FAILURES = "test_failures_are_error_statuses"
KINDS = "test_kinds_and_backdated_starts_are_kept"
CARRIER = "test_a_carrier_continues_the_trace"
ABANDONED = "test_an_abandoned_attempt_is_told_by_the_next_one"


def _without(attributes: Mapping[str, object], *names: str) -> dict[str, object]:
    return {key: value for key, value in attributes.items() if key not in names}


class MergedTokenTypes(OtelTelemetry):
    """Drops ``gen_ai.token.type``: input and output tokens land on one series."""

    def record(self, metric: str, value: float, attributes: Mapping[str, object]) -> None:
        super().record(metric, value, _without(attributes, "gen_ai.token.type"))


class ModelDroppedFromMetrics(OtelTelemetry):
    """Drops ``gen_ai.request.model`` from every measurement."""

    def record(self, metric: str, value: float, attributes: Mapping[str, object]) -> None:
        super().record(metric, value, _without(attributes, "gen_ai.request.model"))


class ErrorTypeDroppedFromMetrics(OtelTelemetry):
    """Drops ``error.type``: a failed call's duration looks like a good one's."""

    def record(self, metric: str, value: float, attributes: Mapping[str, object]) -> None:
        super().record(metric, value, _without(attributes, "error.type"))


class CurrencyDroppedFromCost(OtelTelemetry):
    """Records cost without ``psych.cost.currency``, so currencies add up together."""

    def record(self, metric: str, value: float, attributes: Mapping[str, object]) -> None:
        super().record(metric, value, _without(attributes, "psych.cost.currency"))


def _units(unit: Callable[[MetricRule], str]) -> TelemetrySchema:
    """The runtime's schema with every metric's unit replaced by ``unit(rule)``."""
    metrics = {name: replace(rule, unit=unit(rule)) for name, rule in PSYCH_SCHEMA.metrics.items()}
    return replace(PSYCH_SCHEMA, metrics=MappingProxyType(metrics))


class DurationInMilliseconds(OtelTelemetry):
    """Names the duration's unit ``ms`` while recording seconds."""

    def __init__(self, **providers: Any) -> None:
        super().__init__(
            **providers,
            schema=_units(lambda rule: "ms" if rule.unit == "s" else rule.unit),
        )


class NoUnits(OtelTelemetry):
    """Creates every instrument without a unit."""

    def __init__(self, **providers: Any) -> None:
        super().__init__(**providers, schema=_units(lambda rule: ""))


class EverySpanInternal(OtelTelemetry):
    """Ignores the span kind: model calls come out INTERNAL, not CLIENT."""

    def start_span(self, name: str, attributes: Mapping[str, object], **options: Any) -> OtelSpan:
        return super().start_span(name, attributes, **{**options, "kind": "internal"})


class StartTimeIgnored(OtelTelemetry):
    """Ignores ``start_time``: a rebuilt span starts when it is rebuilt."""

    def start_span(self, name: str, attributes: Mapping[str, object], **options: Any) -> OtelSpan:
        return super().start_span(name, attributes, **{**options, "start_time": None})


class CarrierIgnored(OtelTelemetry):
    """Drops the remote trace context: a Run's spans start a trace of their own."""

    def start_span(self, name: str, attributes: Mapping[str, object], **options: Any) -> OtelSpan:
        return super().start_span(name, attributes, **{**options, "carrier": None})


class _SilentSpan(OtelSpan):
    def end(self, *, error: str | None = None) -> None:
        self.span.end()


class ErrorStatusLost(OtelTelemetry):
    """Ends every span without its ERROR status."""

    def start_span(self, name: str, attributes: Mapping[str, object], **options: Any) -> OtelSpan:
        return _SilentSpan(super().start_span(name, attributes, **options).span)


class _Forgetful(OtelSpan):
    def set_attributes(self, attributes: Mapping[str, object]) -> None:
        pass


class LateAttributesLost(OtelTelemetry):
    """Keeps only the attributes a span starts with (outcomes and usage are lost)."""

    def start_span(self, name: str, attributes: Mapping[str, object], **options: Any) -> OtelSpan:
        return _Forgetful(super().start_span(name, attributes, **options).span)


@dataclass(frozen=True)
class TelemetryMutant:
    """One wrong adapter and the cases that must fail against it."""

    name: str
    build: Callable[..., OtelTelemetry]
    caught_by: tuple[str, ...]


TELEMETRY_MUTANTS = (
    TelemetryMutant("merged-token-types", MergedTokenTypes, (MEASURED,)),
    TelemetryMutant("model-dropped-from-metrics", ModelDroppedFromMetrics, (MEASURED, PRICED)),
    TelemetryMutant("error-type-dropped-from-metrics", ErrorTypeDroppedFromMetrics, (FAILED_CALL,)),
    TelemetryMutant("currency-dropped-from-cost", CurrencyDroppedFromCost, (PRICED,)),
    TelemetryMutant("duration-in-milliseconds", DurationInMilliseconds, (MEASURED, FAILED_CALL)),
    TelemetryMutant("no-units", NoUnits, (MEASURED, PRICED, FAILED_CALL)),
    TelemetryMutant("every-span-internal", EverySpanInternal, (RUN_CASE, KINDS)),
    TelemetryMutant("start-time-ignored", StartTimeIgnored, (KINDS, ABANDONED)),
    TelemetryMutant("carrier-ignored", CarrierIgnored, (CARRIER, RUN_CASE, ABANDONED)),
    TelemetryMutant("error-status-lost", ErrorStatusLost, (FAILURES, ABANDONED)),
    TelemetryMutant("late-attributes-lost", LateAttributesLost, (RUN_CASE, FAILURES)),
)

TELEMETRY_CONTROL = TelemetryMutant(
    "control",
    OtelTelemetry,
    tuple(sorted({case for mutant in TELEMETRY_MUTANTS for case in mutant.caught_by})),
)
"""The unchanged adapter: passes every case a mutant is checked with."""


def telemetry_mutant(name: str) -> TelemetryMutant:
    """The mutant (or the control) called ``name``."""
    for mutant in (*TELEMETRY_MUTANTS, TELEMETRY_CONTROL):
        if mutant.name == name:
            return mutant
    raise KeyError(name)


def build(
    mutant: TelemetryMutant, tracer_provider: TracerProvider, meter_provider: MeterProvider
) -> OtelTelemetry:
    """The mutant's adapter over the given SDK providers."""
    return mutant.build(tracer_provider=tracer_provider, meter_provider=meter_provider)


__all__ = [
    "TELEMETRY_CONTROL",
    "TELEMETRY_MUTANTS",
    "TelemetryMutant",
    "build",
    "telemetry_mutant",
]
