"""OpenTelemetry spans and metrics for every step of every Psych Runtime Run.

Installing the package is enough: every ``Runtime`` and ``Worker`` built without
``telemetry=`` reports through the global OpenTelemetry providers, and a ``dispatch``
made inside one of your spans carries its trace context, so the Run's spans join your
trace in whichever process runs it. Configure the SDK and exporter yourself; this
package imports the OpenTelemetry API only.

Example::

    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from psych_otel import OtelTelemetry, check_spans

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    telemetry = OtelTelemetry(tracer_provider=provider)
    # Runtime(store, model, registry, telemetry=telemetry) ... run something ...
    assert check_spans(exporter.get_finished_spans()) == []
"""

from typing import TYPE_CHECKING

from psych_otel._version import __version__
from psych_runtime.adapters.plugins import lazy_exports
from psych_runtime.adapters.telemetry import PSYCH_SCHEMA

if TYPE_CHECKING:
    from psych_otel.conformance import ExportedSpan as ExportedSpan
    from psych_otel.conformance import check_spans as check_spans
    from psych_otel.conformance import finished_span as finished_span
    from psych_otel.telemetry import INSTRUMENTATION_NAME as INSTRUMENTATION_NAME
    from psych_otel.telemetry import OtelSpan as OtelSpan
    from psych_otel.telemetry import OtelTelemetry as OtelTelemetry

# The OpenTelemetry API loads when a program first names one of these, so installing
# the package (whose plugin psych-runtime imports) costs nothing until it is used.
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "ExportedSpan": "psych_otel.conformance",
        "check_spans": "psych_otel.conformance",
        "finished_span": "psych_otel.conformance",
        "INSTRUMENTATION_NAME": "psych_otel.telemetry",
        "OtelSpan": "psych_otel.telemetry",
        "OtelTelemetry": "psych_otel.telemetry",
    },
)

__all__ = [
    "INSTRUMENTATION_NAME",
    "PSYCH_SCHEMA",
    "ExportedSpan",
    "OtelSpan",
    "OtelTelemetry",
    "__version__",
    "check_spans",
    "finished_span",
]
