"""The Telemetry port, for whoever writes a telemetry adapter.

The protocol, the span schema it is held to and its checker, the no-op adapter, and the
provider names model calls are reported under.
"""

from psych_runtime.telemetry import (
    NO_TELEMETRY as NO_TELEMETRY,
    OTHER_PROVIDER as OTHER_PROVIDER,
    PSYCH_SCHEMA as PSYCH_SCHEMA,
    AttributeRule as AttributeRule,
    ErrorRule as ErrorRule,
    FinishedSpan as FinishedSpan,
    MetricRule as MetricRule,
    NoTelemetry as NoTelemetry,
    SpanKind as SpanKind,
    SpanProblem as SpanProblem,
    SpanRule as SpanRule,
    Telemetry as Telemetry,
    TelemetrySchema as TelemetrySchema,
    TelemetrySpan as TelemetrySpan,
    check_spans as check_spans,
    is_runtime_span as is_runtime_span,
    provider_for_url as provider_for_url,
)

__all__ = [
    "NO_TELEMETRY",
    "OTHER_PROVIDER",
    "PSYCH_SCHEMA",
    "AttributeRule",
    "ErrorRule",
    "FinishedSpan",
    "MetricRule",
    "NoTelemetry",
    "SpanKind",
    "SpanProblem",
    "SpanRule",
    "Telemetry",
    "TelemetrySchema",
    "TelemetrySpan",
    "check_spans",
    "is_runtime_span",
    "provider_for_url",
]
