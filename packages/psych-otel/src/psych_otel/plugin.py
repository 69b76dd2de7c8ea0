"""The entry point psych-runtime loads: offers OpenTelemetry as the telemetry adapter.

With this package installed, a ``Runtime`` or ``Worker`` built without ``telemetry=``
reports through the global OpenTelemetry providers, and ``dispatch`` stores the
caller's active trace context with each Run. Loading the plugin imports nothing of
OpenTelemetry; building the adapter imports the API.
"""

from typing import TYPE_CHECKING

from psych_runtime.adapters.plugins import TelemetryBackend
from psych_runtime.adapters.plugins import import_check
from psych_runtime.adapters.plugins import offer_doctor_checks
from psych_runtime.adapters.plugins import offer_telemetry

if TYPE_CHECKING:
    from psych_otel.telemetry import OtelTelemetry

PSYCH_PLUGIN_API = 1

_PACKAGE = "psych-otel"


def build_telemetry() -> "OtelTelemetry":
    """An ``OtelTelemetry`` over the process-wide tracer and meter providers."""
    from psych_otel.telemetry import OtelTelemetry  # deferred: keep loading the plugin cheap

    return OtelTelemetry()


psych_register_telemetry = offer_telemetry(
    TelemetryBackend(
        name="otel",
        build=build_telemetry,
        package=_PACKAGE,
        description="OpenTelemetry spans and metrics for every step of every Run.",
    )
)

psych_doctor_checks = offer_doctor_checks(
    import_check(
        "opentelemetry api",
        "opentelemetry.trace",
        ok="the OpenTelemetry API is available",
        missing="cannot import the OpenTelemetry API ({error}); pip install psych-otel",
    )
)
