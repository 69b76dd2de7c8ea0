"""Telemetry: the port the runtime reports spans and metrics through, and its schema.

``port`` holds the ``Telemetry`` protocol and the no-op default, ``schema`` the span and
metric schema as data (``PSYCH_SCHEMA``), ``conformance`` the checker that validates
finished spans against it, and ``tracer`` the ``RunTracer`` that derives one Run's
spans from the records its Attempt writes. An adapter (``psych-otel``) registers
itself through the ``psych_register_telemetry`` plugin hook.
"""

from psych_runtime.telemetry.conformance import FinishedSpan, SpanProblem, check_spans
from psych_runtime.telemetry.port import (
    NO_TELEMETRY,
    Attributes,
    AttributeValue,
    Carrier,
    NoTelemetry,
    Telemetry,
    TelemetrySpan,
)
from psych_runtime.telemetry.schema import (
    PSYCH_SCHEMA,
    AttributeRule,
    ErrorRule,
    MetricRule,
    SpanRule,
    TelemetrySchema,
)

__all__ = [
    "NO_TELEMETRY",
    "PSYCH_SCHEMA",
    "AttributeRule",
    "AttributeValue",
    "Attributes",
    "Carrier",
    "ErrorRule",
    "FinishedSpan",
    "MetricRule",
    "NoTelemetry",
    "SpanProblem",
    "SpanRule",
    "Telemetry",
    "TelemetrySchema",
    "TelemetrySpan",
    "check_spans",
]
