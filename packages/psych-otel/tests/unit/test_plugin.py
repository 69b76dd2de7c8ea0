"""Installing psych-otel registers it through the entry point, cheaply."""

from psych_contract.plugin import modules_loaded_by
from psych_otel import OtelTelemetry
from psych_otel.plugin import build_telemetry
from psych_runtime.adapters import installed_telemetry
from psych_runtime.adapters import telemetry_backends


def test_the_entry_point_offers_the_otel_backend() -> None:
    backends = {backend.name: backend for backend in telemetry_backends()}
    assert backends["otel"].package == "psych-otel"
    assert backends["otel"].build is build_telemetry


def test_a_runtime_without_telemetry_uses_the_installed_adapter() -> None:
    assert isinstance(installed_telemetry(), OtelTelemetry)
    assert installed_telemetry() is installed_telemetry()  # built once


def test_loading_the_plugin_does_not_import_opentelemetry() -> None:
    # Any module of the SDK or the API imports the ``opentelemetry`` package first.
    assert modules_loaded_by("import psych_otel.plugin", ["opentelemetry"]) == []


def test_outside_any_span_there_is_no_trace_context_to_carry() -> None:
    assert OtelTelemetry().current_carrier() == {}
