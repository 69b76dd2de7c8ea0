"""Installed without an SDK, the adapter records nothing and asks for no spans.

Global providers can be set once per process, so each case runs in a fresh one.
"""

import subprocess
import sys

SCRIPT = """
from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.trace import TracerProvider
from psych_otel import OtelTelemetry
from psych_runtime.plugins.installed import installed_telemetry

installed = installed_telemetry()
assert isinstance(installed, OtelTelemetry), installed
assert installed.enabled is False  # no SDK: the Worker builds no spans at all
assert OtelTelemetry(tracer_provider=TracerProvider()).enabled is True
assert OtelTelemetry(meter_provider=MeterProvider()).enabled is True
WHICH
assert installed.enabled is True  # configured after the adapter was built: picked up
print("ok")
"""


def _run(which: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT.replace("WHICH", which)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_a_global_tracer_provider_enables_it() -> None:
    _run("trace.set_tracer_provider(TracerProvider())")


def test_a_global_meter_provider_enables_it() -> None:
    _run("metrics.set_meter_provider(MeterProvider())")
