"""Telemetry: the port the runtime reports spans and metrics through, and its schema.

``port`` holds the ``Telemetry`` protocol and the no-op default, ``schema`` the span and
metric schema as data (``PSYCH_SCHEMA``), ``conformance`` the checker that validates
finished spans against it, ``tracer`` the ``RunTracer`` that derives one Run's spans
from the records its Attempt writes (and rebuilds what a dead process left open),
``context`` the trace a Run joins from admission on, and ``providers`` the
``gen_ai.provider.name`` of a model client. An adapter (``psych-otel``) registers
itself through the ``psych_register_telemetry`` plugin hook.
"""

from psych_runtime.telemetry.conformance import FinishedSpan
from psych_runtime.telemetry.conformance import SpanProblem
from psych_runtime.telemetry.conformance import check_spans
from psych_runtime.telemetry.conformance import is_runtime_span
from psych_runtime.telemetry.port import NO_TELEMETRY
from psych_runtime.telemetry.port import Attributes
from psych_runtime.telemetry.port import AttributeValue
from psych_runtime.telemetry.port import Carrier
from psych_runtime.telemetry.port import NoTelemetry
from psych_runtime.telemetry.port import Telemetry
from psych_runtime.telemetry.port import TelemetrySpan
from psych_runtime.telemetry.providers import provider_for_url
from psych_runtime.telemetry.providers import provider_of
from psych_runtime.telemetry.schema import OTHER_PROVIDER
from psych_runtime.telemetry.schema import PSYCH_SCHEMA
from psych_runtime.telemetry.schema import AttributeRule
from psych_runtime.telemetry.schema import ErrorRule
from psych_runtime.telemetry.schema import MetricRule
from psych_runtime.telemetry.schema import SpanKind
from psych_runtime.telemetry.schema import SpanRule
from psych_runtime.telemetry.schema import TelemetrySchema

__all__ = [
    "NO_TELEMETRY",
    "OTHER_PROVIDER",
    "PSYCH_SCHEMA",
    "AttributeRule",
    "AttributeValue",
    "Attributes",
    "Carrier",
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
    "provider_of",
]
