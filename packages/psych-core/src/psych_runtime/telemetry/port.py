"""The Telemetry port: how the runtime reports spans and metrics, and its no-op default.

The runtime never talks to a tracing library itself. It describes what happens to a
Run as spans (named in ``psych_runtime.telemetry.schema``) and measurements through
this port, and an adapter (``psych-otel``) turns them into whatever its library wants.

Without an adapter the runtime holds ``NO_TELEMETRY``, whose ``enabled`` is False: the
Worker then builds nothing per Run, so an installation without telemetry pays one
attribute check per record and nothing else.

An adapter may raise from any method (an exporter that fails, a span processor with a
bug): the runtime calls it only through guards that log the failure and carry on, so
telemetry can never fail a Run.
"""

from collections.abc import Mapping
from collections.abc import Sequence
from datetime import datetime
from typing import Protocol
from typing import runtime_checkable

from psych_runtime.telemetry.schema import SpanKind

AttributeValue = str | bool | int | float | Sequence[str]
"""What a span attribute or metric attribute may hold (OpenTelemetry's primitive kinds)."""

Attributes = Mapping[str, AttributeValue]
"""Attribute names mapped to values."""

Carrier = Mapping[str, str]
"""A trace context in its W3C text form (``traceparent`` and, when set, ``tracestate``)."""


@runtime_checkable
class TelemetrySpan(Protocol):
    """One open span an adapter handed back from ``Telemetry.start_span``."""

    def set_attributes(self, attributes: Attributes) -> None:
        """Add or overwrite attributes while the span is open."""
        ...

    def end(self, *, error: str | None = None) -> None:
        """Close the span; with ``error``, its status is an error described by that text."""
        ...

    def carrier(self) -> dict[str, str]:
        """The W3C trace context that makes a span elsewhere a child of this one."""
        ...


@runtime_checkable
class Telemetry(Protocol):
    """Where the runtime sends its spans and metrics."""

    @property
    def enabled(self) -> bool:
        """False while nothing would record: the runtime then builds no spans at all.

        Read as each Attempt starts, so it may change over a process's life (an SDK
        configured after the Worker was built).
        """
        ...

    def start_span(
        self,
        name: str,
        attributes: Attributes,
        *,
        parent: TelemetrySpan | None = None,
        carrier: Carrier | None = None,
        kind: SpanKind = "internal",
        start_time: datetime | None = None,
    ) -> TelemetrySpan:
        """Open a span named from the schema (``psych.run``, ``execute_tool lookup``...).

        Args:
            name: the span's name; ``PSYCH_SCHEMA`` says which attributes it carries.
            attributes: its attributes at the start.
            parent: the span it belongs under, when the runtime holds it.
            carrier: otherwise, a W3C trace context from another process (the one
                ``dispatch`` stored with the Run); None with no parent makes a root.
            kind: the span kind the schema gives it (client for a model call).
            start_time: when it started, for a span told after the fact (a later
                Attempt rebuilding what a dead process left open); None means now.
        """
        ...

    def current_carrier(self) -> dict[str, str]:
        """The trace context of the caller's active span, empty when there is none."""
        ...

    def record(self, metric: str, value: float, attributes: Attributes) -> None:
        """Record one measurement of a metric named in ``PSYCH_SCHEMA.metrics``."""
        ...


class _NoSpan:
    """A span that records nothing."""

    __slots__ = ()

    def set_attributes(self, attributes: Attributes) -> None:
        """Ignore the attributes."""

    def end(self, *, error: str | None = None) -> None:
        """Nothing to close."""

    def carrier(self) -> dict[str, str]:
        """No trace context to carry."""
        return {}


NO_SPAN: TelemetrySpan = _NoSpan()
"""A span that records nothing: what ``NoTelemetry`` opens, and what stands in for a span
an adapter failed to open."""


class NoTelemetry:
    """The default when no telemetry adapter is installed: records nothing, costs nothing."""

    __slots__ = ()

    enabled: bool = False

    def start_span(
        self,
        name: str,
        attributes: Attributes,
        *,
        parent: TelemetrySpan | None = None,
        carrier: Carrier | None = None,
        kind: SpanKind = "internal",
        start_time: datetime | None = None,
    ) -> TelemetrySpan:
        """A span that records nothing."""
        return NO_SPAN

    def current_carrier(self) -> dict[str, str]:
        """Nothing is active."""
        return {}

    def record(self, metric: str, value: float, attributes: Attributes) -> None:
        """Drop the measurement."""


NO_TELEMETRY: Telemetry = NoTelemetry()
"""The shared no-op instance."""


__all__ = [
    "NO_SPAN",
    "NO_TELEMETRY",
    "AttributeValue",
    "Attributes",
    "Carrier",
    "NoTelemetry",
    "Telemetry",
    "TelemetrySpan",
]
