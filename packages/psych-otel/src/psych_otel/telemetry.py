"""``OtelTelemetry``: the runtime's Telemetry port, spoken through the OpenTelemetry API.

Only the API is imported. Spans go to whichever ``TracerProvider`` the consumer
installed (or passes here) and measurements to its ``MeterProvider``; without an SDK
both are OpenTelemetry's no-op implementations. Trace context crosses processes in
its W3C form (``traceparent``/``tracestate``), independent of the globally configured
propagators, because that is the form the runtime stores with a Run.
"""

from collections.abc import Mapping
from datetime import UTC
from datetime import datetime

from opentelemetry import context as otel_context
from opentelemetry import metrics
from opentelemetry import trace
from opentelemetry.metrics import Histogram
from opentelemetry.metrics import Meter
from opentelemetry.metrics import MeterProvider
from opentelemetry.trace import Span
from opentelemetry.trace import SpanKind
from opentelemetry.trace import Status
from opentelemetry.trace import StatusCode
from opentelemetry.trace import Tracer
from opentelemetry.trace import TracerProvider
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
from opentelemetry.util.types import AttributeValue as OtelValue

from psych_otel._version import __version__
from psych_runtime.adapters.telemetry import PSYCH_SCHEMA
from psych_runtime.adapters.telemetry import SpanKind as PsychSpanKind
from psych_runtime.adapters.telemetry import TelemetrySchema
from psych_runtime.adapters.telemetry import TelemetrySpan

INSTRUMENTATION_NAME = "psych_runtime"
"""The instrumentation scope every span and instrument is created under."""

_KINDS = {
    "internal": SpanKind.INTERNAL,
    "client": SpanKind.CLIENT,
    "producer": SpanKind.PRODUCER,
}
_W3C = TraceContextTextMapPropagator()
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _attributes(attributes: Mapping[str, object]) -> dict[str, OtelValue]:
    """The attributes in the shapes OpenTelemetry accepts (sequences as lists)."""
    converted: dict[str, OtelValue] = {}
    for name, value in attributes.items():
        if isinstance(value, str | bool | int | float):
            converted[name] = value
        elif isinstance(value, list | tuple):
            converted[name] = [str(item) for item in value]
        else:
            converted[name] = str(value)
    return converted


def _nanoseconds(moment: datetime) -> int:
    """``moment`` as whole nanoseconds since the epoch, the form the SDK takes.

    Computed from the exact difference rather than a float timestamp, so a span
    backdated to a record's time starts at that very microsecond. A naive datetime is
    taken as UTC, as the runtime's records are.
    """
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    delta = moment - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 10**9 + delta.microseconds * 1000


def _configured(provider: object) -> bool:
    """Whether ``provider`` is a real one rather than the API's proxy or no-op default."""
    return not type(provider).__module__.startswith(
        ("opentelemetry.trace", "opentelemetry.metrics")
    )


class OtelSpan:
    """One OpenTelemetry span, behind the runtime's ``TelemetrySpan`` protocol.

    Attributes:
        span: the OpenTelemetry span, for code that wants to add to it.
    """

    __slots__ = ("span",)

    def __init__(self, span: Span) -> None:
        self.span = span

    def set_attributes(self, attributes: Mapping[str, object]) -> None:
        """Add attributes to the open span."""
        self.span.set_attributes(_attributes(attributes))

    def end(self, *, error: str | None = None) -> None:
        """End the span, with an ERROR status described by ``error`` when given."""
        if error is not None:
            self.span.set_status(Status(StatusCode.ERROR, error))
        self.span.end()

    def carrier(self) -> dict[str, str]:
        """This span's W3C trace context, for a child in another process."""
        carrier: dict[str, str] = {}
        _W3C.inject(carrier, context=trace.set_span_in_context(self.span))
        return carrier


class OtelTelemetry:
    """The Telemetry port over the OpenTelemetry API.

    Installing ``psych-otel`` makes every ``Runtime`` and ``Worker`` built without
    ``telemetry=`` use one of these over the global providers; build one yourself to
    send a process's Runs to particular providers.

    Args:
        tracer_provider: where spans go; None uses the global provider (a proxy, so
            an SDK configured later still receives them).
        meter_provider: where measurements go; None uses the global one.
        schema: the schema whose metric units and descriptions are used.
    """

    def __init__(
        self,
        *,
        tracer_provider: TracerProvider | None = None,
        meter_provider: MeterProvider | None = None,
        schema: TelemetrySchema = PSYCH_SCHEMA,
    ) -> None:
        self.schema = schema
        self.tracer: Tracer = trace.get_tracer(
            INSTRUMENTATION_NAME, __version__, tracer_provider=tracer_provider
        )
        self.meter: Meter = metrics.get_meter(
            INSTRUMENTATION_NAME, __version__, meter_provider=meter_provider
        )
        self._histograms: dict[str, Histogram] = {}
        self._explicit = tracer_provider is not None or meter_provider is not None

    @property
    def enabled(self) -> bool:
        """Whether anything would receive the Run's spans or measurements.

        True when providers were passed in, or when an SDK (or any provider that is not
        the API's own proxy or no-op) is installed globally. Checked as each Attempt
        starts, so an SDK configured after the Worker was built is picked up, and a
        process with the package installed but no SDK pays nothing per record.
        """
        return (
            self._explicit
            or _configured(trace.get_tracer_provider())
            or _configured(metrics.get_meter_provider())
        )

    def start_span(
        self,
        name: str,
        attributes: Mapping[str, object],
        *,
        parent: TelemetrySpan | None = None,
        carrier: Mapping[str, str] | None = None,
        kind: PsychSpanKind = "internal",
        start_time: datetime | None = None,
    ) -> OtelSpan:
        """Open a span under ``parent``, else under the remote ``carrier``, else as a root.

        The caller's active span is deliberately not used as the parent: a Worker's
        tasks inherit whatever context started them, which says nothing about the Run.
        A ``start_time`` (an aware datetime) backdates the span.
        """
        if isinstance(parent, OtelSpan):
            context = trace.set_span_in_context(parent.span)
        elif carrier:
            context = _W3C.extract(dict(carrier), context=otel_context.Context())
        else:
            context = otel_context.Context()
        span = self.tracer.start_span(
            name,
            context=context,
            kind=_KINDS.get(kind, SpanKind.INTERNAL),
            attributes=_attributes(attributes),
            start_time=_nanoseconds(start_time) if start_time is not None else None,
        )
        return OtelSpan(span)

    def current_carrier(self) -> dict[str, str]:
        """The W3C trace context of the caller's active span (empty when none is)."""
        carrier: dict[str, str] = {}
        _W3C.inject(carrier)
        return carrier

    def record(self, metric: str, value: float, attributes: Mapping[str, object]) -> None:
        """Record ``value`` on the histogram ``metric`` names (created on first use)."""
        histogram = self._histograms.get(metric)
        if histogram is None:
            rule = self.schema.metrics.get(metric)
            histogram = self.meter.create_histogram(
                metric,
                unit=rule.unit if rule is not None else "",
                description=rule.description if rule is not None else "",
            )
            self._histograms[metric] = histogram
        histogram.record(value, _attributes(attributes))


__all__ = ["INSTRUMENTATION_NAME", "OtelSpan", "OtelTelemetry"]
